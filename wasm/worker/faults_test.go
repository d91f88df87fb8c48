package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Ensure the fault routes end the instance only for POST, a known kind
// and the right token; everything else goes to the API handler.
func TestWithFaults(t *testing.T) {
	tests := []struct {
		name, method, path, auth string
		want                     string // the kind die got; "" means h answered
	}{
		{"OK/oom", "POST", "/_test/fault/oom", "Bearer tk", "oom"},
		{"OK/panic", "POST", "/_test/fault/panic", "Bearer tk", "panic"},
		{"OK/exit", "POST", "/_test/fault/exit", "Bearer tk", "exit"},
		{"ErrNoToken", "POST", "/_test/fault/oom", "", ""},
		{"ErrWrongToken", "POST", "/_test/fault/oom", "Bearer tk2", ""},
		{"ErrMethod", "GET", "/_test/fault/oom", "Bearer tk", ""},
		{"ErrKind", "POST", "/_test/fault/other", "Bearer tk", ""},
		{"OK/session", "POST", "/v1/sessions/c1/_test/fault/exit", "Bearer tk", "exit"},
		{"ErrSessionTail", "POST", "/v1/sessions/c1/runs/_test/fault/exit", "Bearer tk", ""},
		{"ErrSessionToken", "POST", "/v1/sessions/c1/_test/fault/exit", "", ""},
		{"ErrPath", "POST", "/v1/sessions/a/runs", "Bearer tk", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var died string
			h := withFaults(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) }), "tk", func(k string) { died = k })
			req := httptest.NewRequest(tc.method, tc.path, nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if died != tc.want || (tc.want == "" && rec.Code != 404) {
				t.Errorf("die got %q (status %d), want %q", died, rec.Code, tc.want)
			}
		})
	}
	// Without a token, any caller may (the switch is for tests only).
	var died string
	withFaults(http.NotFoundHandler(), "", func(k string) { died = k }).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/_test/fault/exit", nil))
	if died != "exit" {
		t.Errorf("without a token: die got %q", died)
	}
	if c, _ := configFrom(func(k string) string { return map[string]string{EnvTestFaults: "1"}[k] }); !c.TestFaults {
		t.Error("AGENTRT_TEST_FAULTS=1 did not enable the switch")
	}
	if c, _ := configFrom(func(k string) string { return map[string]string{EnvTestFaults: "yes"}[k] }); c.TestFaults {
		t.Error("AGENTRT_TEST_FAULTS=yes enabled the switch; only \"1\" does")
	}
}

// Ensure the storage fault header fails the write or ends the instance,
// and a request without it writes.
func TestBeforeWrite(t *testing.T) {
	tests := []struct {
		name, header string
		wantErr      bool
		wantDie      string
	}{
		{"OK/none", "", false, ""},
		{"OK/unknown", "other", false, ""},
		{"ErrStorage", "storage", true, ""},
		{"ErrExit", "exit", false, "exit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var died string
			f := beforeWrite(func(k string) { died = k })
			req := httptest.NewRequest("POST", "/v1/sessions/a/runs", nil)
			if tc.header != "" {
				req.Header.Set(FaultHeader, tc.header)
			}
			err := f(req)
			if (err != nil) != tc.wantErr || died != tc.wantDie {
				t.Errorf("got err %v, died %q; want error %v, died %q", err, died, tc.wantErr, tc.wantDie)
			}
		})
	}
}

// Ensure a run request with FaultHeader "tool-exit" arms the crash of the
// next "count" run only when its token is right, and other headers leave
// it unarmed.
func TestWithFaults_ToolExit(t *testing.T) {
	tests := []struct {
		name, auth, header string
		want               bool
	}{
		{"OK/armed", "Bearer tk", "tool-exit", true},
		{"ErrWrongToken", "Bearer tk2", "tool-exit", false},
		{"ErrNoToken", "", "tool-exit", false},
		{"OK/otherFault", "Bearer tk", "exit", false},
		{"OK/none", "Bearer tk", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			toolExit.Store(false)
			defer toolExit.Store(false)
			var died string
			h := withFaults(http.NotFoundHandler(), "tk", func(k string) { died = k })
			req := httptest.NewRequest("POST", "/v1/sessions/a/runs", nil)
			req.Header.Set("Authorization", tc.auth)
			req.Header.Set(FaultHeader, tc.header)
			h.ServeHTTP(httptest.NewRecorder(), req)
			if got := toolExit.Load(); got != tc.want || died != "" {
				t.Errorf("armed %v (died %q), want %v", got, died, tc.want)
			}
		})
	}
}
