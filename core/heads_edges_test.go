package core_test

import (
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
)

// The head corpus in Go: one conversation in three shapes has the one
// head the corpus names, an edit anywhere another; a prefix's head is
// found in the chain with the messages after it as missing.
func TestEdges_Heads(t *testing.T) {
	c := contract.MustLoadHeads(t)
	for name, raw := range c.Shapes {
		h := contract.ReadHistory(t, raw)
		if got := core.HistoryHead(h); got != c.Head {
			t.Errorf("%s: head %s, want %s", name, got, c.Head)
		}
		if got := core.CheckHistory(h, core.Limits{}).Head; got != c.Head {
			t.Errorf("%s: check head %s, want %s", name, got, c.Head)
		}
	}
	module := c.Module(t)
	for _, p := range c.Prefixes {
		head := core.HistoryHead(module[:p.Messages])
		if p.Head != "" && head != p.Head {
			t.Errorf("prefix %d: head %s, want %s", p.Messages, head, p.Head)
		}
		rt := mustRuntime(t, core.Config{})
		_, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "next", History: module, WithHistory: true, IfHead: head})
		e := core.AsError(err)
		if e == nil || e.Code != core.CodeHistoryDiverged || e.Head != c.Head || len(e.Missing) != p.Missing ||
			!reflect.DeepEqual(e.Missing, c.Missing(t, p)) {
			t.Errorf("prefix %d: %v", p.Messages, err)
		}
		if len(rt.ListSessions()) != 0 {
			t.Errorf("prefix %d: a refused run created a session", p.Messages)
		}
	}
	for _, ed := range c.Edits {
		h := contract.ReadHistory(t, ed.History)
		if core.HistoryHead(h) == c.Head {
			t.Errorf("edit %s: the head did not change", ed.Name)
		}
		rt := mustRuntime(t, core.Config{})
		_, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "next", History: h, WithHistory: true, IfHead: c.Head})
		if e := core.AsError(err); e == nil || e.Code != core.CodeHistoryDiverged || e.Missing != nil {
			t.Errorf("edit %s: %v", ed.Name, err)
		}
	}
	if got := core.HistoryHead(contract.ReadHistory(t, c.Awaiting.History)); got != c.Awaiting.Head {
		t.Errorf("awaiting: head %s, want %s", got, c.Awaiting.Head)
	}
}
