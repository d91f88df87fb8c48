package wazero_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/jshost"
)

// Ensure createRuntime returns an Error with code invalid_argument (and a
// message) for every wrong config, and the instance keeps serving.
func TestCreateRuntime_BadConfig(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	serve := mustRuntime(t, in, "agentrt", nil)
	fn := jshost.Func(func(jshost.Value, []jshost.Value) (any, error) { return "ok", nil })
	tests := []struct {
		name   string
		config any
	}{
		{name: "ErrNumber", config: 5},
		{name: "ErrString", config: "echo"},
		{name: "ErrArray", config: []any{}},
		{name: "ErrFunction", config: fn},
		{name: "ErrSystemPromptNotString", config: map[string]any{"systemPrompt": 1}},
		{name: "ErrUnknownModelName", config: map[string]any{"model": "gpt-9"}},
		{name: "ErrModelNumber", config: map[string]any{"model": 3}},
		{name: "ErrModelObject", config: map[string]any{"model": map[string]any{"complete": fn}}},
		{name: "ErrToolsNotArray", config: map[string]any{"tools": map[string]any{"name": "t", "call": fn}}},
		{name: "ErrToolNotObject", config: map[string]any{"tools": []any{42}}},
		{name: "ErrToolNoName", config: map[string]any{"tools": []any{map[string]any{"call": fn}}}},
		{name: "ErrToolNameNumber", config: map[string]any{"tools": []any{map[string]any{"name": 1, "call": fn}}}},
		{name: "ErrToolCallNotFunction", config: map[string]any{"tools": []any{map[string]any{"name": "t", "call": "no"}}}},
		{name: "ErrToolNoCall", config: map[string]any{"tools": []any{map[string]any{"name": "t"}}}},
		{name: "ErrToolNameTwice", config: map[string]any{"tools": []any{
			map[string]any{"name": "t", "call": fn}, map[string]any{"name": "t", "call": fn}}}},
		{name: "ErrToolParametersNumber", config: map[string]any{"tools": []any{map[string]any{"name": "t", "call": fn, "parameters": 5}}}},
		{name: "ErrLimitsNotObject", config: map[string]any{"limits": "small"}},
		{name: "ErrLimitNegative", config: map[string]any{"limits": map[string]any{"maxSessions": -1}}},
		{name: "ErrLimitFraction", config: map[string]any{"limits": map[string]any{"maxMessageBytes": 1.5}}},
		{name: "ErrLimitNaN", config: map[string]any{"limits": map[string]any{"maxSeedBytes": math.NaN()}}},
		{name: "ErrLimitHuge", config: map[string]any{"limits": map[string]any{"maxSessionBytes": 1e300}}},
		{name: "ErrLimitString", config: map[string]any{"limits": map[string]any{"maxSeedMessages": "10"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := in.Call(ctx, in.Global("agentrt"), "createRuntime", tt.config)
			if err != nil {
				t.Fatalf("createRuntime threw %v; want it to return an Error", err)
			}
			e, _ := in.Export(v).(map[string]any)
			if e["code"] != "invalid_argument" || e["name"] != "Error" || e["message"] == "" {
				t.Errorf("createRuntime(%v) = %v, want an Error with code invalid_argument and a message", tt.config, e)
			}
			mustServe(t, in, serve, "serve")
		})
	}
	// Ensure no config, null and undefined are the default runtime.
	for _, cfg := range [][]any{{}, {nil}, {jshost.Undefined}} {
		v, err := in.Call(ctx, in.Global("agentrt"), "createRuntime", cfg...)
		if err != nil || in.Get(v, "startRun") == jshost.Undefined {
			t.Fatalf("createRuntime(%v) = %v, %v; want a Runtime", cfg, in.Export(v), err)
		}
		mustServe(t, in, v, "default")
	}
}

// Ensure each of the four entry points rejects wrong arguments (types,
// counts, sizes, policies, options, histories) with a typed Error,
// creates nothing, and the instance keeps serving.
func TestEntryPoints_BadArguments(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	rt := mustRuntime(t, in, "agentrt", nil)
	serve := mustRuntime(t, in, "agentrt", nil)
	fn := jshost.Func(func(jshost.Value, []jshost.Value) (any, error) { return nil, nil })
	ok := history(msg("user", "a"), msg("assistant", "b"))
	huge := strings.Repeat("h", 2<<20) // over the default maxMessageBytes (1 MiB)
	longID := strings.Repeat("s", 513)
	const (
		run   = "startRun"
		pol   = "startRunWithPolicy"
		hist  = "startRunWithHistory"
		polH  = "startRunWithPolicyAndHistory"
		inv   = "invalid_argument"
		invH  = "invalid_history"
		limit = "limit_exceeded"
	)
	tests := []struct {
		name   string
		method string
		args   []any
		code   string
		index  int
	}{
		{"ErrNoArguments", run, nil, inv, -1},
		{"ErrNoInput", run, []any{"s"}, inv, -1},
		{"ErrSessionNull", run, []any{nil, "x"}, inv, -1},
		{"ErrSessionNumber", run, []any{42, "x"}, inv, -1},
		{"ErrSessionObject", pol, []any{map[string]any{}, "x", nil}, inv, -1},
		{"ErrSessionFunction", hist, []any{fn, "x", ok}, inv, -1},
		{"ErrSessionEmpty", run, []any{"", "x"}, inv, -1},
		{"ErrSessionTooLong", run, []any{longID, "x"}, inv, -1},
		{"ErrSessionHuge", hist, []any{huge, "x", ok}, inv, -1},
		{"ErrInputNumber", run, []any{"s", 1}, inv, -1},
		{"ErrInputArray", polH, []any{"s", []any{"x"}, nil, ok}, inv, -1},
		{"ErrInputHuge", run, []any{"s", huge}, limit, -1},
		{"ErrInputHugeWithHistory", hist, []any{"s", huge, ok}, limit, -1},
		{"ErrOptionsNumber", run, []any{"s", "x", 5}, inv, -1},
		{"ErrOptionsArray", hist, []any{"s", "x", ok, []any{}}, inv, -1},
		{"ErrOnEventNotFunction", run, []any{"s", "x", map[string]any{"onEvent": "log"}}, inv, -1},
		{"ErrOnEventObject", polH, []any{"s", "x", nil, ok, map[string]any{"onEvent": map[string]any{}}}, inv, -1},
		{"ErrRunIDNumber", run, []any{"s", "x", map[string]any{"runId": 7}}, inv, -1},
		{"ErrRunIDFunction", pol, []any{"s", "x", nil, map[string]any{"runId": fn}}, inv, -1},
		{"ErrRunIDTooLong", run, []any{"s", "x", map[string]any{"runId": longID}}, inv, -1},
		{"ErrInspectString", run, []any{"s", "x", map[string]any{"inspect": "yes"}}, inv, -1},
		{"ErrPolicyString", pol, []any{"s", "x", "reconcile"}, inv, -1},
		{"ErrPolicyArray", polH, []any{"s", "x", ok, ok}, inv, -1},
		{"ErrSeedModeUnknown", pol, []any{"s", "x", map[string]any{"seedMode": "always"}}, inv, -1},
		{"ErrSeedModeNumber", polH, []any{"s", "x", map[string]any{"seedMode": 1}, ok}, inv, -1},
		{"ErrOnBusyUnknown", pol, []any{"s", "x", map[string]any{"onBusy": "drop"}}, inv, -1},
		{"ErrToolErrorsUnknown", pol, []any{"s", "x", map[string]any{"toolErrors": "ignore"}}, inv, -1},
		{"ErrMaxStepsNegative", pol, []any{"s", "x", map[string]any{"maxSteps": -1}}, inv, -1},
		{"ErrMaxStepsFraction", pol, []any{"s", "x", map[string]any{"maxSteps": 1.5}}, inv, -1},
		{"ErrMaxStepsString", pol, []any{"s", "x", map[string]any{"maxSteps": "3"}}, inv, -1},
		{"ErrMaxContextBytesNaN", pol, []any{"s", "x", map[string]any{"maxContextBytes": math.NaN()}}, inv, -1},
		{"ErrMaxContextMessagesInfinite", pol, []any{"s", "x", map[string]any{"maxContextMessages": math.Inf(1)}}, inv, -1},
		{"ErrTimeoutTooLarge", pol, []any{"s", "x", map[string]any{"timeoutMs": 1e15}}, inv, -1},
		{"ErrAllowedToolsString", pol, []any{"s", "x", map[string]any{"allowedTools": "add"}}, inv, -1},
		{"ErrAllowedToolsNumbers", pol, []any{"s", "x", map[string]any{"allowedTools": []any{1}}}, inv, -1},
		{"ErrHistoryMissing", hist, []any{"s", "x"}, inv, -1},
		{"ErrHistoryMissingWithPolicy", polH, []any{"s", "x", map[string]any{}}, inv, -1},
		{"ErrHistoryNull", hist, []any{"s", "x", nil}, inv, -1},
		{"ErrHistoryObject", hist, []any{"s", "x", map[string]any{"0": msg("user", "a"), "length": 1}}, inv, -1},
		{"ErrHistoryString", hist, []any{"s", "x", `[{"role":"user","content":"a"}]`}, inv, -1},
		{"ErrHistoryNumber", polH, []any{"s", "x", nil, 3}, inv, -1},
		{"ErrHistoryFunction", hist, []any{"s", "x", fn}, inv, -1},
		{"ErrPackedGarbage", hist, []any{"s", "x", []byte("not packed at all")}, invH, -2},
		{"ErrPackedEmpty", hist, []any{"s", "x", []byte{}}, invH, -2},
		{"ErrHistoryHugeMessage", hist, []any{"s", "x", history(msg("user", "a"), msg("assistant", huge))}, limit, 1},
		{"ErrHistoryElementString", hist, []any{"s", "x", []any{"user: hi"}}, invH, 0},
		{"ErrHistoryNestedArray", hist, []any{"s", "x", []any{[]any{msg("user", "a")}}}, invH, 0},
		{"ErrHistoryHoles", hist, []any{"s", "x", []any{msg("user", "a"), jshost.Undefined}}, invH, 1},
		{"ErrHistoryOptionsBad", hist, []any{"s", "x", ok, map[string]any{"onEvent": 1}}, inv, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := in.CallAsync(ctx, rt, tt.method, tt.args...)
			var ex *jshost.Exception
			if !errors.As(err, &ex) {
				t.Fatalf("%s = %v, %v; want a rejection with code %s", tt.method, in.Export(v), err, tt.code)
			}
			if ex.Code != tt.code || ex.Name != "Error" || ex.Message == "" {
				t.Errorf("got %s %q [%s], want an Error with code %s and a message", ex.Name, ex.Message, ex.Code, tt.code)
			}
			if tt.index != -2 && ex.Index != tt.index {
				t.Errorf("index = %d, want %d", ex.Index, tt.index)
			}
			if len(ex.Message) > 4096 {
				t.Errorf("the message is %d bytes: it must not carry the huge input", len(ex.Message))
			}
			mustServe(t, in, serve, "serve")
		})
	}
	// Nothing was created by any refusal.
	if l := in.Export(mustCall(t, in, rt, "listSessions")); fmt.Sprint(l) != "[]" {
		t.Errorf("listSessions after the refusals = %v, want []", l)
	}
	if n := num(get(in.Export(mustCall(t, in, rt, "stats")), "sessions")); n != 0 {
		t.Errorf("stats.sessions = %d, want 0", n)
	}

	// Extra arguments are ignored; a method called without its object
	// (this undefined) still works.
	if _, err := in.CallAsync(ctx, rt, run, "extra", "x", nil, "more", 5); err != nil {
		t.Errorf("startRun with extra arguments: %v", err)
	}
	p, err := in.Invoke(ctx, in.Get(rt, hist), "detached", "x", ok)
	if err == nil {
		_, err = in.Await(ctx, p)
	}
	if err != nil {
		t.Errorf("a detached startRunWithHistory: %v", err)
	}
}

