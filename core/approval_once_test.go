package core_test

import (
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// onceWorld is a runtime whose model asks, for each user message, for a
// "pay" and a "mail" call, both needing approval, and whose continuation
// after tool results fails as a case makes it: each tool counts its runs.
type onceWorld struct {
	rt    *core.Runtime
	pays  atomic.Int32
	mails atomic.Int32
	// fail, when set, answers the model's call after tool results. It is
	// read by model calls that a cancelled run left going in their
	// goroutine, so it is set through setFail.
	fail atomic.Pointer[func(core.Context) error]
}

// setFail sets (nil: clears) how the model's call after tool results fails.
func (w *onceWorld) setFail(f func(core.Context) error) {
	if f == nil {
		w.fail.Store(nil)
		return
	}
	w.fail.Store(&f)
}

// need asks approval of every call: the tools a person approves.
func need(core.ToolInvocation) (bool, error) { return true, nil }

func newOnceWorld(t *testing.T, cfg core.Config) *onceWorld {
	w := &onceWorld{}
	cfg.Model = core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == core.RoleUser {
			return &core.ModelReply{ToolCalls: []core.ToolCall{
				{ID: "pay-" + last.Content, Name: "pay", Arguments: `{"amount":5}`},
				{ID: "mail-" + last.Content, Name: "mail", Arguments: `{}`},
			}}, nil
		}
		if fail := w.fail.Load(); fail != nil {
			if err := (*fail)(ctx); err != nil {
				return nil, err
			}
		}
		return &core.ModelReply{Content: "done"}, nil
	})
	cfg.Tools = []core.Tool{
		{ToolSpec: core.ToolSpec{Name: "pay"}, NeedsApproval: need,
			Call: func(core.Context, core.ToolInvocation) (string, error) { w.pays.Add(1); return "paid", nil }},
		{ToolSpec: core.ToolSpec{Name: "mail"}, NeedsApproval: need,
			Call: func(core.Context, core.ToolInvocation) (string, error) { w.mails.Add(1); return "mailed", nil }},
	}
	w.rt = mustRuntime(t, cfg)
	return w
}

// Ensure a resume whose approved tool ran keeps the tool's result through
// any later failure of the run, and reports it in the error's Appended:
// approving again is refused, warm and cold (the host stored what the
// error reported), and the tool ran once (ADR 0019, "nothing paid twice").
// Without the rule each retry of the approval ran pay again.
func TestApproval_NothingPaidTwice(t *testing.T) {
	approve := []core.Approval{{ToolCallID: "pay-q", Approved: true}, {ToolCallID: "mail-q", Reason: "no"}}
	cases := []struct {
		name   string
		cfg    core.Config
		policy core.Policy
		// arm makes the continuation fail; cancel receives the run's id
		// on tool.finished of pay.
		arm    func(w *onceWorld)
		cancel bool
		code   core.Code
	}{
		{name: "model error", code: core.CodeModelError, arm: func(w *onceWorld) {
			w.setFail(func(core.Context) error { return errors.New("upstream 500") })
		}},
		{name: "model typed error", code: core.CodeTimeout, arm: func(w *onceWorld) {
			w.setFail(func(core.Context) error { return core.NewError(core.CodeTimeout, "upstream timed out") })
		}},
		{name: "cancel after tool.finished", code: core.CodeCancelled, cancel: true},
		{name: "timeout in the continuation", code: core.CodeTimeout, policy: core.Policy{TimeoutMs: 30}, arm: func(w *onceWorld) {
			w.setFail(func(ctx core.Context) error { <-ctx.Done(); return ctx.Err() })
		}},
		{name: "maxContextTokens too small", code: core.CodeLimitExceeded, policy: core.Policy{MaxContextTokens: 20}},
		{name: "counter fails after the tool", code: core.CodeInvalidArgument, policy: core.Policy{MaxContextTokens: 10000},
			cfg: core.Config{CountTokens: func(m core.Message) (int, error) {
				if m.Role == core.RoleTool && m.Content == "paid" {
					return 0, errors.New("counter down")
				}
				return core.EstimateTokens(m)
			}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newOnceWorld(t, tc.cfg)
			paused := mustComplete(t, w.rt, core.RunRequest{SessionID: "s", Input: "q"})
			if paused.Status != core.StatusAwaitingApproval || len(paused.PendingApprovals) != 2 {
				t.Fatalf("pause: %+v", paused)
			}
			stored := core.SeedMessages(paused.Appended)
			if tc.arm != nil {
				tc.arm(w)
			}
			var failed *core.Error
			req := core.RunRequest{SessionID: "s", Approvals: approve, Policy: tc.policy, OnEvent: func(ev core.Event) {
				if tc.cancel && ev.Type == core.EventToolFinished && ev.ToolCall.Name == "pay" {
					w.rt.CancelRun(ev.RunID)
				}
				if ev.Type == core.EventRunFailed || ev.Type == core.EventRunCancelled {
					failed = ev.Err
				}
			}}
			_, err := w.rt.Execute(bg, req)
			e := core.AsError(err)
			if e == nil || e.Code != tc.code {
				t.Fatalf("resume: %v, want %s; pays %d", err, tc.code, w.pays.Load())
			}
			want := []string{"tool:paid", "tool:Tool call denied: no"}
			if got := contents(e.Appended); !reflect.DeepEqual(got, want) {
				t.Fatalf("error's appended %q, want %q (%v, pays %d)", got, want, e, w.pays.Load())
			}
			if failed == nil || !reflect.DeepEqual(failed.Appended, e.Appended) {
				t.Fatalf("the failure event's error %+v, want appended %q", failed, want)
			}
			if got := contents(messagesOf(w.rt, "s")); !reflect.DeepEqual(got, append(contents(paused.Appended), want...)) {
				t.Fatalf("session %q", got)
			}
			stored = append(stored, core.SeedMessages(e.Appended)...)
			w.setFail(nil)
			for range 3 {
				mustRefuse(t, w.rt, core.RunRequest{SessionID: "s", Approvals: approve, Policy: tc.policy}, core.CodeInvalidArgument)
			}
			cold := newOnceWorld(t, tc.cfg)
			mustRefuse(t, cold.rt, core.RunRequest{SessionID: "s", Approvals: approve, History: stored, WithHistory: true}, core.CodeInvalidArgument)
			if w.pays.Load() != 1 || w.mails.Load() != 0 || cold.pays.Load() != 0 {
				t.Fatalf("pay ran %d+%d times, mail %d; want once and never", w.pays.Load(), cold.pays.Load(), w.mails.Load())
			}
			// The conversation goes on from the stored results.
			res := mustComplete(t, cold.rt, core.RunRequest{SessionID: "s", Input: "next", History: stored, WithHistory: true})
			if res.Status != core.StatusAwaitingApproval || res.Seed.Mode != core.SeedCold {
				t.Fatalf("next turn %+v", res)
			}
		})
	}
}

