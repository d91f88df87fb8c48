package httpapi_test

import (
	"maps"
	"strconv"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// Ensure the HTTP API seeds every corpus case as docs/contract.md says,
// or refuses it with the same code, index and message as every edge.
func TestHandler_Contract(t *testing.T) {
	h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{})})
	send := func(method, path, body string) (int, []byte, error) {
		r := do(t, h, method, path, body, "Content-Type", "application/json")
		return r.status, r.body, nil
	}
	for i, c := range contract.MustLoad(t) {
		t.Run(c.Name, func(t *testing.T) {
			if c.HasLimits() {
				// A runtime of the case's limits, served alone.
				h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{Limits: c.Limits.Core()})})
				send := func(method, path, body string) (int, []byte, error) {
					r := do(t, h, method, path, body, "Content-Type", "application/json")
					return r.status, r.body, nil
				}
				c.RunHTTP(t, send, "contract-"+strconv.Itoa(i))
				return
			}
			c.RunHTTP(t, send, "contract-"+strconv.Itoa(i))
		})
	}
}

// Ensure the HTTP API resumes every approval case of the corpus as
// docs/contract.md says, each tool running as often as the case counts.
func TestHandler_ApprovalContract(t *testing.T) {
	for _, c := range contract.MustLoadApprovals(t) {
		t.Run(c.Name, func(t *testing.T) {
			runs := map[string]int{}
			var mu sync.Mutex
			tool := func(name, out string) core.Tool {
				return core.Tool{ToolSpec: core.ToolSpec{Name: name},
					NeedsApproval: func(core.ToolInvocation) (bool, error) { return name == "pay", nil },
					Call: func(core.Context, core.ToolInvocation) (string, error) {
						mu.Lock()
						runs[name]++
						mu.Unlock()
						return out, nil
					}}
			}
			h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{Tools: []core.Tool{tool("pay", "paid"), tool("look", "looked")}})})
			send := func(method, path, body string) (int, []byte, error) {
				r := do(t, h, method, path, body, "Content-Type", "application/json")
				return r.status, r.body, nil
			}
			c.RunApprovalHTTP(t, send, "s", func() map[string]int {
				mu.Lock()
				defer mu.Unlock()
				return maps.Clone(runs)
			})
		})
	}
}