func mustCall(t *testing.T, in *jshost.Instance, v jshost.Value, method string, args ...any) jshost.Value {
	t.Helper()
	r, err := in.Call(context.Background(), v, method, args...)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return r
}

// Ensure cancelRun, getSession, deleteSession, listSessions, stats and
// close answer wrong arguments with their documented values (never a
// throw), and that after close runs are refused while sessions stay
// readable.
func TestRuntimeMethods_BadArguments(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	rt := mustRuntime(t, in, "agentrt", nil)
	serve := mustRuntime(t, in, "agentrt", nil)
	mustServe(t, in, rt, "kept")
	fn := jshost.Func(func(jshost.Value, []jshost.Value) (any, error) { return "s", nil })
	huge := strings.Repeat("k", 2<<20)
	tests := []struct {
		name   string
		method string
		args   []any
		want   any
	}{
		{"CancelNoArgument", "cancelRun", nil, false},
		{"CancelNumber", "cancelRun", []any{1}, false},
		{"CancelObject", "cancelRun", []any{map[string]any{"runId": "r"}}, false},
		{"CancelUnknown", "cancelRun", []any{"no-such-run"}, false},
		{"CancelHuge", "cancelRun", []any{huge}, false},
		{"GetNoArgument", "getSession", nil, nil},
		{"GetNumber", "getSession", []any{7}, nil},
		{"GetFunction", "getSession", []any{fn}, nil},
		{"GetArrayOfID", "getSession", []any{[]any{"kept"}}, nil},
		{"GetHuge", "getSession", []any{huge}, nil},
		{"GetEmpty", "getSession", []any{""}, nil},
		{"DeleteNoArgument", "deleteSession", nil, false},
		{"DeleteNumber", "deleteSession", []any{7}, false},
		{"DeleteHuge", "deleteSession", []any{huge}, false},
		{"DeleteUnknown", "deleteSession", []any{"nope"}, false},
		{"ListWithArguments", "listSessions", []any{5, "x"}, []any{"kept"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := in.Call(ctx, rt, tt.method, tt.args...)
			if err != nil {
				t.Fatalf("%s threw %v", tt.method, err)
			}
			if got := in.Export(v); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("%s(...) = %v, want %v", tt.method, got, tt.want)
			}
			mustServe(t, in, serve, "serve")
		})
	}
	for _, args := range [][]any{nil, {"x"}, {nil}, {map[string]any{"gc": "yes"}}, {map[string]any{"gc": true}}, {fn}} {
		v, err := in.Call(ctx, rt, "stats", args...)
		if err != nil {
			t.Fatalf("stats(%v) threw %v", args, err)
		}
		if s := in.Export(v); num(get(s, "sessions")) != 1 || get(s, "heapAlloc") == nil {
			t.Errorf("stats(%v) = %v, want 1 session and heapAlloc", args, s)
		}
	}

	// close, with or without arguments, twice.
	for _, args := range [][]any{{5}, nil} {
		if _, err := in.Call(ctx, rt, "close", args...); err != nil {
			t.Fatalf("close(%v) threw %v", args, err)
		}
	}
	for _, c := range []struct {
		method string
		args   []any
	}{
		{"startRun", []any{"kept", "after close"}},
		{"startRunWithPolicy", []any{"new", "after close", nil}},
		{"startRunWithHistory", []any{"new", "after close", history(msg("user", "a"))}},
		{"startRunWithPolicyAndHistory", []any{"new", "after close", nil, history()}},
	} {
		_, err := in.CallAsync(ctx, rt, c.method, c.args...)
		var ex *jshost.Exception
		if !errors.As(err, &ex) || ex.Code != "invalid_argument" || ex.Message == "" {
			t.Errorf("%s after close = %v, want invalid_argument", c.method, err)
		}
	}
	if s := in.Export(mustCall(t, in, rt, "getSession", "kept")); num(get(s, "messageCount")) != 2 {
		t.Errorf("getSession after close = %v, want the kept session", s)
	}
	if l := in.Export(mustCall(t, in, rt, "listSessions")); fmt.Sprint(l) != "[kept]" {
		t.Errorf("listSessions after close = %v, want [kept]", l)
	}
	if v := in.Export(mustCall(t, in, rt, "cancelRun", "run-1")); v != false {
		t.Errorf("cancelRun after close = %v, want false", v)
	}
	if s := in.Export(mustCall(t, in, rt, "stats")); num(get(s, "activeRuns")) != 0 {
		t.Errorf("stats after close = %v", s)
	}
	mustServe(t, in, serve, "after-close")
}

