package wasihost

import (
	"context"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
)

// Ensure the token window's corpus (testdata/contract/window/) in the
// WASI module, with its echo model and with a Go model, counted by the
// module's estimate and by a Go counter the module asks (the estimate
// too, so the corpus's figures hold; the counts cross as count actions):
// the policy's token fields cross the begin frame, Result.Context is
// rebuilt from the module's model.context events, and the refusals are
// core's.
func TestModule_WindowContract(t *testing.T) {
	cases := contract.MustLoadWindow(t)
	for _, mod := range modules {
		t.Run(mod.name, func(t *testing.T) { runWindowContract(t, cases, mod.start) })
	}
}

func runWindowContract(t *testing.T, cases []contract.WindowCase, start func(testing.TB) *Instance) {
	for _, model := range echoModels {
		for _, counted := range []bool{false, true} {
			name := model.name
			if counted {
				name += "_HostCounter"
			}
			t.Run(name, func(t *testing.T) {
				in := start(t)
				for _, c := range cases {
					t.Run(c.Name, func(t *testing.T) {
						cfg := Config{Model: model.model, SystemPrompt: c.SystemPrompt}
						counter := &countingCounter{}
						if counted {
							cfg.CountTokens = counter.count
						}
						rt := mustRuntime(t, in, cfg)
						defer rt.Close()
						policy := c.GoPolicy(t)
						c.RunWindow(t, contract.GoWindowEdge(policy, func(req core.RunRequest) (*core.Result, error) { return rt.Run(context.Background(), req) }, func(t testing.TB, session string) int {
							s, ok, err := rt.Session(session)
							if err != nil {
								t.Fatal(err)
							}
							if !ok {
								return -1
							}
							return len(s.Messages)
						}), "w")
						if counted && policy.MaxContextTokens > 0 && counter.calls() == 0 {
							t.Fatal("the host's counter was never called")
						}
					})
				}
			})
		}
	}
}
