package core_test

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/mock"
)

// wordCounter counts a message's tokens as its words (by spaces) plus
// one, and counts its calls.
type wordCounter struct {
	mu    sync.Mutex
	calls int
	seen  []string
}

func (c *wordCounter) count(m core.Message) (int, error) {
	c.mu.Lock()
	c.calls++
	c.seen = append(c.seen, string(m.Role)+":"+m.Content)
	c.mu.Unlock()
	return len(strings.Fields(m.Content)) + 1, nil
}

func words(n int) string { return strings.TrimSpace(strings.Repeat("w ", n)) }

// Ensure the built-in estimate is the documented formula: bytes / 4,
// rounded up, plus TokenOverhead; the bytes those of content,
// tool_call_id and the tool calls, not the host id.
func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		name string
		m    core.Message
		want int
	}{
		{"Empty", core.Message{Role: core.RoleUser}, core.TokenOverhead},
		{"OneByte", core.Message{Role: core.RoleUser, Content: "a"}, 1 + core.TokenOverhead},
		{"FourBytes", core.Message{Role: core.RoleUser, Content: "abcd"}, 1 + core.TokenOverhead},
		{"FiveBytes", core.Message{Role: core.RoleUser, Content: "abcde"}, 2 + core.TokenOverhead},
		{"UTF8Bytes", core.Message{Role: core.RoleUser, Content: "ééé"}, 2 + core.TokenOverhead},
		{"IDNotCounted", core.Message{ID: "a-long-host-id", Role: core.RoleUser, Content: "abcd"}, 1 + core.TokenOverhead},
		{"ToolResult", core.Message{Role: core.RoleTool, ToolCallID: "c1", Content: "ok"}, 1 + core.TokenOverhead},
		{"ToolCalls", core.Message{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "c1", Name: "n", Arguments: "{}"}}}, 2 + core.TokenOverhead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := core.EstimateTokens(tt.m); err != nil || got != tt.want {
				t.Fatalf("got %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

// Ensure what a model call is sent fits MaxContextTokens as the host's
// counter counts it (system prompt and tool specs included), drops the
// oldest messages first, and is reported in the result and the
// model.context event.
func TestContextTokens_BudgetRespected(t *testing.T) {
	c := &wordCounter{}
	model := &mock.Model{}
	rt := mustRuntime(t, core.Config{Model: model, CountTokens: c.count, SystemPrompt: words(9),
		Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "t", Description: "d"}, Call: noTool}}})
	// The system prompt is 10 tokens, the tool spec ("t\nd\n") 3.
	var h []core.SeedMessage
	for i := range 20 {
		h = append(h, user(words(4)+" q"+strconv.Itoa(i)), assistant(words(4)+" a"+strconv.Itoa(i)))
	}
	for _, budget := range []int64{40, 41, 57, 100, 233, 1000} {
		var evs []core.ContextReport
		id := "b" + strconv.Itoa(int(budget))
		res := mustComplete(t, rt, core.RunRequest{SessionID: id, Input: words(5), History: h, WithHistory: true,
			Policy: core.Policy{MaxContextTokens: budget, ContextChunkTokens: 1},
			OnEvent: func(ev core.Event) {
				if ev.Type == core.EventModelContext {
					evs = append(evs, *ev.Context)
				}
			}})
		reqs := model.Requests()
		sent := reqs[len(reqs)-1].Messages
		tokens := int64(10 + 3)
		for _, m := range sent {
			n, _ := c.count(m)
			tokens += int64(n)
		}
		if tokens > budget {
			t.Errorf("budget %d: sent %d tokens", budget, tokens)
		}
		want := core.ContextReport{Messages: len(sent), Tokens: tokens, Dropped: 41 - len(sent)}
		if res.Context == nil || *res.Context != want {
			t.Errorf("budget %d: result.Context %+v, want %+v", budget, res.Context, want)
		}
		if len(evs) != 1 || evs[0] != want {
			t.Errorf("budget %d: model.context events %+v, want [%+v]", budget, evs, want)
		}
		// One more message would not have fitted (a chunk of 1 drops just enough).
		if want.Dropped > 0 && tokens+6 <= budget {
			t.Errorf("budget %d: %d tokens sent, a message more would have fitted", budget, tokens)
		}
		if got := contents(sent); got[len(got)-1] != "user:"+words(5) {
			t.Errorf("budget %d: the input was not sent last: %v", budget, got)
		}
	}
}

