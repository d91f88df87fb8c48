package wazero_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/jshost"
)

// mustServe checks that the instance still answers a plain turn.
func mustServe(t *testing.T, in *jshost.Instance, rt jshost.Value, session string) {
	t.Helper()
	v, err := in.CallAsync(context.Background(), rt, "startRun", session, "still there?")
	if err != nil {
		t.Fatalf("the instance stopped serving: %v", err)
	}
	if r := asResult(t, in, v); !strings.HasPrefix(r.reply, "echo: still there?") {
		t.Fatalf("the instance answered %q", r.reply)
	}
}

// Ensure the tool loop calls a tool implemented as a Go function, with
// the parsed arguments and the call's context, synchronously or through a
// Promise; a throwing tool fails the run with tool_error, or is reported
// to the model under toolErrors "report".
func TestToolCallsWithGoFunctionTools(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	var mu sync.Mutex
	var gotCtx map[string]any
	add := jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		a, _ := jshost.Get(args[0], "a").(float64)
		b, _ := jshost.Get(args[0], "b").(float64)
		mu.Lock()
		gotCtx, _ = jshost.Export(args[1]).(map[string]any)
		mu.Unlock()
		return a + b, nil
	})
	later := jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		p, resolve, _ := in.NewPromise()
		go resolve(map[string]any{"status": "done later"})
		return p, nil
	})
	boom := jshost.Func(func(jshost.Value, []jshost.Value) (any, error) {
		return nil, errors.New("disk on fire")
	})
	rt := mustRuntime(t, in, "agentrt", map[string]any{
		"tools": []any{
			map[string]any{"name": "add", "description": "adds a and b", "parameters": map[string]any{"type": "object"}, "call": add},
			map[string]any{"name": "later", "call": later},
			map[string]any{"name": "boom", "call": boom},
		},
	})

	v, err := in.CallAsync(ctx, rt, "startRun", "tools", `/tool add {"a":2,"b":3}`)
	if err != nil {
		t.Fatalf("add: %v", err)
	}
	r := asResult(t, in, v)
	if want := "tool add returned: 5 (model received 3 messages)"; r.reply != want {
		t.Errorf("reply = %q, want %q", r.reply, want)
	}
	if len(r.appended) != 4 {
		t.Fatalf("appended %d messages, want 4 (user, call, result, reply): %v", len(r.appended), r.appended)
	}
	callID := get(r.appended[1], "tool_calls")
	calls, _ := callID.([]any)
	if len(calls) != 1 || get(calls[0], "name") != "add" {
		t.Fatalf("assistant tool_calls = %v", callID)
	}
	mu.Lock()
	if gotCtx["runId"] != r.raw["runId"] || gotCtx["sessionId"] != "tools" || gotCtx["toolCallId"] != get(calls[0], "id") {
		t.Errorf("tool ctx = %v, want runId %v, sessionId tools, toolCallId %v", gotCtx, r.raw["runId"], get(calls[0], "id"))
	}
	mu.Unlock()
	if got := get(r.appended[2], "content"); got != "5" {
		t.Errorf("tool message content = %v, want 5", got)
	}

	v, err = in.CallAsync(ctx, rt, "startRun", "tools", "/tool later")
	if err != nil {
		t.Fatalf("later: %v", err)
	}
	if r := asResult(t, in, v); !strings.HasPrefix(r.reply, `tool later returned: {"status":"done later"}`) {
		t.Errorf("later reply = %q", r.reply)
	}

	_, err = in.CallAsync(ctx, rt, "startRun", "tools", "/tool boom")
	var ex *jshost.Exception
	if !errors.As(err, &ex) || ex.Code != "tool_error" || !strings.Contains(ex.Message, "disk on fire") {
		t.Errorf("boom = %v, want tool_error naming the tool's error", err)
	}
	v, err = in.CallAsync(ctx, rt, "startRunWithPolicy", "tools", "/tool boom", map[string]any{"toolErrors": "report"})
	if err != nil {
		t.Fatalf("boom reported: %v", err)
	}
	if r := asResult(t, in, v); !strings.Contains(r.reply, "disk on fire") {
		t.Errorf("reported boom reply = %q, want the error text", r.reply)
	}
	mustServe(t, in, rt, "after-tools")
}

