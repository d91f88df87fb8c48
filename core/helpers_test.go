package core_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/mock"
)

var bg = context.Background()

// mustRuntime returns a Runtime for cfg or fails the test at once.
func mustRuntime(t testing.TB, cfg core.Config) *core.Runtime {
	t.Helper()
	rt, err := core.New(cfg)
	if err != nil {
		t.Fatalf("core.New: %v", err)
	}
	t.Cleanup(rt.Close)
	return rt
}

// mustComplete runs req to completion or fails the test.
func mustComplete(t testing.TB, rt *core.Runtime, req core.RunRequest) *core.Result {
	t.Helper()
	run, err := rt.Start(bg, req)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	res, err := waitRun(t, run)
	if err != nil {
		t.Fatalf("run %s: %v", run.ID(), err)
	}
	return res
}

func waitRun(t testing.TB, run *core.Run) (*core.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bg, 30*time.Second)
	defer cancel()
	res, err := run.Wait(ctx)
	if ctx.Err() != nil {
		t.Fatalf("run %s did not finish", run.ID())
	}
	return res, err
}

// messagesOf returns the session's messages, or nil when it does not exist.
func messagesOf(rt *core.Runtime, id string) []core.Message {
	s, ok := rt.Session(id)
	if !ok {
		return nil
	}
	return s.Messages
}

// storeState is everything a refused or rolled-back run must leave as it was.
type storeState struct {
	IDs      []string
	Messages map[string][]core.Message
	Sessions int
	Count    int
	Bytes    int64
}

func stateOf(rt *core.Runtime) storeState {
	st := rt.Stats()
	s := storeState{IDs: rt.ListSessions(), Messages: map[string][]core.Message{}, Sessions: st.Sessions, Count: st.Messages, Bytes: st.Bytes}
	for _, id := range s.IDs {
		s.Messages[id] = messagesOf(rt, id)
	}
	return s
}

func requireSameState(t testing.TB, got, want storeState) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("store changed:\n got %+v\nwant %+v", got, want)
	}
}

func user(s string) core.SeedMessage { return core.SeedMessage{Role: core.RoleUser, Content: s} }
func assistant(s string) core.SeedMessage {
	return core.SeedMessage{Role: core.RoleAssistant, Content: s}
}
func system(s string) core.SeedMessage { return core.SeedMessage{Role: core.RoleSystem, Content: s} }
func toolResult(id, s string) core.SeedMessage {
	return core.SeedMessage{Role: core.RoleTool, Content: s, ToolCallID: id}
}
func calling(ids ...string) core.SeedMessage {
	m := core.SeedMessage{Role: core.RoleAssistant, ContentMissing: true}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, core.ToolCall{ID: id, Name: "lookup", Arguments: `{"q":1}`})
	}
	return m
}

// asMessages converts seed messages to the session messages they become.
func asMessages(h []core.SeedMessage) []core.Message {
	var out []core.Message
	for i := range h {
		if h[i].Role != core.RoleSystem {
			out = append(out, h[i].Message())
		}
	}
	return out
}

func contents(msgs []core.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Role) + ":" + m.Content
	}
	return out
}

var _ = mock.Model{}

func asError(err error, target **core.Error) bool { return errors.As(err, target) }
