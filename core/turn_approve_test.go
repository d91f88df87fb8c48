package core_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/mock"
)

// hostAsked is a runtime whose "pay" and "send" tools ask their host for
// approval (Tool.ApprovalByHost), and whose "look" never needs it.
func hostAsked(t *testing.T) *core.Runtime {
	t.Helper()
	call := func(core.Context, core.ToolInvocation) (string, error) { return "", errors.New("runs in the host") }
	return mustRuntime(t, core.Config{Tools: []core.Tool{
		{ToolSpec: core.ToolSpec{Name: "pay"}, ApprovalByHost: true, Call: call},
		{ToolSpec: core.ToolSpec{Name: "send"}, ApprovalByHost: true, Call: call},
		{ToolSpec: core.ToolSpec{Name: "look"}, Call: call},
	}})
}

// driveAsk drives a turn of rt: the model calls pay, look and send on a
// user message and answers "ok" otherwise; ask answers each approval
// action (nil: none is expected); ran records the tools run.
func driveAsk(t *testing.T, rt *core.Runtime, req core.RunRequest, ask func(c core.ToolCall) (bool, error), ran *[]string) core.Action {
	t.Helper()
	tn, err := rt.Begin(bg, req)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	a := tn.Next()
	for {
		switch a.Kind {
		case core.ActionApproval:
			if ask == nil {
				t.Fatalf("approval action for %+v", a.Call)
			}
			a = tn.FeedApproval(ask(*a.Call))
		case core.ActionTool:
			*ran = append(*ran, a.Call.ID)
			a = tn.FeedTool("ran "+a.Call.Name, nil)
		case core.ActionModel:
			if last := a.Request.Messages[len(a.Request.Messages)-1]; last.Role == core.RoleUser {
				a = tn.FeedModel(&core.ModelReply{ToolCalls: []core.ToolCall{
					{ID: "p", Name: "pay", Arguments: `{"a":1}`}, {ID: "l", Name: "look"}, {ID: "s", Name: "send"}}}, nil)
			} else {
				a = tn.FeedModel(&core.ModelReply{Content: "ok"}, nil)
			}
		default:
			return a
		}
	}
}

// Ensure a Turn asks its host about each call of a tool with
// ApprovalByHost, in order and before any call runs; the calls its host
// says need approval pause the run, the others run with the plain ones.
func TestTurnApprove_AsksHost(t *testing.T) {
	rt := hostAsked(t)
	var asked, ran []string
	a := driveAsk(t, rt, core.RunRequest{SessionID: "s", Input: "q"}, func(c core.ToolCall) (bool, error) {
		if len(ran) != 0 {
			t.Fatalf("asked about %s after %v ran", c.ID, ran)
		}
		asked = append(asked, c.ID+" "+c.Name+" "+c.Arguments)
		return c.Name == "pay", nil
	}, &ran)
	if a.Kind != core.ActionDone || a.Result.Status != core.StatusAwaitingApproval {
		t.Fatalf("action %+v", a)
	}
	if want := []string{`p pay {"a":1}`, "s send "}; !reflect.DeepEqual(asked, want) {
		t.Fatalf("asked %q, want %q", asked, want)
	}
	if want := []string{"l", "s"}; !reflect.DeepEqual(ran, want) {
		t.Fatalf("ran %q, want %q", ran, want)
	}
	if want := []core.PendingApproval{{ToolCallID: "p", Name: "pay", Arguments: `{"a":1}`}}; !reflect.DeepEqual(a.Result.PendingApprovals, want) {
		t.Fatalf("pending %+v", a.Result.PendingApprovals)
	}
	// The resume runs the approved call once, asking nothing.
	ran = nil
	a = driveAsk(t, rt, core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "p", Approved: true}}}, nil, &ran)
	if a.Kind != core.ActionDone || a.Result.Status != "completed" || !reflect.DeepEqual(ran, []string{"p"}) {
		t.Fatalf("resume %+v, ran %q", a, ran)
	}
}

// Ensure a host that says no call needs approval lets the run complete
// as one without approval tools.
func TestTurnApprove_NoneNeeded(t *testing.T) {
	rt := hostAsked(t)
	var ran []string
	a := driveAsk(t, rt, core.RunRequest{SessionID: "s", Input: "q"}, func(core.ToolCall) (bool, error) { return false, nil }, &ran)
	if a.Kind != core.ActionDone || a.Result.Status != "completed" || len(a.Result.PendingApprovals) != 0 ||
		!reflect.DeepEqual(ran, []string{"p", "l", "s"}) {
		t.Fatalf("action %+v, ran %q", a, ran)
	}
}

