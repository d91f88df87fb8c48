package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/mock"
)

// commitOn commits input and reply "ok" on the session as its mirror
// stands now.
func commitOn(rt *core.Runtime, id, runID, input string) (int, bool, error) {
	s, _ := rt.Session(id)
	return rt.Commit(&core.Commit{SessionID: id, RunID: runID, Input: input, MirrorGen: s.Generation, MirrorLen: len(s.Messages), Reply: "ok"})
}

// Ensure a commit leaves the store as a turn with the same input and
// reply does: messages, counters, generation, evictions.
func TestRuntime_Commit_SameAsTurn(t *testing.T) {
	turn := cost(1) + cost(2)
	limits := core.Limits{MaxTotalBytes: 6 * turn}
	a := mustRuntime(t, core.Config{Model: okModel(), Limits: limits})
	b := mustRuntime(t, core.Config{Model: okModel(), Limits: limits})
	for _, rt := range []*core.Runtime{a, b} {
		for _, id := range []string{"a", "b", "c"} {
			mustComplete(t, rt, core.RunRequest{SessionID: id, Input: "x"})
		}
	}
	for i, id := range []string{"a", "c", "a", "c"} {
		mustComplete(t, a, core.RunRequest{SessionID: id, Input: "y"})
		n, stale, err := commitOn(b, id, "glue:"+itoa(i), "y")
		if err != nil || stale {
			t.Fatalf("commit %d: %v, stale %v", i, err, stale)
		}
		if want := len(messagesOf(a, id)); n != want {
			t.Fatalf("commit %d: count %d, want %d", i, n, want)
		}
	}
	requireSameState(t, stateOf(b), stateOf(a))
	sa, sb := a.Stats(), b.Stats()
	if sa.RunsCompleted != sb.RunsCompleted || sa.Evictions != sb.Evictions || sa.BudgetUsed != sb.BudgetUsed || sb.Evictions == 0 {
		t.Fatalf("stats: turn %+v, commit %+v", sa, sb)
	}
	// Appending keeps the generation.
	before, _ := b.Session("a")
	if _, _, err := commitOn(b, "a", "glue:x", "z"); err != nil {
		t.Fatal(err)
	}
	if after, _ := b.Session("a"); after.Generation != before.Generation {
		t.Fatalf("generation %d, was %d", after.Generation, before.Generation)
	}
	// The committed turn is the session's tail: RevertRun takes it off.
	if !b.RevertRun("a", "glue:x") || len(messagesOf(b, "a")) != len(before.Messages) {
		t.Fatalf("revert: %d messages, want %d", len(messagesOf(b, "a")), len(before.Messages))
	}
}

// Ensure a commit on a session other than the host's mirror changes
// nothing and says so, without an error.
func TestRuntime_Commit_StaleChangesNothing(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	m := &mock.Model{}
	rt := mustRuntime(t, core.Config{Model: m})
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "x"})
	mustComplete(t, rt, core.RunRequest{SessionID: "other", Input: "x"})
	s, _ := rt.Session("s")
	n := len(s.Messages)
	cases := []core.Commit{
		{SessionID: "s", MirrorGen: s.Generation + 1, MirrorLen: n},
		{SessionID: "s", MirrorGen: s.Generation, MirrorLen: n - 1},
		{SessionID: "s", MirrorGen: s.Generation, MirrorLen: n + 1},
		{SessionID: "none", MirrorGen: s.Generation, MirrorLen: n},
		{SessionID: "", MirrorGen: s.Generation, MirrorLen: n},
	}
	want := stateOf(rt)
	for i, c := range cases {
		c.RunID, c.Input, c.Reply = "glue:1", "y", "ok"
		if _, stale, err := rt.Commit(&c); err != nil || !stale {
			t.Fatalf("case %d: %v, stale %v", i, err, stale)
		}
		requireSameState(t, stateOf(rt), want)
	}
	// The same input as the session's last user message: a turn would
	// not append it again.
	mustCommit := func(input string) bool {
		_, stale, err := commitOn(rt, "s", "glue:2", input)
		if err != nil {
			t.Fatal(err)
		}
		return stale
	}
	// A run holding the session.
	m.CompleteFn = mock.Blocking(started, release)
	run, err := rt.Start(bg, core.RunRequest{SessionID: "s", Input: "w", RunID: "host-1"})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	want = stateOf(rt)
	if !mustCommit("y") {
		t.Fatal("a commit on a session a run holds was not stale")
	}
	// The run's id is active: refused.
	if _, _, err := commitOn(rt, "other", run.ID(), "y"); core.AsError(err) == nil || core.AsError(err).Code != core.CodeInvalidArgument {
		t.Fatalf("a commit with an active run's id: %v", err)
	}
	requireSameState(t, stateOf(rt), want)
	close(release)
	if _, err := waitRun(t, run); err != nil {
		t.Fatal(err)
	}
	m.CompleteFn = nil
	if stale := mustCommit("fresh"); stale {
		t.Fatal("a commit on an idle session was stale")
	}
	// A session whose last message is the same user input: a turn would
	// not append it again. A failed turn leaves its seeded history.
	m.CompleteFn = func(core.Context, *core.ModelRequest) (*core.ModelReply, error) { return nil, errors.New("down") }
	if _, err := rt.Execute(bg, core.RunRequest{SessionID: "u", Input: "next", WithHistory: true,
		History: []core.SeedMessage{{Role: core.RoleUser, Content: "q"}}}); err == nil {
		t.Fatal("the failing model's run completed")
	}
	m.CompleteFn = nil
	want = stateOf(rt)
	if _, stale, err := commitOn(rt, "u", "glue:3", "q"); err != nil || !stale {
		t.Fatalf("commit of the last input again: %v, stale %v", err, stale)
	}
	requireSameState(t, stateOf(rt), want)
	if _, stale, err := commitOn(rt, "u", "glue:3", "r"); err != nil || stale {
		t.Fatalf("commit of another input: %v, stale %v", err, stale)
	}
}

