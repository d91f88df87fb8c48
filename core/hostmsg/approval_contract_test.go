package hostmsg_test

import (
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
)

// Ensure the approval cases resume in core as the corpus says, read as a
// Go host reads its stored messages (contract.RunApprovalGo): the calls
// listed as awaiting, a resume with the case's approvals (or those the
// history carries) giving the session or the refusal, each tool run as
// often as toolRuns says, and the same approvals again refused and
// running nothing. The rest of each case runs with the others
// (TestMessages_Contract).
func TestApprovals_Contract(t *testing.T) {
	for _, c := range contract.MustLoadApprovals(t) {
		t.Run(c.Name, func(t *testing.T) {
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
			c.RunApprovalGo(t, contract.ApprovalEdge{
				Check: func(h []core.SeedMessage) (core.HistoryCheck, error) { return rt.CheckHistory(h), nil },
				Run: func(req core.RunRequest) error {
					_, err := rt.Execute(core.Background(), req)
					return err
				},
				Session: func() ([]core.Message, bool) {
					s, ok := rt.Session("s")
					return s.Messages, ok
				},
				Runs: func() map[string]int { return runs },
			})
		})
	}
}
