package wasihost

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// onceWorld is a runtime in a module whose Go model asks, for each user
// message, for a "pay" and a "mail" call, both needing approval, and
// whose answer to tool results fails as a case makes it; each tool
// counts its runs.
type onceWorld struct {
	rt    *Runtime
	pays  atomic.Int32
	mails atomic.Int32
	// fail, when set, answers the model's call after tool results. It is
	// read by model calls that a cancelled or timed-out run left going in
	// their goroutine, so it is set through setFail.
	fail atomic.Pointer[func(context.Context) error]
}

// setFail sets (nil: clears) how the model's call after tool results fails.
func (w *onceWorld) setFail(f func(context.Context) error) {
	if f == nil {
		w.fail.Store(nil)
		return
	}
	w.fail.Store(&f)
}

func newOnceWorld(t *testing.T, start func(testing.TB) *Instance, cfg Config) *onceWorld {
	w := &onceWorld{}
	need := func(core.ToolInvocation) (bool, error) { return true, nil }
	cfg.Model = core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == core.RoleUser {
			return &core.ModelReply{ToolCalls: []core.ToolCall{
				{ID: "pay-" + last.Content, Name: "pay", Arguments: `{}`},
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
			Call: func(context.Context, core.ToolInvocation) (string, error) { w.pays.Add(1); return "paid", nil }},
		{ToolSpec: core.ToolSpec{Name: "mail"}, NeedsApproval: need,
			Call: func(context.Context, core.ToolInvocation) (string, error) { w.mails.Add(1); return "mailed", nil }},
	}
	w.rt = mustRuntime(t, start(t), cfg)
	return w
}

// Ensure, on both modules, a resume whose approved tool ran keeps its
// result through each later failure of the run and reports it in the
// error's Appended (and the failure event's); approving again is refused
// three times warm and once cold, from the history the host stored with
// the error's messages, and pay ran once (docs/adr/0019-tool-approvals.md,
// "Amendment: nothing paid twice"). Before, each retry ran pay again.
func TestApprovals_NothingPaidTwice(t *testing.T) {
	approve := []core.Approval{{ToolCallID: "pay-q", Approved: true}, {ToolCallID: "mail-q", Reason: "no"}}
	counter := func(m core.Message) (int, error) {
		if m.Role == core.RoleTool && m.Content == "paid" {
			return 0, errors.New("counter down")
		}
		return core.EstimateTokens(m)
	}
	cases := []struct {
		name   string
		cfg    Config
		policy core.Policy
		arm    func(w *onceWorld)
		cancel bool
		code   core.Code
	}{
		{name: "model error", code: core.CodeModelError, arm: func(w *onceWorld) {
			w.setFail(func(context.Context) error { return errors.New("upstream 500") })
		}},
		{name: "cancel after tool.finished", code: core.CodeCancelled, cancel: true, arm: func(w *onceWorld) {
			w.setFail(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		}},
		{name: "timeout in the continuation", code: core.CodeTimeout, policy: core.Policy{TimeoutMs: 50}, arm: func(w *onceWorld) {
			w.setFail(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		}},
		{name: "maxContextTokens too small", code: core.CodeLimitExceeded, policy: core.Policy{MaxContextTokens: 20}},
		{name: "counter fails after the tool", code: core.CodeInvalidArgument, policy: core.Policy{MaxContextTokens: 10000},
			cfg: Config{CountTokens: counter}},
	}
	for _, mod := range modules {
		for _, tc := range cases {
			t.Run(mod.name+"/"+tc.name, func(t *testing.T) {
				w := newOnceWorld(t, mod.start, tc.cfg)
				paused, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "q"})
				if err != nil || paused.Status != core.StatusAwaitingApproval {
					t.Fatalf("pause: %+v, %v", paused, err)
				}
				stored := core.SeedMessages(paused.Appended)
				if tc.arm != nil {
					tc.arm(w)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var failed *core.Error
				_, err = w.rt.Run(ctx, core.RunRequest{SessionID: "s", Approvals: approve, Policy: tc.policy, OnEvent: func(ev core.Event) {
					if tc.cancel && ev.Type == core.EventToolFinished && ev.ToolCall.Name == "pay" {
						cancel()
					}
					if ev.Type == core.EventRunFailed || ev.Type == core.EventRunCancelled {
						failed = ev.Err
					}
				}})
				var e *core.Error
				if !errors.As(err, &e) || e.Code != tc.code {
					t.Fatalf("resume: %v, want %s (pays %d)", err, tc.code, w.pays.Load())
				}
				want := []string{"tool:paid", "tool:Tool call denied: no"}
				if got := contentsOf(e.Appended); !reflect.DeepEqual(got, want) {
					t.Fatalf("error's appended %q, want %q", got, want)
				}
				if failed == nil || !reflect.DeepEqual(failed.Appended, e.Appended) {
					t.Fatalf("failure event's error %+v", failed)
				}
				stored = append(stored, core.SeedMessages(e.Appended)...)
				w.setFail(nil)
				for range 3 {
					_, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Approvals: approve, Policy: tc.policy})
					if core.ErrorCode(err) != core.CodeInvalidArgument {
						t.Fatalf("approving again: %v", err)
					}
				}
				cold := newOnceWorld(t, mod.start, tc.cfg)
				_, err = cold.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Approvals: approve, History: stored, WithHistory: true})
				if core.ErrorCode(err) != core.CodeInvalidArgument {
					t.Fatalf("approving cold: %v", err)
				}
				if w.pays.Load() != 1 || cold.pays.Load() != 0 || w.mails.Load() != 0 {
					t.Fatalf("pay ran %d+%d times, mail %d", w.pays.Load(), cold.pays.Load(), w.mails.Load())
				}
			})
		}
	}
}

// Ensure, on both modules, a denial reason whose result message is one
// byte over maxMessageBytes (its tool_call_id counted) is refused before
// pay runs, and one at the limit is stored. Before, pay ran and the
// denial then failed the run limit_exceeded.
func TestApprovals_DenialReasonCountsCallID(t *testing.T) {
	const limit = 200
	for _, mod := range modules {
		t.Run(mod.name, func(t *testing.T) {
			w := newOnceWorld(t, mod.start, Config{Limits: core.Limits{MaxMessageBytes: limit}})
			if _, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "q"}); err != nil {
				t.Fatal(err)
			}
			fits := strings.Repeat("r", limit-len(core.DeniedContent(""))-len("mail-q")-1)
			_, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s",
				Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}, {ToolCallID: "mail-q", Reason: fits + "x"}}})
			if core.ErrorCode(err) != core.CodeLimitExceeded || w.pays.Load() != 0 {
				t.Fatalf("oversize reason: %v, pay ran %d times", err, w.pays.Load())
			}
			res, err := w.rt.Run(context.Background(), core.RunRequest{SessionID: "s",
				Approvals: []core.Approval{{ToolCallID: "pay-q", Approved: true}, {ToolCallID: "mail-q", Reason: fits}}})
			if err != nil || res.Status != "completed" || w.pays.Load() != 1 {
				t.Fatalf("reason at the limit: %+v, %v, pay ran %d times", res, err, w.pays.Load())
			}
		})
	}
}
