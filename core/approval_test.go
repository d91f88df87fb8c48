package core_test

import (
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/mock"
)

// approvalWorld is a runtime whose model asks, for each user message,
// for a "pay" call (which needs approval when its arguments say so) and a
// "look" call (which never does), and answers tool results with their
// contents; each tool counts its runs.
type approvalWorld struct {
	rt        *core.Runtime
	pays      atomic.Int32
	looks     atomic.Int32
	predicate func(core.ToolInvocation) (bool, error)
}

func newApprovalWorld(t *testing.T, predicate func(core.ToolInvocation) (bool, error)) *approvalWorld {
	w := &approvalWorld{predicate: predicate}
	w.rt = w.runtime(t)
	return w
}

// runtime returns a new runtime over the same tools and model: a cold
// start.
func (w *approvalWorld) runtime(t *testing.T) *core.Runtime {
	model := &mock.Model{CompleteFn: mock.PayAndLook}
	predicate := w.predicate
	if predicate == nil {
		predicate = func(core.ToolInvocation) (bool, error) { return true, nil }
	}
	return mustRuntime(t, core.Config{Model: model, Tools: []core.Tool{
		{ToolSpec: core.ToolSpec{Name: "pay"}, NeedsApproval: predicate,
			Call: func(core.Context, core.ToolInvocation) (string, error) { w.pays.Add(1); return "paid", nil }},
		{ToolSpec: core.ToolSpec{Name: "look"},
			Call: func(core.Context, core.ToolInvocation) (string, error) { w.looks.Add(1); return "looked", nil }},
	}})
}

func (w *approvalWorld) counts() [2]int32 { return [2]int32{w.pays.Load(), w.looks.Load()} }

// pause runs "q" on session s and checks that it stops for "pay-q" after
// "look-q" ran.
func (w *approvalWorld) pause(t *testing.T, rt *core.Runtime) *core.Result {
	t.Helper()
	var last core.EventType
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "q", OnEvent: func(ev core.Event) { last = ev.Type }})
	if res.Status != core.StatusAwaitingApproval || last != core.EventRunAwaitingApproval {
		t.Fatalf("status %q, last event %q, want awaiting approval", res.Status, last)
	}
	want := []core.PendingApproval{{ToolCallID: "pay-q", Name: "pay", Arguments: `{"amount":5}`}}
	if !reflect.DeepEqual(res.PendingApprovals, want) {
		t.Fatalf("pending %+v, want %+v", res.PendingApprovals, want)
	}
	if got := contents(res.Appended); !reflect.DeepEqual(got, []string{"user:q", "assistant:", "tool:looked"}) {
		t.Fatalf("appended %q", got)
	}
	if got := messagesOf(rt, "s"); !reflect.DeepEqual(got, res.Appended) {
		t.Fatalf("session %+v, appended %+v", got, res.Appended)
	}
	return res
}

func mustRefuse(t *testing.T, rt *core.Runtime, req core.RunRequest, code core.Code) {
	t.Helper()
	before := stateOf(rt)
	_, err := rt.Execute(bg, req)
	if e := core.AsError(err); err == nil || e.Code != code {
		t.Fatalf("run %+v: %v, want %s", req.Approvals, err, code)
	}
	requireSameState(t, stateOf(rt), before)
}

// Ensure a run stops before a call that needs approval, the plain call of
// the same reply running first, and an approval runs the tool once and
// continues the model; approving again is refused and runs nothing.
func TestApproval_PauseApproveOnce(t *testing.T) {
	w := newApprovalWorld(t, nil)
	w.pause(t, w.rt)
	if w.counts() != [2]int32{0, 1} {
		t.Fatalf("runs %v before the approval", w.counts())
	}
	var last core.EventType
	res := mustComplete(t, w.rt, core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}},
		OnEvent: func(ev core.Event) { last = ev.Type }})
	if res.Status != "completed" || last != core.EventRunCompleted || res.Reply.Content != "done: looked | paid" {
		t.Fatalf("resumed: %q %q %+v", res.Status, last, res.Reply)
	}
	if got := contents(res.Appended); !reflect.DeepEqual(got, []string{"tool:paid", "assistant:done: looked | paid"}) {
		t.Fatalf("appended %q", got)
	}
	if w.counts() != [2]int32{1, 1} {
		t.Fatalf("runs %v after the approval", w.counts())
	}
	for range 2 {
		mustRefuse(t, w.rt, core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}}}, core.CodeInvalidArgument)
	}
	if w.counts() != [2]int32{1, 1} {
		t.Fatalf("runs %v after approving twice", w.counts())
	}
}

