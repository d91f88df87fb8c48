package core_test

import (
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
)

// Ensure the token window's corpus (testdata/contract/window/) in core:
// the budget respected, pairs never split, the system prompt and the
// input kept, the too-large refusal, the chunked window's stability.
func TestContextTokens_Contract(t *testing.T) {
	for _, c := range contract.MustLoadWindow(t) {
		t.Run(c.Name, func(t *testing.T) {
			rt := mustRuntime(t, core.Config{SystemPrompt: c.SystemPrompt})
			policy := c.GoPolicy(t)
			c.RunWindow(t, contract.GoWindowEdge(policy, func(req core.RunRequest) (*core.Result, error) {
				run, err := rt.Start(bg, req)
				if err != nil {
					return nil, err
				}
				return waitRun(t, run)
			}, func(_ testing.TB, session string) int {
				s, ok := rt.Session(session)
				if !ok {
					return -1
				}
				return len(s.Messages)
			}), "w")
		})
	}
}
