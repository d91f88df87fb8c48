package wasihost

import (
	"context"
	"os"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// Ensure both builds of the module answer the same first turn of a cold
// session: the pre-initialized one (no _initialize to call) and the plain
// one (Instantiate calls its _initialize).
func TestModule_Instantiate_BothBuilds(t *testing.T) {
	mustInstance(t) // skips, or fails under CI, when the module was not built
	if !snapshot {
		if os.Getenv("CI") != "" {
			t.Fatal("the WASI module was not pre-initialized (Wizer missing)")
		}
		t.Log("Wizer is missing: both modules are the plain build")
	}
	h := []core.SeedMessage{
		seed(core.RoleUser, "What is 2+2?"), seed(core.RoleAssistant, "4"),
	}
	var replies []string
	for _, tc := range []struct {
		name string
		m    *Module
		init bool // exports _initialize
	}{
		{"Snapshot", module, !snapshot},
		{"Plain", plainModule, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := tc.m.compiled.ExportedFunctions()[expInitialize]; ok != tc.init {
				t.Fatalf("exports _initialize: got %v, want %v", ok, tc.init)
			}
			in, err := tc.m.Instantiate(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close(context.Background())
			rt := mustRuntime(t, in, Config{})
			r, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "And 3+3?", WithHistory: true, History: h})
			if err != nil {
				t.Fatal(err)
			}
			if r.Seed.Mode != core.SeedCold || r.Seed.Seeded != 2 || r.MessageCount != 4 {
				t.Fatalf("got seed %+v, %d messages, want cold, 2 seeded, 4 messages", r.Seed, r.MessageCount)
			}
			replies = append(replies, r.Reply.Content)
		})
	}
	if len(replies) == 2 && replies[0] != replies[1] {
		t.Fatalf("replies differ: snapshot %q, plain %q", replies[0], replies[1])
	}
}

// Ensure instances of the pre-initialized module start from the snapshot,
// not from each other: a runtime and a session made in one instance are
// absent from the next.
func TestModule_Instantiate_SnapshotInstancesAreIndependent(t *testing.T) {
	ctx := context.Background()
	in1 := mustInstance(t)
	rt1 := mustRuntime(t, in1, Config{})
	if _, err := rt1.Run(ctx, core.RunRequest{SessionID: "only-in-one", Input: "hi"}); err != nil {
		t.Fatal(err)
	}
	rt2 := mustRuntime(t, mustInstance(t), Config{})
	if _, ok, err := rt2.Session("only-in-one"); err != nil || ok {
		t.Fatalf("second instance has the first one's session: ok %v, err %v", ok, err)
	}
	ids, err := rt1.ListSessions()
	if err != nil || len(ids) != 1 {
		t.Fatalf("first instance sessions: %v, %v", ids, err)
	}
}
