package wasihost

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
	"github.com/agentrt/agentrt/internal/contract"
)

// Ensure the token window's corpus (testdata/contract/window/) in the
// WASI module, with its echo model and with a Go model: the policy's
// token fields cross the begin frame, Result.Context is rebuilt from the
// module's model.context events, and the refusals are core's.
func TestModule_WindowContract(t *testing.T) {
	cases := contract.MustLoadWindow(t)
	for _, model := range []struct {
		name  string
		model core.Model
	}{{"ModuleEcho", nil}, {"GoModel", core.Echo{}}} {
		t.Run(model.name, func(t *testing.T) {
			in := mustInstance(t)
			for _, c := range cases {
				t.Run(c.Name, func(t *testing.T) {
					rt := mustRuntime(t, in, Config{Model: model.model, SystemPrompt: c.SystemPrompt})
					defer rt.Close()
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
							res, err := rt.Run(context.Background(), req)
							if err != nil {
								return contract.WindowOutcome{Err: contract.RefusalOf(err)}
							}
							o := contract.WindowOutcome{Received: contract.Received(res.Reply.Content), MessageCount: res.MessageCount}
							if res.Context != nil {
								o.Context = &contract.WindowContext{Messages: res.Context.Messages, Tokens: res.Context.Tokens, Dropped: res.Context.Dropped}
							}
							return o
						},
						Messages: func(t testing.TB, session string) int {
							s, ok, err := rt.Session(session)
							if err != nil {
								t.Fatal(err)
							}
							if !ok {
								return -1
							}
							return len(s.Messages)
						},
					}, "w")
				})
			}
		})
	}
}