// Ensure a commit a limit refuses changes nothing and leaves the
// runtime usable.
func TestRuntime_Commit_LimitsChangeNothing(t *testing.T) {
	turn := cost(1) + cost(2)
	rt := mustRuntime(t, core.Config{Model: okModel(), Limits: core.Limits{
		MaxMessageBytes: 1000, MaxMessagesPerSession: 5, MaxTotalBytes: 3 * turn,
	}})
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "x"})
	mustComplete(t, rt, core.RunRequest{SessionID: "t", Input: "x"})
	want := stateOf(rt)
	s, _ := rt.Session("s")
	for i, c := range []core.Commit{
		{SessionID: "s", RunID: "glue:1", Input: big(1001), Reply: "ok"},    // input over maxMessageBytes
		{SessionID: "s", RunID: "glue:1", Input: "y", Reply: big(1001)},     // reply over maxMessageBytes
		{SessionID: "s", RunID: "glue:1", Input: big(600), Reply: big(600)}, // over the budget, even evicting t
		{SessionID: "s", RunID: "agentrt:1", Input: "y", Reply: "ok"},       // a generated run id
		{SessionID: "s", Input: "y", Reply: "ok"},                           // no run id
	} {
		c.MirrorGen, c.MirrorLen = s.Generation, len(s.Messages)
		_, stale, err := rt.Commit(&c)
		if stale || err == nil {
			t.Fatalf("case %d: %v, stale %v", i, err, stale)
		}
		code := core.AsError(err).Code
		if code != core.CodeLimitExceeded && code != core.CodeInvalidArgument {
			t.Fatalf("case %d: %v", i, err)
		}
		requireSameState(t, stateOf(rt), want)
	}
	// maxMessagesPerSession: 2 messages now, 4 after one commit, and a
	// second would make 6.
	if _, _, err := commitOn(rt, "s", "glue:2", "y"); err != nil {
		t.Fatal(err)
	}
	want = stateOf(rt)
	if _, _, err := commitOn(rt, "s", "glue:3", "z"); core.AsError(err) == nil || core.AsError(err).Code != core.CodeLimitExceeded {
		t.Fatalf("err = %v, want limit_exceeded", err)
	}
	requireSameState(t, stateOf(rt), want)
	if st := rt.Stats(); st.RunsCompleted != 3 || st.RunsFailed != 0 {
		t.Fatalf("stats %+v", st)
	}
	mustComplete(t, rt, core.RunRequest{SessionID: "u", Input: "x"})
	rt.Close()
	if _, _, err := commitOn(rt, "u", "glue:4", "y"); err == nil {
		t.Fatal("a closed runtime committed")
	}
}

func itoa(n int) string { return string(rune('0' + n)) }

func big(n int) string { return strings.Repeat("x", n) }
