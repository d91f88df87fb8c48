package core_test

import (
	"encoding/json"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
	"github.com/agentrt/agentrt/internal/contract"
)

// Ensure the token window's corpus (testdata/contract/window/) in core:
// the budget respected, pairs never split, the system prompt and the
// input kept, the too-large refusal, the chunked window's stability.
func TestContextTokens_Contract(t *testing.T) {
	for _, c := range contract.MustLoadWindow(t) {
		t.Run(c.Name, func(t *testing.T) {
			rt := mustRuntime(t, core.Config{SystemPrompt: c.SystemPrompt})
			policy := c.GoPolicy(t)
			c.RunWindow(t, contract.WindowEdge{
				Turn: func(t testing.TB, session, input string, history, _ json.RawMessage) contract.WindowOutcome {
					req := core.RunRequest{SessionID: session, Input: input, Policy: policy}
					if history != nil {
						v, err := hostjson.Parse(history)
						if err != nil {
							t.Fatal(err)
						}
						if req.History, err = hostmsg.Messages(v, 0); err != nil {
							t.Fatal(err)
						}
						req.WithHistory = true
					}
					run, err := rt.Start(bg, req)
					var res *core.Result
					if err == nil {
						res, err = waitRun(t, run)
					}
					if err != nil {
						return contract.WindowOutcome{Err: contract.RefusalOf(err)}
					}
					o := contract.WindowOutcome{Received: contract.Received(res.Reply.Content), MessageCount: res.MessageCount}
					if res.Context != nil {
						o.Context = &contract.WindowContext{Messages: res.Context.Messages, Tokens: res.Context.Tokens, Dropped: res.Context.Dropped}
					}
					return o
				},
				Messages: func(_ testing.TB, session string) int {
					s, ok := rt.Session(session)
					if !ok {
						return -1
					}
					return len(s.Messages)
				},
			}, "w")
		})
	}
}
