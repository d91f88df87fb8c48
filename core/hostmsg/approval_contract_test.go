package hostmsg_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
	"github.com/agentrt/agentrt/internal/contract"
)

// approvalCase is the approval block of a case of approval.json (see
// testdata/contract/README.md, "Approval cases").
type approvalCase struct {
	Name     string `json:"name"`
	History  json.RawMessage
	Approval struct {
		Awaiting []struct {
			Index      int    `json:"index"`
			ToolCallID string `json:"toolCallId"`
			Name       string `json:"name"`
		} `json:"awaiting"`
		Approvals *[]struct {
			ToolCallID string `json:"toolCallId"`
			Approved   bool   `json:"approved"`
			Reason     string `json:"reason"`
		} `json:"approvals"`
		Session  []map[string]any  `json:"session"`
		Error    *contract.Refusal `json:"error"`
		ToolRuns map[string]int    `json:"toolRuns"`
	} `json:"approval"`
}

// Ensure the approval cases resume as the corpus says: the calls listed
// as awaiting, a resume with the case's approvals (or those the history
// carries) giving the session or the refusal, each tool run as often as
// toolRuns says, and the same approvals again refused and running
// nothing. The rest of each case runs with the others (TestMessages_Contract).
func TestApprovals_Contract(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(contract.Dir(), "approval.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []approvalCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			v, err := hostjson.Parse(c.History)
			if err != nil {
				t.Fatal(err)
			}
			h, err := hostmsg.Messages(v, 0)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			var awaiting []core.AwaitingCall
			for _, a := range c.Approval.Awaiting {
				awaiting = append(awaiting, core.AwaitingCall{Index: a.Index, ToolCallID: a.ToolCallID, Name: a.Name})
			}
			if got := core.CheckHistory(h, core.Limits{}).Awaiting; showJSON(got) != showJSON(awaiting) {
				t.Fatalf("awaiting %s, want %s", showJSON(got), showJSON(awaiting))
			}
			approvals, err := hostmsg.Approvals(v)
			if err != nil {
				t.Fatal(err)
			}
			if c.Approval.Approvals != nil {
				approvals = nil
				for _, a := range *c.Approval.Approvals {
					approvals = append(approvals, core.Approval{ToolCallID: a.ToolCallID, Approved: a.Approved, Reason: a.Reason})
				}
			}
			runs := map[string]int{}
			tool := func(name, out string) core.Tool {
				return core.Tool{ToolSpec: core.ToolSpec{Name: name},
					NeedsApproval: func(core.ToolInvocation) (bool, error) { return name == "pay", nil },
					Call:          func(core.Context, core.ToolInvocation) (string, error) { runs[name]++; return out, nil }}
			}
			rt, err := core.New(core.Config{Model: core.Echo{}, Tools: []core.Tool{tool("pay", "paid"), tool("look", "looked")}})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			req := core.RunRequest{SessionID: "s", History: h, WithHistory: true, Approvals: approvals}
			_, err = rt.Execute(core.Background(), req)
			want := c.Approval.Error
			switch {
			case want != nil:
				got := contract.RefusalOf(err)
				if got == nil || got.Code != want.Code || got.Message != want.Message {
					t.Fatalf("resume: %v, want %s", err, showJSON(want))
				}
				if _, ok := rt.Session("s"); ok {
					t.Fatal("a refused resume left a session")
				}
			case err != nil:
				t.Fatalf("resume: %v", err)
			default:
				s, _ := rt.Session("s")
				if got := showJSON(contract.CanonicalMessages(s.Messages)); got != showJSON(c.Approval.Session) {
					t.Fatalf("session\n got %s\nwant %s", got, showJSON(c.Approval.Session))
				}
			}
			if showJSON(runs) != showJSON(c.Approval.ToolRuns) {
				t.Fatalf("tool runs %v, want %v", runs, c.Approval.ToolRuns)
			}
			// Exactly once: the same decisions again run nothing.
			if _, err := rt.Execute(core.Background(), req); err == nil {
				t.Fatal("the same approvals were accepted twice")
			}
			if showJSON(runs) != showJSON(c.Approval.ToolRuns) {
				t.Fatalf("tool runs %v after the second resume, want %v", runs, c.Approval.ToolRuns)
			}
		})
	}
}

func showJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
