package httpapi_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// tokenResult is a result with the context it reports under
// policy.maxContextTokens.
type tokenResult struct {
	MessageCount int `json:"messageCount"`
	Reply        struct {
		Content string `json:"content"`
	} `json:"reply"`
	Context *struct {
		Messages int   `json:"messages"`
		Tokens   int64 `json:"tokens"`
		Dropped  int   `json:"dropped"`
	} `json:"context"`
}

// history returns a JSON history of n messages, user and assistant in
// turn.
func history(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(&b, `{"role":%q,"content":"m%d"}`, role, i)
	}
	b.WriteByte(']')
	return b.String()
}

// Ensure policy.maxContextTokens is honoured over HTTP with the Go
// host's counter: the model is sent what fits, result.context says so,
// each stored message is counted once across turns, and a run without
// the budget reports no context.
func TestHandler_Runs_MaxContextTokens(t *testing.T) {
	var calls atomic.Int64
	rt := mustRuntime(t, core.Config{CountTokens: func(core.Message) (int, error) {
		calls.Add(1)
		return 10, nil
	}})
	h := httpapi.New(httpapi.Config{Runtime: rt})
	res := do(t, h, "POST", "/v1/sessions/w/runs", `{"input":"hi","history":`+history(40)+`,"policy":{"maxContextTokens":200,"contextChunkTokens":50}}`)
	if res.status != 200 {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
	r := decode[tokenResult](t, res.body)
	if r.Context == nil {
		t.Fatalf("no context in %s", res.body)
	}
	// 41 messages of 10 tokens under a budget of 200 moving by 50: 250
	// tokens over, rounded up to a chunk, are 25 messages dropped.
	if c := *r.Context; c.Messages != 16 || c.Dropped != 25 || c.Tokens != 160 {
		t.Errorf("context: got %+v, want 16 messages, 160 tokens, 25 dropped", c)
	}
	if want := "(model received 16 messages)"; !strings.HasSuffix(r.Reply.Content, want) {
		t.Errorf("reply: got %q, want it to end %q", r.Reply.Content, want)
	}
	if r.MessageCount != 42 {
		t.Errorf("messageCount: got %d, want 42", r.MessageCount)
	}
	if n := calls.Load(); n != 41 {
		t.Errorf("counter calls on the cold turn: got %d, want 41 (once per message)", n)
	}
	// A warm turn counts its input and the previous reply only.
	res = do(t, h, "POST", "/v1/sessions/w/runs", `{"input":"again","policy":{"maxContextTokens":200,"contextChunkTokens":50}}`)
	if res.status != 200 {
		t.Fatalf("warm status %d: %s", res.status, res.body)
	}
	if r = decode[tokenResult](t, res.body); r.Context == nil || r.Context.Messages+r.Context.Dropped != 43 || r.Context.Tokens > 200 {
		t.Errorf("warm context: got %s", res.body)
	}
	if n := calls.Load(); n != 43 {
		t.Errorf("counter calls after the warm turn: got %d, want 43", n)
	}
	// Without the budget: no context, every message sent.
	res = do(t, h, "POST", "/v1/sessions/w/runs", `{"input":"all"}`)
	if r = decode[tokenResult](t, res.body); r.Context != nil || strings.Contains(string(res.body), `"context"`) {
		t.Errorf("no budget: got %s", res.body)
	}
	if want := "(model received 45 messages)"; !strings.HasSuffix(r.Reply.Content, want) {
		t.Errorf("no budget reply: got %q", r.Reply.Content)
	}
}

// Ensure an input over policy.maxContextTokens is refused
// limit_exceeded before the model, naming the budget, and changes
// nothing; bad token fields are refused invalid_argument.
func TestHandler_Runs_MaxContextTokens_Refusals(t *testing.T) {
	h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{})})
	big := strings.Repeat("x", 4000) // 1,004 tokens by the estimate
	res := do(t, h, "POST", "/v1/sessions/big/runs", `{"input":"`+big+`","history":`+history(4)+`,"policy":{"maxContextTokens":1000}}`)
	e := decode[errorBody](t, res.body)
	if res.status != 413 || e.Error.Code != "limit_exceeded" || !strings.Contains(e.Error.Message, "policy.maxContextTokens (1000)") {
		t.Errorf("too large: got %d %s", res.status, res.body)
	}
	if res = do(t, h, "GET", "/v1/sessions/big", ""); res.status != 404 {
		t.Errorf("session after the refusal: got %d %s, want 404", res.status, res.body)
	}
	for _, policy := range []string{
		`{"maxContextTokens":-1}`,
		`{"maxContextTokens":1.5}`,
		`{"maxContextTokens":"1000"}`,
		`{"contextChunkTokens":-1}`,
		`{"maxContextTokens":100,"contextChunkTokens":101}`,
		`{"maxContextTokens":9007199254740992}`,
		`{"MaxContextTokens":100}`,
	} {
		res := do(t, h, "POST", "/v1/sessions/bad/runs", `{"input":"x","policy":`+policy+`}`)
		if e := decode[errorBody](t, res.body); res.status != 400 || e.Error.Code != "invalid_argument" {
			t.Errorf("policy %s: got %d %s", policy, res.status, res.body)
		}
	}
	if res = do(t, h, "GET", "/v1/sessions/bad", ""); res.status != 404 {
		t.Errorf("session after bad policies: got %d %s, want 404", res.status, res.body)
	}
}

