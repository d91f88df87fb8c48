package httpapi_test

import (
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// Ensure the run body decoder never panics, and that whatever it accepts
// the runtime either refuses with a typed error or runs.
func FuzzDecodeRunBody(f *testing.F) {
	seeds := []string{
		`{"input":"x"}`,
		`{"input":"x","history":` + history3 + `}`,
		`{"input":"x","history":[{"role":"assistant","content":null,"toolCalls":[{"id":"a","name":"f","arguments":{"k":[1,2]}}]},{"role":"tool","toolCallId":"a","content":"r"}]}`,
		`{"input":"x","policy":{"seedMode":"reconcile","onBusy":"reject","maxSteps":3,"allowedTools":[],"timeoutMs":5}}`,
		`{"input":1e400}`,
		`{"input":"x","history":[null,1,"s",[]]}`,
		`[]`, `null`, ``, `{`, `{"input":"\ud800"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	rt, err := core.New(core.Config{})
	if err != nil {
		f.Fatal(err)
	}
	defer rt.Close()
	f.Fuzz(func(t *testing.T, body []byte) {
		req, cerr := httpapi.DecodeRunBody(body)
		if cerr != nil {
			if cerr.Code != core.CodeInvalidArgument && cerr.Code != core.CodeInvalidHistory {
				t.Fatalf("unexpected code %s", cerr.Code)
			}
			if req != nil {
				t.Fatal("a refused body returned a request")
			}
			return
		}
		run, err := rt.Start(t.Context(), core.RunRequest{SessionID: "fuzz", Input: req.Input, History: req.History,
			WithHistory: req.WithHistory, Policy: req.Policy, RunID: req.RunID})
		if err != nil {
			if core.ErrorCode(err) == core.CodeInternal {
				t.Fatalf("internal error for an accepted body: %v", err)
			}
			return
		}
		_, _ = run.Wait(t.Context())
		rt.DeleteSession("fuzz")
	})
}