// Ensure a denied call never runs, gets a "Tool call denied" result with
// the reason, and the model continues.
func TestApproval_Deny(t *testing.T) {
	w := newApprovalWorld(t, nil)
	w.pause(t, w.rt)
	res := mustComplete(t, w.rt, core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "pay-q", Reason: "too much"}}})
	if got := contents(res.Appended); !reflect.DeepEqual(got, []string{"tool:Tool call denied: too much", "assistant:done: looked | Tool call denied: too much"}) {
		t.Fatalf("appended %q", got)
	}
	if w.counts() != [2]int32{0, 1} {
		t.Fatalf("runs %v after a denial", w.counts())
	}
	// A new turn goes on as usual and pauses again.
	res = mustComplete(t, w.rt, core.RunRequest{SessionID: "s", Input: "again"})
	if res.Status != core.StatusAwaitingApproval || res.PendingApprovals[0].ToolCallID != "pay-again" {
		t.Fatalf("next turn %+v", res)
	}
}

// Ensure a fresh runtime given only the stored history (ending with the
// unanswered call) and the approval resumes as the warm one does, and the
// stored history with the result refuses a second approval: the tool
// runs once across cold starts.
func TestApproval_ColdStart(t *testing.T) {
	w := newApprovalWorld(t, nil)
	w.pause(t, w.rt)
	stored := core.SeedMessages(messagesOf(w.rt, "s"))

	// Without approvals, an input is refused as on the warm session
	// (TestApproval_PausedInput); CheckHistory, which knows no tools,
	// still lists the pending call as a missing result.
	cold := w.runtime(t)
	check := core.CheckHistory(stored, core.Limits{})
	if check.OK || check.Paused || len(check.Problems) != 1 || check.Problems[0].Repair != core.RepairMissingToolResult ||
		!reflect.DeepEqual(check.Awaiting, []core.AwaitingCall{{Index: 1, ToolCallID: "pay-q", Name: "pay", Arguments: `{"amount":5}`}}) {
		t.Fatalf("check %+v", check)
	}

	warm := mustComplete(t, w.rt, core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}}})
	res := mustComplete(t, cold, core.RunRequest{SessionID: "s", History: stored, WithHistory: true,
		Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}}})
	if res.Seed.Mode != core.SeedCold || res.Seed.Seeded != 3 || !reflect.DeepEqual(res.Appended, warm.Appended) ||
		!reflect.DeepEqual(messagesOf(cold, "s"), messagesOf(w.rt, "s")) {
		t.Fatalf("cold resume %+v\nwarm %+v", res, warm)
	}
	if w.counts() != [2]int32{2, 1} {
		t.Fatalf("runs %v: one approval on each runtime", w.counts())
	}
	// The host stored the resumed turn: a third runtime refuses the same
	// approval again, and so do both warm ones.
	stored = core.SeedMessages(messagesOf(cold, "s"))
	again := core.RunRequest{SessionID: "s", History: stored, WithHistory: true, Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}}}
	mustRefuse(t, w.runtime(t), again, core.CodeInvalidArgument)
	mustRefuse(t, cold, again, core.CodeInvalidArgument)
	mustRefuse(t, w.rt, again, core.CodeInvalidArgument)
	if w.counts() != [2]int32{2, 1} {
		t.Fatalf("runs %v after the refusals", w.counts())
	}

}

// Ensure approvals that do not answer exactly the pending calls are
// refused invalid_argument and change nothing.
func TestApproval_Refusals(t *testing.T) {
	w := newApprovalWorld(t, nil)
	yes := func(id string) core.Approval { return core.Approval{ToolCallID: id, Approved: true} }
	// No pending call at all.
	mustRefuse(t, w.rt, core.RunRequest{SessionID: "s", Approvals: []core.Approval{yes("pay-q")}}, core.CodeInvalidArgument)
	w.pause(t, w.rt)
	for name, req := range map[string]core.RunRequest{
		"unknown call":    {SessionID: "s", Approvals: []core.Approval{yes("pay-x")}},
		"answered call":   {SessionID: "s", Approvals: []core.Approval{yes("pay-q"), yes("look-q")}},
		"another session": {SessionID: "t", Approvals: []core.Approval{yes("pay-q")}},
		"named twice":     {SessionID: "s", Approvals: []core.Approval{yes("pay-q"), yes("pay-q")}},
		"no id":           {SessionID: "s", Approvals: []core.Approval{{Approved: true}}},
		"with an input":   {SessionID: "s", Input: "hi", Approvals: []core.Approval{yes("pay-q")}},
		"an input alone":  {SessionID: "s", Input: "hi"},
	} {
		t.Run(name, func(t *testing.T) { mustRefuse(t, w.rt, req, core.CodeInvalidArgument) })
	}
	huge := strings.Repeat("x", int(core.DefaultLimits.MaxMessageBytes))
	mustRefuse(t, w.rt, core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "pay-q", Reason: huge}}}, core.CodeLimitExceeded)
	if w.counts() != [2]int32{0, 1} {
		t.Fatalf("runs %v after refusals", w.counts())
	}
	mustComplete(t, w.rt, core.RunRequest{SessionID: "s", Approvals: []core.Approval{yes("pay-q")}})
}