// Ensure a failure before any approved tool ran keeps nothing: the
// session is as the pause left it and the error has no Appended.
func TestApproval_FailureBeforeToolKeepsNothing(t *testing.T) {
	w := newOnceWorld(t, core.Config{})
	paused := mustComplete(t, w.rt, core.RunRequest{SessionID: "s", Input: "q"})
	// mail is approved but fails: pay's denial before it is not kept.
	approve := []core.Approval{{ToolCallID: "pay-q", Reason: "no"}, {ToolCallID: "mail-q", Approved: true}}
	w.rt = mustRuntime(t, core.Config{Model: core.ModelFunc(func(core.Context, *core.ModelRequest) (*core.ModelReply, error) {
		return &core.ModelReply{Content: "done"}, nil
	}), Tools: []core.Tool{
		{ToolSpec: core.ToolSpec{Name: "pay"}, NeedsApproval: need, Call: func(core.Context, core.ToolInvocation) (string, error) { return "paid", nil }},
		{ToolSpec: core.ToolSpec{Name: "mail"}, NeedsApproval: need, Call: func(core.Context, core.ToolInvocation) (string, error) {
			return "", errors.New("smtp down")
		}},
	}})
	_, err := w.rt.Execute(bg, core.RunRequest{SessionID: "s", Approvals: approve, History: core.SeedMessages(paused.Appended), WithHistory: true})
	e := core.AsError(err)
	if e == nil || e.Code != core.CodeToolError || e.Appended != nil {
		t.Fatalf("resume: %+v", e)
	}
	if got := contents(messagesOf(w.rt, "s")); !reflect.DeepEqual(got, contents(paused.Appended)) {
		t.Fatalf("session %q", got)
	}
}

// Ensure the size check of a denial reason counts the whole result
// message, its tool_call_id too: a reason that makes the result one byte
// over maxMessageBytes is refused before anything runs, and one that
// makes it exactly the limit is stored. Before, the reason passed the
// check, pay ran, and the denial failed the run limit_exceeded.
func TestApproval_DenialReasonSizeCountsTheCallID(t *testing.T) {
	const limit = 200
	cfg := core.Config{Limits: core.Limits{MaxMessageBytes: limit}}
	fits := strings.Repeat("r", limit-len(core.DeniedContent(""))-len("mail-q")-1)
	w := newOnceWorld(t, cfg)
	mustComplete(t, w.rt, core.RunRequest{SessionID: "s", Input: "q"})
	over := []core.Approval{{ToolCallID: "pay-q", Approved: true}, {ToolCallID: "mail-q", Reason: fits + "x"}}
	mustRefuse(t, w.rt, core.RunRequest{SessionID: "s", Approvals: over}, core.CodeLimitExceeded)
	if w.pays.Load() != 0 {
		t.Fatalf("pay ran %d times for a refused resume", w.pays.Load())
	}
	res := mustComplete(t, w.rt, core.RunRequest{SessionID: "s", Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}, {ToolCallID: "mail-q", Reason: fits}}})
	if got := res.Appended[1]; got.Size() != limit || got.ToolCallID != "mail-q" {
		t.Fatalf("denial %+v of size %d, want %d", got, got.Size(), limit)
	}
	if w.pays.Load() != 1 {
		t.Fatalf("pay ran %d times", w.pays.Load())
	}
}
