package wasihost

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
	"github.com/agentrt/agentrt/mock"
)

// approvals is a runtime in the WASI module whose Go model asks, for
// each user message, for a "pay" call (which needs approval as the
// predicate says) and a "look" call (which never does), and answers tool
// results with their contents; each tool counts its runs.
type approvals struct {
	in        *Instance
	rt        *Runtime
	pays      atomic.Int32
	looks     atomic.Int32
	predicate func(core.ToolInvocation) (bool, error)
	// onPay and onModel, when set, run inside the pay tool and inside the
	// model's answer to tool results.
	onPay, onModel func()
}

func newApprovals(t *testing.T, predicate func(core.ToolInvocation) (bool, error)) *approvals {
	return newApprovalsOn(t, mustInstance, predicate)
}

// newApprovalsOn is newApprovals on an instance start makes (modules).
func newApprovalsOn(t *testing.T, start func(testing.TB) *Instance, predicate func(core.ToolInvocation) (bool, error)) *approvals {
	w := &approvals{predicate: predicate, in: start(t)}
	if w.predicate == nil {
		w.predicate = func(core.ToolInvocation) (bool, error) { return true, nil }
	}
	w.rt = w.runtime(t, w.in)
	return w
}

// runtime returns a runtime over the same tools and model in in (a new
// instance is a cold start).
func (w *approvals) runtime(t *testing.T, in *Instance) *Runtime {
	model := &mock.Model{CompleteFn: func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		if w.onModel != nil && req.Messages[len(req.Messages)-1].Role == core.RoleTool {
			w.onModel()
		}
		return mock.PayAndLook(ctx, req)
	}}
	return mustRuntime(t, in, Config{Model: model, Tools: []core.Tool{
		{ToolSpec: core.ToolSpec{Name: "pay"}, NeedsApproval: func(inv core.ToolInvocation) (bool, error) { return w.predicate(inv) },
			Call: func(context.Context, core.ToolInvocation) (string, error) {
				w.pays.Add(1)
				if w.onPay != nil {
					w.onPay()
				}
				return "paid", nil
			}},
		{ToolSpec: core.ToolSpec{Name: "look"},
			Call: func(context.Context, core.ToolInvocation) (string, error) { w.looks.Add(1); return "looked", nil }},
	}})
}

func (w *approvals) counts() [2]int32 { return [2]int32{w.pays.Load(), w.looks.Load()} }

func contentsOf(msgs []core.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Role) + ":" + m.Content
	}
	return out
}

func sessionOf(t *testing.T, rt *Runtime, id string) []core.Message {
	t.Helper()
	s, _, err := rt.Session(id)
	if err != nil {
		t.Fatal(err)
	}
	return s.Messages
}

// pause runs "q" on session s of rt and checks that it stops for "pay-q"
// after "look-q" ran (a mix of an approval and a plain tool in one
// reply), with the run.awaiting_approval event last.
func (w *approvals) pause(t *testing.T, rt *Runtime) *core.Result {
	t.Helper()
	var last core.Event
	res, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "q", OnEvent: func(ev core.Event) { last = ev }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != core.StatusAwaitingApproval || last.Type != core.EventRunAwaitingApproval || last.Result != res {
		t.Fatalf("status %q, last event %+v, want awaiting approval", res.Status, last)
	}
	want := []core.PendingApproval{{ToolCallID: "pay-q", Name: "pay", Arguments: `{"amount":5}`}}
	if !reflect.DeepEqual(res.PendingApprovals, want) || res.Reply.Role != core.RoleAssistant || len(res.Reply.ToolCalls) != 2 {
		t.Fatalf("pending %+v, reply %+v", res.PendingApprovals, res.Reply)
	}
	if got := contentsOf(res.Appended); !reflect.DeepEqual(got, []string{"user:q", "assistant:", "tool:looked"}) {
		t.Fatalf("appended %q", got)
	}
	if got := sessionOf(t, rt, "s"); !reflect.DeepEqual(got, res.Appended) {
		t.Fatalf("session %+v, appended %+v", got, res.Appended)
	}
	if w.counts() != [2]int32{0, 1} {
		t.Fatalf("runs %v at the pause", w.counts())
	}
	return res
}

