package contract

import (
	"encoding/json"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// Heads is the head corpus, testdata/edges/heads.json
// (docs/adr/0025-conversation-heads.md): one conversation in the three
// host shapes and its head, prefixes of it with the messages each lacks,
// edits that change the head, and a history awaiting approval with its
// own head. Every Go edge's head test (core, wasihost, HTTP) reads it
// through MustLoadHeads.
type Heads struct {
	// Shapes holds the conversation in each host shape, by name:
	// "module", "openai" and "uimessage".
	Shapes map[string]json.RawMessage `json:"shapes"`
	// Head is the conversation's head, the same in every shape.
	Head string `json:"head"`
	// Prefixes are heads of earlier states of the conversation.
	Prefixes []HeadPrefix `json:"prefixes"`
	// Edits are histories that differ from the conversation in one place,
	// so their heads differ from Head.
	Edits []HeadEdit `json:"edits"`
	// Awaiting is a history whose last tool call awaits approval, with
	// its head.
	Awaiting HeadHistory `json:"awaiting"`
}

// HeadPrefix is a prefix of the conversation's module shape.
type HeadPrefix struct {
	// Messages is how many messages of the module shape the prefix holds.
	Messages int `json:"messages"`
	// Head is the prefix's head, or "" where the corpus leaves it to be
	// computed (core.HistoryHead of the prefix).
	Head string `json:"head"`
	// Missing is how many messages a run with the prefix's head as
	// ifHead is told it lacks: those after the prefix.
	Missing int `json:"missing"`
}

// HeadEdit is a named edit of the conversation.
type HeadEdit struct {
	// Name says what the edit changes.
	Name string `json:"name"`
	// History is the edited conversation, as JSON.
	History json.RawMessage `json:"history"`
}

// HeadHistory is a history and its head.
type HeadHistory struct {
	// History is the history, as JSON.
	History json.RawMessage `json:"history"`
	// Head is its head.
	Head string `json:"head"`
}

// MustLoadHeads reads testdata/edges/heads.json. It fails t when it
// cannot, or when the corpus lacks one of the three shapes, a prefix or
// an edit, so that no edge's test passes on an empty corpus.
func MustLoadHeads(t testing.TB) *Heads {
	t.Helper()
	var h Heads
	f := mustDecodeEdges(t, "heads.json", &h)
	for _, s := range []string{"module", "openai", "uimessage"} {
		if len(h.Shapes[s]) == 0 {
			t.Fatalf("%s has no %s shape", f, s)
		}
	}
	if len(h.Shapes) != 3 || h.Head == "" || len(h.Prefixes) == 0 || len(h.Edits) == 0 || h.Awaiting.Head == "" {
		t.Fatalf("%s: %d shapes, head %q, %d prefixes, %d edits, awaiting head %q",
			f, len(h.Shapes), h.Head, len(h.Prefixes), len(h.Edits), h.Awaiting.Head)
	}
	return &h
}

// ReadHistory reads a history in any host shape as a Go host reads its
// stored messages (hostjson, then hostmsg), failing t when it cannot.
func ReadHistory(t testing.TB, raw json.RawMessage) []core.SeedMessage {
	t.Helper()
	v, err := hostjson.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hostmsg.Messages(v, 0)
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	return h
}

// Module returns the conversation's module shape, read by ReadHistory.
func (h *Heads) Module(t testing.TB) []core.SeedMessage {
	t.Helper()
	return ReadHistory(t, h.Shapes["module"])
}

// PrefixJSON returns the first p.Messages messages of the module shape
// as a JSON array, as a host that stores them sends them.
func (h *Heads) PrefixJSON(t testing.TB, p HeadPrefix) json.RawMessage {
	t.Helper()
	var module []json.RawMessage
	if err := json.Unmarshal(h.Shapes["module"], &module); err != nil {
		t.Fatal(err)
	}
	if p.Messages > len(module) {
		t.Fatalf("a prefix of %d messages of %d", p.Messages, len(module))
	}
	b, err := json.Marshal(module[:p.Messages])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// PrefixHead returns p's head: the corpus's, or where it gives none,
// core.HistoryHead of the prefix.
func (h *Heads) PrefixHead(t testing.TB, p HeadPrefix) string {
	t.Helper()
	if p.Head != "" {
		return p.Head
	}
	return core.HistoryHead(h.Module(t)[:p.Messages])
}

// Missing returns the messages a run with p's head as ifHead lacks: the
// module shape's messages after the prefix, as core stores them (system
// messages left out, as a seed leaves them out).
func (h *Heads) Missing(t testing.TB, p HeadPrefix) []core.Message {
	t.Helper()
	var out []core.Message
	for _, m := range h.Module(t)[p.Messages:] {
		if m.Role != core.RoleSystem {
			out = append(out, m.Message())
		}
	}
	return out
}
