package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentrt/agentrt/httpapi"
)

// SessionRoute reads a path as the API's own routes do, for a server in
// front of it: the id unescaped, the tail after its slash.
func TestSessionRoute(t *testing.T) {
	cases := []struct {
		path, id, tail string
		ok             bool
	}{
		{"/v1/sessions/s1", "s1", "", true},
		{"/v1/sessions/s1/", "s1", "", true},
		{"/v1/sessions/s1/runs", "s1", "runs", true},
		{"/v1/sessions/s1/runs/r1/events", "s1", "runs/r1/events", true},
		{"/v1/sessions/a%2Fb/events", "a/b", "events", true},
		{"/v1/sessions/caf%C3%A9", "café", "", true},
		{"/v1/sessions/", "", "", false},
		{"/v1/sessions//runs", "", "", false},
		{"/v1/sessions/%zz", "", "", false},
		{"/v1/sessions", "", "", false},
		{"/v1/history/check", "", "", false},
		{"/V1/sessions/s1", "", "", false},
	}
	for _, c := range cases {
		id, tail, ok := httpapi.SessionRoute(c.path)
		if id != c.id || tail != c.tail || ok != c.ok {
			t.Errorf("SessionRoute(%q) = %q, %q, %v; want %q, %q, %v", c.path, id, tail, ok, c.id, c.tail, c.ok)
		}
	}
}

// WantsStream reads Accept as the API's run route does: text/event-stream
// among other types, with parameters, in any case.
func TestWantsStream(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                                    false,
		"application/json":                    false,
		"text/event-stream":                   true,
		"application/json, text/event-stream": true,
		"Text/Event-Stream; q=0.9":            true,
		"text/event-streams":                  false,
	} {
		r := httptest.NewRequest(http.MethodPost, "/v1/sessions/s/runs", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := httpapi.WantsStream(r); got != want {
			t.Errorf("WantsStream(Accept %q) = %v, want %v", accept, got, want)
		}
	}
}
