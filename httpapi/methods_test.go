package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// Ensure a method no route serves (unknown, lowercase, or standard but
// unused) answers JSON 405 method_not_allowed with an Allow list on every
// path, through a real net/http server, and changes nothing.
func TestHandler_ServeHTTP_UnknownMethods(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Runtime: rt, Token: "t0ken"}))
	defer srv.Close()
	for _, method := range []string{"get", "post", "delete", "Get", "FOO", "PUT", "PATCH", "OPTIONS", "TRACE", "M-SEARCH", "PROPFIND"} {
		for _, path := range []string{"/healthz", "/v1/sessions/a", "/v1/sessions/a/runs", "/nowhere", "/"} {
			req, _ := http.NewRequest(method, srv.URL+path, nil)
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			var e struct {
				Error struct{ Code string } `json:"error"`
			}
			if res.StatusCode != 405 || json.Unmarshal(b, &e) != nil || e.Error.Code != "method_not_allowed" || res.Header.Get("Allow") != "GET, HEAD, POST, DELETE" {
				t.Errorf("%s %s: got %d %q (Allow %q), want JSON 405 method_not_allowed", method, path, res.StatusCode, b, res.Header.Get("Allow"))
			}
		}
	}
	if ids := rt.ListSessions(); len(ids) != 0 {
		t.Errorf("sessions: %v, want none", ids)
	}
}
