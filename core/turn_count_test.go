package core_test

import (
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
)

// countHost drives a Turn of a runtime made with CountByAction: it
// answers ActionCount with count (one call per message, as a host's
// counter), the model with model (Echo when nil) and every tool with
// "3".
type countHost struct {
	count func(core.Message) (int, error)
	model core.ModelFunc
	// asks are the ActionCounts, messages are all the messages counted.
	asks     int
	messages []core.Message
	reqs     []core.ModelRequest
}

func (h *countHost) drive(t testing.TB, tn *core.Turn) core.Action {
	t.Helper()
	a := tn.Next()
	for i := 0; i < 1000; i++ {
		switch a.Kind {
		case core.ActionCount:
			h.asks++
			counts := make([]int, len(a.Messages))
			var err error
			for j, m := range a.Messages {
				h.messages = append(h.messages, m)
				if counts[j], err = h.count(m); err != nil {
					break
				}
			}
			a = tn.FeedCounts(counts, err)
		case core.ActionModel:
			h.reqs = append(h.reqs, *a.Request)
			if h.model == nil {
				a = tn.FeedModel(core.Echo{}.Complete(bg, a.Request))
			} else {
				a = tn.FeedModel(h.model(bg, a.Request))
			}
		case core.ActionTool:
			a = tn.FeedTool("3", nil)
		default:
			return a
		}
	}
	t.Fatal("the turn did not end")
	return a
}

// run begins req on rt and drives it to its end.
func (h *countHost) run(t testing.TB, rt *core.Runtime, req core.RunRequest) (*core.Result, error) {
	t.Helper()
	tn, err := rt.Begin(bg, req)
	if err != nil {
		return nil, err
	}
	a := h.drive(t, tn)
	if a.Kind == core.ActionFailed {
		return nil, a.Err
	}
	return a.Result, nil
}

// Ensure a runtime whose host counts by action sends the model what a
// runtime with the same counter in process sends, turn after turn, with
// tool calls, seeding and a window that moves: the same messages, the
// same context reports.
func TestCountByAction_SameWindowAsInProcess(t *testing.T) {
	c := &wordCounter{}
	tools := []core.Tool{addTool}
	model := func(_ core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		if req.Step == 1 && len(req.Messages)%3 == 0 {
			return &core.ModelReply{Content: "calling " + words(5), ToolCalls: []core.ToolCall{{Name: "add", Arguments: "{}"}}}, nil
		}
		return &core.ModelReply{Content: "reply " + words(8)}, nil
	}
	in := mustRuntime(t, core.Config{SystemPrompt: "be brief", Tools: tools, Model: core.ModelFunc(model), CountTokens: c.count})
	by := mustRuntime(t, core.Config{SystemPrompt: "be brief", Tools: tools, CountByAction: true})
	h := &countHost{count: c.count, model: model}
	hist := []core.SeedMessage{user(words(10)), assistant(words(12)), user(words(3)), assistant(words(7))}
	policy := core.Policy{MaxContextTokens: 120, ContextChunkTokens: 30}
	for i := range 20 {
		req := core.RunRequest{SessionID: "s", Input: "q " + words(i%7), Policy: policy, History: hist, WithHistory: true, Inspect: true}
		want := mustComplete(t, in, req)
		got, err := h.run(t, by, req)
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		if !reflect.DeepEqual(got.Context, want.Context) || !reflect.DeepEqual(got.ModelCalls, want.ModelCalls) {
			t.Fatalf("turn %d: by action %+v %+v; in process %+v %+v", i, got.Context, got.ModelCalls, want.Context, want.ModelCalls)
		}
	}
	if want := c.calls / 2; h.asks == 0 || len(h.messages) != want {
		t.Fatalf("the host counted %d messages, the in-process counter %d", len(h.messages), want)
	}
}

// Ensure counts are cached as a counter's are: across many turns the
// host is asked once for each stored message, once for the system prompt
// and once for each tool spec; a turn asks at most twice (its input
// before seeding, the previous reply before its model call).
func TestCountByAction_CountsCached(t *testing.T) {
	c := &wordCounter{}
	h := &countHost{count: c.count}
	rt := mustRuntime(t, core.Config{CountByAction: true, SystemPrompt: "sys",
		Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "a"}, Call: noTool}, {ToolSpec: core.ToolSpec{Name: "b"}, Call: noTool}}})
	const turns = 30
	for i := range turns {
		if _, err := h.run(t, rt, core.RunRequest{SessionID: "s", Input: "q" + strconv.Itoa(i), Policy: core.Policy{MaxContextTokens: 50}}); err != nil {
			t.Fatal(err)
		}
	}
	if want := 1 + 2 + 2*turns - 1; c.calls != want {
		t.Fatalf("the host counted %d times for %d stored messages; want %d", c.calls, 2*turns, want)
	}
	if want := 2*turns - 1; h.asks != want {
		t.Fatalf("the host was asked %d times, want %d", h.asks, want)
	}
	contract.CheckCountedOnce(t, c.seen)
	// Without a budget the host is never asked.
	h.asks = 0
	if _, err := h.run(t, rt, core.RunRequest{SessionID: "s", Input: "free"}); err != nil || h.asks != 0 {
		t.Fatalf("without a budget: %v, %d asks", err, h.asks)
	}
}

