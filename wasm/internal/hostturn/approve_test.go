package hostturn_test

import (
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/internal/hostturn"
	"github.com/agentrt/agentrt/wire"
)

// Ensure an approval crosses the frames: the model's call of a tool its
// host decides is an approval action, the host's answer pauses the run
// (a done action awaiting approval, the run.awaiting_approval event), a
// begin frame's approvals resume it with the tool action, and a failed
// predicate fails the run tool_error.
func TestDriver_Approval(t *testing.T) {
	call := func(core.Context, core.ToolInvocation) (string, error) { return "", nil }
	rt := mustRuntime(t, core.Config{Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "pay"}, ApprovalByHost: true, Call: call}}})
	x := hostturn.New(rt, nil, wire.ReadPolicyJSON)
	reply := func(h uint64) []byte {
		return wire.AppendModelReply(nil, &wire.ModelReply{Handle: h, Reply: core.ModelReply{ToolCalls: []core.ToolCall{{ID: "p", Name: "pay", Arguments: "{}"}}}})
	}
	a := mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "q", Events: true})))
	a = mustAction(t, x.Feed(reply(a.Handle)))
	if a.Kind != wire.ActApprove || a.Call.ID != "p" || a.Call.Name != "pay" {
		t.Fatalf("after the reply: %+v", a)
	}
	a = mustAction(t, x.Feed(wire.AppendApproval(nil, &wire.ApprovalAnswer{Handle: a.Handle, Need: true})))
	if a.Kind != wire.ActDone || a.Result.Status != core.StatusAwaitingApproval || len(a.Result.PendingApprovals) != 1 ||
		a.Result.PendingApprovals[0].ToolCallID != "p" || a.Events[len(a.Events)-1].Type != core.EventRunAwaitingApproval {
		t.Fatalf("paused: %+v", a)
	}
	// An approval for another call is refused, and changes nothing.
	a = mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "nope", Approved: true}}})))
	if a.Kind != wire.ActFailed || a.Err.Code != core.CodeInvalidArgument {
		t.Fatalf("unknown call: %+v", a)
	}
	a = mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "p", Approved: true}}})))
	if a.Kind != wire.ActTool || a.Call.ID != "p" {
		t.Fatalf("resumed: %+v", a)
	}
	a = mustAction(t, x.Feed(wire.AppendToolResult(nil, &wire.ToolResult{Handle: a.Handle, Text: "paid"})))
	a = mustAction(t, x.Feed(wire.AppendModelReply(nil, &wire.ModelReply{Handle: a.Handle, Reply: core.ModelReply{Content: "ok"}})))
	if a.Kind != wire.ActDone || a.Result.Status != "completed" {
		t.Fatalf("completed: %+v", a)
	}
	a = mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "again"})))
	a = mustAction(t, x.Feed(reply(a.Handle)))
	a = mustAction(t, x.Feed(wire.AppendApproval(nil, &wire.ApprovalAnswer{Handle: a.Handle, Failed: true, Error: "boom"})))
	if a.Kind != wire.ActFailed || a.Err.Code != core.CodeToolError || a.Err.Message != `the approval check of tool "pay" failed: boom` {
		t.Fatalf("failed predicate: %+v", a)
	}
	if x.Turns() != 0 {
		t.Fatalf("%d turns left", x.Turns())
	}
}

// Ensure the typed call answers an approval action as the frame does.
func TestDriver_ApprovalTyped(t *testing.T) {
	call := func(core.Context, core.ToolInvocation) (string, error) { return "", nil }
	rt := mustRuntime(t, core.Config{Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "pay"}, ApprovalByHost: true, Call: call}}})
	x := hostturn.New(rt, nil, wire.ReadPolicyJSON)
	h, a, err := x.Start(core.RunRequest{SessionID: "s", Input: "q"})
	if err != nil {
		t.Fatal(err)
	}
	a = x.Model(h, &core.ModelReply{ToolCalls: []core.ToolCall{{ID: "p", Name: "pay"}}}, nil)
	if a.Kind != core.ActionApproval {
		t.Fatalf("%+v", a)
	}
	if a = x.Approval(h, false, nil); a.Kind != core.ActionTool {
		t.Fatalf("not needed: %+v", a)
	}
}
