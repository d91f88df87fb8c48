package wasihost

import (
	"context"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// Ensure what approvals need and the wire does not carry yet is refused,
// typed: a tool that needs approval (it would run without one) and a run
// with approvals (its decisions would be dropped); the instance stays
// usable and nothing runs.
func TestRuntime_Approvals_Refused(t *testing.T) {
	in := mustInstance(t)
	runs := 0
	pay := core.Tool{ToolSpec: core.ToolSpec{Name: "pay"},
		NeedsApproval: func(core.ToolInvocation) (bool, error) { return true, nil },
		Call:          func(core.Context, core.ToolInvocation) (string, error) { runs++; return "paid", nil }}
	if _, err := in.NewRuntime(Config{Tools: []core.Tool{pay}}); core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Fatalf("a tool needing approval: got %v, want invalid_argument", err)
	}
	pay.NeedsApproval = nil
	rt := mustRuntime(t, in, Config{Tools: []core.Tool{pay}})
	history := []core.SeedMessage{{Role: core.RoleUser, Content: "/tool pay {}"},
		{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "c1", Name: "pay", Arguments: "{}"}}}}
	_, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", History: history, WithHistory: true,
		Approvals: []core.Approval{{ToolCallID: "c1", Approved: true}}})
	if core.ErrorCode(err) != core.CodeInvalidArgument || runs != 0 {
		t.Fatalf("a run with approvals: got %v, pay ran %d times; want invalid_argument and no run", err, runs)
	}
	if _, ok, _ := rt.Session("s"); ok {
		t.Fatal("a refused run left a session")
	}
	if res, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "hi"}); err != nil || res.Status != "completed" {
		t.Fatalf("after the refusals: %v", err)
	}
}