// Ensure a bad answer to ActionCount (an error, a typed error, a count
// out of range, a wrong number of counts) fails the run typed, before
// seeding and at a later model call, and changes nothing: the session is
// as it was, and the next run counts afresh and completes.
func TestCountByAction_ErrBadCounts(t *testing.T) {
	var mode string
	bad := func(counts []int, err error) ([]int, error) {
		switch mode {
		case "error":
			return nil, errors.New("no tokenizer")
		case "typed":
			return nil, core.NewError(core.CodeTimeout, "the tokenizer timed out")
		case "negative":
			counts[len(counts)-1] = -1
		case "huge":
			counts[len(counts)-1] = core.MaxTokenCount + 1
		case "fewer":
			counts = counts[:len(counts)-1]
		case "more":
			counts = append(counts, 1)
		}
		return counts, err
	}
	for _, at := range []string{"input", "history"} {
		for _, tt := range []struct {
			mode string
			code core.Code
		}{{"error", core.CodeInvalidArgument}, {"typed", core.CodeTimeout}, {"negative", core.CodeInvalidArgument},
			{"huge", core.CodeInvalidArgument}, {"fewer", core.CodeInvalidArgument}, {"more", core.CodeInvalidArgument}} {
			t.Run(at+"/"+tt.mode, func(t *testing.T) {
				rt := mustRuntime(t, core.Config{CountByAction: true, SystemPrompt: "sys"})
				h := &countHost{count: core.EstimateTokens}
				req := core.RunRequest{SessionID: "s", Input: "hello", Policy: core.Policy{MaxContextTokens: 100}}
				if _, err := h.run(t, rt, req); err != nil {
					t.Fatal(err)
				}
				before := stateOf(rt)
				req.Input = "next"
				if at == "history" {
					// A replacing history: the counts the model call
					// needs are the seeded session's, after seeding.
					req.History, req.WithHistory = []core.SeedMessage{user("a"), assistant("b")}, true
					req.Policy.SeedMode = core.SeedReconcile
				}
				tn, err := rt.Begin(bg, req)
				if err != nil {
					t.Fatal(err)
				}
				a := tn.Next()
				if at == "history" {
					if a.Kind != core.ActionCount || len(a.Messages) != 1 {
						t.Fatalf("got %+v, want the input's count", a)
					}
					a = tn.FeedCounts([]int{2}, nil)
				}
				if a.Kind != core.ActionCount {
					t.Fatalf("got %+v, want a count", a)
				}
				counts := make([]int, len(a.Messages))
				for i, m := range a.Messages {
					counts[i], _ = core.EstimateTokens(m)
				}
				mode = tt.mode
				a = tn.FeedCounts(bad(counts, nil))
				if a.Kind != core.ActionFailed || a.Err.Code != tt.code {
					t.Fatalf("got %+v, want failed %s", a, tt.code)
				}
				if at == "history" {
					// Seeding stays, as after any failed run; the
					// messages are the history's.
					s, _ := rt.Session("s")
					if len(s.Messages) != 2 {
						t.Fatalf("the session holds %d messages, want the 2 seeded", len(s.Messages))
					}
				} else {
					requireSameState(t, stateOf(rt), before)
				}
				if _, err := h.run(t, rt, core.RunRequest{SessionID: "s", Input: "again", Policy: core.Policy{MaxContextTokens: 100}}); err != nil {
					t.Fatalf("the next run: %v", err)
				}
			})
		}
	}
}

