package wasihost

import (
	"context"
	"strconv"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
	"github.com/agentrt/agentrt/internal/contract"
)

// Ensure the WASI module seeds every corpus case as every other edge
// does, or refuses it with the same code, index and message and creates
// no session. The history is read in Go with hostmsg, as a Go host
// reads its stored messages, and reaches the module packed.
func TestModule_Contract(t *testing.T) {
	cases := contract.MustLoad(t)
	for _, model := range []struct {
		name  string
		model core.Model
	}{{"ModuleEcho", nil}, {"GoModel", core.Echo{}}} {
		t.Run(model.name, func(t *testing.T) {
			in := mustInstance(t)
			rt := mustRuntime(t, in, Config{Model: model.model})
			for i := range cases {
				c := &cases[i]
				t.Run(c.Name, func(t *testing.T) {
					rt := rt
					if c.HasLimits() {
						rt = mustRuntime(t, in, Config{Model: model.model, Limits: c.Limits.Core()})
						defer rt.Close()
					}
					v, err := hostjson.Parse(c.History)
					if err != nil {
						t.Fatal(err)
					}
					h, err := hostmsg.Messages(v, 0)
					if err != nil {
						c.Check(t, nil, 0, contract.RefusalOf(err))
						return
					}
					id := "case-" + strconv.Itoa(i)
					res, err := rt.Run(context.Background(), core.RunRequest{SessionID: id, Input: "next", WithHistory: true, History: h})
					s, ok, serr := rt.Session(id)
					if serr != nil {
						t.Fatal(serr)
					}
					if err != nil {
						if ok {
							t.Errorf("a refused history left a session behind: %v", s.Messages)
						}
						c.Check(t, nil, 0, contract.RefusalOf(err))
						return
					}
					if len(s.Messages) < 2 {
						t.Fatalf("session holds %d messages, fewer than the new turn", len(s.Messages))
					}
					held := contract.CanonicalMessages(s.Messages[:len(s.Messages)-2])
					if res.Seed.Seeded != len(held) {
						t.Errorf("seed.seeded %d, session holds %d seeded messages", res.Seed.Seeded, len(held))
					}
					c.Check(t, held, res.Seed.SkippedSystem, nil)
				})
			}
		})
	}
}
