package openai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/openai"
)

const key = "sk-test-0123456789"

// upstream is a fake chat completions server that records what it got.
type upstream struct {
	mu     sync.Mutex
	bodies []map[string]any
	auths  []string
	answer func(w http.ResponseWriter, body map[string]any)
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != "POST" {
		http.Error(w, "wrong route "+r.Method+" "+r.URL.Path, 404)
		return
	}
	var body map[string]any
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &body)
	u.mu.Lock()
	u.bodies = append(u.bodies, body)
	u.auths = append(u.auths, r.Header.Get("Authorization"))
	u.mu.Unlock()
	u.answer(w, body)
}

func mustServer(t *testing.T, answer func(w http.ResponseWriter, body map[string]any)) (*upstream, *openai.Model) {
	t.Helper()
	u := &upstream{answer: answer}
	srv := httptest.NewServer(u)
	t.Cleanup(srv.Close)
	return u, &openai.Model{BaseURL: srv.URL + "/v1/", Model: "test-model", Key: key, Client: srv.Client()}
}

func jsonAnswer(s string) func(http.ResponseWriter, map[string]any) {
	return func(w http.ResponseWriter, _ map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, s)
	}
}

// Ensure a run through the runtime sends the system prompt first, the
// session's messages and the tools, maps tool calls both ways, and
// returns the final text.
func TestModel_Complete_ToolLoopThroughRuntime(t *testing.T) {
	step := 0
	u, m := mustServer(t, func(w http.ResponseWriter, body map[string]any) {
		step++
		w.Header().Set("Content-Type", "application/json")
		if step == 1 {
			io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"a\":2,\"b\":3}"}}]}}]}`)
			return
		}
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"the sum is 5"}}]}`)
	})
	add := core.Tool{ToolSpec: core.ToolSpec{Name: "add", Description: "adds", Parameters: `{"type":"object"}`},
		Call: func(ctx core.Context, inv core.ToolInvocation) (string, error) { return "5", nil }}
	rt, err := core.New(core.Config{SystemPrompt: "Be brief.", Model: m, Tools: []core.Tool{add}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	run, err := rt.StartRunWithHistory(t.Context(), "s", "add 2 and 3", []core.SeedMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Wait(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.Reply.Content != "the sum is 5" {
		t.Errorf("reply: got %q", res.Reply.Content)
	}
	if len(u.bodies) != 2 {
		t.Fatalf("upstream calls: got %d, want 2", len(u.bodies))
	}
	first := u.bodies[0]
	if first["model"] != "test-model" || first["stream"] != nil {
		t.Errorf("model/stream: got %v/%v", first["model"], first["stream"])
	}
	msgs := first["messages"].([]any)
	if len(msgs) != 4 || msgs[0].(map[string]any)["role"] != "system" || msgs[0].(map[string]any)["content"] != "Be brief." {
		t.Errorf("first request messages: got %v", msgs)
	}
	tools := first["tools"].([]any)
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	if tools[0].(map[string]any)["type"] != "function" || fn["name"] != "add" || fn["description"] != "adds" {
		t.Errorf("tools: got %v", tools)
	}
	second := u.bodies[1]["messages"].([]any)
	if len(second) != 6 {
		t.Fatalf("second request: got %d messages, want 6", len(second))
	}
	asst := second[4].(map[string]any)
	if asst["content"] != nil {
		t.Errorf("assistant with tool calls: content %v, want null", asst["content"])
	}
	call := asst["tool_calls"].([]any)[0].(map[string]any)
	if call["id"] != "call_1" || call["type"] != "function" || call["function"].(map[string]any)["name"] != "add" {
		t.Errorf("tool call: got %v", call)
	}
	tool := second[5].(map[string]any)
	if tool["role"] != "tool" || tool["tool_call_id"] != "call_1" || tool["content"] != "5" {
		t.Errorf("tool result: got %v", tool)
	}
	if u.auths[0] != "Bearer "+key {
		t.Errorf("authorization: got %q", u.auths[0])
	}
}

// Ensure upstream failures are model_error with a short message that
// never contains the key.
func TestModel_Complete_Errors(t *testing.T) {
	tests := []struct {
		name   string
		answer func(http.ResponseWriter, map[string]any)
		want   string
	}{
		{"ErrStatus", func(w http.ResponseWriter, _ map[string]any) {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+key+`"}}`)
		}, "answered 401"},
		{"ErrStatusNotJSON", func(w http.ResponseWriter, _ map[string]any) {
			w.WriteHeader(503)
			io.WriteString(w, `<html>down</html>`)
		}, "answered 503"},
		{"ErrBadJSON", jsonAnswer(`{"choices":`), "not valid JSON"},
		{"ErrNoChoices", jsonAnswer(`{"choices":[]}`), "no choices"},
		{"ErrTooLarge", jsonAnswer(`{"choices":[{"message":{"content":"` + strings.Repeat("x", 5000) + `"}}]}`), "larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, m := mustServer(t, tc.answer)
			m.MaxResponseBytes = 4096
			_, err := m.Complete(t.Context(), &core.ModelRequest{Messages: []core.Message{{Role: "user", Content: "x"}}, Delta: func(string) {}})
			var e *core.Error
			if !asError(err, &e) || e.Code != core.CodeModelError {
				t.Fatalf("got %v, want model_error", err)
			}
			if !strings.Contains(e.Message, tc.want) {
				t.Errorf("message %q does not contain %q", e.Message, tc.want)
			}
			if strings.Contains(e.Message, key) || len(e.Message) > 300 {
				t.Errorf("message leaks the key or is long: %q", e.Message)
			}
		})
	}
	// Network error: nothing listens.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	m := &openai.Model{BaseURL: url, Key: key}
	_, err := m.Complete(t.Context(), &core.ModelRequest{Delta: func(string) {}})
	if core.ErrorCode(err) != core.CodeModelError || strings.Contains(err.Error(), key) {
		t.Errorf("network error: got %v", err)
	}
	// Parameters that are not JSON.
	_, err = m.Complete(t.Context(), &core.ModelRequest{Tools: []core.ToolSpec{{Name: "t", Parameters: "{"}}, Delta: func(string) {}})
	if core.ErrorCode(err) != core.CodeModelError {
		t.Errorf("bad parameters: got %v", err)
	}
}

func asError(err error, e **core.Error) bool {
	ce, ok := err.(*core.Error)
	*e = ce
	return ok
}

// Ensure stream=true reads SSE deltas into req.Delta and assembles tool
// calls from fragments.
func TestModel_Complete_Stream(t *testing.T) {
	u, m := mustServer(t, func(w http.ResponseWriter, body map[string]any) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{
			`{"choices":[{"delta":{"role":"assistant","content":"Hel"}}]}`,
			`{"choices":[{"delta":{"content":"lo"}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c9","type":"function","function":{"name":"look","arguments":"{\"q\":"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
			`{"choices":[]}`,
		} {
			io.WriteString(w, "data: "+d+"\n\n")
		}
		io.WriteString(w, "data: [DONE]\n\n")
	})
	m.Stream = true
	var deltas []string
	reply, err := m.Complete(t.Context(), &core.ModelRequest{Messages: []core.Message{{Role: "user", Content: "x"}}, Delta: func(s string) { deltas = append(deltas, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Content != "Hello" || strings.Join(deltas, "|") != "Hel|lo" {
		t.Errorf("content %q, deltas %q", reply.Content, deltas)
	}
	if len(reply.ToolCalls) != 1 || reply.ToolCalls[0] != (core.ToolCall{ID: "c9", Name: "look", Arguments: `{"q":1}`}) {
		t.Errorf("tool calls: got %+v", reply.ToolCalls)
	}
	if u.bodies[0]["stream"] != true {
		t.Errorf("stream flag: got %v", u.bodies[0]["stream"])
	}
}

// Ensure a cancelled context returns the context's error, so the runtime
// reports cancelled or timeout rather than model_error.
func TestModel_Complete_Cancelled(t *testing.T) {
	block := make(chan struct{})
	_, m := mustServer(t, func(w http.ResponseWriter, _ map[string]any) { <-block })
	defer close(block)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := m.Complete(ctx, &core.ModelRequest{Delta: func(string) {}})
	if err != context.Canceled {
		t.Errorf("got %v, want context.Canceled", err)
	}
}
