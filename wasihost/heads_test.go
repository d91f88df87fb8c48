package wasihost

import (
	"context"
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
)

// A run whose IfHead is stale is refused history_diverged with the
// current head and the messages the caller lacks, and changes nothing;
// one with the current head runs; one with a head the conversation never
// had is refused without missing.
func TestRuntime_IfHeadRefused(t *testing.T) {
	rt := mustRuntime(t, mustInstance(t), Config{})
	ctx := context.Background()
	r1, err := rt.Run(ctx, core.RunRequest{SessionID: "h", Input: "one"})
	if err != nil {
		t.Fatal(err)
	}
	h1 := r1.Head()
	r2, err := rt.Run(ctx, core.RunRequest{SessionID: "h", Input: "two", IfHead: h1})
	if err != nil || r2.Status != "completed" {
		t.Fatalf("a run with the current head: %v %v", r2, err)
	}
	h2 := r2.Head()
	before, _, _ := rt.Session("h")
	if before.Head != h2 || h2 == h1 {
		t.Fatalf("session head %s, result heads %s then %s", before.Head, h1, h2)
	}
	_, err = rt.Run(ctx, core.RunRequest{SessionID: "h", Input: "stale", IfHead: h1})
	e := core.AsError(err)
	if e == nil || e.Code != core.CodeHistoryDiverged || e.Head != h2 {
		t.Fatalf("a stale head: %v (head %q), want history_diverged with head %s", err, headOf(e), h2)
	}
	if !reflect.DeepEqual(e.Missing, before.Messages[2:]) {
		t.Fatalf("missing %+v, want %+v", e.Missing, before.Messages[2:])
	}
	after, _, _ := rt.Session("h")
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("a refused run changed the session: %+v, was %+v", after, before)
	}
	_, err = rt.Run(ctx, core.RunRequest{SessionID: "h", Input: "x", IfHead: "h1-AAAAAAAAAAAAAAAAAAAAAA"})
	if e := core.AsError(err); e == nil || e.Code != core.CodeHistoryDiverged || e.Head != h2 || e.Missing != nil {
		t.Fatalf("an unknown head: %v", err)
	}
	_, err = rt.Run(ctx, core.RunRequest{SessionID: "h", Input: "x", IfHead: "not a head"})
	if core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Fatalf("a malformed head: %v, want invalid_argument", err)
	}
	if s, _, _ := rt.Session("h"); !reflect.DeepEqual(s, before) {
		t.Fatal("a refused run changed the session")
	}
	// A new session's head is the empty conversation's: a run that names
	// another is refused, and no session is created.
	_, err = rt.Run(ctx, core.RunRequest{SessionID: "new", Input: "x", IfHead: h2})
	if e := core.AsError(err); e == nil || e.Code != core.CodeHistoryDiverged {
		t.Fatalf("a head on a new session: %v", err)
	}
	if _, ok, err := rt.Session("new"); ok || err != nil {
		t.Fatalf("a refused run made a session (%v, %v)", ok, err)
	}
}

func headOf(e *core.Error) string {
	if e == nil {
		return ""
	}
	return e.Head
}

// The head corpus (testdata/edges/heads.json) through the module: each
// shape's history check has the corpus's head, each prefix's head is
// refused history_diverged with the messages after it as missing and no
// session created, each edit's head without missing.
func TestEdges_Heads(t *testing.T) {
	c := contract.MustLoadHeads(t)
	in := mustInstance(t)
	ctx := context.Background()
	rt := mustRuntime(t, in, Config{})
	for name, raw := range c.Shapes {
		chk, err := rt.CheckHistory(contract.ReadHistory(t, raw))
		if err != nil || chk.Head != c.Head {
			t.Errorf("%s: check %v %v, want head %s", name, chk, err, c.Head)
		}
	}
	module := c.Module(t)
	for _, p := range c.Prefixes {
		_, err := rt.Run(ctx, core.RunRequest{SessionID: "s", Input: "next", History: module, WithHistory: true, IfHead: c.PrefixHead(t, p)})
		e := core.AsError(err)
		want := c.Missing(t, p)
		if e == nil || e.Code != core.CodeHistoryDiverged || e.Head != c.Head || len(e.Missing) != p.Missing ||
			!reflect.DeepEqual(e.Missing, want) {
			t.Errorf("prefix %d: %v, missing %+v, want %+v", p.Messages, err, missingOf(e), want)
		}
		if ids, _ := rt.ListSessions(); len(ids) != 0 {
			t.Errorf("prefix %d: a refused run created a session", p.Messages)
		}
	}
	for _, ed := range c.Edits {
		_, err := rt.Run(ctx, core.RunRequest{SessionID: "s", Input: "next", History: contract.ReadHistory(t, ed.History), WithHistory: true, IfHead: c.Head})
		if e := core.AsError(err); e == nil || e.Code != core.CodeHistoryDiverged || e.Missing != nil {
			t.Errorf("edit %s: %v", ed.Name, err)
		}
	}
	if chk, err := rt.CheckHistory(contract.ReadHistory(t, c.Awaiting.History)); err != nil || chk.Head != c.Awaiting.Head {
		t.Errorf("awaiting: %v %v, want head %s", chk, err, c.Awaiting.Head)
	}
	// The current head runs, seeding the session from the history.
	res, err := rt.Run(ctx, core.RunRequest{SessionID: "s", Input: "next", History: module, WithHistory: true, IfHead: c.Head})
	if err != nil || res.Status != "completed" {
		t.Fatalf("the current head: %v %v", res, err)
	}
}

func missingOf(e *core.Error) []core.Message {
	if e == nil {
		return nil
	}
	return e.Missing
}
