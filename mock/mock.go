// Package mock holds fakes of agentrt's interfaces for tests: structs of
// function fields, so each test sets only the behaviour it needs.
package mock

import (
	"strings"
	"sync"

	"github.com/agentrt/agentrt/core"
)

var _ core.Model = (*Model)(nil)

// Model is a core.Model whose CompleteFn answers. It records every request
// it is sent (a copy of the messages), so tests can check exactly what the
// model saw.
type Model struct {
	CompleteFn func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error)

	mu       sync.Mutex
	requests []core.ModelRequest
}

// Complete records req and calls CompleteFn, or answers "ok" when it is nil.
func (m *Model) Complete(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	r := *req
	r.Messages = append([]core.Message(nil), req.Messages...)
	m.mu.Lock()
	m.requests = append(m.requests, r)
	m.mu.Unlock()
	if m.CompleteFn == nil {
		return &core.ModelReply{Content: "ok"}, nil
	}
	return m.CompleteFn(ctx, req)
}

// Requests returns copies of the requests received so far.
func (m *Model) Requests() []core.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]core.ModelRequest(nil), m.requests...)
}

// Blocking returns a CompleteFn that signals started once per call and
// waits for release (or ctx) before answering "ok".
func Blocking(started chan<- struct{}, release <-chan struct{}) func(core.Context, *core.ModelRequest) (*core.ModelReply, error) {
	return func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		if started != nil {
			started <- struct{}{}
		}
		select {
		case <-release:
			return &core.ModelReply{Content: "ok"}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// PayAndLook answers a user input with two calls, pay and look, whose ids
// are "pay-" and "look-" followed by the input, and tool results with
// "done: " and the results' contents joined by " | ": the script of the
// tool approval tests, in which pay needs approval and look does not.
func PayAndLook(_ core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == core.RoleUser {
		return &core.ModelReply{ToolCalls: []core.ToolCall{
			{ID: "pay-" + last.Content, Name: "pay", Arguments: `{"amount":5}`},
			{ID: "look-" + last.Content, Name: "look", Arguments: `{}`},
		}}, nil
	}
	var seen []string
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == core.RoleTool; i-- {
		seen = append([]string{req.Messages[i].Content}, seen...)
	}
	return &core.ModelReply{Content: "done: " + strings.Join(seen, " | ")}, nil
}