func (w *approvals) mustRefuse(t *testing.T, rt *Runtime, req core.RunRequest) {
	t.Helper()
	before, runs := sessionOf(t, rt, req.SessionID), w.counts()
	if _, err := rt.Run(context.Background(), req); core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Fatalf("run %+v: %v, want invalid_argument", req.Approvals, err)
	}
	if after := sessionOf(t, rt, req.SessionID); !reflect.DeepEqual(after, before) || w.counts() != runs {
		t.Fatalf("a refused run changed the session (%d to %d messages) or ran tools (%v to %v)", len(before), len(after), runs, w.counts())
	}
}

// Ensure the module pauses before a call its Go predicate says needs
// approval, an approval runs the tool exactly once and the model goes
// on, and approving again, or an unknown call, is refused and runs
// nothing.
func TestApprovals_PauseApproveOnce(t *testing.T) {
	for _, mod := range modules {
		t.Run(mod.name, func(t *testing.T) { pauseApproveOnce(t, newApprovalsOn(t, mod.start, nil)) })
	}
}

func pauseApproveOnce(t *testing.T, w *approvals) {
	w.pause(t, w.rt)
	w.mustRefuse(t, w.rt, core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "nope", Approved: true}}})
	w.mustRefuse(t, w.rt, core.RunRequest{SessionID: "s", Input: "other"})
	var last core.EventType
	res, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}},
		OnEvent: func(ev core.Event) { last = ev.Type }})
	if err != nil || res.Status != "completed" || last != core.EventRunCompleted || res.Reply.Content != "done: looked | paid" {
		t.Fatalf("resumed: %+v, %v, last %q", res, err, last)
	}
	if got := contentsOf(res.Appended); !reflect.DeepEqual(got, []string{"tool:paid", "assistant:done: looked | paid"}) {
		t.Fatalf("appended %q", got)
	}
	if w.counts() != [2]int32{1, 1} {
		t.Fatalf("runs %v after the approval", w.counts())
	}
	for range 2 {
		w.mustRefuse(t, w.rt, core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}}})
	}
}

// Ensure a denied call never runs and gets a "Tool call denied" result
// with the reason, and the model continues.
func TestApprovals_Deny(t *testing.T) {
	w := newApprovals(t, nil)
	w.pause(t, w.rt)
	res, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "pay-q", Reason: "too much"}}})
	if err != nil || res.Status != "completed" {
		t.Fatalf("denied: %+v, %v", res, err)
	}
	want := []string{"tool:" + core.DeniedContent("too much"), "assistant:done: looked | Tool call denied: too much"}
	if got := contentsOf(res.Appended); !reflect.DeepEqual(got, want) || w.counts() != [2]int32{0, 1} {
		t.Fatalf("appended %q, runs %v", got, w.counts())
	}
}

// Ensure a fresh module instance given the stored history alone (which
// ends with the unanswered call) and the approval resumes as a warm one
// would, running the tool once; an input on the same history is refused
// as on the warm session, with or without repair, and the history checks
// paused.
func TestApprovals_ColdStart(t *testing.T) {
	w := newApprovals(t, nil)
	paused := w.pause(t, w.rt)
	stored := make([]core.SeedMessage, len(paused.Appended))
	for i, m := range paused.Appended {
		stored[i] = core.SeedMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls}
	}
	cold := w.runtime(t, mustInstance(t))
	for _, repair := range []bool{false, true} {
		_, err := cold.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "again", WithHistory: true, History: stored, Policy: core.Policy{Repair: repair}})
		if e := core.AsError(err); e == nil || e.Code != core.CodeInvalidArgument || e.Message != `session "s" awaits approval of tool call "pay-q": answer it with approvals` {
			t.Fatalf("an input, repair %v: %v, want the awaits-approval refusal", repair, err)
		}
	}
	if c, err := cold.CheckHistory(stored); err != nil || !c.OK || !c.Paused || len(c.Awaiting) != 1 || c.Awaiting[0].Arguments != `{"amount":5}` {
		t.Fatalf("check %+v, %v, want ok and paused", c, err)
	}
	res, err := cold.Run(context.Background(), core.RunRequest{SessionID: "s", WithHistory: true, History: stored,
		Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}}})
	if err != nil || res.Status != "completed" || res.Reply.Content != "done: looked | paid" || w.counts() != [2]int32{1, 1} {
		t.Fatalf("cold resume: %+v, %v, runs %v", res, err, w.counts())
	}
	// The same history and approval again: the session holds the result.
	w.mustRefuse(t, cold, core.RunRequest{SessionID: "s", WithHistory: true, History: stored, Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}}})
}

