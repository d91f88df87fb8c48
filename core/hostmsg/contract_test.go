package hostmsg_test

import (
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// seedNative reads a corpus history with hostmsg over hostjson and seeds
// a fresh runtime's session with it, as the native edges do.
func seedNative(t *testing.T, history []byte, limits core.Limits) ([]map[string]any, int, *contract.Refusal) {
	t.Helper()
	v, err := hostjson.Parse(history)
	if err != nil {
		t.Fatalf("corpus history is not JSON: %v", err)
	}
	h, err := hostmsg.Messages(v, 0)
	if err != nil {
		return nil, 0, contract.RefusalOf(err)
	}
	rt, err := core.New(core.Config{Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	res, err := rt.Execute(core.Background(), core.RunRequest{SessionID: "s", Input: "next", History: h, WithHistory: true})
	if err != nil {
		if _, ok := rt.Session("s"); ok {
			t.Errorf("a refused history left a session behind")
		}
		return nil, 0, contract.RefusalOf(err)
	}
	s, ok := rt.Session("s")
	if !ok {
		t.Fatal("no session after a run")
	}
	held := s.Messages[:len(s.Messages)-2] // the new turn: input and reply
	if res.Seed.Seeded != len(held) {
		t.Errorf("seed.seeded %d, session holds %d seeded messages", res.Seed.Seeded, len(held))
	}
	return contract.CanonicalMessages(held), res.Seed.SkippedSystem, nil
}

// repairNative seeds a fresh runtime's session with a corpus history and
// policy.repair, and returns the model's first request, the session
// before the reply and the repairs reported.
func repairNative(t *testing.T, history []byte, limits core.Limits) (request, session []map[string]any, repairs []contract.RepairRecord, refusal *contract.Refusal) {
	t.Helper()
	v, err := hostjson.Parse(history)
	if err != nil {
		t.Fatalf("corpus history is not JSON: %v", err)
	}
	h, err := hostmsg.Messages(v, 0)
	if err != nil {
		return nil, nil, nil, contract.RefusalOf(err)
	}
	rt, err := core.New(core.Config{Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	var seeded *core.SeedReport
	res, err := rt.Execute(core.Background(), core.RunRequest{SessionID: "s", Input: "next", History: h, WithHistory: true,
		Policy: core.Policy{Repair: true}, Inspect: true, OnEvent: func(ev core.Event) {
			if ev.Type == core.EventSessionSeeded {
				seeded = ev.Seed
			}
		}})
	if err != nil {
		return nil, nil, nil, contract.RefusalOf(err)
	}
	if seeded == nil || !reflect.DeepEqual(seeded.Repairs, res.Seed.Repairs) {
		t.Errorf("the session.seeded event's repairs %+v differ from the result's %+v", seeded, res.Seed.Repairs)
	}
	s, _ := rt.Session("s")
	checkHealedNative(t, v, &res.Seed, s.Messages[:res.Seed.Seeded])
	return contract.CanonicalMessages(res.ModelCalls[0].Messages), contract.CanonicalMessages(s.Messages[:len(s.Messages)-1]),
		contract.RepairsOf(res.Seed.Repairs), nil
}

// checkHealedNative checks a repaired seed's healed copy: SeedReport.Repaired
// holds what the session seeded (system messages aside), and its rendering
// in the host's shape reads back to the same seed messages, which
// CheckHistory accepts as they are.
func checkHealedNative(t *testing.T, v hostjson.Value, seed *core.SeedReport, seeded []core.Message) {
	t.Helper()
	if seed.Repaired == nil {
		if seed.Repairs != nil || seed.Edits != nil {
			t.Fatalf("repairs %+v, edits %+v without a repaired history", seed.Repairs, seed.Edits)
		}
		return
	}
	if len(seed.Edits) != len(seed.Repairs) {
		t.Fatalf("%d edits for %d repairs", len(seed.Edits), len(seed.Repairs))
	}
	var kept []core.Message
	for i := range seed.Repaired {
		if seed.Repaired[i].Role != core.RoleSystem {
			kept = append(kept, seed.Repaired[i].Message())
		}
	}
	if got, want := contract.CanonicalMessages(kept), contract.CanonicalMessages(seeded); !reflect.DeepEqual(got, want) {
		t.Fatalf("seed.Repaired %v\nthe session seeded %v", got, want)
	}
	healed := hostjson.AppendHealed(nil, v, seed.Edits)
	hv, err := hostjson.Parse(healed)
	if err != nil {
		t.Fatalf("the healed history is not JSON: %v: %s", err, healed)
	}
	back, err := hostmsg.Messages(hv, 0)
	if err != nil {
		t.Fatalf("the healed history %s is refused: %v", healed, err)
	}
	// The default limits: the markers are host messages now, and count
	// against a case's tight seed limit as any message.
	if c := core.CheckHistory(back, core.Limits{}); !c.OK {
		t.Fatalf("the healed history %s has problems: %+v", healed, c.Problems)
	}
	if got, want := contract.CanonicalMessages(messagesOf(back)), contract.CanonicalMessages(messagesOf(seed.Repaired)); !reflect.DeepEqual(got, want) {
		t.Fatalf("the healed history reads back as %v\nwant %v", got, want)
	}
}

// healedNative seeds a fresh runtime with a corpus history and
// policy.repair, and returns its healed copy rendered in the host's shape
// (nil when nothing was repaired).
func healedNative(t *testing.T, history []byte, limits core.Limits) []byte {
	t.Helper()
	v, _ := hostjson.Parse(history)
	h, err := hostmsg.Messages(v, 0)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := core.New(core.Config{Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	res, err := rt.Execute(core.Background(), core.RunRequest{SessionID: "s", Input: "next", History: h, WithHistory: true, Policy: core.Policy{Repair: true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Seed.Repaired == nil {
		return nil
	}
	return hostjson.AppendHealed(nil, v, res.Seed.Edits)
}

// checkNative runs core.CheckHistory on a corpus history read natively.
func checkNative(t *testing.T, history []byte, limits core.Limits) (bool, []contract.Problem) {
	t.Helper()
	v, err := hostjson.Parse(history)
	if err != nil {
		t.Fatalf("corpus history is not JSON: %v", err)
	}
	h, err := hostmsg.Messages(v, 0)
	check := core.CheckHistory(h, limits)
	if err != nil {
		check = core.UnreadableCheck(err)
	}
	return check.OK, contract.ProblemsOf(check)
}

// Ensure every corpus case has its expected outcome when read natively:
// seeded, checked, and seeded with repair.
func TestMessages_Contract(t *testing.T) {
	for _, c := range contract.MustLoad(t) {
		t.Run(c.Name, func(t *testing.T) {
			session, skipped, err := seedNative(t, c.History, c.Limits.Core())
			c.Check(t, session, skipped, err)
			ok, problems := checkNative(t, c.History, c.Limits.Core())
			c.CheckProblems(t, ok, problems)
			request, held, repairs, rerr := repairNative(t, c.History, c.Limits.Core())
			c.CheckRepaired(t, request, held, repairs, rerr)
			if c.Repaired != nil && rerr == nil {
				c.CheckHealed(t, healedNative(t, c.History, c.Limits.Core()))
			}
		})
	}
}

// messagesOf returns the session messages h's messages become.
func messagesOf(h []core.SeedMessage) []core.Message {
	out := make([]core.Message, len(h))
	for i := range h {
		out[i] = h[i].Message()
	}
	return out
}
