package core_test

import (
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
)

// The edge table (testdata/edges/) through the in-process Go route: each
// policy, limits and config object that Go's types can hold gives the code every
// other edge gives; the others (wrong types, fractions, unknown fields)
// the compiler refuses, and there is nothing to run.
func TestEdges_InProcess(t *testing.T) {
	ran := contract.RunPolicyEdges(t, func(t testing.TB, p core.Policy) error {
		rt, err := core.New(core.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		_, err = rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "hi", Policy: p})
		return err
	})
	ran += contract.RunRuntimeEdges(t, func(cfg core.Config) (func() error, func(), error) {
		rt, err := core.New(cfg)
		if err != nil {
			return nil, nil, err
		}
		run := func() error {
			_, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "hi"})
			return err
		}
		return run, rt.Close, nil
	})
	if ran < 20 {
		t.Fatalf("only %d cases hold in Go's types", ran)
	}
}

// The edge table's approval cases (testdata/edges/approvals.json) in
// process: each resume Go's types hold gives the code (and index) every
// other edge gives.
func TestEdges_Approvals_InProcess(t *testing.T) {
	ran := contract.RunApprovalEdges(t, func(t testing.TB) func(core.RunRequest) error {
		rt := mustRuntime(t, core.Config{Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "pay"},
			NeedsApproval: func(core.ToolInvocation) (bool, error) { return true, nil },
			Call:          func(core.Context, core.ToolInvocation) (string, error) { return "paid", nil }}}})
		return func(req core.RunRequest) error {
			_, err := rt.Execute(bg, req)
			return err
		}
	})
	if ran < 10 {
		t.Fatalf("only %d approval cases hold in Go's types", ran)
	}
}
