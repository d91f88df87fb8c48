package contract

import (
	"sync"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/mock"
)

// ForeignError is an error a host's Go func may return that is a
// *core.Error and yet not one of the runtime's: every Go edge fails the
// run with the code of the func it came from, as for any other error of
// the host, and neither panics nor fails it without a code.
type ForeignError struct {
	// Name names the error in failures.
	Name string
	// Err returns the error.
	Err func() error
}

// ForeignErrors are a typed nil *core.Error (the Go slip of returning a
// nil pointer as an error, which is a non-nil error) and a *core.Error
// without a code.
var ForeignErrors = []ForeignError{
	{"typed nil", func() error {
		var e *core.Error
		return e
	}},
	{"no code", func() error { return &core.Error{Message: "no ledger"} }},
}

// ForeignHost is the model and tools of a ForeignEdge: the model
// (mock.PayAndLook) asks for a "pay" call, whose NeedsApproval the
// predicate answers false, and a "look" call; the func named by Fail
// returns the error set there instead.
type ForeignHost struct {
	mu  sync.Mutex
	at  string
	err error
}

// Fail makes the func at ("predicate", "tool" or "model"; "" for none)
// return err.
func (h *ForeignHost) Fail(at string, err error) {
	h.mu.Lock()
	h.at, h.err = at, err
	h.mu.Unlock()
}

func (h *ForeignHost) fault(at string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.at == at {
		return h.err
	}
	return nil
}

// Model is the edge's model.
func (h *ForeignHost) Model() core.Model {
	return &mock.Model{CompleteFn: func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		reply, _ := mock.PayAndLook(ctx, req)
		if err := h.fault("model"); err != nil {
			return reply, err
		}
		return reply, nil
	}}
}

// Tools are the edge's tools.
func (h *ForeignHost) Tools() []core.Tool {
	return []core.Tool{
		{ToolSpec: core.ToolSpec{Name: "pay"},
			NeedsApproval: func(core.ToolInvocation) (bool, error) {
				if err := h.fault("predicate"); err != nil {
					return true, err
				}
				return false, nil
			},
			Call: func(core.Context, core.ToolInvocation) (string, error) {
				if err := h.fault("tool"); err != nil {
					return "paid", err
				}
				return "paid", nil
			}},
		{ToolSpec: core.ToolSpec{Name: "look"},
			Call: func(core.Context, core.ToolInvocation) (string, error) { return "looked", nil }},
	}
}

// ForeignEdge is a Go edge whose runtime has a ForeignHost's model and
// tools, for RunForeignErrors.
type ForeignEdge struct {
	// Host is the edge's model and tools.
	Host *ForeignHost
	// Run runs req on the edge and returns its error.
	Run func(req core.RunRequest) error
	// Messages returns the number of messages of session id.
	Messages func(id string) int
}

// RunForeignErrors makes each of the host's funcs on e return each
// ForeignError: the run fails with the func's code (tool_error for the
// approval predicate and the tool, model_error for the model), leaves
// the session as it was, and the runtime goes on.
func RunForeignErrors(t testing.TB, e ForeignEdge) {
	t.Helper()
	codes := map[string]core.Code{"predicate": core.CodeToolError, "tool": core.CodeToolError, "model": core.CodeModelError}
	for _, f := range ForeignErrors {
		for _, at := range []string{"predicate", "tool", "model"} {
			e.Host.Fail(at, f.Err())
			err := e.Run(core.RunRequest{SessionID: "s", Input: "q"})
			e.Host.Fail("", nil)
			if core.ErrorCode(err) != codes[at] || core.AsError(err).Message == "" {
				t.Fatalf("%s from the %s: got %v, want %s", f.Name, at, err, codes[at])
			}
			if n := e.Messages("s"); n != 0 {
				t.Fatalf("%s from the %s: the failed run left %d messages", f.Name, at, n)
			}
		}
	}
	if err := e.Run(core.RunRequest{SessionID: "s", Input: "q"}); err != nil || e.Messages("s") != 5 {
		t.Fatalf("after the failures: %v, %d messages, want 5", err, e.Messages("s"))
	}
}