// Ensure many concurrent runs on a few sessions, mixing completed runs,
// refusals, runs cancelled while the model works and runs refused as
// busy, leave each session holding exactly the turns that completed,
// each once and in user/assistant pairs.
func TestConcurrentMixedRuns_SessionsConsistent(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	type held struct {
		called  chan struct{}
		resolve func(any)
	}
	var mu sync.Mutex
	holds := map[string]*held{} // inputs whose model call waits for the test
	model := jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		msgs, _ := jshost.Export(jshost.Get(args[0], "messages")).([]any)
		last, _ := get(msgs[len(msgs)-1], "content").(string)
		p, resolve, _ := in.NewPromise()
		reply := map[string]any{"content": "re: " + last}
		mu.Lock()
		h := holds[last]
		mu.Unlock()
		if h != nil {
			h.resolve = func(any) { resolve(reply) }
			close(h.called)
			return p, nil
		}
		go resolve(reply)
		return p, nil
	})
	rt := mustRuntime(t, in, "agentrt", map[string]any{"model": model})
	const sessions, perSession = 4, 24
	seed := func(s int) []any {
		return history(msg("user", fmt.Sprintf("seed-%d", s)), msg("assistant", fmt.Sprintf("seed-reply-%d", s)))
	}
	for s := 0; s < sessions; s++ {
		if _, err := in.CallAsync(ctx, rt, "startRunWithHistory", fmt.Sprint("c", s), fmt.Sprintf("first-%d", s), seed(s)); err != nil {
			t.Fatal(err)
		}
	}
	var (
		wg        sync.WaitGroup
		completed sync.Map // input -> session
		failures  = make(chan error, sessions*perSession)
	)
	for s := 0; s < sessions; s++ {
		completed.Store(fmt.Sprintf("first-%d", s), fmt.Sprint("c", s))
		for i := 0; i < perSession; i++ {
			wg.Add(1)
			go func(s, i int) {
				defer wg.Done()
				sid := fmt.Sprint("c", s)
				input := fmt.Sprintf("turn-%d-%d", s, i)
				var err error
				switch i % 6 {
				case 0, 1: // a plain turn
					_, err = in.CallAsync(ctx, rt, "startRun", sid, input)
				case 2: // the same seed again: a no-op on the warm session
					_, err = in.CallAsync(ctx, rt, "startRunWithHistory", sid, input, seed(s))
				case 3: // refused: an orphaned tool result
					h := history(msg("user", "a"), map[string]any{"role": "tool", "tool_call_id": "x", "content": "r"})
					_, err = in.CallAsync(ctx, rt, "startRunWithHistory", sid, input, h)
					var ex *jshost.Exception
					if !errors.As(err, &ex) || ex.Code != "invalid_history" || ex.Index != 1 {
						failures <- fmt.Errorf("%s: %v, want invalid_history at 1", input, err)
					}
					return
				case 4: // cancelled while the model works on it
					h := &held{called: make(chan struct{})}
					mu.Lock()
					holds[input] = h
					mu.Unlock()
					runID := "run-" + input
					p, cerr := in.Call(ctx, rt, "startRun", sid, input, map[string]any{"runId": runID})
					if cerr != nil {
						failures <- cerr
						return
					}
					<-h.called
					if v, _ := in.Call(ctx, rt, "cancelRun", runID); v != true {
						failures <- fmt.Errorf("cancelRun(%s) = %v, want true", runID, v)
					}
					h.resolve(nil) // answers too late: ignored
					_, err = in.Await(ctx, p)
					var ex *jshost.Exception
					if !errors.As(err, &ex) || ex.Code != "cancelled" {
						failures <- fmt.Errorf("%s: %v, want cancelled", input, err)
					}
					return
				case 5: // refused when busy, or completed
					_, err = in.CallAsync(ctx, rt, "startRunWithPolicy", sid, input, map[string]any{"onBusy": "reject"})
					var ex *jshost.Exception
					if errors.As(err, &ex) && ex.Code == "session_busy" {
						return
					}
				}
				if err != nil {
					failures <- fmt.Errorf("%s: %v", input, err)
					return
				}
				completed.Store(input, sid)
			}(s, i)
		}
	}
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Error(err)
	}
	want := map[string]map[string]bool{}
	completed.Range(func(k, v any) bool {
		if want[v.(string)] == nil {
			want[v.(string)] = map[string]bool{}
		}
		want[v.(string)][k.(string)] = true
		return true
	})
	for s := 0; s < sessions; s++ {
		sid := fmt.Sprint("c", s)
		got := in.Export(mustCall(t, in, rt, "getSession", sid))
		msgs, _ := get(got, "messages").([]any)
		if len(msgs) != 2+2*len(want[sid]) || num(get(got, "messageCount")) != len(msgs) {
			t.Errorf("%s holds %d messages, want the seed and %d completed turns", sid, len(msgs), len(want[sid]))
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(msgs); i += 2 {
			u, _ := get(msgs[i], "content").(string)
			a, _ := get(msgs[i+1], "content").(string)
			if get(msgs[i], "role") != "user" || get(msgs[i+1], "role") != "assistant" {
				t.Errorf("%s: messages %d and %d are not a user/assistant pair: %v %v", sid, i, i+1, msgs[i], msgs[i+1])
				continue
			}
			if i == 0 {
				if u != fmt.Sprintf("seed-%d", s) {
					t.Errorf("%s starts with %q, want the seed", sid, u)
				}
				continue
			}
			if !want[sid][u] || seen[u] || a != "re: "+u {
				t.Errorf("%s: turn %q -> %q is not a completed turn, is repeated, or has the wrong reply", sid, u, a)
			}
			seen[u] = true
		}
		if len(seen) != len(want[sid]) {
			t.Errorf("%s holds %d completed turns, want %d", sid, len(seen), len(want[sid]))
		}
	}
	if s := in.Export(mustCall(t, in, rt, "stats")); num(get(s, "activeRuns")) != 0 || num(get(s, "sessions")) != sessions {
		t.Errorf("stats = %v, want no active run and %d sessions", s, sessions)
	}
}
