package wasihost

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
	seen := map[string]int{}
	for _, s := range counter.seen {
		seen[s]++
	}
	for s, n := range seen {
		if n > 1 && !strings.HasPrefix(s, "assistant:") {
			t.Errorf("%q counted %d times", s, n)
		}
	}
	before := counter.calls()
	if _, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "free"}); err != nil || counter.calls() != before {
		t.Fatalf("without a budget: %v, %d more calls", err, counter.calls()-before)
	}
}

// Ensure a counter that fails (an error, a typed error, a negative or
// too large count, a panic) fails the run typed as core does in process,
// at the input and at a later model call, and changes nothing; the
// runtime goes on. A counter that never returns ends with the run's
// timeout or its context.
func TestModule_HostCounter_Err(t *testing.T) {
	var mu sync.Mutex
	mode := ""
	block := make(chan struct{})
	defer close(block)
	counter := func(m core.Message) (int, error) {
		mu.Lock()
		md := mode
		mu.Unlock()
		if m.Content != "bad" && !strings.Contains(m.Content, "(model received") {
			return 1, nil
		}
		switch md {
		case "error":
			return 0, errors.New("no tokenizer")
		case "typed":
			return 0, core.NewError(core.CodeLimitExceeded, "the tokenizer is busy")
		case "negative":
			return -1, nil
		case "huge":
			return core.MaxTokenCount + 1, nil
		case "panic":
			panic("tokenizer")
		case "hang":
			<-block
		}
		return 1, nil
	}
	rt := mustRuntime(t, mustInstance(t), Config{CountTokens: counter})
	policy := core.Policy{MaxContextTokens: 100}
	if _, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "hello", Policy: policy}); err != nil {
		t.Fatal(err)
	}
	sess := func() int {
		s, _, err := rt.Session("s")
		if err != nil {
			t.Fatal(err)
		}
		return len(s.Messages)
	}
	n := sess()
	for _, tt := range []struct {
		mode string
		code core.Code
	}{{"error", core.CodeInvalidArgument}, {"typed", core.CodeLimitExceeded}, {"negative", core.CodeInvalidArgument},
		{"huge", core.CodeInvalidArgument}, {"panic", core.CodeInvalidArgument}} {
		for _, at := range []string{"input", "reply"} {
			mu.Lock()
			mode = ""
			if at == "input" {
				mode = tt.mode
			}
			mu.Unlock()
			input := "bad"
			if at == "reply" {
				// The reply of this turn is counted at the next one.
				if _, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "ok", Policy: policy}); err != nil {
					t.Fatal(err)
				}
				n = sess()
				mu.Lock()
				mode = tt.mode
				mu.Unlock()
				input = "next"
			}
			_, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: input, Policy: policy})
			if core.ErrorCode(err) != tt.code {
				t.Fatalf("%s at the %s: got %v, want %s", tt.mode, at, err, tt.code)
			}
			if sess() != n {
				t.Fatalf("%s at the %s: the session holds %d messages, want %d", tt.mode, at, sess(), n)
			}
		}
	}
	mu.Lock()
	mode = "hang"
	mu.Unlock()
	p := policy
	p.TimeoutMs = 50
	if _, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "bad", Policy: p}); core.ErrorCode(err) != core.CodeTimeout {
		t.Fatalf("a hanging counter with a timeout: got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// The counter never returns: the cancel ends the run whenever it
	// comes.
	stop := time.AfterFunc(20*time.Millisecond, cancel)
	defer stop.Stop()
	if _, err := rt.Run(ctx, core.RunRequest{SessionID: "s", Input: "bad", Policy: policy}); core.ErrorCode(err) != core.CodeCancelled {
		t.Fatalf("a hanging counter, cancelled: got %v", err)
	}
	mu.Lock()
	mode = ""
	mu.Unlock()
	if _, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "bad", Policy: policy}); err != nil || sess() != n+2 {
		t.Fatalf("after the failures: %v, %d messages", err, sess())
	}
}
