package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// Ensure every operation the operations' edge table gives HTTP
// (testdata/edges/ops.json) has its route: a request to it is neither
// refused as a method the path does not serve (405) nor answered "no
// such route" (docs/adr/0024-one-definition-per-operation.md).
func TestOps_HTTPRoutes(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	h := httpapi.New(httpapi.Config{Runtime: rt})
	n := 0
	for _, op := range contract.MustLoadOps(t).Operations {
		if op.HTTP == "" {
			continue
		}
		n++
		method, path, ok := strings.Cut(op.HTTP, " ")
		if !ok {
			t.Fatalf("%s: route %q is not \"METHOD /path\"", op.Name, op.HTTP)
		}
		path = strings.ReplaceAll(path, "{id}", "s1")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(method, path, strings.NewReader(`{"history":[]}`)))
		if w.Code == http.StatusMethodNotAllowed || strings.Contains(w.Body.String(), "no such route") {
			t.Errorf("%s: %s answered %d %s", op.Name, op.HTTP, w.Code, w.Body)
		}
	}
	if n == 0 {
		t.Fatal("the table gives HTTP no route")
	}
}