// Ensure a predicate that fails or panics fails the run tool_error,
// rolled back, and runs no tool.
func TestApproval_PredicateFails(t *testing.T) {
	for name, p := range map[string]func(core.ToolInvocation) (bool, error){
		"error": func(core.ToolInvocation) (bool, error) { return false, errors.New("no rules") },
		"panic": func(core.ToolInvocation) (bool, error) { panic("boom") },
	} {
		t.Run(name, func(t *testing.T) {
			w := newApprovalWorld(t, p)
			_, err := w.rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "q"})
			if e := core.AsError(err); err == nil || e.Code != core.CodeToolError {
				t.Fatalf("run: %v, want tool_error", err)
			}
			if len(messagesOf(w.rt, "s")) != 0 || w.counts() != [2]int32{0, 0} {
				t.Fatalf("session %+v, runs %v", messagesOf(w.rt, "s"), w.counts())
			}
			// The runtime goes on.
			if _, err := w.rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "q"}); core.AsError(err).Code != core.CodeToolError {
				t.Fatalf("second run: %v", err)
			}
		})
	}
}

// Ensure a predicate decides per call: a call it lets through runs
// without a pause.
func TestApproval_PredicateByArguments(t *testing.T) {
	w := newApprovalWorld(t, func(inv core.ToolInvocation) (bool, error) { return strings.Contains(inv.Arguments, "500"), nil })
	res := mustComplete(t, w.rt, core.RunRequest{SessionID: "s", Input: "q"})
	if res.Status != "completed" || w.counts() != [2]int32{1, 1} {
		t.Fatalf("status %q, runs %v", res.Status, w.counts())
	}
}

// Ensure a Turn driven by its host pauses and resumes as Execute does.
func TestApproval_Turn(t *testing.T) {
	w := newApprovalWorld(t, nil)
	drive := func(req core.RunRequest) core.Action {
		tn, err := w.rt.Begin(bg, req)
		if err != nil {
			t.Fatalf("Begin: %v", err)
		}
		a := tn.Next()
		for a.Kind == core.ActionModel || a.Kind == core.ActionTool {
			if a.Kind == core.ActionTool {
				if a.Call.Name == "pay" {
					w.pays.Add(1)
				} else {
					w.looks.Add(1)
				}
				a = tn.FeedTool("ran "+a.Call.Name, nil)
				continue
			}
			last := a.Request.Messages[len(a.Request.Messages)-1]
			if last.Role == core.RoleUser {
				a = tn.FeedModel(&core.ModelReply{ToolCalls: []core.ToolCall{{ID: "p", Name: "pay"}, {ID: "l", Name: "look"}}}, nil)
			} else {
				a = tn.FeedModel(&core.ModelReply{Content: "ok"}, nil)
			}
		}
		return a
	}
	a := drive(core.RunRequest{SessionID: "s", Input: "q"})
	if a.Kind != core.ActionDone || a.Result.Status != core.StatusAwaitingApproval || w.counts() != [2]int32{0, 1} {
		t.Fatalf("first turn %+v, runs %v", a, w.counts())
	}
	a = drive(core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "p", Approved: true}}})
	if a.Kind != core.ActionDone || a.Result.Status != "completed" || w.counts() != [2]int32{1, 1} {
		t.Fatalf("resumed turn %+v, runs %v", a, w.counts())
	}
}

// Ensure a host's func that returns a *core.Error that is not the
// runtime's (a typed nil, one without a code) fails the run with the
// func's code, changing nothing, instead of panicking or failing it
// without a code.
func TestRun_ForeignErrors(t *testing.T) {
	host := &contract.ForeignHost{}
	rt := mustRuntime(t, core.Config{Model: host.Model(), Tools: host.Tools()})
	contract.RunForeignErrors(t, contract.ForeignEdge{
		Host: host,
		Run: func(req core.RunRequest) error {
			_, err := rt.Execute(bg, req)
			return err
		},
		Messages: func(id string) int { return len(messagesOf(rt, id)) },
	})
}
