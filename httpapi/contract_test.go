package httpapi_test

import (
	"strconv"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
	"github.com/agentrt/agentrt/internal/contract"
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
