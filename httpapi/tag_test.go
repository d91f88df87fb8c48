package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// Ensure POST /v1/sessions/{id}/tag sets and reads a session's tag, 404
// for no session, 400 for a body that is not {"value"?: string}.
func TestTag_Route(t *testing.T) {
	rt := mustRuntime(t, core.Config{Model: core.Echo{}})
	h := httpapi.New(httpapi.Config{Runtime: rt})
	post := func(path, body string) (int, string) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		return w.Code, strings.TrimSpace(w.Body.String())
	}
	if code, _ := post("/v1/sessions/s/tag", ""); code != http.StatusNotFound {
		t.Fatalf("tag of no session: %d", code)
	}
	if code, body := post("/v1/sessions/s/runs", `{"input":"x"}`); code != http.StatusOK {
		t.Fatalf("run: %d %s", code, body)
	}
	for _, c := range []struct{ body, want string }{
		{``, `{"tag":""}`},
		{`{"value":"blue"}`, `{"tag":"blue"}`},
		{`{}`, `{"tag":"blue"}`},
	} {
		if code, body := post("/v1/sessions/s/tag", c.body); code != http.StatusOK || body != c.want {
			t.Fatalf("tag %s: %d %s; want %s", c.body, code, body, c.want)
		}
	}
	if code, _ := post("/v1/sessions/s/tag", `{"value":1}`); code != http.StatusBadRequest {
		t.Fatalf("tag with a number: %d", code)
	}
}
