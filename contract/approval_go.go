package contract

import (
	"encoding/json"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// ApprovalEdge is an edge a Go test drives for the approval cases (the
// WASI module through wasihost, for one): its runtime has the tools pay
// (which needs approval) and look of the README and the echo model.
type ApprovalEdge struct {
	// Check is the edge's CheckHistory.
	Check func(history []core.SeedMessage) (core.HistoryCheck, error)
	// Run runs req on the edge and returns its error.
	Run func(req core.RunRequest) error
	// Session returns the messages of session "s" and whether it exists.
	Session func() ([]core.Message, bool)
	// Runs, when not nil, returns the tool runs so far.
	Runs func() map[string]int
}

// RunApprovalGo runs c against e as RunApprovalHTTP does against an
// HTTP API: the history is read with hostmsg as a Go host reads its
// stored messages, the resume carries c's approvals or, without them,
// the decisions the history holds (hostmsg.Approvals), and no input.
func (c *ApprovalCase) RunApprovalGo(t testing.TB, e ApprovalEdge) {
	t.Helper()
	v, err := hostjson.Parse(c.History)
	if err != nil {
		t.Fatal(err)
	}
	history, err := hostmsg.Messages(v, 0)
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	check, err := e.Check(history)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if show(check.Awaiting) != show(c.Awaiting) || check.Paused != c.Paused {
		t.Errorf("awaiting %s, paused %v, want %s, %v", show(check.Awaiting), check.Paused, show(c.Awaiting), c.Paused)
	}
	approvals := c.Approvals
	if approvals == nil {
		if approvals, err = hostmsg.Approvals(v); err != nil {
			t.Fatalf("the history's decisions: %v", err)
		}
	}
	req := core.RunRequest{SessionID: "s", WithHistory: true, History: history, Approvals: approvals}
	err = e.Run(req)
	switch {
	case c.Error != nil:
		if r := RefusalOf(err); r == nil || r.Code != c.Error.Code || r.Message != c.Error.Message {
			t.Errorf("resume refused with %s, want %s", show(r), show(c.Error))
		}
		if _, ok := e.Session(); ok {
			t.Error("a refused resume left a session behind")
		}
	case err != nil:
		t.Fatalf("resume: %v", err)
	default:
		msgs, _ := e.Session()
		b, _ := json.Marshal(msgs)
		var got []map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got := canonicalAll(got); show(got) != show(c.Session) {
			t.Errorf("session\n got %s\nwant %s", show(got), show(c.Session))
		}
	}
	c.checkRuns(t, e.Runs)
	// Exactly once: the same request again is refused and runs nothing.
	if err := e.Run(req); err == nil {
		t.Error("the same resume again was not refused")
	}
	c.checkRuns(t, e.Runs)
}
