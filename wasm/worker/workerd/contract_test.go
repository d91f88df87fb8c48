//go:build !js

package workerd_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// Ensure the worker on workerd seeds every corpus case as docs/contract.md
// says, or refuses it with the code, index and message of every other
// edge.
func TestWorker_Contract(t *testing.T) {
	t.Parallel()
	p := mustStart(t, workerd.Options{})
	send := func(method, path, body string) (int, []byte, error) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, p.URL+path, rd)
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, b, err
	}
	for i, c := range contract.MustLoad(t) {
		if c.HasLimits() {
			// The worker's seed limits are the defaults: it takes none
			// from its environment.
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			c.RunHTTP(t, send, "contract-"+strconv.Itoa(i))
		})
	}
}