func noTool(core.Context, core.ToolInvocation) (string, error) { return "", nil }

// Ensure the token window never separates a tool call from its results,
// for every budget, and never starts with a tool result.
func TestContextTokens_PairsNeverSplit(t *testing.T) {
	model := &mock.Model{}
	c := &wordCounter{}
	rt := mustRuntime(t, core.Config{Model: model, CountTokens: c.count})
	h := []core.SeedMessage{user("u1"), assistant("a1"), user("u2"), calling("c1", "c2"), toolResult("c1", "r1 r1 r1"),
		toolResult("c2", "r2 r2"), assistant("a2"), user("u3"), calling("c3"), toolResult("c3", "r3"), assistant("a3")}
	for budget := int64(2); budget < 40; budget++ {
		id := "p" + strconv.Itoa(int(budget))
		run, err := rt.Start(bg, core.RunRequest{SessionID: id, Input: "now", History: h, WithHistory: true,
			Policy: core.Policy{MaxContextTokens: budget, ContextChunkTokens: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := waitRun(t, run); err != nil {
			if core.ErrorCode(err) != core.CodeLimitExceeded || budget >= 2 {
				// "now" alone is 2 tokens: every budget here fits it.
				t.Fatalf("budget %d: %v", budget, err)
			}
			continue
		}
		reqs := model.Requests()
		sent := reqs[len(reqs)-1].Messages
		calls := map[string]bool{}
		for i, m := range sent {
			if i == 0 && m.Role == core.RoleTool {
				t.Fatalf("budget %d: the window starts with a tool result: %v", budget, contents(sent))
			}
			for _, tc := range m.ToolCalls {
				calls[tc.ID] = true
			}
			if m.Role == core.RoleTool && !calls[m.ToolCallID] {
				t.Fatalf("budget %d: result %s sent without its call: %v", budget, m.ToolCallID, contents(sent))
			}
		}
		for id := range calls {
			found := false
			for _, m := range sent {
				found = found || m.ToolCallID == id
			}
			if !found {
				t.Fatalf("budget %d: call %s sent without its result: %v", budget, id, contents(sent))
			}
		}
	}
}

// Ensure the system prompt, the tool specs and the run's input are always
// sent: when they alone exceed the budget, the run fails limit_exceeded
// naming the budget and changes nothing, and a budget they fit sends them.
func TestContextTokens_ErrInputTooLarge(t *testing.T) {
	c := &wordCounter{}
	model := &mock.Model{}
	rt := mustRuntime(t, core.Config{Model: model, CountTokens: c.count, SystemPrompt: words(9)})
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "hello"})
	before := stateOf(rt)
	for _, req := range []core.RunRequest{
		{SessionID: "s", Input: words(20), Policy: core.Policy{MaxContextTokens: 30}},   // 10 + 21 > 30
		{SessionID: "new", Input: words(20), Policy: core.Policy{MaxContextTokens: 30}}, // a new session is not created
		{SessionID: "s", Input: "x", Policy: core.Policy{MaxContextTokens: 11}},         // 10 + 2 > 11
		{SessionID: "h", Input: words(20), History: []core.SeedMessage{user("q"), assistant("a")}, WithHistory: true, Policy: core.Policy{MaxContextTokens: 25}},
	} {
		run, err := rt.Start(bg, req)
		if err == nil {
			_, err = waitRun(t, run)
		}
		if core.ErrorCode(err) != core.CodeLimitExceeded || !strings.Contains(err.Error(), "maxContextTokens ("+strconv.Itoa(int(req.Policy.MaxContextTokens))+")") {
			t.Fatalf("%s %q: got %v, want limit_exceeded naming maxContextTokens", req.SessionID, req.Input, err)
		}
		requireSameState(t, stateOf(rt), before)
	}
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "x", Policy: core.Policy{MaxContextTokens: 12}})
	if got := contents(model.Requests()[len(model.Requests())-1].Messages); !reflect.DeepEqual(got, []string{"user:x"}) {
		t.Fatalf("sent %v, want the input alone", got)
	}
	if res.Context.Tokens != 12 || res.Context.Dropped != 2 {
		t.Fatalf("context %+v, want 12 tokens and 2 dropped", res.Context)
	}
}

