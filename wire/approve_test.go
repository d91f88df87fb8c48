package wire_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// pausedResult is a result awaiting approval: the reply with two calls,
// the result of the call that ran, and the call that waits.
func pausedResult() *core.Result {
	reply := core.Message{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "p", Name: "pay", Arguments: `{"a":5}`}, {ID: "l", Name: "look"}}}
	return &core.Result{RunID: "r", SessionID: "s", Status: core.StatusAwaitingApproval, Seed: core.SeedReport{Mode: core.SeedNone},
		MessageCount: 3, Reply: reply,
		Appended:         []core.Message{{Role: core.RoleUser, Content: "q"}, reply, {Role: core.RoleTool, Content: "looked", ToolCallID: "l"}},
		ModelCalls:       []core.ModelCall{{Step: 1, MessageCount: 1}},
		PendingApprovals: []core.PendingApproval{{ToolCallID: "p", Name: "pay", Arguments: `{"a":5}`}},
	}
}

// approvalFrames are the approvals' golden frames, which
// js/test/wire.test.mjs reads too.
func approvalFrames() map[string][]byte {
	return map[string][]byte{
		"begin-approvals.bin": wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Approvals: []core.Approval{
			{ToolCallID: "p", Approved: true}, {ToolCallID: "q", Reason: "too much"}}}),
		"config-approvals.bin": wire.AppendConfig(nil, &wire.Config{Tools: []core.ToolSpec{{Name: "pay"}, {Name: "look"}, {Name: "send"}},
			Approval: []wire.ApprovalMode{wire.ApprovalAlways, wire.ApprovalNever, wire.ApprovalAsk}}),
		"action-approve.bin":  wire.AppendAction(nil, &wire.Action{Handle: 3, Kind: wire.ActApprove, Call: core.ToolCall{ID: "p", Name: "pay", Arguments: `{"a":5}`}}),
		"approval.bin":        wire.AppendApproval(nil, &wire.ApprovalAnswer{Handle: 3, Need: true}),
		"approval-failed.bin": wire.AppendApproval(nil, &wire.ApprovalAnswer{Handle: 3, Failed: true, Error: "boom"}),
		"action-awaiting.bin": wire.AppendAction(nil, &wire.Action{Handle: 4, Kind: wire.ActDone, Result: pausedResult(),
			Events: []core.Event{{Type: core.EventRunAwaitingApproval, Seq: 9}}}),
	}
}

// TestGoldenApprovals checks the approvals' frames against
// testdata/golden (rewritten with -update).
func TestGoldenApprovals(t *testing.T) { checkGolden(t, approvalFrames()) }

