package durable

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// failingPayObject is payObject whose model answers tool results as
// fail says (nil: "done").
func failingPayObject(t *testing.T, st Store, runs *int, mu *sync.Mutex, fail func(context.Context) error) *Handler {
	t.Helper()
	pay := core.Tool{ToolSpec: core.ToolSpec{Name: "pay"},
		NeedsApproval: func(core.ToolInvocation) (bool, error) { return true, nil },
		Call: func(core.Context, core.ToolInvocation) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			*runs++
			return "paid", nil
		}}
	model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		if req.Messages[len(req.Messages)-1].Role == core.RoleTool && fail != nil {
			if err := fail(ctx); err != nil {
				return nil, err
			}
		}
		return core.Echo{}.Complete(ctx, req)
	})
	rt, err := core.New(core.Config{Model: model, Tools: []core.Tool{pay}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	api := httpapi.New(httpapi.Config{Runtime: rt, Token: "tok"})
	return New(Config{API: api, Runtime: rt, Store: st})
}

// Ensure a resume that fails after its approved tool ran stores the
// tool's result before the failure is answered (plain and streamed, the
// model failing or the timeout passing): the conversation holds it, the
// same approval again is refused by the object and by a fresh object on
// the same storage, and pay ran once (docs/adr/0019-tool-approvals.md,
// "Amendment: nothing paid twice"). Before, the failure rolled the result
// back and the second approval ran pay again.
func TestHandler_Approval_FailedResumeKeepsTheResult(t *testing.T) {
	upstream := func(context.Context) error { return errors.New("upstream 500") }
	slow := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	cases := []struct {
		name   string
		fail   func(context.Context) error
		policy string
		stream bool
		status int
		code   string
	}{
		{name: "model error", fail: upstream, status: 502, code: "model_error"},
		{name: "model error streamed", fail: upstream, stream: true, status: 200, code: "model_error"},
		{name: "timeout", fail: slow, policy: `,"policy":{"timeoutMs":50}`, status: 504, code: "timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := &memStore{}
			var mu sync.Mutex
			runs := 0
			h := failingPayObject(t, st, &runs, &mu, tc.fail)
			id := pendingID(t, h)
			body := `{"approvals":[{"toolCallId":"` + id + `","approved":true}]` + tc.policy + `}`
			var headers []string
			if tc.stream {
				headers = []string{"Accept", "text/event-stream"}
			}
			a := do(t, h, "POST", "/v1/sessions/c1/runs", body, headers...)
			if a.Status != tc.status || !strings.Contains(a.Body, `"code":"`+tc.code+`"`) || !strings.Contains(a.Body, `"appended":[{"role":"tool","content":"paid"`) {
				t.Fatalf("resume: %d %s", a.Status, a.Body)
			}
			if got := st.contents(t); len(got) != 3 || got[2] != "paid" {
				t.Fatalf("stored %q, want the call's result after it", got)
			}
			for _, obj := range []*Handler{h, failingPayObject(t, st, &runs, &mu, nil)} {
				if a := do(t, obj, "POST", "/v1/sessions/c1/runs", body); a.Status != 400 || a.Error.Code != "invalid_argument" {
					t.Fatalf("second approval: %d %s", a.Status, a.Body)
				}
			}
			if runs != 1 || len(st.contents(t)) != 3 {
				t.Fatalf("pay ran %d times, stored %q", runs, st.contents(t))
			}
			// The conversation goes on from the stored result.
			if a := do(t, failingPayObject(t, st, &runs, &mu, nil), "POST", "/v1/sessions/c1/runs", `{"input":"go on"}`); a.Status != 200 {
				t.Fatalf("next turn: %d %s", a.Status, a.Body)
			}
		})
	}
}

// Ensure a client that leaves a streamed resume after pay ran (its
// request's context ends while the model is called) has the result
// stored once the run is cancelled: a fresh object on the same storage
// refuses the approval again, and pay ran once.
func TestHandler_Approval_ClientLeavesAfterTheTool(t *testing.T) {
	st := &memStore{}
	var mu sync.Mutex
	runs := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The client leaves once the result is in, while the model is called
	// after it (leaving while pay is out is the documented "at least
	// once").
	leave := func(ctx context.Context) error { cancel(); <-ctx.Done(); return ctx.Err() }
	h := failingPayObject(t, st, &runs, &mu, leave)
	id := pendingID(t, h)
	body := `{"approvals":[{"toolCallId":"` + id + `","approved":true}]}`
	req := httptest.NewRequest("POST", "/v1/sessions/c1/runs", strings.NewReader(body)).WithContext(ctx)
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Accept", "text/event-stream")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got := st.contents(t); len(got) != 3 || got[2] != "paid" {
		t.Fatalf("stored %q, want the call's result after it", got)
	}
	if a := do(t, failingPayObject(t, st, &runs, &mu, nil), "POST", "/v1/sessions/c1/runs", body); a.Status != 400 || a.Error.Code != "invalid_argument" || runs != 1 {
		t.Fatalf("second approval: %d %s, pay ran %d times", a.Status, a.Body, runs)
	}
}
