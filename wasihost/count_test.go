package wasihost

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/contract"
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
