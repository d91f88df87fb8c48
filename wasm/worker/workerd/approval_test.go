//go:build !js

package workerd_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// sendTo is a contract.Send to p.
func sendTo(p *workerd.Process) contract.Send {
	return func(method, path, body string) (int, []byte, error) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, p.URL+path, rd)
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, b, err
	}
}

// Ensure the worker, in both deployments, resumes every approval case of
// the corpus as docs/contract.md says (the fault switch gives it the
// corpus's tools pay and look).
func TestWorker_ApprovalContract(t *testing.T) {
	t.Parallel()
	for _, durable := range []bool{false, true} {
		name := "isolate"
		if durable {
			name = "durable"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // its own workerd
			p := mustStart(t, workerd.Options{Durable: durable, StateDir: t.TempDir(), Env: durableEnv(nil)})
			send := sendTo(p)
			for _, c := range contract.MustLoadApprovals(t) {
				t.Run(c.Name, func(t *testing.T) {
					// The corpus's messages name session "s": each case
					// starts from none.
					if status, b, err := send("DELETE", "/v1/sessions/s", ""); err != nil || status != 204 {
						t.Fatalf("DELETE: %d %v %s", status, err, b)
					}
					c.RunApprovalHTTP(t, send, "s", nil)
				})
			}
		})
	}
}

// approvalResult is what the approval tests read of a Result.
type approvalResult struct {
	Status           string `json:"status"`
	PendingApprovals []struct {
		ToolCallID string `json:"toolCallId"`
		Name       string `json:"name"`
	} `json:"pendingApprovals"`
	Appended []msg `json:"appended"`
	Error    struct {
		Code string `json:"code"`
	} `json:"error"`
}

func postApproval(t *testing.T, p *workerd.Process, id, body string) (int, approvalResult) {
	t.Helper()
	status, b, err := sendTo(p)("POST", "/v1/sessions/"+id+"/runs", body)
	if err != nil {
		t.Fatal(err)
	}
	var r approvalResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("POST %s: %d %q", id, status, b)
	}
	return status, r
}

// Ensure a paused run survives a restart of workerd on the same state
// directory: the approval, sent without history, resumes the run from
// storage and runs the tool exactly once ("count" answers "run N", its
// runs in the instance); a denial never runs it; the same approval again
// is refused.
func TestDurable_Approval_SurvivesRestart(t *testing.T) {
	t.Parallel()
	o := workerd.Options{Durable: true, StateDir: t.TempDir(), Env: durableEnv(nil)}
	p := mustStart(t, o)
	ids := map[string]string{}
	for _, conv := range []string{"approve", "deny"} {
		status, r := postApproval(t, p, conv, `{"input":"/tool count {}"}`)
		if status != 200 || r.Status != "awaiting_approval" || len(r.PendingApprovals) != 1 || r.PendingApprovals[0].Name != "count" {
			t.Fatalf("pause %s: %d %+v", conv, status, r)
		}
		if len(r.Appended) != 2 || r.Appended[1].Role != "assistant" {
			t.Fatalf("pause %s appended %+v", conv, r.Appended)
		}
		if s := storedOf(t, p, conv); s.Messages != 2 {
			t.Fatalf("stored %+v, want the paused turn", s)
		}
		ids[conv] = r.PendingApprovals[0].ToolCallID
	}
	p.Stop()

	p2 := mustStart(t, o)
	approve := `{"approvals":[{"toolCallId":"` + ids["approve"] + `","approved":true}]}`
	status, r := postApproval(t, p2, "approve", approve)
	if status != 200 || r.Status != "completed" || len(r.Appended) != 2 || r.Appended[0].Content != "run 1" {
		t.Fatalf("approve after restart: %d %+v", status, r)
	}
	status, r = postApproval(t, p2, "deny", `{"approvals":[{"toolCallId":"`+ids["deny"]+`","approved":false,"reason":"not now"}]}`)
	if status != 200 || r.Status != "completed" || r.Appended[0].Content != "Tool call denied: not now" {
		t.Fatalf("deny after restart: %d %+v", status, r)
	}
	if status, r = postApproval(t, p2, "approve", approve); status != 400 || r.Error.Code != "invalid_argument" {
		t.Fatalf("second approval: %d %+v", status, r)
	}
	if s := storedOf(t, p2, "approve"); s.Messages != 4 {
		t.Fatalf("stored %+v, want the call, its result and the reply", s)
	}
	if got := sessionCount(t, p2, "approve"); got != 4 {
		t.Fatalf("session holds %d messages, want 4", got)
	}
}

