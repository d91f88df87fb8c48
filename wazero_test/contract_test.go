package wazero_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
	"github.com/agentrt/agentrt/jshost"
	"github.com/agentrt/agentrt/wire"
)

// contractPath is one way a history reaches the module. history returns
// the value passed to startRunWithHistory, or the refusal the host side
// makes before calling the module. A new wire is one more entry in
// contractPaths.
type contractPath struct {
	name    string
	history func(t *testing.T, in *jshost.Instance, c *contract.Case) (jshost.Value, *contract.Refusal)
}

var contractPaths = []contractPath{
	{
		// The history as JavaScript objects, made by the instance's own
		// JSON.parse so that fields keep their order.
		name: "array",
		history: func(t *testing.T, in *jshost.Instance, c *contract.Case) (jshost.Value, *contract.Refusal) {
			v, err := in.Call(context.Background(), in.Global("JSON"), "parse", string(c.History))
			if err != nil {
				t.Fatalf("JSON.parse: %v", err)
			}
			return v, nil
		},
	},
	{
		// Read in Go with hostmsg and packed, as the CLI does.
		name: "packed",
		history: func(t *testing.T, in *jshost.Instance, c *contract.Case) (jshost.Value, *contract.Refusal) {
			v, err := hostjson.Parse(c.History)
			if err != nil {
				t.Fatal(err)
			}
			h, err := hostmsg.Messages(v, 0)
			if err != nil {
				return nil, contract.RefusalOf(err)
			}
			return &jshost.Uint8Array{Bytes: wire.EncodeHistory(h)}, nil
		},
	},
}

// Ensure the module seeds every corpus case as docs/contract.md says on
// each history path, or refuses it with the code, index and message of
// every other edge and creates no session.
func TestModule_Contract(t *testing.T) {
	cases := contract.MustLoad(t)
	for _, p := range contractPaths {
		t.Run(p.name, func(t *testing.T) {
			in := mustInstance(t, nil)
			rt := mustRuntime(t, in, "agentrt", map[string]any{})
			for i := range cases {
				c := &cases[i]
				t.Run(c.Name, func(t *testing.T) {
					rt := rt
					if c.HasLimits() {
						rt = mustRuntime(t, in, "agentrt", map[string]any{"limits": c.Limits.Config()})
						defer in.Call(context.Background(), rt, "close")
					}
					id := "case-" + strconv.Itoa(i)
					hist, refused := p.history(t, in, c)
					if refused != nil {
						c.Check(t, nil, 0, refused)
						return
					}
					checkAndRepair(t, in, rt, c, hist, "case-"+strconv.Itoa(i))
					v, err := in.CallAsync(context.Background(), rt, "startRunWithHistory", id, "next", hist)
					if err != nil {
						var ex *jshost.Exception
						if !errors.As(err, &ex) {
							t.Fatalf("startRunWithHistory: %v", err)
						}
						if s := callSession(t, in, rt, id); s != nil {
							t.Errorf("a refused history left a session behind: %v", s)
						}
						c.Check(t, nil, 0, &contract.Refusal{Code: ex.Code, Index: ex.Index, Message: ex.Message})
						return
					}
					res := asResult(t, in, v)
					s, _ := callSession(t, in, rt, id).(map[string]any)
					list, _ := s["messages"].([]any)
					if len(list) < 2 {
						t.Fatalf("session holds %d messages, fewer than the new turn", len(list))
					}
					held := make([]map[string]any, len(list)-2)
					for j := range held {
						m, _ := list[j].(map[string]any)
						held[j] = contract.CanonicalMap(m)
					}
					if res.seeded != len(held) {
						t.Errorf("seed.seeded %d, session holds %d seeded messages", res.seeded, len(held))
					}
					c.Check(t, held, res.skipped, nil)
				})
			}
		})
	}
}

// callSession returns getSession(id), exported (nil for null).
func callSession(t *testing.T, in *jshost.Instance, rt jshost.Value, id string) any {
	t.Helper()
	v, err := in.Call(context.Background(), rt, "getSession", id)
	if err != nil {
		t.Fatalf("getSession: %v", err)
	}
	return in.Export(v)
}