// Ensure a UIMessage history whose last part is approval-responded
// resumes on a fresh instance with the decision it carries.
func TestApprovals_UIMessageResponded(t *testing.T) {
	w := newApprovals(t, nil)
	v, err := hostjson.Parse([]byte(`[
		{"id":"u1","role":"user","parts":[{"type":"text","text":"q"}]},
		{"id":"a1","role":"assistant","parts":[
			{"type":"tool-look","toolCallId":"look-q","state":"output-available","input":{},"output":"looked"},
			{"type":"tool-pay","toolCallId":"pay-q","state":"approval-responded","input":{"amount":5},"approval":{"id":"ap1","approved":true}}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	history, err := hostmsg.Messages(v, 0)
	if err != nil {
		t.Fatal(err)
	}
	decided, err := hostmsg.Approvals(v)
	if err != nil || len(decided) != 1 {
		t.Fatalf("decisions %+v, %v", decided, err)
	}
	res, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", WithHistory: true, History: history, Approvals: decided})
	if err != nil || res.Status != "completed" || w.counts() != [2]int32{1, 0} {
		t.Fatalf("resume: %+v, %v, runs %v", res, err, w.counts())
	}
}

// Ensure a predicate that fails or panics fails the run tool_error,
// rolled back, with no tool run and no session left waiting.
func TestApprovals_PredicateFails(t *testing.T) {
	for name, p := range map[string]func(core.ToolInvocation) (bool, error){
		"error": func(core.ToolInvocation) (bool, error) { return false, errors.New("no ledger") },
		"panic": func(core.ToolInvocation) (bool, error) { panic("broken") },
	} {
		t.Run(name, func(t *testing.T) {
			w := newApprovals(t, p)
			_, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "q"})
			if core.ErrorCode(err) != core.CodeToolError || !strings.Contains(err.Error(), `approval check of tool "pay" failed`) {
				t.Fatalf("got %v, want tool_error", err)
			}
			if _, ok, _ := w.rt.Session("s"); ok || w.counts() != [2]int32{0, 0} {
				t.Fatalf("session left (%v) or tools ran (%v)", ok, w.counts())
			}
			// The instance stays usable: the next run is asked again.
			w.predicate = func(core.ToolInvocation) (bool, error) { return false, nil }
			if res, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "t", Input: "q"}); err != nil || res.Status != "completed" {
				t.Fatalf("after: %+v, %v", res, err)
			}
		})
	}
}

// Ensure the predicate decides by the call's arguments: a call it lets
// through runs with the plain one, and the run completes.
func TestApprovals_PredicateSaysNo(t *testing.T) {
	w := newApprovals(t, func(inv core.ToolInvocation) (bool, error) { return strings.Contains(inv.Arguments, "500"), nil })
	res, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "q"})
	if err != nil || res.Status != "completed" || len(res.PendingApprovals) != 0 || w.counts() != [2]int32{1, 1} {
		t.Fatalf("%+v, %v, runs %v", res, err, w.counts())
	}
}

// Ensure both modules resume every approval case of the corpus as
// the other edges do, each tool running as often as the case counts.
func TestModule_ApprovalContract(t *testing.T) {
	for _, mod := range modules {
		t.Run(mod.name, func(t *testing.T) { runApprovalContract(t, mod.start(t)) })
	}
}

func runApprovalContract(t *testing.T, in *Instance) {
	for _, c := range contract.MustLoadApprovals(t) {
		t.Run(c.Name, func(t *testing.T) {
			var mu sync.Mutex
			runs := map[string]int{}
			tool := func(name, out string) core.Tool {
				return core.Tool{ToolSpec: core.ToolSpec{Name: name},
					NeedsApproval: func(core.ToolInvocation) (bool, error) { return name == "pay", nil },
					Call: func(context.Context, core.ToolInvocation) (string, error) {
						mu.Lock()
						runs[name]++
						mu.Unlock()
						return out, nil
					}}
			}
			rt := mustRuntime(t, in, Config{Tools: []core.Tool{tool("pay", "paid"), tool("look", "looked")}})
			defer rt.Close()
			c.RunApprovalGo(t, contract.ApprovalEdge{
				Check: func(h []core.SeedMessage) (core.HistoryCheck, error) {
					c, err := rt.CheckHistory(h)
					if err != nil {
						return core.HistoryCheck{}, err
					}
					return *c, nil
				},
				Run: func(req core.RunRequest) error { _, err := rt.Run(context.Background(), req); return err },
				Session: func() ([]core.Message, bool) {
					s, ok, err := rt.Session("s")
					if err != nil {
						t.Fatal(err)
					}
					return s.Messages, ok
				},
				Runs: func() map[string]int {
					mu.Lock()
					defer mu.Unlock()
					out := map[string]int{}
					for k, v := range runs {
						out[k] = v
					}
					return out
				},
			})
		})
	}
}

// Ensure a Go host's func that returns a *core.Error that is not the
// runtime's (a typed nil, one without a code) fails the run across the
// module with the func's code, changing nothing, instead of panicking
// the host.
func TestModule_ForeignErrors(t *testing.T) {
	host := &contract.ForeignHost{}
	rt := mustRuntime(t, mustInstance(t), Config{Model: host.Model(), Tools: host.Tools()})
	contract.RunForeignErrors(t, contract.ForeignEdge{
		Host: host,
		Run: func(req core.RunRequest) error {
			_, err := rt.Run(context.Background(), req)
			return err
		},
		Messages: func(id string) int {
			s, _, err := rt.Session(id)
			if err != nil {
				t.Fatal(err)
			}
			return len(s.Messages)
		},
	})
}

// seedOf returns msgs as the host stores them and seeds them back.
func seedOf(msgs []core.Message) []core.SeedMessage {
	out := make([]core.SeedMessage, len(msgs))
	for i, m := range msgs {
		out[i] = core.SeedMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls}
	}
	return out
}

// Ensure a decision for another session's pending call, or for a session
// with nothing pending, is refused and changes neither session, and an
// approval sent to a closed runtime is refused typed.
func TestApprovals_OtherSessionAndClosed(t *testing.T) {
	w := newApprovals(t, nil)
	w.pause(t, w.rt)
	if _, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "t", Input: "r"}); err != nil {
		t.Fatal(err)
	}
	s, other := sessionOf(t, w.rt, "s"), sessionOf(t, w.rt, "t")
	w.mustRefuse(t, w.rt, core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "pay-r", Approved: true}}})
	w.mustRefuse(t, w.rt, core.RunRequest{SessionID: "t", Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}, {ToolCallID: "pay-r", Approved: true}}})
	w.mustRefuse(t, w.rt, core.RunRequest{SessionID: "u", Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}}})
	if !reflect.DeepEqual(sessionOf(t, w.rt, "s"), s) || !reflect.DeepEqual(sessionOf(t, w.rt, "t"), other) {
		t.Fatal("a refused approval changed another session")
	}
	if err := w.rt.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}}})
	if core.ErrorCode(err) == "" || core.ErrorCode(err) == core.CodeInternal || w.counts() != [2]int32{0, 2} {
		t.Fatalf("an approval to a closed runtime: %v, runs %v", err, w.counts())
	}
}

// Ensure an approval and an input sent at once to a paused session run
// one at a time: the tool runs once, and the input is either refused
// (it came first, the session was paused) or runs after the resume.
func TestApprovals_RaceWithInput(t *testing.T) {
	for range 4 {
		w := newApprovals(t, nil)
		w.pause(t, w.rt)
		var wg sync.WaitGroup
		var resumeErr, inputErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, resumeErr = w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}}})
		}()
		go func() {
			defer wg.Done()
			_, inputErr = w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "x"})
		}()
		wg.Wait()
		if resumeErr != nil {
			t.Fatalf("the resume: %v", resumeErr)
		}
		got := contentsOf(sessionOf(t, w.rt, "s"))
		want := []string{"user:q", "assistant:", "tool:looked", "tool:paid", "assistant:done: looked | paid"}
		runs := [2]int32{1, 1}
		if inputErr == nil {
			// The input ran after the resume, and paused on its own pay call.
			want = append(want, "user:x", "assistant:", "tool:looked")
			runs = [2]int32{1, 2}
		} else if core.ErrorCode(inputErr) != core.CodeInvalidArgument {
			t.Fatalf("the input: %v, want invalid_argument or none", inputErr)
		}
		if !reflect.DeepEqual(got, want) || w.counts() != runs {
			t.Fatalf("session %q, runs %v; want %q, %v", got, w.counts(), want, runs)
		}
	}
}

// Ensure the app closed during a resume (the runtime closed, or the
// instance dropped, inside the approved tool before its result, or
// inside the model's next call after it) leaves the host's stored
// history as it was at the pause, and a cold start resumes it once: the
// conversation holds the call's result once, and a second cold resume of
// the completed conversation is refused.
func TestApprovals_KilledMidResume(t *testing.T) {
	for _, at := range []string{"tool", "model"} {
		for _, kill := range []string{"runtime", "instance"} {
			t.Run(kill+" in the "+at, func(t *testing.T) {
				w := newApprovals(t, nil)
				stored := seedOf(w.pause(t, w.rt).Appended)
				die := func() {
					if kill == "runtime" {
						w.rt.Close()
					} else {
						w.in.Close(context.Background())
					}
				}
				if at == "tool" {
					w.onPay = die
				} else {
					w.onModel = die
				}
				res, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}}})
				// A closed runtime's run ends cancelled; a dropped instance
				// answers ErrDead to every call.
				if kill == "runtime" && core.ErrorCode(err) != core.CodeCancelled || kill == "instance" && !errors.Is(err, ErrDead) {
					t.Fatalf("the killed resume: %+v, %v", res, err)
				}
				w.onPay, w.onModel = nil, nil
				cold := w.runtime(t, mustInstance(t))
				res, err = cold.Run(context.Background(), core.RunRequest{SessionID: "s", WithHistory: true, History: stored,
					Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}}})
				if err != nil || res.Status != "completed" {
					t.Fatalf("the cold resume: %+v, %v", res, err)
				}
				conversation := append(append([]core.SeedMessage(nil), stored...), seedOf(res.Appended)...)
				var got []string
				for _, m := range conversation {
					got = append(got, string(m.Role)+":"+m.Content)
				}
				if want := []string{"user:q", "assistant:", "tool:looked", "tool:paid", "assistant:done: looked | paid"}; !reflect.DeepEqual(got, want) {
					t.Fatalf("the stored conversation %q, want %q", got, want)
				}
				again := w.runtime(t, mustInstance(t))
				if _, err := again.Run(context.Background(), core.RunRequest{SessionID: "s", WithHistory: true, History: conversation,
					Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}}}); core.ErrorCode(err) != core.CodeInvalidArgument {
					t.Fatalf("a second resume of the completed conversation: %v, want invalid_argument", err)
				}
				if w.counts() != [2]int32{2, 1} {
					t.Fatalf("runs %v, want pay twice (the killed resume and the cold one) and look once", w.counts())
				}
			})
		}
	}
}

// Ensure a predicate that never returns (and ignores the run's context)
// ends the run with the policy's timeout, or with the context's cancel,
// rolled back with no tool run, and leaves the session free for the next
// run.
func TestApprovals_PredicateHangs(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	var hanging atomic.Bool
	hanging.Store(true)
	w := newApprovals(t, func(core.ToolInvocation) (bool, error) {
		if hanging.Load() {
			<-hang
		}
		return false, nil
	})
	_, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "q", Policy: core.Policy{TimeoutMs: 50}})
	if core.ErrorCode(err) != core.CodeTimeout {
		t.Fatalf("a hanging predicate with a timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := time.AfterFunc(20*time.Millisecond, cancel)
	defer stop.Stop()
	if _, err := w.rt.Run(ctx, core.RunRequest{SessionID: "s", Input: "q"}); core.ErrorCode(err) != core.CodeCancelled {
		t.Fatalf("a hanging predicate, cancelled: %v", err)
	}
	if _, ok, _ := w.rt.Session("s"); ok || w.counts() != [2]int32{0, 0} {
		t.Fatalf("session left (%v) or tools ran (%v)", ok, w.counts())
	}
	hanging.Store(false)
	if res, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "q"}); err != nil || res.Status != "completed" || w.counts() != [2]int32{1, 1} {
		t.Fatalf("after: %+v, %v, runs %v", res, err, w.counts())
	}
}

// Ensure the same approval sent by several goroutines at once resumes
// the run once: one completes, the others are refused invalid_argument,
// and the tool runs once.
func TestApprovals_SameApprovalAtOnce(t *testing.T) {
	w := newApprovals(t, nil)
	w.pause(t, w.rt)
	const n = 4
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}}})
			errs <- err
		}()
	}
	done := 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			done++
		case core.ErrorCode(err) != core.CodeInvalidArgument:
			t.Fatalf("a concurrent approval: %v, want none or invalid_argument", err)
		}
	}
	want := []string{"user:q", "assistant:", "tool:looked", "tool:paid", "assistant:done: looked | paid"}
	if got := contentsOf(sessionOf(t, w.rt, "s")); done != 1 || !reflect.DeepEqual(got, want) || w.counts() != [2]int32{1, 1} {
		t.Fatalf("%d resumed, session %q, runs %v; want 1, %q, one run each", done, got, w.counts(), want)
	}
}
