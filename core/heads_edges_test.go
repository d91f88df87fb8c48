package core_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// headCorpus is testdata/edges/heads.json.
type headCorpus struct {
	Shapes   map[string]json.RawMessage `json:"shapes"`
	Head     string                     `json:"head"`
	Prefixes []struct {
		Messages int    `json:"messages"`
		Head     string `json:"head"`
		Missing  int    `json:"missing"`
	} `json:"prefixes"`
	Edits []struct {
		Name    string          `json:"name"`
		History json.RawMessage `json:"history"`
	} `json:"edits"`
	Awaiting struct {
		History json.RawMessage `json:"history"`
		Head    string          `json:"head"`
	} `json:"awaiting"`
}

func readHistory(t *testing.T, raw json.RawMessage) []core.SeedMessage {
	t.Helper()
	v, err := hostjson.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hostmsg.Messages(v, 0)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The head corpus in Go: one conversation in three shapes has the one
// head the corpus names, an edit anywhere another; a prefix's head is
// found in the chain with the messages after it as missing.
func TestEdges_Heads(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "edges", "heads.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c headCorpus
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Shapes) != 3 {
		t.Fatalf("%d shapes", len(c.Shapes))
	}
	for name, raw := range c.Shapes {
		h := readHistory(t, raw)
		if got := core.HistoryHead(h); got != c.Head {
			t.Errorf("%s: head %s, want %s", name, got, c.Head)
		}
		if got := core.CheckHistory(h, core.Limits{}).Head; got != c.Head {
			t.Errorf("%s: check head %s, want %s", name, got, c.Head)
		}
	}
	module := readHistory(t, c.Shapes["module"])
	for _, p := range c.Prefixes {
		head := core.HistoryHead(module[:p.Messages])
		if p.Head != "" && head != p.Head {
			t.Errorf("prefix %d: head %s, want %s", p.Messages, head, p.Head)
		}
		rt := mustRuntime(t, core.Config{})
		_, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "next", History: module, WithHistory: true, IfHead: head})
		e := core.AsError(err)
		if e == nil || e.Code != core.CodeHistoryDiverged || e.Head != c.Head || len(e.Missing) != p.Missing ||
			!reflect.DeepEqual(e.Missing, asMessages(module[p.Messages:])) {
			t.Errorf("prefix %d: %v, missing %d", p.Messages, err, len(e.Missing))
		}
		if len(rt.ListSessions()) != 0 {
			t.Errorf("prefix %d: a refused run created a session", p.Messages)
		}
	}
	for _, ed := range c.Edits {
		h := readHistory(t, ed.History)
		if core.HistoryHead(h) == c.Head {
			t.Errorf("edit %s: the head did not change", ed.Name)
		}
		rt := mustRuntime(t, core.Config{})
		_, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "next", History: h, WithHistory: true, IfHead: c.Head})
		if e := core.AsError(err); e == nil || e.Code != core.CodeHistoryDiverged || e.Missing != nil {
			t.Errorf("edit %s: %v", ed.Name, err)
		}
	}
	if got := core.HistoryHead(readHistory(t, c.Awaiting.History)); got != c.Awaiting.Head {
		t.Errorf("awaiting: head %s, want %s", got, c.Awaiting.Head)
	}
}
