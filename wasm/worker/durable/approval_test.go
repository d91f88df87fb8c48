package durable

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// payObject is object with a tool "pay" that needs approval and counts
// its runs in runs (shared by the objects of one test, as restarts).
func payObject(t *testing.T, st Store, runs *int, mu *sync.Mutex) *Handler {
	t.Helper()
	pay := core.Tool{ToolSpec: core.ToolSpec{Name: "pay"},
		NeedsApproval: func(core.ToolInvocation) (bool, error) { return true, nil },
		Call: func(core.Context, core.ToolInvocation) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			*runs++
			return "paid", nil
		}}
	rt, err := core.New(core.Config{Tools: []core.Tool{pay}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	api := httpapi.New(httpapi.Config{Runtime: rt, Token: "tok"})
	return New(Config{API: api, Runtime: rt, Store: st})
}

// pendingID pauses conversation c1 on a call of pay and returns its id.
func pendingID(t *testing.T, h *Handler) string {
	t.Helper()
	a := do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"/tool pay {}"}`)
	var res struct {
		Status           string
		PendingApprovals []struct{ ToolCallID string }
	}
	if err := json.Unmarshal([]byte(a.Body), &res); err != nil || a.Status != 200 ||
		res.Status != core.StatusAwaitingApproval || len(res.PendingApprovals) != 1 {
		t.Fatalf("pause: %d %s", a.Status, a.Body)
	}
	return res.PendingApprovals[0].ToolCallID
}

// Ensure a paused run is stored as a turn, and an object started again
// over the same storage resumes it on the approval alone, running the
// tool once; the same approval again is refused.
func TestHandler_Approval_ResumesFromStorage(t *testing.T) {
	st := &memStore{}
	var mu sync.Mutex
	runs := 0
	id := pendingID(t, payObject(t, st, &runs, &mu))
	if got := st.contents(t); len(got) != 2 || runs != 0 {
		t.Fatalf("stored %q, pay ran %d times: want the input and the call, no run", got, runs)
	}
	h := payObject(t, st, &runs, &mu)
	body := `{"approvals":[{"toolCallId":"` + id + `","approved":true}]}`
	a := do(t, h, "POST", "/v1/sessions/c1/runs", body)
	if a.Status != 200 || a.Seed.Mode != "cold" || a.Seed.Seeded != 2 || runs != 1 {
		t.Fatalf("resume: %d %s, pay ran %d times", a.Status, a.Body, runs)
	}
	if got := st.contents(t); len(got) != 4 || got[2] != "paid" {
		t.Fatalf("stored %q, want the result and the reply after the call", got)
	}
	for _, obj := range []*Handler{h, payObject(t, st, &runs, &mu)} {
		if a := do(t, obj, "POST", "/v1/sessions/c1/runs", body); a.Status != 400 || a.Error.Code != "invalid_argument" {
			t.Fatalf("second approval: %d %s", a.Status, a.Body)
		}
	}
	if runs != 1 || len(st.contents(t)) != 4 {
		t.Fatalf("pay ran %d times, stored %d messages after the second approval", runs, len(st.contents(t)))
	}
}

// Ensure a resume that brings the host's old history (ending with the
// call) to an evicted object whose storage already holds the call's
// result is refused: the stored conversation wins, and the tool does not
// run twice.
func TestHandler_Approval_StaleHistoryRunsNothing(t *testing.T) {
	st := &memStore{}
	var mu sync.Mutex
	runs := 0
	h := payObject(t, st, &runs, &mu)
	id := pendingID(t, h)
	var stored strings.Builder
	stored.WriteString("[")
	for i, r := range st.rows {
		if i > 0 {
			stored.WriteString(",")
		}
		stored.Write(r)
	}
	stored.WriteString("]")
	history := stored.String()
	body := `{"approvals":[{"toolCallId":"` + id + `","approved":true}],"history":` + history + `}`
	if a := do(t, h, "POST", "/v1/sessions/c1/runs", body); a.Status != 200 || runs != 1 {
		t.Fatalf("resume: %d %s", a.Status, a.Body)
	}
	cold := payObject(t, st, &runs, &mu)
	if a := do(t, cold, "POST", "/v1/sessions/c1/runs", body); a.Status != 400 || a.Error.Code != "invalid_argument" {
		t.Fatalf("stale resume: %d %s", a.Status, a.Body)
	}
	// A UIMessage history carrying the decision is refused alike.
	ui := `{"history":[{"id":"u1","role":"user","parts":[{"type":"text","text":"/tool pay {}"}]},` +
		`{"id":"a1","role":"assistant","parts":[{"type":"tool-pay","toolCallId":"` + id + `","state":"approval-responded","input":{},"approval":{"id":"x","approved":true}}]}]}`
	if a := do(t, payObject(t, st, &runs, &mu), "POST", "/v1/sessions/c1/runs", ui); a.Status != 400 || a.Error.Code != "invalid_argument" {
		t.Fatalf("stale UIMessage resume: %d %s", a.Status, a.Body)
	}
	if runs != 1 || len(st.contents(t)) != 4 {
		t.Fatalf("pay ran %d times, stored %d messages", runs, len(st.contents(t)))
	}
}

// Ensure a UIMessage history carrying the decision resumes an evicted
// object whose storage holds the pending call.
func TestHandler_Approval_UIMessageFromStorage(t *testing.T) {
	st := &memStore{}
	var mu sync.Mutex
	runs := 0
	id := pendingID(t, payObject(t, st, &runs, &mu))
	ui := `{"history":[{"id":"u1","role":"user","parts":[{"type":"text","text":"/tool pay {}"}]},` +
		`{"id":"a1","role":"assistant","parts":[{"type":"tool-pay","toolCallId":"` + id + `","state":"approval-responded","input":{},"approval":{"id":"x","approved":false,"reason":"no"}}]}]}`
	a := do(t, payObject(t, st, &runs, &mu), "POST", "/v1/sessions/c1/runs", ui)
	if a.Status != 200 || runs != 0 {
		t.Fatalf("resume: %d %s, pay ran %d times", a.Status, a.Body, runs)
	}
	if got := st.contents(t); len(got) != 4 || got[2] != "Tool call denied: no" {
		t.Fatalf("stored %q", got)
	}
}

// Ensure a streamed paused run is written before its
// run.awaiting_approval event is sent.
func TestHandler_Approval_StreamStoresPause(t *testing.T) {
	st := &memStore{}
	var mu sync.Mutex
	runs := 0
	h := payObject(t, st, &runs, &mu)
	req := httptest.NewRequest("POST", "/v1/sessions/c1/runs", strings.NewReader(`{"input":"/tool pay {}"}`))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Accept", "text/event-stream")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body := rec.Body.String()
	if !strings.Contains(body, "event: run.awaiting_approval\n") || strings.Contains(body, "run.failed") {
		t.Fatalf("stream %q", body)
	}
	if got := st.contents(t); len(got) != 2 {
		t.Fatalf("stored %q, want the paused turn", got)
	}
}
