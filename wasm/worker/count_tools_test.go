package main

import (
	"context"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// Ensure the test counter counts a message's bytes, fails typed on its
// two failing inputs, and that its tool answers its calls so far.
func TestTestCounter(t *testing.T) {
	c := &testCounter{}
	call := core.Message{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "c1", Name: "look", Arguments: "{}"}}}
	for _, tc := range []struct {
		m    core.Message
		want int
	}{
		{core.Message{Role: core.RoleUser, Content: "hello"}, 5},
		{core.Message{Role: core.RoleUser, Content: "héllo"}, 6},
		{call, 8},
		{core.Message{Role: core.RoleTool, Content: "r1", ToolCallID: "c1"}, 4},
		{core.Message{Role: core.RoleAssistant}, 0},
	} {
		if n, err := c.count(tc.m); n != tc.want || err != nil {
			t.Errorf("count(%+v): got %d %v, want %d", tc.m, n, err, tc.want)
		}
	}
	if _, err := c.count(core.Message{Role: core.RoleUser, Content: CountFailError}); err == nil {
		t.Error("CountFailError: no error")
	}
	if n, _ := c.count(core.Message{Role: core.RoleUser, Content: CountFailNegative}); n >= 0 {
		t.Errorf("CountFailNegative: got %d, want a negative count", n)
	}
	if got, err := c.tool().Call(nil, core.ToolInvocation{}); got != "counted 7" || err != nil {
		t.Errorf("counted: got %q %v, want \"counted 7\"", got, err)
	}
}

// Ensure the worker's runtime counts with config.CountTokens: the
// context reports the counter's figures, and its failures fail the run
// typed, changing nothing.
func TestConfig_RuntimeConfig_CountTokens(t *testing.T) {
	c := &testCounter{}
	rt, err := core.New((&config{CountTokens: c.count}).runtimeConfig())
	if err != nil {
		t.Fatal(err)
	}
	policy := core.Policy{MaxContextTokens: 100}
	res, err := rt.Execute(context.Background(), core.RunRequest{SessionID: "s", Input: "hello", Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	// "hello" is 5 bytes (the estimate would say 6 tokens).
	if res.Context == nil || res.Context.Tokens != 5 || c.calls != 1 {
		t.Fatalf("context %+v after %d calls, want 5 tokens after 1", res.Context, c.calls)
	}
	for _, in := range []string{CountFailError, CountFailNegative} {
		_, err := rt.Execute(context.Background(), core.RunRequest{SessionID: "s", Input: in, Policy: policy})
		if err == nil || core.AsError(err).Code != core.CodeInvalidArgument {
			t.Errorf("%q: got %v, want invalid_argument", in, err)
		}
	}
	if s, _ := rt.Session("s"); len(s.Messages) != 2 {
		t.Errorf("session holds %d messages after the failures, want 2", len(s.Messages))
	}
}
