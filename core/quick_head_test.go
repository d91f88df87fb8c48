package core_test

import (
	"testing"

	"github.com/agentrt/agentrt/core"
)

// commitIf commits input and reply "ok" with ifHead on the session as its
// mirror stands now, and returns the commit as Commit left it.
func commitIf(t *testing.T, rt *core.Runtime, id, runID, input, ifHead string) (core.Commit, int, bool, error) {
	t.Helper()
	s, _ := rt.Session(id)
	c := core.Commit{SessionID: id, RunID: runID, Input: input, MirrorGen: s.Generation, MirrorLen: len(s.Messages), Reply: "ok", IfHead: ifHead}
	n, stale, err := rt.Commit(&c)
	return c, n, stale, err
}

// Ensure a commit with IfHead stores the turn when the session's head is
// IfHead and sets Head to the head a turn of the same messages has, turn
// after turn, a commit without IfHead and a revert between.
func TestRuntime_Commit_IfHeadMatches(t *testing.T) {
	a := mustRuntime(t, core.Config{Model: okModel()})
	b := mustRuntime(t, core.Config{Model: okModel()})
	for _, rt := range []*core.Runtime{a, b} {
		mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "x"})
	}
	head := func(rt *core.Runtime) string { s, _ := rt.Session("s"); return s.Head }
	h := head(b)
	for i, input := range []string{"one", "two", "three"} {
		res := mustComplete(t, a, core.RunRequest{SessionID: "s", Input: input, IfHead: h})
		c, n, stale, err := commitIf(t, b, "s", "glue:"+itoa(i), input, h)
		if err != nil || stale {
			t.Fatalf("commit %d: %v, stale %v", i, err, stale)
		}
		if c.Head != res.Head() || c.Head != head(b) || c.Head != core.Head(messagesOf(b, "s")) || n != len(messagesOf(b, "s")) {
			t.Fatalf("commit %d: head %q count %d, want %q (turn), %q (session)", i, c.Head, n, res.Head(), head(b))
		}
		h = c.Head
	}
	requireSameState(t, stateOf(b), stateOf(a))
	// A commit without IfHead leaves the chain behind; the next one with
	// IfHead finds the session's head all the same.
	if _, _, err := commitOn(b, "s", "glue:x", "plain"); err != nil {
		t.Fatal(err)
	}
	c, _, stale, err := commitIf(t, b, "s", "glue:y", "after", head(b))
	if err != nil || stale || c.Head != head(b) {
		t.Fatalf("after a plain commit: %v, stale %v, head %q want %q", err, stale, c.Head, head(b))
	}
	// After a revert the head is the shorter conversation's.
	before := head(b)
	if !b.RevertRun("s", "glue:y") {
		t.Fatal("revert")
	}
	if _, _, stale, _ := commitIf(t, b, "s", "glue:z", "again", before); !stale {
		t.Fatal("a commit on the reverted turn's head was not stale")
	}
	if c, _, stale, err := commitIf(t, b, "s", "glue:z", "again", head(b)); err != nil || stale || c.Head != head(b) {
		t.Fatalf("after a revert: %v, stale %v", err, stale)
	}
}

// Ensure a commit whose IfHead is not the session's head changes nothing
// and reports stale, never history_diverged: the host's ordinary turn
// decides; and that an IfHead that is not a head is refused
// invalid_argument, as Start refuses it.
func TestRuntime_Commit_IfHeadStaleOrMalformed(t *testing.T) {
	rt := mustRuntime(t, core.Config{Model: okModel()})
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "x"})
	s0, _ := rt.Session("s")
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "y"})
	s1, _ := rt.Session("s")
	want := stateOf(rt)
	for i, ifHead := range []string{s0.Head, core.Head(nil), "h1-AAAAAAAAAAAAAAAAAAAAAA"} {
		c, n, stale, err := commitIf(t, rt, "s", "glue:1", "z", ifHead)
		if err != nil || !stale || n != 0 || c.Head != "" {
			t.Fatalf("case %d: %v, stale %v, count %d, head %q", i, err, stale, n, c.Head)
		}
		requireSameState(t, stateOf(rt), want)
	}
	for i, ifHead := range []string{"nope", s1.Head[:len(s1.Head)-1], s1.Head + "A", "h1-AAAAAAAAAAAAAAAAAAAAAB"} {
		_, _, stale, err := commitIf(t, rt, "s", "glue:1", "z", ifHead)
		if e := core.AsError(err); e == nil || e.Code != core.CodeInvalidArgument || stale {
			t.Fatalf("case %d: %v, stale %v", i, err, stale)
		}
		requireSameState(t, stateOf(rt), want)
	}
	// Stale for another reason (the mirror's length): refused all the same.
	c := core.Commit{SessionID: "s", RunID: "glue:1", Input: "z", MirrorGen: s1.Generation, MirrorLen: 1, Reply: "ok", IfHead: "nope"}
	if _, _, err := rt.Commit(&c); core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Fatalf("a malformed ifHead on a stale mirror: %v", err)
	}
	if st := rt.Stats(); st.RunsCompleted != 2 {
		t.Fatalf("stats %+v", st)
	}
	// The current head commits.
	if _, _, stale, err := commitIf(t, rt, "s", "glue:1", "z", s1.Head); err != nil || stale {
		t.Fatalf("current head: %v, stale %v", err, stale)
	}
}