// Ensure an error from the host's predicate fails the run tool_error and
// rolls it back, and a cancel while the question is out fails it
// cancelled: never a session left waiting.
func TestTurnApprove_Failures(t *testing.T) {
	rt := hostAsked(t)
	var ran []string
	a := driveAsk(t, rt, core.RunRequest{SessionID: "s", Input: "q"}, func(core.ToolCall) (bool, error) { return false, errors.New("boom") }, &ran)
	if a.Kind != core.ActionFailed || a.Err.Code != core.CodeToolError || a.Err.Message != `the approval check of tool "pay" failed: boom` || len(ran) != 0 {
		t.Fatalf("action %+v, ran %q", a, ran)
	}
	if got := messagesOf(rt, "s"); len(got) != 0 {
		t.Fatalf("session after a failed check: %+v", got)
	}
	a = driveAsk(t, rt, core.RunRequest{SessionID: "s", Input: "q", RunID: "r1"}, func(core.ToolCall) (bool, error) {
		rt.CancelRun("r1")
		return true, nil
	}, &ran)
	if a.Kind != core.ActionFailed || a.Err.Code != core.CodeCancelled || len(ran) != 0 {
		t.Fatalf("cancelled: %+v, ran %q", a, ran)
	}
}

// Ensure a run with no host to ask (Execute) fails typed and never runs
// the tool, unless the tool has a NeedsApproval to call instead.
func TestTurnApprove_NoHost(t *testing.T) {
	model := &mock.Model{CompleteFn: func(_ core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		if req.Messages[len(req.Messages)-1].Role == core.RoleUser {
			return &core.ModelReply{ToolCalls: []core.ToolCall{{ID: "p", Name: "pay"}}}, nil
		}
		return &core.ModelReply{Content: "ok"}, nil
	}}
	runs := 0
	call := func(core.Context, core.ToolInvocation) (string, error) { runs++; return "paid", nil }
	rt := mustRuntime(t, core.Config{Model: model, Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "pay"}, ApprovalByHost: true, Call: call}}})
	_, err := rt.Execute(bg, core.RunRequest{SessionID: "x", Input: "q"})
	if e := core.AsError(err); e == nil || e.Code != core.CodeToolError || runs != 0 {
		t.Fatalf("Execute: %v, %d runs", err, runs)
	}
	rt = mustRuntime(t, core.Config{Model: model, Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "pay"}, ApprovalByHost: true, Call: call,
		NeedsApproval: func(core.ToolInvocation) (bool, error) { return true, nil }}}})
	res, err := rt.Execute(bg, core.RunRequest{SessionID: "x", Input: "q"})
	if err != nil || res.Status != core.StatusAwaitingApproval || runs != 0 {
		t.Fatalf("Execute with NeedsApproval: %+v, %v, %d runs", res, err, runs)
	}
}

// Ensure FeedApproval out of turn changes nothing.
func TestTurnApprove_OutOfTurn(t *testing.T) {
	rt := hostAsked(t)
	tn, err := rt.Begin(bg, core.RunRequest{SessionID: "s", Input: "q"})
	if err != nil {
		t.Fatal(err)
	}
	if a := tn.FeedApproval(true, nil); a.Kind != core.ActionModel {
		t.Fatalf("out of turn: %+v", a)
	}
}

// Ensure a quick turn's commit on a session whose calls await approval
// is stale and changes nothing: an input must not follow them.
func TestTurnApprove_CommitStale(t *testing.T) {
	rt := hostAsked(t)
	var ran []string
	a := driveAsk(t, rt, core.RunRequest{SessionID: "s", Input: "q"}, func(c core.ToolCall) (bool, error) { return c.Name == "pay", nil }, &ran)
	if a.Kind != core.ActionDone || a.Result.Status != core.StatusAwaitingApproval {
		t.Fatalf("%+v", a)
	}
	s, _ := rt.Session("s")
	n, stale, err := rt.Commit(&core.Commit{SessionID: "s", RunID: "host:1", Input: "other", MirrorGen: s.Generation, MirrorLen: len(s.Messages), Reply: "ok"})
	if err != nil || !stale || n != 0 {
		t.Fatalf("commit on a paused session: %d, %v, %v", n, stale, err)
	}
	if after, _ := rt.Session("s"); len(after.Messages) != len(s.Messages) {
		t.Fatalf("the session changed: %d to %d messages", len(s.Messages), len(after.Messages))
	}
}
