package core_test

import (
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/contract"
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