// Ensure a counter that fails (contract.CounterFaults: an error, typed
// errors, a negative or huge count, a panic), at the input and at a
// later model call, fails the run with a typed error, changes nothing,
// and leaves the runtime working.
func TestContextTokens_ErrCounter(t *testing.T) {
	c := &contract.FaultyCounter{}
	rt := mustRuntime(t, core.Config{CountTokens: c.Count})
	contract.RunCounterFaults(t, contract.CounterEdge{
		Counter: c,
		Run: func(ctx context.Context, req core.RunRequest) error {
			run, err := rt.Start(ctx, req)
			if err == nil {
				_, err = waitRun(t, run)
			}
			return err
		},
		State:    func() any { return stateOf(rt) },
		Messages: func() int { return len(messagesOf(rt, "s")) },
	})
}

// Ensure counts are cached per stored message: across many turns the
// counter is called once for each message, once for the system prompt
// and once for each tool spec, never for a message counted before.
func TestContextTokens_CountsCached(t *testing.T) {
	c := &wordCounter{}
	rt := mustRuntime(t, core.Config{CountTokens: c.count, SystemPrompt: "sys",
		Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "a"}, Call: noTool}, {ToolSpec: core.ToolSpec{Name: "b"}, Call: noTool}}})
	const turns = 30
	for i := range turns {
		mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "q" + strconv.Itoa(i), Policy: core.Policy{MaxContextTokens: 50}})
	}
	// Each turn counts its input and the previous turn's reply: the last
	// reply is not counted yet.
	want := 1 + 2 + 2*turns - 1
	if c.calls != want {
		t.Fatalf("the counter was called %d times for %d stored messages; want %d", c.calls, 2*turns, want)
	}
	contract.CheckCountedOnce(t, c.seen)
	// A session replaced by another history is counted afresh.
	c.calls = 0
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "new", History: []core.SeedMessage{user("q"), assistant("a")},
		WithHistory: true, Policy: core.Policy{MaxContextTokens: 50, SeedMode: core.SeedReconcile}})
	if c.calls != 3 {
		t.Fatalf("after a replacement the counter was called %d times, want 3", c.calls)
	}
}

// Ensure the chunked window keeps the first message the model is sent
// stable: over 100 turns of messages of about a twentieth of the budget,
// it changes at most 25 times, where a window that drops just enough
// changes it nearly every turn.
func TestContextTokens_ChunkedWindowIsStable(t *testing.T) {
	const budget = 2000
	text := strings.Repeat("abcd", 96) // 96 + 4 = 100 tokens: a twentieth
	changes := func(chunk int64) (n int) {
		var first []string
		model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
			first = append(first, strconv.Itoa(req.Offset))
			return &core.ModelReply{Content: text}, nil
		})
		rt := mustRuntime(t, core.Config{Model: model})
		for i := range 100 {
			res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: text,
				Policy: core.Policy{MaxContextTokens: budget, ContextChunkTokens: chunk}})
			if res.Context.Tokens > budget {
				t.Fatalf("turn %d: %d tokens sent", i, res.Context.Tokens)
			}
		}
		for i := 1; i < len(first); i++ {
			if first[i] != first[i-1] {
				n++
			}
		}
		return n
	}
	if n := changes(0); n > 25 {
		t.Errorf("the default chunk changed the first message %d times in 100 turns, want at most 25", n)
	}
	if n := changes(1); n < 80 {
		t.Errorf("a chunk of 1 token changed the first message %d times, want about 90 (the test measures nothing)", n)
	}
}

// Ensure MaxContextTokens combines with MaxContextMessages and
// MaxContextBytes: the tightest wins.
func TestContextTokens_TightestWins(t *testing.T) {
	c := &wordCounter{}
	model := &mock.Model{}
	rt := mustRuntime(t, core.Config{Model: model, CountTokens: c.count})
	h := []core.SeedMessage{user("u1"), assistant("a1"), user("u2"), assistant("a2"), user("u3"), assistant("a3")}
	tests := []struct {
		name string
		pol  core.Policy
		want int
	}{
		{"Tokens", core.Policy{MaxContextTokens: 6, ContextChunkTokens: 1, MaxContextMessages: 5}, 3},
		{"Messages", core.Policy{MaxContextTokens: 100, MaxContextMessages: 2}, 2},
		{"Bytes", core.Policy{MaxContextTokens: 100, MaxContextBytes: 3}, 1},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustComplete(t, rt, core.RunRequest{SessionID: "t" + strconv.Itoa(i), Input: "now", History: h, WithHistory: true, Policy: tt.pol})
			reqs := model.Requests()
			if n := len(reqs[len(reqs)-1].Messages); n != tt.want || res.Context.Messages != n || res.Context.Dropped != 7-n {
				t.Fatalf("sent %d messages (context %+v), want %d", n, res.Context, tt.want)
			}
		})
	}
}

