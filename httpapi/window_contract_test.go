package httpapi_test

import (
	"encoding/json"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// Ensure the token window's corpus (testdata/contract/window/) over
// HTTP: policy.maxContextTokens and contextChunkTokens read from the
// body, result.context answered, the too-large refusal a 413.
func TestHandler_Runs_WindowContract(t *testing.T) {
	for _, c := range contract.MustLoadWindow(t) {
		t.Run(c.Name, func(t *testing.T) {
			h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{SystemPrompt: c.SystemPrompt})})
			c.RunWindow(t, contract.WindowEdge{
				Turn: func(t testing.TB, session, input string, history, policy json.RawMessage) contract.WindowOutcome {
					body := map[string]any{"input": input, "policy": policy}
					if history != nil {
						body["history"] = history
					}
					b, _ := json.Marshal(body)
					res := do(t, h, "POST", "/v1/sessions/"+session+"/runs", string(b))
					if res.status != 200 {
						e := decode[errorBody](t, res.body)
						if res.status != 413 && e.Error.Code == "limit_exceeded" {
							t.Errorf("limit_exceeded answered %d, want 413", res.status)
						}
						return contract.WindowOutcome{Err: &contract.Refusal{Code: e.Error.Code, Message: e.Error.Message}}
					}
					r := decode[tokenResult](t, res.body)
					o := contract.WindowOutcome{Received: contract.Received(r.Reply.Content), MessageCount: r.MessageCount}
					if r.Context != nil {
						o.Context = &contract.WindowContext{Messages: r.Context.Messages, Tokens: r.Context.Tokens, Dropped: r.Context.Dropped}
					}
					return o
				},
				Messages: func(t testing.TB, session string) int {
					res := do(t, h, "GET", "/v1/sessions/"+session, "")
					if res.status == 404 {
						return -1
					}
					return decode[struct {
						MessageCount int `json:"messageCount"`
					}](t, res.body).MessageCount
				},
			}, "w")
		})
	}
}
