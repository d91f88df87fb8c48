//go:build !js

package workerd_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// toolUpstream is an OpenAI-compatible server that answers a request
// ending with a user message with a call of the test tool "count", and
// one ending with a tool result with 500 while failing is set, else
// "done".
type toolUpstream struct {
	*httptest.Server
	failing atomic.Bool
}

func newToolUpstream(t testing.TB) *toolUpstream {
	u := &toolUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/json")
		last := body.Messages[len(body.Messages)-1]
		switch {
		case last.Role == "user":
			fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":"","tool_calls":[{"id":"c-%s","type":"function","function":{"name":"count","arguments":"{}"}}]}}]}`, last.Content)
		case u.failing.Load():
			w.WriteHeader(500)
			fmt.Fprint(w, `{"error":{"message":"upstream down"}}`)
		default:
			fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"done"}}]}`)
		}
	}))
	t.Cleanup(u.Close)
	return u
}

// Ensure on workerd that a resume whose upstream fails after the
// approved tool ran (502, plain and streamed) stores the tool's result
// as the run fails and answers it in error.appended; the same approval
// again is refused, also after a restart, and the tool never runs a
// second time: no "run 2" is stored (docs/adr/0019-tool-approvals.md,
// "Amendment: nothing paid twice"). Before, the second approval stored
// "run 2".
func TestDurable_Approval_FailedResumeStoresTheResult(t *testing.T) {
	t.Parallel()
	up := newToolUpstream(t)
	o := workerd.Options{Durable: true, AllowLocalNetwork: true, StateDir: t.TempDir(), Env: durableEnv(openaiEnv(up.URL))}
	p := mustStart(t, o)
	approvals := map[string]string{}
	for _, conv := range []string{"plain", "streamed"} {
		status, r := postApproval(t, p, conv, `{"input":"`+conv+`"}`)
		if status != 200 || r.Status != "awaiting_approval" || len(r.PendingApprovals) != 1 {
			t.Fatalf("pause %s: %d %+v", conv, status, r)
		}
		approvals[conv] = `{"approvals":[{"toolCallId":"` + r.PendingApprovals[0].ToolCallID + `","approved":true}]}`
	}
	up.failing.Store(true)
	status, body, err := rawPost(p, "/v1/sessions/plain/runs", approvals["plain"])
	if err != nil || status != 502 || !strings.Contains(body, `"code":"model_error"`) || !strings.Contains(body, `"appended":[{"role":"tool","content":"run 1"`) {
		t.Fatalf("the failed resume: %d %s %v", status, body, err)
	}
	status, body, err = rawPost(p, "/v1/sessions/streamed/runs", approvals["streamed"], "Accept", "text/event-stream")
	if err != nil || status != 200 || !strings.Contains(body, "event: run.failed") || !strings.Contains(body, `"appended":[{"role":"tool","content":"run 1"`) {
		t.Fatalf("the failed streamed resume: %d %s %v", status, body, err)
	}
	up.failing.Store(false)
	check := func(p *workerd.Process) {
		t.Helper()
		for _, conv := range []string{"plain", "streamed"} {
			if s := storedOf(t, p, conv); s.Messages != 3 {
				t.Fatalf("%s: stored %+v, want the call's result after it", conv, s)
			}
			if status, r := postApproval(t, p, conv, approvals[conv]); status != 400 || r.Error.Code != "invalid_argument" {
				t.Fatalf("%s: the approval again: %d %+v", conv, status, r)
			}
		}
	}
	check(p)
	p.Stop()
	p = mustStart(t, o)
	check(p)
	// The conversation goes on from the stored result (each object counts
	// its own runs: its first since the restart is "run 1").
	status, r := postApproval(t, p, "plain", `{"input":"again"}`)
	if status != 200 || r.Status != "awaiting_approval" {
		t.Fatalf("next turn: %d %+v", status, r)
	}
	status, r = postApproval(t, p, "plain", `{"approvals":[{"toolCallId":"`+r.PendingApprovals[0].ToolCallID+`","approved":true}]}`)
	if status != 200 || r.Status != "completed" || r.Appended[0].Content != "run 1" {
		t.Fatalf("a new call after the restart: %d %+v", status, r)
	}
}
