package hostturn_test

import (
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/internal/hostturn"
	"github.com/agentrt/agentrt/wire"
)

// Ensure the count step over frames: under a token budget a runtime
// whose host counts asks with a count action before seeding and before
// each model call lacking counts, the counts frame answers it, and the
// module's echo model runs after; a runtime without CountByAction, or a
// run without a budget, never asks.
func TestDriver_Count(t *testing.T) {
	rt := mustRuntime(t, core.Config{CountByAction: true, SystemPrompt: "sys"})
	x := hostturn.New(rt, core.Echo{}, wire.ReadPolicyJSON)
	policy := core.Policy{MaxContextTokens: 100}
	counted := 0
	turn := func(input string, wantAsks int) *wire.Action {
		t.Helper()
		a := mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: input, Policy: policy})))
		asks := 0
		for a.Kind == wire.ActCount {
			asks++
			counts := make([]int, len(a.Count))
			for i := range counts {
				counts[i] = 3
			}
			counted += len(counts)
			a = mustAction(t, x.Feed(wire.AppendCounts(nil, &wire.Counts{Handle: a.Handle, Counts: counts})))
		}
		if a.Kind != wire.ActDone || asks != wantAsks {
			t.Fatalf("%s: got action %d after %d asks, want done after %d", input, a.Kind, asks, wantAsks)
		}
		return a
	}
	turn("q1", 1) // the system prompt and the input
	turn("q2", 2) // the input; the previous reply
	if counted != 4 {
		t.Fatalf("the host counted %d messages, want 4", counted)
	}
	// 3 tokens each: the system prompt, two inputs, a reply, the input.
	done := turn("q3", 2)
	if done.Result == nil || x.Turns() != 0 {
		t.Fatalf("got %+v, %d turns", done, x.Turns())
	}
	policy = core.Policy{}
	turn("free", 0)
	plain := hostturn.New(mustRuntime(t, core.Config{}), core.Echo{}, wire.ReadPolicyJSON)
	a := mustAction(t, plain.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "q", Policy: core.Policy{MaxContextTokens: 100}})))
	if a.Kind != wire.ActDone {
		t.Fatalf("a runtime that counts itself: got action %d", a.Kind)
	}
}

// Ensure a bad counts frame is refused and leaves the turn awaiting its
// counts, a failure the host reports fails the run with its code, and
// the typed Count answers as the frame does.
func TestDriver_ErrCount(t *testing.T) {
	rt := mustRuntime(t, core.Config{CountByAction: true})
	x := hostturn.New(rt, core.Echo{}, wire.ReadPolicyJSON)
	begin := wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "q", Policy: core.Policy{MaxContextTokens: 100}})
	a := mustAction(t, x.Begin(begin))
	if a.Kind != wire.ActCount || len(a.Count) != 1 {
		t.Fatalf("got %+v, want a count of the input", a)
	}
	for name, f := range map[string][]byte{
		"unknown handle": wire.AppendCounts(nil, &wire.Counts{Handle: a.Handle + 1, Counts: []int{1}}),
		"malformed":      wire.AppendCounts(nil, &wire.Counts{Handle: a.Handle, Counts: []int{1}})[:8],
	} {
		if e, err := wire.DecodeRefused(x.Feed(f)); err != nil || e.Code != core.CodeInvalidArgument {
			t.Fatalf("%s: got %v, %v", name, e, err)
		}
	}
	if x.Turns() != 1 {
		t.Fatal("a refused frame ended the turn")
	}
	for _, c := range []struct {
		name   string
		counts wire.Counts
		code   core.Code
	}{
		{"failed", wire.Counts{Err: core.NewError(core.CodeInvalidArgument, "countTokens failed: boom")}, core.CodeInvalidArgument},
		{"typed", wire.Counts{Err: core.NewError(core.CodeTimeout, "slow")}, core.CodeTimeout},
		{"huge", wire.Counts{Counts: []int{core.MaxTokenCount + 1}}, core.CodeInvalidArgument},
		{"fewer", wire.Counts{Counts: []int{}}, core.CodeInvalidArgument},
	} {
		if a.Kind != wire.ActCount {
			a = mustAction(t, x.Begin(begin))
		}
		c.counts.Handle = a.Handle
		a = mustAction(t, x.Feed(wire.AppendCounts(nil, &c.counts)))
		if a.Kind != wire.ActFailed || a.Err.Code != c.code {
			t.Fatalf("%s: got %+v, want failed %s", c.name, a, c.code)
		}
	}
	if _, ok := rt.Session("s"); ok || x.Turns() != 0 {
		t.Fatal("a failed count left a session or a turn")
	}
	h, ta, err := x.Start(core.RunRequest{SessionID: "s", Input: "q", Policy: core.Policy{MaxContextTokens: 100}})
	if err != nil || ta.Kind != core.ActionCount {
		t.Fatalf("typed: %+v, %v", ta, err)
	}
	if ta = x.FailCount(h, core.NewError(core.CodeTimeout, "slow")); ta.Kind != core.ActionFailed || ta.Err.Code != core.CodeTimeout {
		t.Fatalf("typed failure: %+v", ta)
	}
	if ta = x.FailCount(h, core.NewError(core.CodeTimeout, "slow")); ta.Kind != core.ActionFailed || ta.Err.Code != core.CodeInvalidArgument {
		t.Fatalf("typed, unknown handle: %+v", ta)
	}
}
