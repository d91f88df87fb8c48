package contract

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrt/agentrt/core"
)

// CounterFault is one way a host's token counter fails, and the code
// the run fails with: core.Config.CountTokens in process and
// wasihost.Config.CountTokens across the module's count action fail it
// alike (docs/adr/0018-context-window-by-tokens.md).
type CounterFault struct {
	// Name names the fault in failures.
	Name string
	// Count is the counter's answer for a message the fault is aimed at:
	// an error, a count out of 0..core.MaxTokenCount, or a panic.
	Count core.TokenCounter
	// Code is the code of the run's error.
	Code core.Code
}

// CounterFaults are the failures of a host's counter every Go edge with
// one runs (RunCounterFaults): an error, typed errors, whose code the run
// keeps, a negative and a too large count, a panic, and two *core.Error
// that are not ours: a typed nil (the Go slip of returning a nil pointer
// as an error) and one without a code, each invalid_argument.
var CounterFaults = []CounterFault{
	{"error", func(core.Message) (int, error) { return 0, errors.New("no tokenizer") }, core.CodeInvalidArgument},
	{"typed timeout", func(core.Message) (int, error) {
		return 0, core.NewError(core.CodeTimeout, "the tokenizer timed out")
	}, core.CodeTimeout},
	{"typed limit", func(core.Message) (int, error) {
		return 0, core.NewError(core.CodeLimitExceeded, "the tokenizer is busy")
	}, core.CodeLimitExceeded},
	{"negative", func(core.Message) (int, error) { return -1, nil }, core.CodeInvalidArgument},
	{"huge", func(core.Message) (int, error) { return core.MaxTokenCount + 1, nil }, core.CodeInvalidArgument},
	{"panic", func(core.Message) (int, error) { panic("tokenizer") }, core.CodeInvalidArgument},
	{"typed nil", func(core.Message) (int, error) {
		var e *core.Error
		return 1, e
	}, core.CodeInvalidArgument},
	{"no code", func(core.Message) (int, error) { return 1, &core.Error{Message: "no tokenizer"} }, core.CodeInvalidArgument},
}

// FaultyCounter is the host's counter of a CounterEdge: it counts every
// message 1 token, and the messages a fault is aimed at (the input
// "bad", and the echo model's replies, which the next turn counts) as
// the fault set by RunCounterFaults answers, or never (a counter that
// hangs) until the test ends.
type FaultyCounter struct {
	mu    sync.Mutex
	fault *CounterFault
	hang  chan struct{}
}

// Count is the counter, for the edge's configuration.
func (c *FaultyCounter) Count(m core.Message) (int, error) {
	c.mu.Lock()
	f, hang := c.fault, c.hang
	c.mu.Unlock()
	if m.Content != "bad" && !strings.Contains(m.Content, "(model received") {
		return 1, nil
	}
	if hang != nil {
		<-hang
	}
	if f != nil {
		return f.Count(m)
	}
	return 1, nil
}

// set aims f at the next runs (nil: none), and a counter that never
// returns when hang is not nil.
func (c *FaultyCounter) set(f *CounterFault, hang chan struct{}) {
	c.mu.Lock()
	c.fault, c.hang = f, hang
	c.mu.Unlock()
}

// CounterEdge is a Go edge whose runtime counts tokens with a
// FaultyCounter's Count, for RunCounterFaults.
type CounterEdge struct {
	// Counter is the edge's counter.
	Counter *FaultyCounter
	// Run runs req on the edge under ctx and returns its error.
	Run func(ctx context.Context, req core.RunRequest) error
	// State returns what a failed run leaves as it was: the edge's
	// sessions, compared with reflect.DeepEqual.
	State func() any
	// Messages returns how many messages session "s" holds.
	Messages func() int
	// Bounded says the edge calls the counter as it calls a model,
	// bounded by the run's timeout and context (wasihost), so that a
	// counter that never returns is run too: the run ends timeout or
	// cancelled. Core calls it within the run, as its caller's code.
	Bounded bool
}

// RunCounterFaults runs every CounterFault on e, aimed at a turn's input
// and at the previous turn's reply (counted at the next model call): each
// fails the run with the fault's code and leaves e's state as it was.
// For a Bounded edge a counter that never returns ends the run with the
// policy's timeout and with the context's cancel. The runtime goes on:
// the next run completes with its two messages.
func RunCounterFaults(t testing.TB, e CounterEdge) {
	t.Helper()
	c := e.Counter
	policy := core.Policy{MaxContextTokens: 100}
	run := func(ctx context.Context, input string, p core.Policy) error {
		return e.Run(ctx, core.RunRequest{SessionID: "s", Input: input, Policy: p})
	}
	c.set(nil, nil)
	if err := run(context.Background(), "hello", policy); err != nil {
		t.Fatal(err)
	}
	for i := range CounterFaults {
		f := &CounterFaults[i]
		for _, at := range []string{"input", "reply"} {
			c.set(nil, nil)
			input := "bad"
			if at == "reply" {
				// The reply of this turn is counted at the next one.
				if err := run(context.Background(), "ok", policy); err != nil {
					t.Fatal(err)
				}
				input = "next"
			}
			before := e.State()
			c.set(f, nil)
			if err := run(context.Background(), input, policy); core.ErrorCode(err) != f.Code {
				t.Fatalf("%s at the %s: got %v, want %s", f.Name, at, err, f.Code)
			}
			if got := e.State(); !reflect.DeepEqual(got, before) {
				t.Fatalf("%s at the %s: the state changed:\n got %+v\nwant %+v", f.Name, at, got, before)
			}
		}
	}
	if e.Bounded {
		hang := make(chan struct{})
		defer close(hang)
		c.set(nil, hang)
		p := policy
		p.TimeoutMs = 50
		if err := run(context.Background(), "bad", p); core.ErrorCode(err) != core.CodeTimeout {
			t.Fatalf("a hanging counter with a timeout: got %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		// The counter never returns: the cancel ends the run whenever it
		// comes.
		stop := time.AfterFunc(20*time.Millisecond, cancel)
		defer stop.Stop()
		if err := run(ctx, "bad", policy); core.ErrorCode(err) != core.CodeCancelled {
			t.Fatalf("a hanging counter, cancelled: got %v", err)
		}
	}
	c.set(nil, nil)
	n := e.Messages()
	if err := run(context.Background(), "bad", policy); err != nil || e.Messages() != n+2 {
		t.Fatalf("after the failures: %v, %d messages, want %d", err, e.Messages(), n+2)
	}
}

// CheckCountedOnce fails t for each text of seen (what a host's counter
// counted, as "role:content") counted more than once: counts are cached
// per stored message. The echo model's replies ("assistant:...") may
// repeat, and are left out.
func CheckCountedOnce(t testing.TB, seen []string) {
	t.Helper()
	times := map[string]int{}
	for _, s := range seen {
		times[s]++
	}
	for s, n := range times {
		if n > 1 && !strings.HasPrefix(s, "assistant:") {
			t.Errorf("%q counted %d times", s, n)
		}
	}
}
