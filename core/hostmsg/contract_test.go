package hostmsg_test

import (
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
	"github.com/agentrt/agentrt/internal/contract"
)

// seedNative reads a corpus history with hostmsg over hostjson and seeds
// a fresh runtime's session with it, as the native edges do.
func seedNative(t *testing.T, history []byte) ([]map[string]any, int, *contract.Refusal) {
	t.Helper()
	v, err := hostjson.Parse(history)
	if err != nil {
		t.Fatalf("corpus history is not JSON: %v", err)
	}
	h, err := hostmsg.Messages(v, 0)
	if err != nil {
		return nil, 0, contract.RefusalOf(err)
	}
	rt, err := core.New(core.Config{})
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

// Ensure every corpus case has its expected outcome when read natively.
func TestMessages_Contract(t *testing.T) {
	for _, c := range contract.MustLoad(t) {
		t.Run(c.Name, func(t *testing.T) {
			session, skipped, err := seedNative(t, c.History)
			c.Check(t, session, skipped, err)
		})
	}
}