// Ensure approvals, modes, the approval action, its answer and a paused
// result survive the trip, and a begin frame without approvals and a
// config frame without approval tools keep their bytes.
func TestApprovals_RoundTrip(t *testing.T) {
	for _, b := range []wire.Begin{
		{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "p", Approved: true}, {ToolCallID: "q", Reason: "no"}}},
		{SessionID: "s", PolicyJSON: `{"maxSteps":3}`, Policy: core.Policy{MaxSteps: 3}, Approvals: []core.Approval{{ToolCallID: "p"}}},
		{SessionID: "s", WithHistory: true, History: []core.SeedMessage{{Role: core.RoleUser, Content: "q"}}, Policy: core.Policy{Repair: true, MaxContextTokens: 9},
			Approvals: []core.Approval{{ToolCallID: "p", Approved: true}}},
	} {
		got, err := wire.DecodeBegin(wire.AppendBegin(nil, &b), 0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Approvals, b.Approvals) || got.Policy.MaxSteps != b.Policy.MaxSteps || got.Policy.Repair != b.Policy.Repair ||
			got.Policy.MaxContextTokens != b.Policy.MaxContextTokens || len(got.History) != len(b.History) {
			t.Errorf("got %+v, want %+v", got, b)
		}
	}
	plain := wire.Begin{SessionID: "s", Input: "x"}
	if f := wire.AppendBegin(nil, &plain); f[len(f)-11]&0x80 != 0 {
		t.Errorf("a begin frame without approvals has further flags: % x", f)
	}
	cfg := wire.Config{Tools: []core.ToolSpec{{Name: "a"}, {Name: "b"}}, Approval: []wire.ApprovalMode{wire.ApprovalAsk}}
	got, err := wire.DecodeConfig(wire.AppendConfig(nil, &cfg))
	if err != nil || !reflect.DeepEqual(got.Approval, []wire.ApprovalMode{wire.ApprovalAsk, wire.ApprovalNever}) {
		t.Fatalf("config: %+v, %v", got, err)
	}
	if f := wire.AppendConfig(nil, &wire.Config{Tools: cfg.Tools, Approval: []wire.ApprovalMode{wire.ApprovalNever}}); f[3] != wire.ConfigVersion {
		t.Errorf("a config without approval tools is version %d", f[3])
	}
	for _, a := range []wire.ApprovalAnswer{{Handle: 1, Need: true}, {Handle: 2}, {Handle: 3, Failed: true, Error: "x"}} {
		got, err := wire.DecodeApproval(wire.AppendApproval(nil, &a))
		if err != nil || *got != a {
			t.Errorf("approval %+v: %+v, %v", a, got, err)
		}
	}
	act := wire.Action{Handle: 4, Kind: wire.ActDone, Result: pausedResult(), Events: []core.Event{{Type: core.EventRunAwaitingApproval, Seq: 9}}}
	back, err := wire.DecodeAction(wire.AppendAction(nil, &act))
	if err != nil || !reflect.DeepEqual(*back, act) {
		t.Fatalf("paused result: %+v, %v", back, err)
	}
	act = wire.Action{Handle: 5, Kind: wire.ActApprove, Call: core.ToolCall{ID: "p", Name: "pay"}}
	if back, err = wire.DecodeAction(wire.AppendAction(nil, &act)); err != nil || !reflect.DeepEqual(*back, act) {
		t.Fatalf("approval action: %+v, %v", back, err)
	}
}

// Ensure malformed approval frames are refused invalid_argument.
func TestApprovals_Refused(t *testing.T) {
	good := wire.AppendApproval(nil, &wire.ApprovalAnswer{Handle: 1, Need: true})
	begin := wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "p", Approved: true}}})
	cfg := wire.AppendConfig(nil, &wire.Config{Tools: []core.ToolSpec{{Name: "a"}}, Approval: []wire.ApprovalMode{wire.ApprovalAsk}})
	set := func(b []byte, i int, v byte) []byte { b = bytes.Clone(b); b[i] = v; return b }
	cases := map[string]func() error{
		"need flag 2":     func() error { _, err := wire.DecodeApproval(set(good, len(good)-1, 2)); return err },
		"oversize status": func() error { _, err := wire.DecodeApproval(set(good, len(good)-2, 2)); return err },
		"truncated":       func() error { _, err := wire.DecodeApproval(good[:len(good)-1]); return err },
		"not an approval": func() error {
			_, err := wire.DecodeApproval(wire.AppendToolResult(nil, &wire.ToolResult{Handle: 1}))
			return err
		},
		"approved flag 2":    func() error { _, err := wire.DecodeBegin(set(begin, len(begin)-2, 2), 0); return err },
		"no approval":        func() error { _, err := wire.DecodeBegin(append(begin[:len(begin)-5:len(begin)-5], 0), 0); return err },
		"approvals past end": func() error { _, err := wire.DecodeBegin(begin[:len(begin)-1], 0); return err },
		"unknown mode":       func() error { _, err := wire.DecodeConfig(set(cfg, 11, 3)); return err },
		"reserved further":   func() error { _, err := wire.DecodeBegin(set(begin, 10, 6), 0); return err },
	}
	for name, f := range cases {
		err := f()
		if e := core.AsError(err); err == nil || e.Code != core.CodeInvalidArgument {
			t.Errorf("%s: %v, want invalid_argument", name, err)
		}
	}
}