// Ensure a model implemented in Go receives the request, and a model that
// answers with a rejected Promise (or throws) fails the run with
// model_error, leaves the session as seeding left it, and the instance
// keeps serving.
func TestModelRejectedPromise(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	var mu sync.Mutex
	var system string
	rejecting := jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		mu.Lock()
		system, _ = jshost.Get(args[0], "system").(string)
		mu.Unlock()
		p, _, reject := in.NewPromise()
		reject(errors.New("upstream answered 503"))
		return p, nil
	})
	rt := mustRuntime(t, in, "agentrt", map[string]any{"model": rejecting, "systemPrompt": "be kind"})
	_, err := in.CallAsync(ctx, rt, "startRunWithHistory", "m", "hello", history(msg("user", "hi"), msg("assistant", "hey")))
	var ex *jshost.Exception
	if !errors.As(err, &ex) || ex.Code != "model_error" || !strings.Contains(ex.Message, "upstream answered 503") {
		t.Fatalf("run = %v, want model_error with the rejection's message", err)
	}
	mu.Lock()
	if system != "be kind" {
		t.Errorf("request.system = %q, want the system prompt", system)
	}
	mu.Unlock()
	s, err := in.Call(ctx, rt, "getSession", "m")
	if err != nil {
		t.Fatal(err)
	}
	if got := num(get(in.Export(s), "messageCount")); got != 2 {
		t.Errorf("after the failed run the session has %d messages, want the 2 seeded", got)
	}

	throwing := jshost.Func(func(jshost.Value, []jshost.Value) (any, error) {
		return nil, errors.New("model threw")
	})
	rt2 := mustRuntime(t, in, "agentrt", map[string]any{"model": throwing})
	if _, err := in.CallAsync(ctx, rt2, "startRun", "m2", "hello"); !errors.As(err, &ex) || ex.Code != "model_error" {
		t.Errorf("throwing model = %v, want model_error", err)
	}
	mustServe(t, in, mustRuntime(t, in, "agentrt", nil), "after-model")
}