// Ensure the durable object refuses an approval of another
// conversation's pending call in a conversation with nothing pending,
// changing none, and runs an approval and an input sent at once to a
// paused conversation one at a time: the tool runs once and the stored
// conversation holds its result once; the input is either refused (the
// conversation was paused) or stored after the resumed turn.
func TestDurable_Approval_OtherConversationAndRace(t *testing.T) {
	t.Parallel()
	p := mustStart(t, workerd.Options{Durable: true, StateDir: t.TempDir(), Env: durableEnv(nil)})
	ids := map[string]string{}
	for _, conv := range []string{"a", "b"} {
		status, r := postApproval(t, p, conv, `{"input":"/tool count {}"}`)
		if status != 200 || r.Status != "awaiting_approval" || len(r.PendingApprovals) != 1 {
			t.Fatalf("pause %s: %d %+v", conv, status, r)
		}
		ids[conv] = r.PendingApprovals[0].ToolCallID
	}
	approve := func(id string) string { return `{"approvals":[{"toolCallId":"` + id + `","approved":true}]}` }
	// The echo model names its calls by the step: both conversations
	// wait for the same id, and a third, with nothing pending, is sent it.
	if status, r := postApproval(t, p, "c", approve(ids["b"])); status != 400 || r.Error.Code != "invalid_argument" {
		t.Fatalf("an approval of another conversation's call: %d %+v", status, r)
	}
	if s := storedOf(t, p, "c"); s.Messages != 0 {
		t.Fatalf("stored c %+v after a refused approval, want nothing", s)
	}
	for _, conv := range []string{"a", "b"} {
		if s := storedOf(t, p, conv); s.Messages != 2 {
			t.Fatalf("stored %s %+v after a refused approval, want the paused turn", conv, s)
		}
	}

	type answer struct {
		status int
		r      approvalResult
	}
	resumed, input := make(chan answer, 1), make(chan answer, 1)
	go func() {
		status, r := postApproval(t, p, "a", approve(ids["a"]))
		resumed <- answer{status, r}
	}()
	go func() {
		status, r := postApproval(t, p, "a", `{"input":"hello"}`)
		input <- answer{status, r}
	}()
	res, in := <-resumed, <-input
	if res.status != 200 || res.r.Status != "completed" || len(res.r.Appended) != 2 || res.r.Appended[0].Content != "run 1" {
		t.Fatalf("the resume: %d %+v", res.status, res.r)
	}
	want := 4
	switch {
	case in.status == 200:
		want = 6 // the input ran after the resume
	case in.status != 400 || in.r.Error.Code != "invalid_argument":
		t.Fatalf("the input: %d %+v, want 200 or invalid_argument", in.status, in.r)
	}
	if s := storedOf(t, p, "a"); s.Messages != want {
		t.Fatalf("stored %+v, want %d messages", s, want)
	}
	if status, r := postApproval(t, p, "a", approve(ids["a"])); status != 400 || r.Error.Code != "invalid_argument" {
		t.Fatalf("the approval again: %d %+v", status, r)
	}
	if s := storedOf(t, p, "b"); s.Messages != 2 {
		t.Fatalf("stored b %+v, want the paused turn", s)
	}
}

// Ensure a resume whose turn is lost before the object writes it (the
// storage write fails, the Go instance ends between the model's answer
// and the write, or it ends inside the approved tool, after the decision
// and before the tool's result) leaves the stored conversation paused,
// and the same approval sent again resumes it once: the call's result is
// stored once, and a third approval is refused. A tool the instance died
// in may have done its work; sent again, the approval runs it again (at
// least once, as docs/durable.md says), and the store never holds two
// results of the call.
func TestDurable_Approval_LostBeforeWrite(t *testing.T) {
	t.Parallel()
	p := mustStart(t, workerd.Options{Durable: true, StateDir: t.TempDir(), Env: durableEnv(nil)})
	for _, fault := range []string{"storage", "exit", "tool-exit"} {
		t.Run(fault, func(t *testing.T) {
			conv := "lost-" + fault
			status, r := postApproval(t, p, conv, `{"input":"/tool count {}"}`)
			if status != 200 || r.Status != "awaiting_approval" {
				t.Fatalf("pause: %d %+v", status, r)
			}
			approve := `{"approvals":[{"toolCallId":"` + r.PendingApprovals[0].ToolCallID + `","approved":true}]}`
			lost := post(t, p, "/v1/sessions/"+conv+"/runs", approve, "X-Agentrt-Test-Fault", fault)
			if lost.Status != 500 || lost.Error.Code != "internal" {
				t.Fatalf("the lost resume: %d %+v, want 500 internal", lost.Status, lost.Error)
			}
			if s := storedOf(t, p, conv); s.Messages != 2 {
				t.Fatalf("stored %+v after the lost resume, want the paused turn", s)
			}
			status, r = postApproval(t, p, conv, approve)
			if status != 200 || r.Status != "completed" || len(r.Appended) != 2 || !strings.HasPrefix(r.Appended[0].Content, "run ") {
				t.Fatalf("the approval again: %d %+v", status, r)
			}
			if s := storedOf(t, p, conv); s.Messages != 4 {
				t.Fatalf("stored %+v, want the call's result once and the reply", s)
			}
			if got := sessionCount(t, p, conv); got != 4 {
				t.Fatalf("the session holds %d messages, want 4", got)
			}
			if status, r = postApproval(t, p, conv, approve); status != 400 || r.Error.Code != "invalid_argument" {
				t.Fatalf("a third approval: %d %+v", status, r)
			}
		})
	}
}
