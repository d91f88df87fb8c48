//go:build !js

package workerd_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// counterEnv is the environment of a worker that counts tokens with the
// test counter: a message's bytes, and its calls read by the tool
// "counted" (wasm/worker/count_tools.go).
func counterEnv() map[string]string {
	return durableEnv(map[string]string{"AGENTRT_TEST_COUNTER": "bytes"})
}

// counterSpecs is what the test counter counts the worker's tool specs,
// once per runtime: "pay", "look", "count" and "counted", each a system
// message of its name, description and parameters joined by newlines.
const counterSpecs = len("pay\n\n") + len("look\n\n") + len("count\n\n") + len("counted\n\n")

// counterResult is what the counter tests read of a Result.
type counterResult struct {
	Reply        msg                     `json:"reply"`
	Appended     []msg                   `json:"appended"`
	MessageCount int                     `json:"messageCount"`
	Context      *contract.WindowContext `json:"context"`
	Error        struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// String shows r with its context's figures.
func (r counterResult) String() string {
	ctx := "none"
	if r.Context != nil {
		ctx = fmt.Sprintf("%+v", *r.Context)
	}
	return fmt.Sprintf("{reply %q, %d appended, messageCount %d, context %s, error %+v}", r.Reply.Content, len(r.Appended), r.MessageCount, ctx, r.Error)
}

// counterTurn runs a turn on session id with body (JSON).
func counterTurn(t *testing.T, p *workerd.Process, id, body string) (int, counterResult) {
	t.Helper()
	status, b, err := sendTo(p)("POST", "/v1/sessions/"+id+"/runs", body)
	if err != nil {
		t.Fatal(err)
	}
	var r counterResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("POST %s: %d %q", id, status, b)
	}
	return status, r
}

// counterCalls returns the test counter's calls so far, read with the
// tool "counted" on a session of its own, without a token budget (so
// the read counts nothing).
func counterCalls(t *testing.T, p *workerd.Process) int {
	t.Helper()
	status, r := counterTurn(t, p, "counter-probe", `{"input":"/tool counted {}"}`)
	for _, m := range r.Appended {
		if m.Role == "tool" {
			var n int
			if _, err := fmt.Sscanf(m.Content, "counted %d", &n); err == nil {
				return n
			}
		}
	}
	t.Fatalf("counted: %d %+v", status, r)
	return 0
}

// windowHistory returns the history of the window corpus's case whose
// name starts with prefix.
func windowHistory(t *testing.T, prefix string) string {
	t.Helper()
	for _, c := range contract.MustLoadWindow(t) {
		if strings.HasPrefix(c.Name, "window/"+prefix) {
			return string(c.History)
		}
	}
	t.Fatalf("no window case %q", prefix)
	return ""
}

// Ensure the Worker counts policy.maxContextTokens with its own counter
// (config.CountTokens, here the test counter: a message's bytes, where
// the estimate is a quarter of them plus 4) in both deployments: the
// budget is respected with the counter's figures, by result.context.
func TestWorker_CountTokens_Budget(t *testing.T) {
	t.Parallel()
	history := windowHistory(t, "the budget respected")
	for _, durable := range []bool{false, true} {
		name := "isolate"
		if durable {
			name = "durable"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // its own workerd
			p := mustStart(t, workerd.Options{Durable: durable, StateDir: t.TempDir(), Env: counterEnv()})
			status, r := counterTurn(t, p, "budget", `{"input":"hi","history":`+history+`,"policy":{"maxContextTokens":60,"contextChunkTokens":30}}`)
			// m0..m29 are 80 bytes, "hi" 2, the specs 27: 109 is 49
			// over 60, rounded up to the chunk 60; m0..m23 are 62 bytes,
			// so 24 are dropped and m24..m29 and "hi" sent, 20 bytes.
			want := contract.WindowContext{Messages: 7, Tokens: int64(counterSpecs) + 20, Dropped: 24}
			if status != 200 || r.Context == nil || *r.Context != want {
				t.Fatalf("got %d %+v, want the context %+v", status, r, want)
			}
			if got := contract.Received(r.Reply.Content); got != 7 {
				t.Errorf("the model received %d messages, want 7 (%q)", got, r.Reply.Content)
			}
		})
	}
}