// Ensure a host that never answers an ActionCount does not wedge the
// run: a cancel or a timeout ends it typed, and a late answer is
// ignored.
func TestCountByAction_ErrNoAnswer(t *testing.T) {
	rt := mustRuntime(t, core.Config{CountByAction: true})
	for _, how := range []string{"cancel", "expire"} {
		t.Run(how, func(t *testing.T) {
			tn, err := rt.Begin(bg, core.RunRequest{SessionID: how, Input: "hello", Policy: core.Policy{MaxContextTokens: 100}})
			if err != nil {
				t.Fatal(err)
			}
			if a := tn.Next(); a.Kind != core.ActionCount {
				t.Fatalf("got %+v, want a count", a)
			}
			want := core.CodeCancelled
			if how == "cancel" {
				tn.Run().Cancel()
			} else {
				tn.Expire()
				want = core.CodeTimeout
			}
			if a := tn.Next(); a.Kind != core.ActionFailed || a.Err.Code != want {
				t.Fatalf("got %+v, want failed %s", a, want)
			}
			if a := tn.FeedCounts([]int{5}, nil); a.Kind != core.ActionFailed || a.Err.Code != want {
				t.Fatalf("a late answer: got %+v", a)
			}
			if _, ok := rt.Session(how); ok {
				t.Fatal("the failed run left a session")
			}
		})
	}
}

// Ensure CountByAction is refused with CountTokens, and a run started
// with Start (which nothing can answer counts for) fails typed under a
// token budget and runs without one.
func TestCountByAction_ErrConfig(t *testing.T) {
	if _, err := core.New(core.Config{CountByAction: true, CountTokens: core.EstimateTokens}); core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Fatalf("both counters: got %v", err)
	}
	rt := mustRuntime(t, core.Config{CountByAction: true})
	run, err := rt.Start(bg, core.RunRequest{SessionID: "s", Input: "hi", Policy: core.Policy{MaxContextTokens: 100}})
	if err == nil {
		_, err = waitRun(t, run)
	}
	if core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Fatalf("Start under a budget: got %v", err)
	}
	if _, ok := rt.Session("s"); ok {
		t.Fatal("the failed run left a session")
	}
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "hi"})
}

// Ensure the token window's corpus (testdata/contract/window/) with the
// host counting by action (the estimate, so the corpus's figures hold).
func TestCountByAction_Contract(t *testing.T) {
	for _, c := range contract.MustLoadWindow(t) {
		t.Run(c.Name, func(t *testing.T) {
			rt := mustRuntime(t, core.Config{SystemPrompt: c.SystemPrompt, CountByAction: true})
			h := &countHost{count: core.EstimateTokens}
			policy := c.GoPolicy(t)
			c.RunWindow(t, contract.GoWindowEdge(policy, func(req core.RunRequest) (*core.Result, error) { return h.run(t, rt, req) }, func(_ testing.TB, session string) int {
				s, ok := rt.Session(session)
				if !ok {
					return -1
				}
				return len(s.Messages)
			}), "w")
			if policy.MaxContextTokens > 0 && h.asks == 0 {
				t.Fatal("the host was never asked to count")
			}
		})
	}
}

// Ensure two turns whose counts of the system prompt are out at once
// (other sessions) both complete: the first counts fed are cached, and
// the later turn's own count of the prompt goes unused, its input's
// count taken in its place.
func TestCountByAction_FixedCountedMeanwhile(t *testing.T) {
	rt := mustRuntime(t, core.Config{CountByAction: true, SystemPrompt: "sys"})
	policy := core.Policy{MaxContextTokens: 100}
	begin := func(session string) (*core.Turn, core.Action) {
		tn, err := rt.Begin(bg, core.RunRequest{SessionID: session, Input: "hi", Policy: policy})
		if err != nil {
			t.Fatal(err)
		}
		a := tn.Next()
		if a.Kind != core.ActionCount || len(a.Messages) != 2 || a.Messages[0].Role != core.RoleSystem {
			t.Fatalf("%s: got %+v, want the prompt's and the input's counts", session, a)
		}
		return tn, a
	}
	ta, _ := begin("a")
	tb, _ := begin("b")
	fed := map[string][]int{"a": {10, 3}, "b": {20, 5}}
	finish := func(session string, tn *core.Turn) *core.Result {
		a := tn.FeedCounts(fed[session], nil)
		for a.Kind == core.ActionModel {
			a = tn.FeedModel(core.Echo{}.Complete(bg, a.Request))
		}
		if a.Kind != core.ActionDone {
			t.Fatalf("%s: got %+v, want done", session, a)
		}
		return a.Result
	}
	if got := finish("b", tb).Context.Tokens; got != 25 {
		t.Fatalf("b: %d tokens, want 25", got)
	}
	// a's prompt count (10) goes unused: b's (20) is the runtime's.
	if got := finish("a", ta).Context.Tokens; got != 23 {
		t.Fatalf("a: %d tokens, want 23", got)
	}
}
