package contract

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// ApprovalCase is a case of approval.json with its approval block (see
// testdata/contract/README.md, "Approval cases"): what a runner that
// resumes runs checks, next to the seed every runner checks.
type ApprovalCase struct {
	// Name is "approval/name", as Load names the case.
	Name    string
	History json.RawMessage
	// Awaiting are the calls checkHistory lists as awaiting approval, and
	// Paused its verdict that the history waits for a person (on a
	// runtime whose pay tool asks approval).
	Awaiting []core.AwaitingCall
	Paused   bool
	// Approvals are the decisions the resume carries; nil means the
	// decisions the history carries.
	Approvals []core.Approval
	// Session is the whole session after the resume, canonical; nil when
	// the resume is refused with Error (code and message).
	Session []map[string]any
	Error   *Refusal
	// ToolRuns counts the runs of each tool (a tool not named ran zero
	// times).
	ToolRuns map[string]int
}

type rawApprovalCase struct {
	Name     string          `json:"name"`
	History  json.RawMessage `json:"history"`
	Approval struct {
		Awaiting []struct {
			Index      int    `json:"index"`
			ToolCallID string `json:"toolCallId"`
			Name       string `json:"name"`
			Arguments  string `json:"arguments"`
		} `json:"awaiting"`
		Paused    bool `json:"paused"`
		Approvals *[]struct {
			ToolCallID string `json:"toolCallId"`
			Approved   bool   `json:"approved"`
			Reason     string `json:"reason"`
		} `json:"approvals"`
		Session  []map[string]any `json:"session"`
		Error    *Refusal         `json:"error"`
		ToolRuns map[string]int   `json:"toolRuns"`
	} `json:"approval"`
}

// MustLoadApprovals reads the approval cases of approval.json; it fails t
// at once on an error or when there are none.
func MustLoadApprovals(t testing.TB) []ApprovalCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), "approval.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw []rawApprovalCase
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var out []ApprovalCase
	for _, r := range raw {
		c := ApprovalCase{Name: "approval/" + r.Name, History: r.History, Error: r.Approval.Error, ToolRuns: r.Approval.ToolRuns, Paused: r.Approval.Paused}
		for _, a := range r.Approval.Awaiting {
			c.Awaiting = append(c.Awaiting, core.AwaitingCall{Index: a.Index, ToolCallID: a.ToolCallID, Name: a.Name, Arguments: a.Arguments})
		}
		if r.Approval.Approvals != nil {
			c.Approvals = []core.Approval{}
			for _, a := range *r.Approval.Approvals {
				c.Approvals = append(c.Approvals, core.Approval{ToolCallID: a.ToolCallID, Approved: a.Approved, Reason: a.Reason})
			}
		}
		if c.Error == nil {
			c.Session = canonicalAll(r.Approval.Session)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		t.Fatal("approval.json has no cases")
	}
	return out
}

// Body is the run request body of the resume: the history, the case's
// approvals when it has them, no input.
func (c *ApprovalCase) Body() string {
	m := map[string]any{"history": c.History}
	if c.Approvals != nil {
		as := make([]map[string]any, len(c.Approvals))
		for i, a := range c.Approvals {
			as[i] = map[string]any{"toolCallId": a.ToolCallID, "approved": a.Approved}
			if a.Reason != "" {
				as[i]["reason"] = a.Reason
			}
		}
		m["approvals"] = as
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// RunApprovalHTTP runs c against an HTTP API edge whose runtime has the
// echo model and the tools pay and look of the README: it checks the
// calls POST /v1/history/check lists as awaiting, resumes session
// sessionID (which must not exist yet; the corpus's messages name it
// "s") with c.Body(), and checks the
// session or the refusal (400, no session left behind); then the same
// request again must be refused. runs, when not nil, returns the tool
// runs so far on that edge, checked against ToolRuns after each request.
func (c *ApprovalCase) RunApprovalHTTP(t testing.TB, send Send, sessionID string, runs func() map[string]int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"history": c.History})
	status, b, err := send("POST", "/v1/history/check", string(body))
	if err != nil || status != 200 {
		t.Fatalf("check: status %d, %v, body %s", status, err, b)
	}
	var check struct {
		Paused   bool                `json:"paused"`
		Awaiting []core.AwaitingCall `json:"awaiting"`
	}
	if err := json.Unmarshal(b, &check); err != nil {
		t.Fatalf("check %s: %v", b, err)
	}
	if show(check.Awaiting) != show(c.Awaiting) || check.Paused != c.Paused {
		t.Errorf("awaiting %s, paused %v, want %s, %v", show(check.Awaiting), check.Paused, show(c.Awaiting), c.Paused)
	}
	path := "/v1/sessions/" + sessionID
	status, b, err = send("POST", path+"/runs", c.Body())
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case c.Error != nil:
		if status != 400 {
			t.Errorf("resume: status %d, body %s, want 400", status, b)
		}
		if r := errorBody(t, status, b); r.Code != c.Error.Code || r.Message != c.Error.Message {
			t.Errorf("resume refused with %s, want %s", show(r), show(c.Error))
		}
		if s, _, _ := send("GET", path, ""); s != 404 {
			t.Errorf("a refused resume left a session behind (GET answered %d)", s)
		}
	case status != 200:
		t.Fatalf("resume: status %d, body %s", status, b)
	default:
		if got := canonicalAll(getSession(t, send, path)); show(got) != show(c.Session) {
			t.Errorf("session\n got %s\nwant %s", show(got), show(c.Session))
		}
	}
	c.checkRuns(t, runs)
	// Exactly once: the same request again is refused and runs nothing.
	if status, b, err = send("POST", path+"/runs", c.Body()); err != nil || status == 200 {
		t.Errorf("the same resume again: status %d, %v, body %s", status, err, b)
	}
	c.checkRuns(t, runs)
}

func (c *ApprovalCase) checkRuns(t testing.TB, runs func() map[string]int) {
	t.Helper()
	if runs == nil {
		return
	}
	got := map[string]int{}
	for k, v := range runs() {
		if v != 0 {
			got[k] = v
		}
	}
	want := map[string]int{}
	for k, v := range c.ToolRuns {
		if v != 0 {
			want[k] = v
		}
	}
	if show(got) != show(want) {
		t.Errorf("tool runs %s, want %s", show(got), show(want))
	}
}
