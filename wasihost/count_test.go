package wasihost

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
)

// countingCounter is core.EstimateTokens that records what it counts.
type countingCounter struct {
	mu   sync.Mutex
	seen []string
}

func (c *countingCounter) count(m core.Message) (int, error) {
	c.mu.Lock()
	c.seen = append(c.seen, string(m.Role)+":"+m.Content)
	c.mu.Unlock()
	return core.EstimateTokens(m)
}

func (c *countingCounter) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// Ensure the host's counter is called once per stored message across
// turns, once for the system prompt and once per tool spec, and never
// without a token budget.
func TestModule_HostCounter_CountsCached(t *testing.T) {
	counter := &countingCounter{}
	tools := []core.Tool{{ToolSpec: core.ToolSpec{Name: "a"}, Call: func(core.Context, core.ToolInvocation) (string, error) { return "", nil }}}
	rt := mustRuntime(t, mustInstance(t), Config{SystemPrompt: "sys", Tools: tools, CountTokens: counter.count})
	const turns = 20
	for i := range turns {
		if _, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "q" + strconv.Itoa(i),
			Policy: core.Policy{MaxContextTokens: 60}}); err != nil {
			t.Fatal(err)
		}
	}
	// Each turn counts its input and the previous reply; the last reply
	// is not counted yet.
	if want := 1 + 1 + 2*turns - 1; counter.calls() != want {
		t.Fatalf("the counter was called %d times for %d stored messages; want %d", counter.calls(), 2*turns, want)
	}
	contract.CheckCountedOnce(t, counter.seen)
	before := counter.calls()
	if _, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "free"}); err != nil || counter.calls() != before {
		t.Fatalf("without a budget: %v, %d more calls", err, counter.calls()-before)
	}
}

// Ensure a counter that fails (contract.CounterFaults: an error, typed
// errors, a negative or too large count, a panic) fails the run typed as
// core does in process, at the input and at a later model call, and
// changes nothing; the runtime goes on. A counter that never returns
// ends with the run's timeout or its context.
func TestModule_HostCounter_Err(t *testing.T) {
	c := &contract.FaultyCounter{}
	rt := mustRuntime(t, mustInstance(t), Config{CountTokens: c.Count})
	sess := func() []core.Message {
		s, _, err := rt.Session("s")
		if err != nil {
			t.Fatal(err)
		}
		return s.Messages
	}
	contract.RunCounterFaults(t, contract.CounterEdge{
		Counter: c,
		Run: func(ctx context.Context, req core.RunRequest) error {
			_, err := rt.Run(ctx, req)
			return err
		},
		State:    func() any { return sess() },
		Messages: func() int { return len(sess()) },
		Bounded:  true,
	})
}

// Ensure a counter whose counts for the same message change between
// calls is still asked once per message (the module caches the first
// count), and one that closes the runtime ends the run cancelled, after
// which the runtime refuses runs typed.
func TestModule_HostCounter_Hostile(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	changing := func(core.Message) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return calls%7 + 1, nil
	}
	rt := mustRuntime(t, mustInstance(t), Config{CountTokens: changing})
	for i := range 6 {
		if _, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "m" + strconv.Itoa(i),
			Policy: core.Policy{MaxContextTokens: 12}}); err != nil {
			t.Fatal(err)
		}
	}
	if s, _, err := rt.Session("s"); err != nil || len(s.Messages) != 12 || calls > 12 {
		t.Fatalf("%d messages (%v), %d counts; want 12 messages counted at most once each", len(s.Messages), err, calls)
	}

	var closing *Runtime
	closing = mustRuntime(t, mustInstance(t), Config{CountTokens: func(core.Message) (int, error) {
		closing.Close()
		return 1, nil
	}})
	policy := core.Policy{MaxContextTokens: 100}
	if _, err := closing.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "q", Policy: policy}); core.ErrorCode(err) != core.CodeCancelled {
		t.Fatalf("a counter that closes the runtime: %v, want cancelled", err)
	}
	if _, err := closing.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "q", Policy: policy}); core.ErrorCode(err) == "" || core.ErrorCode(err) == core.CodeInternal {
		t.Fatalf("a run on the closed runtime: %v, want a typed refusal", err)
	}
}
