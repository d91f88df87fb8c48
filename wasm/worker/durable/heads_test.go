package durable

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// headAnswer is what a client reads of an answer's head.
type headAnswer struct {
	status int
	etag   string
	body   string
	Head   string
	Error  struct {
		Code    string
		Head    string
		Missing []json.RawMessage
	}
}

func doHead(t *testing.T, h *Handler, method, path, body string, headers ...string) headAnswer {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	a := headAnswer{status: rec.Code, etag: rec.Header().Get("ETag"), body: rec.Body.String()}
	_ = json.Unmarshal(rec.Body.Bytes(), &a)
	return a
}

// Ensure the durable object's heads: a plain run's answer carries ETag
// "<head>" (its Result's head, though the object streams every run); GET
// of the conversation answers the same head in its body and ETag whether
// the object holds the session or answers from storage after a restart;
// a run with a stale ifHead (body) or If-Match on the restarted object
// is refused 412 history_diverged with the current head and the missing
// messages, and the stored conversation is unchanged; the same run with
// the current head runs.
func TestHeads_DurableObject(t *testing.T) {
	st := &memStore{}
	h := object(t, st, Config{})
	first := doHead(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"one"}`)
	if first.status != 200 || first.Head == "" || first.etag != `"`+first.Head+`"` {
		t.Fatalf("first run: %d etag %q head %q %s", first.status, first.etag, first.Head, first.body)
	}
	second := doHead(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"two"}`)
	if second.status != 200 || second.Head == first.Head || second.etag != `"`+second.Head+`"` {
		t.Fatalf("second run: %d etag %q %s", second.status, second.etag, second.body)
	}
	warm := doHead(t, h, "GET", "/v1/sessions/c1", "")
	if warm.status != 200 || warm.Head != second.Head || warm.etag != `"`+second.Head+`"` {
		t.Fatalf("warm GET: %d etag %q head %q, want %q", warm.status, warm.etag, warm.Head, second.Head)
	}

	cold := object(t, st, Config{}) // a restart over the same storage
	got := doHead(t, cold, "GET", "/v1/sessions/c1", "")
	if got.status != 200 || got.Head != second.Head || got.etag != warm.etag {
		t.Fatalf("GET from storage: %d etag %q head %q, want %q", got.status, got.etag, got.Head, second.Head)
	}
	before := strings.Join(st.contents(t), "|")
	for _, hdr := range [][]string{{}, {"If-Match", `"` + first.Head + `"`}} {
		body := `{"input":"stale","ifHead":"` + first.Head + `"}`
		if len(hdr) > 0 {
			body = `{"input":"stale"}`
		}
		a := doHead(t, cold, "POST", "/v1/sessions/c1/runs", body, hdr...)
		if a.status != 412 || a.Error.Code != "history_diverged" || a.Error.Head != second.Head || len(a.Error.Missing) != 2 {
			t.Fatalf("stale head %v: %d %s", hdr, a.status, a.body)
		}
		if now := strings.Join(st.contents(t), "|"); now != before {
			t.Fatalf("a refused run changed the store: %s, was %s", now, before)
		}
	}
	ok := doHead(t, cold, "POST", "/v1/sessions/c1/runs", `{"input":"merged","ifHead":"`+second.Head+`"}`)
	if ok.status != 200 || ok.etag != `"`+ok.Head+`"` || len(st.contents(t)) != 6 {
		t.Fatalf("current head: %d %s, stored %d", ok.status, ok.body, len(st.contents(t)))
	}
}
