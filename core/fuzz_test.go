package core_test

import (
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// historyFromBytes turns fuzz input into a history: three bytes a message
// (role, shape, ids), so the fuzzer explores orderings of roles and tool
// linkage rather than text.
func historyFromBytes(data []byte) []core.SeedMessage {
	roles := []core.Role{core.RoleUser, core.RoleAssistant, core.RoleTool, core.RoleSystem, "bot", ""}
	ids := []string{"c1", "c2", "c3", ""}
	var h []core.SeedMessage
	for len(data) >= 3 {
		r, shape, id := data[0], data[1], data[2]
		data = data[3:]
		m := core.SeedMessage{Role: roles[int(r)%len(roles)], Content: string([]byte{'m', shape})}
		if shape&1 != 0 {
			m.ContentMissing, m.Content = true, ""
		}
		if shape&2 != 0 {
			m.ToolCallID = ids[int(id)%len(ids)]
		}
		for i := 0; i < int(shape>>2)%3; i++ {
			m.ToolCalls = append(m.ToolCalls, core.ToolCall{ID: ids[(int(id)+i)%len(ids)], Name: "t", Arguments: "{}"})
		}
		if shape&0x80 != 0 {
			m.ID = "h" + string(rune('0'+id%10))
		}
		h = append(h, m)
	}
	return h
}

func FuzzSeedHistory(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 0}, false, false)
	f.Add([]byte{0, 0, 0, 1, 4, 0, 2, 2, 0, 1, 0, 0}, true, false)
	f.Add([]byte{2, 2, 0}, false, true)
	f.Add([]byte{3, 0, 0, 1, 5, 1, 2, 2, 1, 2, 2, 2, 0, 0, 0}, true, true)
	f.Fuzz(func(t *testing.T, data []byte, reconcile, warm bool) {
		history := historyFromBytes(data)
		rt := mustRuntime(t, core.Config{Limits: core.Limits{MaxSeedMessages: 64}})
		if warm {
			mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "w"})
		}
		before := stateOf(rt)
		pol := core.Policy{}
		if reconcile {
			pol.SeedMode = core.SeedReconcile
		}
		verr := core.ValidateHistory(history, core.Limits{MaxSeedMessages: 64})
		run, err := rt.StartRunWithPolicyAndHistory(bg, "s", "input", pol, history)
		if (err == nil) != (verr == nil) {
			t.Fatalf("Start err %v, ValidateHistory err %v", err, verr)
		}
		if err != nil {
			var e *core.Error
			if !asError(err, &e) || (e.Code != core.CodeInvalidHistory && e.Code != core.CodeLimitExceeded) || e.Index < 0 || e.Index > len(history) {
				t.Fatalf("refusal %v is not a typed history error with an index", err)
			}
			requireSameState(t, stateOf(rt), before)
			return
		}
		res, err := waitRun(t, run)
		if err != nil {
			t.Fatalf("accepted history failed the run: %v", err)
		}
		got := messagesOf(rt, "s")
		seeded := asMessages(history)
		switch res.Seed.Mode {
		case core.SeedCold, core.SeedReplaced:
			// The session is exactly the history, then this turn.
			if !reflect.DeepEqual(got[:len(seeded)], seeded) {
				t.Fatalf("session %v does not start with the seed %v", got, seeded)
			}
			if len(got) != len(seeded)+len(res.Appended) {
				t.Fatalf("session has %d messages, want %d", len(got), len(seeded)+len(res.Appended))
			}
		case core.SeedNoop:
			if len(got) != len(before.Messages["s"])+len(res.Appended) {
				t.Fatalf("noop changed the session: %d -> %d", len(before.Messages["s"]), len(got))
			}
		case core.SeedAppended:
			if !reflect.DeepEqual(got[:len(seeded)], append(append([]core.Message(nil), before.Messages["s"]...), seeded[len(before.Messages["s"]):]...)) {
				t.Fatalf("appended seed mismatch")
			}
		default:
			t.Fatalf("mode %q", res.Seed.Mode)
		}
	})
}