// Ensure a run under policy.maxContextTokens streams a model.context
// event before each model call, and its run.completed result carries
// the context of the last.
func TestHandler_Runs_MaxContextTokens_ServerSentEvents(t *testing.T) {
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{})}))
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/v1/sessions/sse/runs", strings.NewReader(`{"input":"hi","history":`+history(30)+`,"policy":{"maxContextTokens":60}}`))
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	evs := readSSE(t, res.Body)
	var ctx map[string]any
	at := -1
	for i, ev := range evs {
		if ev.name == "model.context" {
			ctx, _ = ev.data["context"].(map[string]any)
			at = i
			if ev.data["step"] != float64(1) {
				t.Errorf("model.context step: got %v, want 1", ev.data["step"])
			}
		}
	}
	if at < 0 || ctx == nil {
		t.Fatalf("no model.context event: %+v", evs)
	}
	if evs[at+1].name != "model.delta" {
		t.Errorf("after model.context: got %s, want model.delta", evs[at+1].name)
	}
	// 31 messages of 5 tokens (the estimate of "mN" and "hi") under 60.
	if ctx["tokens"].(float64) > 60 || ctx["messages"].(float64)+ctx["dropped"].(float64) != 31 {
		t.Errorf("model.context: got %v", ctx)
	}
	last := evs[len(evs)-1]
	result, _ := last.data["result"].(map[string]any)
	if last.name != "run.completed" || fmt.Sprint(result["context"]) != fmt.Sprint(ctx) {
		t.Errorf("run.completed context: got %v, want %v", result["context"], ctx)
	}
}

// Ensure a Go host's counter that fails (an error, a negative count, a
// panic) fails the run typed over HTTP, changing nothing, and the API
// goes on.
func TestHandler_Runs_MaxContextTokens_ErrCounter(t *testing.T) {
	var mode atomic.Int64
	rt := mustRuntime(t, core.Config{CountTokens: func(m core.Message) (int, error) {
		switch mode.Load() {
		case 1:
			return 0, errors.New("tokenizer down")
		case 2:
			return -1, nil
		case 3:
			panic("tokenizer bug")
		}
		return 10, nil
	}})
	h := httpapi.New(httpapi.Config{Runtime: rt})
	body := `{"input":"hi","history":` + history(4) + `,"policy":{"maxContextTokens":100}}`
	for m := int64(1); m <= 3; m++ {
		mode.Store(m)
		res := do(t, h, "POST", "/v1/sessions/c/runs", body)
		if e := decode[errorBody](t, res.body); res.status != 400 || e.Error.Code != "invalid_argument" {
			t.Errorf("counter mode %d: got %d %s, want 400 invalid_argument", m, res.status, res.body)
		}
		if res = do(t, h, "GET", "/v1/sessions/c", ""); res.status != 404 {
			t.Errorf("counter mode %d: the session after the failure: %d %s", m, res.status, res.body)
		}
	}
	mode.Store(0)
	res := do(t, h, "POST", "/v1/sessions/c/runs", body)
	if r := decode[tokenResult](t, res.body); res.status != 200 || r.Context == nil || r.Context.Tokens != 50 {
		t.Errorf("after the failures: got %d %s", res.status, res.body)
	}
}
