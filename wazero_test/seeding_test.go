package wazero_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/jshost"
)

// Ensure a cold session is seeded once from history passed as JavaScript
// arrays of objects: the first run sees the seeded turns plus the input,
// and the next turn on the warm session is not re-seeded.
func TestColdStartedSessionIsSeededFromSuppliedHistory(t *testing.T) {
	in := mustInstance(t, nil)
	rt := mustRuntime(t, in, "agentrt", map[string]any{"systemPrompt": "You are terse."})
	ctx := context.Background()
	h := history(
		msg("system", "an old system prompt, skipped"),
		msg("user", "What is 2+2?"),
		msg("assistant", "4"),
		msg("user", "And 3+3?"),
		msg("assistant", "6"),
	)
	var mu sync.Mutex
	var seededEvents []any
	onEvent := jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		ev, _ := jshost.Export(args[0]).(map[string]any)
		if ev["type"] == "session.seeded" {
			mu.Lock()
			seededEvents = append(seededEvents, ev)
			mu.Unlock()
		}
		return nil, nil
	})
	v, err := in.CallAsync(ctx, rt, "startRunWithHistory", "conv-1", "And 4+4?", h, map[string]any{"onEvent": onEvent})
	if err != nil {
		t.Fatalf("first turn: %v", err)
	}
	r := asResult(t, in, v)
	if r.seedMode != "cold" || r.seeded != 4 || r.skipped != 1 {
		t.Errorf("first turn seed = %v, want cold, seeded 4, skippedSystem 1", r.raw["seed"])
	}
	if want := "echo: And 4+4? (model received 5 messages)"; r.reply != want {
		t.Errorf("first reply = %q, want %q", r.reply, want)
	}
	if r.messageCount != 6 {
		t.Errorf("messageCount = %d, want 6", r.messageCount)
	}
	mu.Lock()
	if len(seededEvents) != 1 || get(seededEvents[0], "seed", "mode") != "cold" && get(seededEvents[0], "mode") != "cold" {
		t.Errorf("session.seeded events = %v, want one, cold", seededEvents)
	}
	mu.Unlock()

	// The host sends the same history again, now with the first turn too:
	// the warm session must not be seeded a second time.
	h2 := append(append([]any{}, h...), r.appended...)
	v, err = in.CallAsync(ctx, rt, "startRunWithHistory", "conv-1", "And 5+5?", h2)
	if err != nil {
		t.Fatalf("second turn: %v", err)
	}
	r = asResult(t, in, v)
	if r.seedMode != "noop" || r.seeded != 0 {
		t.Errorf("second turn seed = %v, want noop, seeded 0", r.raw["seed"])
	}
	if want := "echo: And 5+5? (model received 7 messages)"; r.reply != want {
		t.Errorf("second reply = %q, want %q", r.reply, want)
	}
	s, err := in.Call(ctx, rt, "getSession", "conv-1")
	if err != nil {
		t.Fatal(err)
	}
	var contents []string
	for _, m := range in.Export(s).(map[string]any)["messages"].([]any) {
		contents = append(contents, m.(map[string]any)["content"].(string))
	}
	want := []string{"What is 2+2?", "4", "And 3+3?", "6", "And 4+4?",
		"echo: And 4+4? (model received 5 messages)", "And 5+5?", "echo: And 5+5? (model received 7 messages)"}
	if fmt.Sprint(contents) != fmt.Sprint(want) {
		t.Errorf("session messages =\n%q\nwant\n%q", contents, want)
	}
}

// Ensure a second instance of the module is a cold start: it holds no
// session, seeds again from the host's history, and its model sees the
// whole context.
func TestSecondInstanceIsColdAndSeedsFromHostHistory(t *testing.T) {
	ctx := context.Background()
	a := mustInstance(t, nil)
	rtA := mustRuntime(t, a, "agentrt", nil)
	var hostHistory []any // what the host stores, turn after turn
	for _, input := range []string{"first", "second"} {
		v, err := a.CallAsync(ctx, rtA, "startRunWithHistory", "conv", input, hostHistory)
		if err != nil {
			t.Fatalf("instance A, %s: %v", input, err)
		}
		hostHistory = append(hostHistory, asResult(t, a, v).appended...)
	}

	b := mustInstance(t, map[string]string{"AGENTRT_GLOBAL": "agentrtB"})
	if v := b.Global("agentrt"); v != jshost.Undefined {
		t.Errorf("instance B published globalThis.agentrt = %v; want only agentrtB", v)
	}
	var mu sync.Mutex
	var seen []string
	model := jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		msgs := jshost.Export(jshost.Get(args[0], "messages")).([]any)
		mu.Lock()
		seen = seen[:0]
		for _, m := range msgs {
			seen = append(seen, m.(map[string]any)["content"].(string))
		}
		mu.Unlock()
		return map[string]any{"content": fmt.Sprintf("saw %d", len(msgs))}, nil
	})
	rtB := mustRuntime(t, b, "agentrtB", map[string]any{"model": model})
	if s, err := b.Call(ctx, rtB, "getSession", "conv"); err != nil || s != jshost.Null {
		t.Fatalf("instance B getSession(conv) = %v, %v; want null (cold)", s, err)
	}
	v, err := b.CallAsync(ctx, rtB, "startRunWithHistory", "conv", "third", hostHistory)
	if err != nil {
		t.Fatalf("instance B: %v", err)
	}
	r := asResult(t, b, v)
	if r.seedMode != "cold" || r.seeded != 4 || r.reply != "saw 5" {
		t.Errorf("instance B: seed %v, reply %q; want cold 4, saw 5", r.raw["seed"], r.reply)
	}
	want := []string{"first", "echo: first (model received 1 messages)", "second",
		"echo: second (model received 3 messages)", "third"}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("instance B's model saw\n%q\nwant\n%q", seen, want)
	}
}

