package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// Ensure the commit hook sees each completed run's Result before the
// answer, plain or streamed; that an error it returns is the answer (a
// plain run answers it with its status, a stream ends with run.failed
// carrying it, not run.completed); and that MessageJSON writes the
// messages as the session answer does.
func TestOnCommit(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	h := httpapi.New(httpapi.Config{Runtime: rt})
	var seen []*core.Result
	var refuse *core.Error
	h.OnCommit(func(r *http.Request, res *core.Result) *core.Error {
		seen = append(seen, res)
		return refuse
	})
	if r := do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"a <b>"}`); r.status != 200 || len(seen) != 1 || seen[0].MessageCount != 2 {
		t.Fatalf("plain run: %d %s, hook saw %d results", r.status, r.body, len(seen))
	}
	r := do(t, h, "GET", "/v1/sessions/s", "")
	var s struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(r.body, &s); err != nil || len(s.Messages) != 2 {
		t.Fatalf("session: %s", r.body)
	}
	for i, m := range seen[0].Appended {
		if got := httpapi.MessageJSON(&m); string(got) != string(s.Messages[i]) {
			t.Fatalf("MessageJSON(appended[%d]) = %s, the session answer has %s", i, got, s.Messages[i])
		}
	}

	refuse = core.NewError(core.CodeInternal, "the store failed")
	r = do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"b"}`)
	var eb errorBody
	if err := json.Unmarshal(r.body, &eb); err != nil || r.status != 500 || eb.Error.Code != "internal" || eb.Error.Message != "the store failed" {
		t.Fatalf("refused plain run: %d %s", r.status, r.body)
	}
	r = do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"c"}`, "Accept", "text/event-stream")
	body := string(r.body)
	if r.status != 200 || strings.Contains(body, "event: run.completed") || !strings.Contains(body, "event: run.failed\n") || !strings.Contains(body, `"message":"the store failed"`) {
		t.Fatalf("refused stream: %d %s", r.status, body)
	}
	if len(seen) != 3 {
		t.Fatalf("the hook saw %d results, want 3", len(seen))
	}
}

// Ensure the writers answer as the API does: WriteError with the status
// of its code (or the one given), WriteSession the session shape.
func TestWriters(t *testing.T) {
	rec := httptest.NewRecorder()
	httpapi.WriteError(rec, 0, core.NewError(core.CodeSessionBusy, "busy"))
	if rec.Code != 409 || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" || rec.Body.String() != `{"error":{"code":"session_busy","message":"busy"}}`+"\n" {
		t.Fatalf("WriteError: %d %q", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	httpapi.WriteError(rec, 404, core.NewError("run_lost", "gone"))
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), `"code":"run_lost"`) {
		t.Fatalf("WriteError with a status: %d %q", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	httpapi.WriteSession(rec, "a\"b", 1, json.RawMessage(`[{"role":"user","content":"x"}]`))
	if rec.Code != 200 || rec.Body.String() != `{"id":"a\"b","messageCount":1,"messages":[{"role":"user","content":"x"}]}`+"\n" {
		t.Fatalf("WriteSession: %d %q", rec.Code, rec.Body)
	}
}
