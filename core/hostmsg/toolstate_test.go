package hostmsg_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// Ensure a UIMessage tool part in any state without an output is read as
// a call without a result, with the text after it in a message of its
// own, which core refuses at the UIMessage's index and repairs with the
// interrupted marker between the call and that text.
func TestMessages_ToolPartWithoutOutput(t *testing.T) {
	for _, state := range []string{"input-streaming", "input-available", "approval-requested", "approval-responded", "some-future-state"} {
		t.Run(state, func(t *testing.T) {
			v, err := hostjson.Parse([]byte(`[{"id": "u", "role": "user", "parts": [{"type": "text", "text": "go"}]},
				{"id": "a", "role": "assistant", "parts": [{"type": "text", "text": "Calling."},
					{"type": "tool-f", "toolCallId": "c1", "state": "` + state + `", "input": {"x": 1}},
					{"type": "text", "text": "Waiting."}]}]`))
			if err != nil {
				t.Fatal(err)
			}
			h, err := hostmsg.Messages(v, 0)
			if err != nil {
				t.Fatalf("refused while reading: %v", err)
			}
			want := []core.SeedMessage{
				{ID: "u", Role: core.RoleUser, Content: "go"},
				{ID: "a", Role: core.RoleAssistant, Content: "Calling.", ToolCalls: []core.ToolCall{{ID: "c1", Name: "f", Arguments: `{"x":1}`}}},
				{ID: "a", Role: core.RoleAssistant, Content: "Waiting.", Continues: true},
			}
			if !reflect.DeepEqual(h, want) {
				t.Fatalf("read\n got %+v\nwant %+v", h, want)
			}
			err = core.ValidateHistory(h, core.Limits{})
			if e := core.AsError(err); err == nil || e.Code != core.CodeInvalidHistory || e.Index != 1 {
				t.Fatalf("validation: %v, want invalid_history at index 1", err)
			}
			check := core.CheckHistory(h, core.Limits{})
			if len(check.Problems) != 1 || check.Problems[0].Repair != core.RepairMissingToolResult || check.Problems[0].Index != 1 {
				t.Fatalf("check = %+v, want one missing_tool_result at 1", check)
			}
		})
	}
}

// uiApproval is a useChat history whose last message holds a call of
// "pay" in state, with approval, and a "look" call with its output.
func uiApproval(t *testing.T, state, approval string) hostjson.Value {
	t.Helper()
	v, err := hostjson.Parse([]byte(`[{"id": "u", "role": "user", "parts": [{"type": "text", "text": "q"}]},
		{"id": "a", "role": "assistant", "parts": [
			{"type": "tool-pay", "toolCallId": "c1", "state": "` + state + `", "input": {"amount": 5}` + approval + `},
			{"type": "tool-look", "toolCallId": "c2", "state": "output-available", "input": {}, "output": "looked"}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Ensure a tool part in state approval-responded is read as a call
// awaiting approval plus its decision, so that a runtime given the
// history alone runs the approved tool once and continues; and that
// approval-requested is a call awaiting approval.
func TestApprovals_UIMessageResumes(t *testing.T) {
	for _, tc := range []struct {
		approval string
		want     []core.Approval
		result   string
	}{
		{`, "approval": {"id": "ap1", "approved": true}`, []core.Approval{{ToolCallID: "c1", Approved: true}}, "paid"},
		{`, "approval": {"id": "ap1", "approved": false, "reason": "no"}`, []core.Approval{{ToolCallID: "c1", Reason: "no"}}, "Tool call denied: no"},
	} {
		v := uiApproval(t, "approval-responded", tc.approval)
		h, err := hostmsg.Messages(v, 0)
		if err != nil {
			t.Fatal(err)
		}
		approvals, err := hostmsg.Approvals(v)
		if err != nil || !reflect.DeepEqual(approvals, tc.want) {
			t.Fatalf("approvals %+v, %v; want %+v", approvals, err, tc.want)
		}
		check := core.CheckHistory(h, core.Limits{})
		if check.OK || !reflect.DeepEqual(check.Awaiting, []core.AwaitingCall{{Index: 1, ToolCallID: "c1", Name: "pay", Arguments: `{"amount":5}`}}) {
			t.Fatalf("check %+v", check)
		}
		pays := 0
		rt, err := core.New(core.Config{
			Model: modelFn(func(req *core.ModelRequest) *core.ModelReply {
				return &core.ModelReply{Content: "after " + req.Messages[len(req.Messages)-1].Content}
			}),
			Tools: []core.Tool{
				{ToolSpec: core.ToolSpec{Name: "pay"}, NeedsApproval: func(core.ToolInvocation) (bool, error) { return true, nil },
					Call: func(core.Context, core.ToolInvocation) (string, error) { pays++; return "paid", nil }},
				{ToolSpec: core.ToolSpec{Name: "look"}, Call: func(core.Context, core.ToolInvocation) (string, error) { return "again", nil }},
			}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := rt.Execute(context.Background(), core.RunRequest{SessionID: "s", History: h, WithHistory: true, Approvals: approvals})
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		if res.Reply.Content != "after "+tc.result || pays != boolInt(tc.want[0].Approved) {
			t.Fatalf("reply %q, pays %d", res.Reply.Content, pays)
		}
		// The same decision again finds the call answered.
		if _, err := rt.Execute(context.Background(), core.RunRequest{SessionID: "s", History: h, WithHistory: true, Approvals: approvals}); core.AsError(err).Code != core.CodeInvalidArgument {
			t.Fatalf("second resume: %v", err)
		}
		rt.Close()
	}

	// approval-requested: awaiting, no decision.
	v := uiApproval(t, "approval-requested", `, "approval": {"id": "ap1"}`)
	h, _ := hostmsg.Messages(v, 0)
	if a, err := hostmsg.Approvals(v); err != nil || a != nil {
		t.Fatalf("approvals of a request: %+v, %v", a, err)
	}
	if c := core.CheckHistory(h, core.Limits{}); c.OK || len(c.Awaiting) != 1 {
		t.Fatalf("check %+v", c)
	}
}

// Ensure output-denied is read as the call with its denied result, and a
// malformed approval is refused at its message.
func TestApprovals_UIMessageDenied(t *testing.T) {
	h, err := hostmsg.Messages(uiApproval(t, "output-denied", `, "approval": {"id": "ap1", "approved": false, "reason": "no"}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if h[2].Role != core.RoleTool || h[2].ToolCallID != "c1" || h[2].Content != "Tool call denied: no" || core.ValidateHistory(h, core.Limits{}) != nil {
		t.Fatalf("read %+v", h)
	}
	for _, bad := range []string{`, "approval": {"id": "ap1", "approved": "yes"}`, `, "approval": {"approved": true, "reason": 3}`, `, "approval": 1`, ``} {
		_, err := hostmsg.Approvals(uiApproval(t, "approval-responded", bad))
		if e := core.AsError(err); err == nil || e.Code != core.CodeInvalidHistory || e.Index != 1 {
			t.Fatalf("approval %s: %v, want invalid_history at 1", bad, err)
		}
	}
}

type modelFn func(req *core.ModelRequest) *core.ModelReply

func (f modelFn) Complete(_ core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	return f(req), nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