// Ensure a policy without MaxContextTokens reports no context and emits
// no model.context event, and bad token fields are refused.
func TestContextTokens_Policy(t *testing.T) {
	c := &wordCounter{}
	rt := mustRuntime(t, core.Config{CountTokens: c.count})
	var types []core.EventType
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "x", OnEvent: func(ev core.Event) { types = append(types, ev.Type) }})
	if res.Context != nil || c.calls != 0 {
		t.Fatalf("no budget: context %+v, %d counts", res.Context, c.calls)
	}
	for _, ty := range types {
		if ty == core.EventModelContext {
			t.Fatal("a model.context event without a token budget")
		}
	}
	for _, p := range []core.Policy{{MaxContextTokens: -1}, {ContextChunkTokens: -1}, {MaxContextTokens: 10, ContextChunkTokens: 11}} {
		_, err := rt.Start(bg, core.RunRequest{SessionID: "s", Input: "x", Policy: p})
		if core.ErrorCode(err) != core.CodeInvalidArgument {
			t.Errorf("%+v: got %v, want invalid_argument", p, err)
		}
	}
}

// Ensure a step whose own messages (the input, a tool call and its
// large result) outgrow the budget fails limit_exceeded and rolls back
// like any failure, and that the window never drops them to fit.
func TestContextTokens_ErrStepTooLarge(t *testing.T) {
	c := &wordCounter{}
	model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		if req.Step == 1 {
			return &core.ModelReply{ToolCalls: []core.ToolCall{{ID: "c1", Name: "big", Arguments: "{}"}}}, nil
		}
		return &core.ModelReply{Content: "done"}, nil
	})
	big := func(core.Context, core.ToolInvocation) (string, error) { return words(50), nil }
	rt := mustRuntime(t, core.Config{Model: model, CountTokens: c.count, Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "big"}, Call: big}}})
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: words(30)})
	before := stateOf(rt)
	run, err := rt.Start(bg, core.RunRequest{SessionID: "s", Input: "go", Policy: core.Policy{MaxContextTokens: 40}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := waitRun(t, run); core.ErrorCode(err) != core.CodeLimitExceeded || !strings.Contains(err.Error(), "maxContextTokens (40)") {
		t.Fatalf("got %v, want limit_exceeded naming the budget", err)
	}
	requireSameState(t, stateOf(rt), before)
	// With room for the step, the first turn goes but its reply (the
	// tool spec is 2 tokens, "done" 2, the run's own messages 54).
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "go", Policy: core.Policy{MaxContextTokens: 70, ContextChunkTokens: 1}})
	if *res.Context != (core.ContextReport{Messages: 4, Tokens: 58, Dropped: 3}) {
		t.Fatalf("context %+v, want the first turn but its reply dropped, 58 tokens sent", res.Context)
	}
}

// Ensure a warm turn of a large session counts only what is new: a
// 5,000-message session is counted once when seeded, and each later turn
// counts its input and the previous reply.
func TestContextTokens_WarmTurnOfLargeSession(t *testing.T) {
	c := &wordCounter{}
	rt := mustRuntime(t, core.Config{CountTokens: c.count})
	h := make([]core.SeedMessage, 0, 5000)
	for i := range 2500 {
		h = append(h, user("q"+strconv.Itoa(i)), assistant("a"+strconv.Itoa(i)))
	}
	policy := core.Policy{MaxContextTokens: 3000}
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "now", History: h, WithHistory: true, Policy: policy})
	if c.calls != 5001 || res.Context.Dropped == 0 || res.Context.Tokens > 3000 {
		t.Fatalf("cold turn: %d counts, context %+v; want 5001 and a window within the budget", c.calls, res.Context)
	}
	for i := range 3 {
		c.calls = 0
		mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "again" + strconv.Itoa(i), Policy: policy})
		if c.calls != 2 {
			t.Fatalf("warm turn %d counted %d messages, want 2", i, c.calls)
		}
	}
}
