package wasihost

import (
	"context"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/contract"
)

// The edge table (testdata/edges/) through the WASI module: each policy,
// limits and config object that Go's types can hold (wasihost's API takes Go
// values; the compiler refuses the others) gives the code every other
// edge gives, with the module's echo model and with a Go model.
func TestEdges_WASI(t *testing.T) {
	in := mustInstance(t)
	for _, model := range []struct {
		name  string
		model core.Model
	}{{"ModuleEcho", nil}, {"GoModel", core.Echo{}}} {
		t.Run(model.name, func(t *testing.T) {
			rt := mustRuntime(t, in, Config{Model: model.model})
			ran := 0
			for _, c := range contract.MustLoadEdges(t, "policy") {
				p, ok := c.GoPolicy()
				if !ok {
					continue
				}
				ran++
				t.Run(c.Name, func(t *testing.T) {
					res, err := rt.Run(context.Background(), core.RunRequest{SessionID: "edges", Input: "hi", Policy: p})
					c.Check(t, err)
					if err == nil && res.Status != "completed" {
						t.Fatalf("run %s", res.Status)
					}
				})
			}
			if ran == 0 {
				t.Fatal("no policy case holds in Go's types")
			}
		})
	}
	for _, c := range contract.MustLoadEdges(t, "config") {
		system, specs, ok := c.GoConfig()
		if !ok {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			cfg := Config{SystemPrompt: system}
			for _, s := range specs {
				cfg.Tools = append(cfg.Tools, core.Tool{ToolSpec: s, Call: func(core.Context, core.ToolInvocation) (string, error) { return "ok", nil }})
			}
			rt, err := in.NewRuntime(cfg)
			c.Check(t, err)
			if err == nil {
				rt.Close()
			}
		})
	}
	for _, c := range contract.MustLoadEdges(t, "limits") {
		l, ok := c.GoLimits()
		if !ok {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			rt, err := in.NewRuntime(Config{Limits: l})
			c.Check(t, err)
			if err != nil {
				return
			}
			defer rt.Close()
			if _, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "hi"}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
