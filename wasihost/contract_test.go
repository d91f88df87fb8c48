package wasihost

import (
	"context"
	"reflect"
	"strconv"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// Ensure both modules seed every corpus case as every other edge
// does, or refuses it with the same code, index and message and creates
// no session. The history is read in Go with hostmsg, as a Go host
// reads its stored messages, and reaches the module packed.
func TestModule_Contract(t *testing.T) {
	cases := contract.MustLoad(t)
	for _, mod := range modules {
		t.Run(mod.name, func(t *testing.T) { runContract(t, cases, mod.start) })
	}
}

func runContract(t *testing.T, cases []contract.Case, start func(testing.TB) *Instance) {
	for _, model := range echoModels {
		t.Run(model.name, func(t *testing.T) {
			in := start(t)
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
				if c.Repaired != nil && c.Repaired.Error == nil {
					t.Run(c.Name+"/healed", func(t *testing.T) {
						rt := rt
						if c.HasLimits() {
							rt = mustRuntime(t, in, Config{Model: model.model, Limits: c.Limits.Core()})
							defer rt.Close()
						}
						checkHealed(t, rt, c, "healed-"+strconv.Itoa(i))
					})
				}
			}
		})
	}
}

// checkHealed seeds session id with c's history and policy.repair, and
// checks the healed copy: its edits rendered in the host's shape are the
// case's, and Seed.Repaired, stored with the turn's messages, has no
// problems (under the default limits) and seeds a fresh instance without
// repair to the same session.
func checkHealed(t *testing.T, rt *Runtime, c *contract.Case, id string) {
	t.Helper()
	v, _ := hostjson.Parse(c.History)
	h, err := hostmsg.Messages(v, 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.Run(context.Background(), core.RunRequest{SessionID: id, Input: "next", WithHistory: true, History: h,
		Policy: core.Policy{Repair: true}})
	if err != nil {
		t.Fatal(err)
	}
	var healed []byte
	if res.Seed.Repaired != nil {
		healed = hostjson.AppendHealed(nil, v, res.Seed.Edits)
	}
	c.CheckHealed(t, healed)
	if res.Seed.Repaired == nil {
		return
	}
	stored := append(append([]core.SeedMessage(nil), res.Seed.Repaired...), core.SeedMessages(res.Appended)...)
	if chk := core.CheckHistory(stored, core.Limits{}); !chk.OK {
		t.Fatalf("the stored copy has problems: %+v", chk.Problems)
	}
	s, _, _ := rt.Session(id)
	fresh := mustRuntime(t, mustInstance(t), Config{})
	defer fresh.Close()
	cold, err := fresh.Run(context.Background(), core.RunRequest{SessionID: id, Input: "later", WithHistory: true, History: stored})
	if err != nil {
		t.Fatalf("a fresh instance refused the stored copy: %v", err)
	}
	if cold.Seed.Mode != core.SeedCold || cold.Seed.Repairs != nil {
		t.Fatalf("cold start from the stored copy: %+v", cold.Seed)
	}
	s2, _, _ := fresh.Session(id)
	if got, want := contract.CanonicalMessages(s2.Messages[:len(s.Messages)]), contract.CanonicalMessages(s.Messages); !reflect.DeepEqual(got, want) {
		t.Fatalf("cold session %v\nwant %v", got, want)
	}
}
