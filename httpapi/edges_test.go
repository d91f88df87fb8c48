package httpapi_test

import (
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// The edge table (testdata/edges/policy.json) over HTTP: each policy is
// sent as a run's, and the answer carries the code every other edge
// gives (200 for a valid policy, with the run completed).
func TestEdges_Policy(t *testing.T) {
	h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{})})
	for _, c := range contract.MustLoadEdges(t, "policy") {
		t.Run(c.Name, func(t *testing.T) {
			r := do(t, h, "POST", "/v1/sessions/edges/runs", `{"input":"hi","policy":`+string(c.Policy)+`}`)
			if r.status == 200 {
				if res := decode[result](t, r.body); res.Status != "completed" {
					t.Fatalf("status 200, run %s", res.Status)
				}
				c.CheckCode(t, "", "")
				return
			}
			e := decode[errorBody](t, r.body)
			c.CheckCode(t, e.Error.Code, e.Error.Message)
		})
	}
}

// The edge table's approval cases (testdata/edges/approvals.json) over
// HTTP: each resume (the pending history with the case's approvals, or
// the case's history alone) gives the code and index every other edge
// gives; a valid one completes.
func TestEdges_Approvals(t *testing.T) {
	for _, c := range contract.MustLoadEdges(t, "approvals") {
		t.Run(c.Name, func(t *testing.T) {
			rt := mustRuntime(t, core.Config{Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "pay"},
				NeedsApproval: func(core.ToolInvocation) (bool, error) { return true, nil },
				Call:          func(core.Context, core.ToolInvocation) (string, error) { return "paid", nil }}}})
			r := do(t, httpapi.New(httpapi.Config{Runtime: rt}), "POST", "/v1/sessions/s/runs", c.ResumeBody())
			if r.status == 200 {
				if res := decode[result](t, r.body); res.Status != "completed" {
					t.Fatalf("status 200, run %s", res.Status)
				}
				c.CheckCode(t, "", "")
				return
			}
			e := decode[errorBody](t, r.body)
			c.CheckCode(t, e.Error.Code, e.Error.Message)
			index := -1
			if e.Error.Index != nil {
				index = *e.Error.Index
			}
			c.CheckIndex(t, index)
		})
	}
}
