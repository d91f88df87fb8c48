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
	ran := 0
	for _, c := range contract.MustLoadEdges(t, "policy") {
		p, ok := c.GoPolicy()
		if !ok {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			rt, err := core.New(core.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			_, err = rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "hi", Policy: p})
			c.Check(t, err)
		})
	}
	for _, c := range contract.MustLoadEdges(t, "limits") {
		l, ok := c.GoLimits()
		if !ok {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			rt, err := core.New(core.Config{Limits: l})
			c.Check(t, err)
			if err != nil {
				return
			}
			defer rt.Close()
			if _, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "hi"}); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, c := range contract.MustLoadEdges(t, "config") {
		system, specs, ok := c.GoConfig()
		if !ok {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			cfg := core.Config{SystemPrompt: system}
			for _, s := range specs {
				cfg.Tools = append(cfg.Tools, core.Tool{ToolSpec: s, Call: func(core.Context, core.ToolInvocation) (string, error) { return "ok", nil }})
			}
			rt, err := core.New(cfg)
			c.Check(t, err)
			if err == nil {
				rt.Close()
			}
		})
	}
	if ran < 20 {
		t.Fatalf("only %d cases hold in Go's types", ran)
	}
}