// Ensure every refusal and failure code reaches the host as an Error with
// code (and index where one message is at fault), and the instance keeps
// serving after each.
func TestRefusalCodes(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	echo := mustRuntime(t, in, "agentrt", map[string]any{
		"limits": map[string]any{"maxSeedMessages": 3, "maxMessageBytes": 1000},
	})
	// A model that answers only when the test says so.
	pending := make(chan func(any), 10)
	slow := mustRuntime(t, in, "agentrt", map[string]any{
		"model": jshost.Func(func(jshost.Value, []jshost.Value) (any, error) {
			p, resolve, _ := in.NewPromise()
			pending <- resolve
			return p, nil
		}),
	})
	toolCall := map[string]any{"role": "assistant", "content": nil,
		"tool_calls": []any{map[string]any{"id": "c1", "name": "f", "arguments": "{}"}}}

	tests := []struct {
		name  string
		run   func() error
		code  string
		index int
	}{
		{name: "ErrSessionIDNotString", code: "invalid_argument", index: -1, run: func() error {
			_, err := in.CallAsync(ctx, echo, "startRun", 42, "x")
			return err
		}},
		{name: "ErrBadPolicy", code: "invalid_argument", index: -1, run: func() error {
			_, err := in.CallAsync(ctx, echo, "startRunWithPolicy", "s", "x", map[string]any{"seedMode": "sometimes"})
			return err
		}},
		{name: "ErrUnknownRole", code: "invalid_history", index: 1, run: func() error {
			_, err := in.CallAsync(ctx, echo, "startRunWithHistory", "s", "x", history(msg("user", "a"), msg("wizard", "b")))
			return err
		}},
		{name: "ErrOrphanToolResult", code: "invalid_history", index: 1, run: func() error {
			h := history(msg("user", "a"), map[string]any{"role": "tool", "content": "r", "tool_call_id": "nope"})
			_, err := in.CallAsync(ctx, echo, "startRunWithHistory", "s", "x", h)
			return err
		}},
		{name: "ErrUnansweredToolCall", code: "invalid_history", index: 1, run: func() error {
			_, err := in.CallAsync(ctx, echo, "startRunWithHistory", "s", "x", history(msg("user", "a"), toolCall))
			return err
		}},
		{name: "ErrContentNotString", code: "invalid_history", index: 0, run: func() error {
			_, err := in.CallAsync(ctx, echo, "startRunWithHistory", "s", "x", []any{map[string]any{"role": "user", "content": 7}})
			return err
		}},
		{name: "ErrTooManySeedMessages", code: "limit_exceeded", index: -2, run: func() error {
			h := history(msg("user", "a"), msg("assistant", "b"), msg("user", "c"), msg("assistant", "d"))
			_, err := in.CallAsync(ctx, echo, "startRunWithHistory", "s", "x", h)
			return err
		}},
		{name: "ErrInputTooLarge", code: "limit_exceeded", index: -1, run: func() error {
			_, err := in.CallAsync(ctx, echo, "startRun", "s", strings.Repeat("x", 2000))
			return err
		}},
		{name: "ErrUnknownTool", code: "tool_error", index: -1, run: func() error {
			_, err := in.CallAsync(ctx, echo, "startRun", "s", "/tool nope {}")
			return err
		}},
		{name: "ErrMaxSteps", code: "limit_exceeded", index: -1, run: func() error {
			_, err := in.CallAsync(ctx, echo, "startRunWithPolicy", "s", "/tool nope {}", map[string]any{"maxSteps": 1})
			return err
		}},
		{name: "ErrSessionBusy", code: "session_busy", index: -1, run: func() error {
			first, err := in.Call(ctx, slow, "startRun", "busy", "first")
			if err != nil {
				return err
			}
			resolve := <-pending // the first run is inside the model
			_, busyErr := in.CallAsync(ctx, slow, "startRunWithPolicy", "busy", "second", map[string]any{"onBusy": "reject"})
			resolve(map[string]any{"content": "first done"})
			if _, err := in.Await(ctx, first); err != nil {
				return fmt.Errorf("the first run failed: %w", err)
			}
			return busyErr
		}},
		{name: "ErrCancelled", code: "cancelled", index: -1, run: func() error {
			p, err := in.Call(ctx, slow, "startRun", "cancel", "x", map[string]any{"runId": "run-to-cancel"})
			if err != nil {
				return err
			}
			<-pending
			if ok, err := in.Call(ctx, slow, "cancelRun", "run-to-cancel"); ok != true || err != nil {
				return fmt.Errorf("cancelRun = %v, %v; want true", ok, err)
			}
			if ok, _ := in.Call(ctx, slow, "cancelRun", "run-to-cancel"); ok != false {
				return fmt.Errorf("second cancelRun = %v, want false", ok)
			}
			_, err = in.Await(ctx, p)
			return err
		}},
		{name: "ErrTimeout", code: "timeout", index: -1, run: func() error {
			p, err := in.Call(ctx, slow, "startRunWithPolicy", "timeout", "x", map[string]any{"timeoutMs": 5})
			if err != nil {
				return err
			}
			<-pending // never answered
			_, err = in.Await(ctx, p)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			var ex *jshost.Exception
			if !errors.As(err, &ex) {
				t.Fatalf("got %v, want a rejection with code %s", err, tt.code)
			}
			if ex.Code != tt.code || ex.Name != "Error" || ex.Message == "" {
				t.Errorf("got %s %q [%s], want an Error with code %s", ex.Name, ex.Message, ex.Code, tt.code)
			}
			if tt.index != -2 && ex.Index != tt.index {
				t.Errorf("index = %d, want %d (%v)", ex.Index, tt.index, err)
			}
			mustServe(t, in, echo, "serve-"+tt.name)
		})
	}
	// A refused run created nothing.
	if s, _ := in.Call(ctx, echo, "getSession", "s"); s != jshost.Null {
		t.Errorf("getSession(s) after refusals = %v, want null", in.Export(s))
	}
	// A refused config: createRuntime returns an Error with its code.
	bad, err := in.Call(ctx, in.Global("agentrt"), "createRuntime", map[string]any{"tools": []any{map[string]any{"name": ""}}})
	if err != nil {
		t.Fatal(err)
	}
	if e := in.Export(bad).(map[string]any); e["code"] != "invalid_argument" {
		t.Errorf("createRuntime(bad tools) = %v, want an Error with code invalid_argument", e)
	}
}