// Ensure reconcile mode appends a tail, ignores a prefix and replaces a
// diverged session.
func TestReconcileMode(t *testing.T) {
	in := mustInstance(t, nil)
	rt := mustRuntime(t, in, "agentrt", nil)
	ctx := context.Background()
	reconcile := map[string]any{"seedMode": "reconcile"}
	run := func(input string, h []any) result {
		t.Helper()
		v, err := in.CallAsync(ctx, rt, "startRunWithPolicyAndHistory", "r", input, reconcile, h)
		if err != nil {
			t.Fatalf("%s: %v", input, err)
		}
		return asResult(t, in, v)
	}
	session := func() []any {
		s, err := in.Call(ctx, rt, "getSession", "r")
		if err != nil {
			t.Fatal(err)
		}
		return in.Export(s).(map[string]any)["messages"].([]any)
	}
	r := run("one", history(msg("user", "hi"), msg("assistant", "hello")))
	if r.seedMode != "cold" || r.seeded != 2 || r.messageCount != 4 {
		t.Fatalf("cold: seed %v, %d messages; want cold 2, 4", r.raw["seed"], r.messageCount)
	}
	// Another tab added a turn: the session is a strict prefix.
	longer := append(session(), msg("user", "from tab B"), msg("assistant", "reply B"))
	r = run("two", longer)
	if r.seedMode != "appended" || r.seeded != 2 || r.messageCount != 8 {
		t.Errorf("tail: seed %v, %d messages; want appended 2, 8", r.raw["seed"], r.messageCount)
	}
	// A prefix of the session changes nothing.
	r = run("three", session()[:2])
	if r.seedMode != "noop" || r.seeded != 0 || r.messageCount != 10 {
		t.Errorf("prefix: seed %v, %d messages; want noop 0, 10", r.raw["seed"], r.messageCount)
	}
	// A diverged history replaces the session.
	r = run("four", history(msg("user", "another"), msg("assistant", "world")))
	if r.seedMode != "replaced" || r.seeded != 2 || r.messageCount != 4 {
		t.Errorf("diverged: seed %v, %d messages; want replaced 2, 4", r.raw["seed"], r.messageCount)
	}
	if got := session()[0].(map[string]any)["content"]; got != "another" {
		t.Errorf("after replace the session starts with %v, want another", got)
	}
}

// Ensure 50 concurrent first turns on one cold session seed it once.
func TestConcurrentFirstTurnsSeedOnce(t *testing.T) {
	in := mustInstance(t, nil)
	rt := mustRuntime(t, in, "agentrt", nil)
	ctx := context.Background()
	h := history(msg("user", "a"), msg("assistant", "b"), msg("user", "c"), msg("assistant", "d"))
	const n = 50
	results := make([]result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			v, err := in.CallAsync(ctx, rt, "startRunWithHistory", "hot", fmt.Sprintf("turn %d", i), h)
			if err != nil {
				errs[i] = err
				return
			}
			results[i] = asResult(t, in, v)
		}(i)
	}
	wg.Wait()
	cold, noop := 0, 0
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("turn %d: %v", i, errs[i])
		}
		switch {
		case r.seedMode == "cold" && r.seeded == 4:
			cold++
		case r.seedMode == "noop" && r.seeded == 0:
			noop++
		default:
			t.Errorf("turn %d: seed %v", i, r.raw["seed"])
		}
	}
	if cold != 1 || noop != n-1 {
		t.Errorf("cold %d, noop %d; want 1 and %d", cold, noop, n-1)
	}
	s, err := in.Call(ctx, rt, "getSession", "hot")
	if err != nil {
		t.Fatal(err)
	}
	if got := num(in.Export(s).(map[string]any)["messageCount"]); got != 4+2*n {
		t.Errorf("messageCount = %d, want %d", got, 4+2*n)
	}
	if strings.Count(fmt.Sprint(in.Export(s)), "content:a ") != 1 {
		t.Errorf("the seeded turn appears more than once: %v", in.Export(s))
	}
}