// Ensure, on the Worker with its own counter: pairs never split under
// the counter's figures, the too-large refusal (413 limit_exceeded,
// nothing changed), a counter that fails (an error, a negative count)
// failing the run invalid_argument and changing nothing, and the counts
// cached: over three turns the counter is called once per stored message
// and once per tool spec, never for the whole session again.
func TestWorker_CountTokens(t *testing.T) {
	t.Parallel()
	p := mustStart(t, workerd.Options{Env: counterEnv()})

	// Counts cached, first, while the runtime has counted nothing.
	if n := counterCalls(t, p); n != 0 {
		t.Fatalf("the counter was called %d times before any budget", n)
	}
	policy := `"policy":{"maxContextTokens":1000}`
	history := `[{"role":"user","content":"h0"},{"role":"assistant","content":"h1"},{"role":"user","content":"h2"},{"role":"assistant","content":"h3"}]`
	sent := 4 * len("h0") // the bytes of the messages sent so far
	for i, body := range []string{
		`{"input":"q1","history":` + history + `,` + policy + `}`,
		`{"input":"q2",` + policy + `}`,
		`{"input":"q3",` + policy + `}`,
	} {
		status, r := counterTurn(t, p, "cache", body)
		sent += len("q1")
		want := contract.WindowContext{Messages: 5 + 2*i, Tokens: int64(counterSpecs + sent)}
		if status != 200 || r.Context == nil || *r.Context != want || r.MessageCount != 6+2*i {
			t.Fatalf("turn %d: got %d %+v, want the context %+v", i+1, status, r, want)
		}
		sent += len(r.Reply.Content)
	}
	// The 4 specs; turn 1 counts the history and its input (5), turns 2
	// and 3 the previous reply and their input (2 each): 13, where
	// recounting the session every turn would be 4+5+7+9 = 25.
	if n := counterCalls(t, p); n != 4+5+2+2 {
		t.Fatalf("the counter was called %d times over three turns, want 13", n)
	}

	// Pairs never split: q0 is 2 bytes, the call with its two results
	// 16+4+4, a0, q1, a1 and "hi" 2 each. Under 27+20 the messages are 14
	// over; dropping q0 and the call (18) would start at a result, so
	// the whole block goes: 4 dropped, 4 sent of 8 bytes.
	pairs := windowHistory(t, "pairs never split")
	status, r := counterTurn(t, p, "pairs", `{"input":"hi","history":`+pairs+`,"policy":{"maxContextTokens":`+fmt.Sprint(counterSpecs+20)+`,"contextChunkTokens":1}}`)
	if want := (contract.WindowContext{Messages: 4, Tokens: int64(counterSpecs) + 8, Dropped: 4}); status != 200 || r.Context == nil || *r.Context != want {
		t.Fatalf("pairs: got %d %+v, want the context %+v", status, r, want)
	}
	if got := contract.Received(r.Reply.Content); got != 4 {
		t.Errorf("pairs: the model received %d messages, want 4", got)
	}

	// The too-large refusal, on a new session and on a warm one: the
	// input's 400 bytes and the specs' are over the budget by the
	// counter's figures (the estimate would say 104 and fit).
	big := strings.Repeat("x", 400)
	wantMsg := fmt.Sprintf("come to %d tokens, more than policy.maxContextTokens (200)", counterSpecs+400)
	before := counterCalls(t, p)
	for _, id := range []string{"big", "cache"} {
		count := sessionCount(t, p, id)
		status, r := counterTurn(t, p, id, `{"input":"`+big+`","policy":{"maxContextTokens":200}}`)
		if status != 413 || r.Error.Code != "limit_exceeded" || !strings.Contains(r.Error.Message, wantMsg) {
			t.Errorf("too large on %s: got %d %+v, want 413 limit_exceeded saying %q", id, status, r.Error, wantMsg)
		}
		if got := sessionCount(t, p, id); got != count {
			t.Errorf("too large on %s: the session went from %d messages to %d", id, count, got)
		}
	}

	// A counter that fails, with an error or a negative count, fails the
	// run typed before seeding: nothing changes, and the session goes on.
	for _, c := range []struct{ input, msg string }{
		{"count: fail", "countTokens failed: the test counter failed"},
		{"count: negative", "countTokens returned -1"},
	} {
		for _, id := range []string{"failing", "cache"} {
			count := sessionCount(t, p, id)
			body := `{"input":"` + c.input + `","policy":{"maxContextTokens":1000}}`
			if id == "failing" {
				// A new session with a history: refused before seeding.
				body = `{"input":"` + c.input + `","history":` + history + `,"policy":{"maxContextTokens":1000}}`
			}
			status, r := counterTurn(t, p, id, body)
			if status != 400 || r.Error.Code != "invalid_argument" || !strings.HasPrefix(r.Error.Message, c.msg) {
				t.Errorf("%q on %s: got %d %+v, want 400 invalid_argument saying %q", c.input, id, status, r.Error, c.msg)
			}
			if got := sessionCount(t, p, id); got != count {
				t.Errorf("%q on %s: the session went from %d messages to %d", c.input, id, count, got)
			}
		}
	}
	// Each refused input was counted once and nothing else: the cached
	// counts of "cache" stayed.
	if n := counterCalls(t, p) - before; n != 2+4 {
		t.Errorf("the refusals called the counter %d times, want 6 (their inputs)", n)
	}
	status, r = counterTurn(t, p, "cache", `{"input":"q4",`+policy+`}`)
	if status != 200 || r.Context == nil || r.Context.Messages != 11 || r.MessageCount != 12 {
		t.Fatalf("the turn after the failures: %d %+v", status, r)
	}
	if n := counterCalls(t, p) - before; n != 6+2 {
		t.Errorf("the counter was called %d times since the refusals, want 8 (then the last reply and q4)", n)
	}
}
