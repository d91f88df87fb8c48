package wasihost

import (
	"context"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
)

// The edge table (testdata/edges/) through the WASI module: each policy,
// limits, config and approvals object that Go's types can hold (wasihost's API takes Go
// values; the compiler refuses the others) gives the code every other
// edge gives, with the module's echo model and with a Go model.
func TestEdges_WASI(t *testing.T) {
	for _, mod := range modules {
		t.Run(mod.name, func(t *testing.T) { runEdges(t, mod.start(t)) })
	}
}

func runEdges(t *testing.T, in *Instance) {
	for _, model := range echoModels {
		t.Run(model.name, func(t *testing.T) {
			rt := mustRuntime(t, in, Config{Model: model.model})
			ran := contract.RunPolicyEdges(t, func(t testing.TB, p core.Policy) error {
				res, err := rt.Run(context.Background(), core.RunRequest{SessionID: "edges", Input: "hi", Policy: p})
				if err == nil && res.Status != "completed" {
					t.Fatalf("run %s", res.Status)
				}
				return err
			})
			if ran == 0 {
				t.Fatal("no policy case holds in Go's types")
			}
		})
	}
	t.Run("approvals", func(t *testing.T) {
		contract.RunApprovalEdges(t, func(t testing.TB) func(core.RunRequest) error {
			rt := mustRuntime(t, in, Config{Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "pay"},
				NeedsApproval: func(core.ToolInvocation) (bool, error) { return true, nil },
				Call:          func(core.Context, core.ToolInvocation) (string, error) { return "paid", nil }}}})
			t.Cleanup(func() { rt.Close() })
			return func(req core.RunRequest) error {
				_, err := rt.Run(context.Background(), req)
				return err
			}
		})
	})
	contract.RunRuntimeEdges(t, func(cfg core.Config) (func() error, func(), error) {
		rt, err := in.NewRuntime(Config{SystemPrompt: cfg.SystemPrompt, Tools: cfg.Tools, Limits: cfg.Limits})
		if err != nil {
			return nil, nil, err
		}
		run := func() error {
			_, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "hi"})
			return err
		}
		return run, func() { rt.Close() }, nil
	})
}
