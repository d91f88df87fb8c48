package core_test

import (
	"testing"

	"github.com/agentrt/agentrt/core"
)

// A commit carries no head: the glue knows the head of its mirror and
// computes the one after a quick turn as the mirror's followed by the two
// messages (js/head.js). That holds because the generation and length a
// commit names are the session's messages: the tests below pin both
// halves of it in core.

// Ensure the head after a commit is the mirror's head followed by the
// input and the reply, turn after turn.
func TestRuntime_Commit_HeadFollowsTheMirror(t *testing.T) {
	rt := mustRuntime(t, core.Config{Model: okModel()})
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "x"})
	for i, input := range []string{"one", "two", "three"} {
		s, _ := rt.Session("s")
		c := core.Commit{SessionID: "s", RunID: "glue:" + itoa(i), Input: input, MirrorGen: s.Generation, MirrorLen: len(s.Messages), Reply: "ok"}
		if _, stale, err := rt.Commit(&c); err != nil || stale {
			t.Fatalf("commit %d: %v, stale %v", i, err, stale)
		}
		want := core.Head(append(s.Messages, core.Message{Role: core.RoleUser, Content: input}, core.Message{Role: core.RoleAssistant, Content: "ok"}))
		if after, _ := rt.Session("s"); after.Head != want {
			t.Fatalf("commit %d: head %q, want %q", i, after.Head, want)
		}
	}
}

// Ensure a session whose messages changed other than by appending has a
// new generation even where its length is what a mirror holds, so that a
// commit on that mirror is stale: a mirror's generation and length name
// its messages, and so its head.
func TestRuntime_Commit_SameLengthOtherMessagesIsStale(t *testing.T) {
	rt := mustRuntime(t, core.Config{Model: okModel()})
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "x"})
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "y", RunID: "r-y"})
	mirror, _ := rt.Session("s")
	// Revert the last turn and run another of the same length.
	if !rt.RevertRun("s", "r-y") {
		t.Fatal("revert")
	}
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "z"})
	now, _ := rt.Session("s")
	if len(now.Messages) != len(mirror.Messages) || now.Head == mirror.Head || now.Generation == mirror.Generation {
		t.Fatalf("after the revert: %d messages, generation %d (was %d), head %q (was %q)",
			len(now.Messages), now.Generation, mirror.Generation, now.Head, mirror.Head)
	}
	want := stateOf(rt)
	c := core.Commit{SessionID: "s", RunID: "glue:1", Input: "w", MirrorGen: mirror.Generation, MirrorLen: len(mirror.Messages), Reply: "ok"}
	if _, stale, err := rt.Commit(&c); err != nil || !stale {
		t.Fatalf("a commit on the old mirror: %v, stale %v", err, stale)
	}
	requireSameState(t, stateOf(rt), want)
	// Deleted and seeded again with the same number of messages: a new
	// generation too.
	rt.DeleteSession("s")
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "again", History: []core.SeedMessage{{Role: core.RoleUser, Content: "x"}, {Role: core.RoleAssistant, Content: "ok"}}})
	if again, _ := rt.Session("s"); again.Generation == now.Generation || again.Generation == mirror.Generation {
		t.Fatalf("a session seeded again kept generation %d", again.Generation)
	}
}
