package wazero_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/jshost"
)

// headsCorpus is testdata/edges/heads.json.
type headsCorpus struct {
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

// diverged awaits the run method's Promise, which must reject, and returns
// its code, and the head and missing of its Error (nil when absent).
func diverged(t *testing.T, in *jshost.Instance, rt jshost.Value, method string, args ...any) (code string, head, missing any) {
	t.Helper()
	v, err := in.CallAsync(context.Background(), rt, method, args...)
	var ex *jshost.Exception
	if !errors.As(err, &ex) {
		t.Fatalf("%s: %v, %v; want a rejection", method, in.Export(v), err)
	}
	return ex.Code, in.Export(in.Get(ex.Value, "head")), in.Export(in.Get(ex.Value, "missing"))
}

// The head corpus (testdata/edges/heads.json) through the module's
// syscall/js API under wazero: each shape's checkHistory has the
// corpus's head, each prefix's head is refused history_diverged with the
// messages after it as missing and no session made, each edit's head
// without missing; a run on the corpus's head runs, its result's head
// the session's.
func TestEdges_HeadsSyscallJS(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "edges", "heads.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c headsCorpus
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Shapes) != 3 || len(c.Prefixes) == 0 || len(c.Edits) == 0 {
		t.Fatalf("corpus of %d shapes, %d prefixes, %d edits", len(c.Shapes), len(c.Prefixes), len(c.Edits))
	}
	in := mustInstance(t, nil)
	ctx := context.Background()
	rt := mustRuntime(t, in, "agentrt", nil)
	parse := func(raw json.RawMessage) jshost.Value {
		v, err := in.Call(ctx, in.Global("JSON"), "parse", string(raw))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	check := func(h jshost.Value) any {
		v, err := in.Call(ctx, rt, "checkHistory", h)
		if err != nil {
			t.Fatal(err)
		}
		return get(in.Export(v), "head")
	}
	for name, raw := range c.Shapes {
		if h := check(parse(raw)); h != c.Head {
			t.Errorf("%s: checkHistory head %v, want %s", name, h, c.Head)
		}
	}
	var module []any
	if err := json.Unmarshal(c.Shapes["module"], &module); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Prefixes {
		head := any(p.Head)
		if p.Head == "" {
			head = check(parse(mustJSON(t, module[:p.Messages])))
		}
		code, got, missing := diverged(t, in, rt, "startRunWithHistory", "s", "next", parse(c.Shapes["module"]), map[string]any{"ifHead": head})
		list, _ := missing.([]any)
		if code != "history_diverged" || got != c.Head || len(list) != p.Missing {
			t.Errorf("prefix %d: %s, head %v, missing %v; want history_diverged, %s, %d messages", p.Messages, code, got, missing, c.Head, p.Missing)
			continue
		}
		for i, m := range list {
			want := module[p.Messages+i]
			if get(m, "role") != get(want, "role") || get(m, "content") != get(want, "content") {
				t.Errorf("prefix %d: missing[%d] is %v, want %v", p.Messages, i, m, want)
			}
		}
		if s, _ := in.Call(ctx, rt, "getSession", "s"); s != jshost.Null {
			t.Errorf("prefix %d: a refused run made a session", p.Messages)
		}
	}
	for _, ed := range c.Edits {
		code, head, missing := diverged(t, in, rt, "startRunWithHistory", "s", "next", parse(ed.History), map[string]any{"ifHead": c.Head})
		if code != "history_diverged" || head != check(parse(ed.History)) || missing != nil {
			t.Errorf("edit %s: %s, head %v, missing %v; want history_diverged with the edit's head and no missing", ed.Name, code, head, missing)
		}
	}
	if h := check(parse(c.Awaiting.History)); h != c.Awaiting.Head {
		t.Errorf("awaiting: head %v, want %s", h, c.Awaiting.Head)
	}
	v, err := in.CallAsync(ctx, rt, "startRunWithHistory", "s", "next", parse(c.Shapes["uimessage"]), map[string]any{"ifHead": c.Head})
	if err != nil {
		t.Fatalf("a run on the corpus's head: %v", err)
	}
	s, _ := in.Call(ctx, rt, "getSession", "s")
	if h := get(in.Export(v), "head"); h == nil || h != get(in.Export(s), "head") {
		t.Errorf("result head %v, session head %v", h, get(in.Export(s), "head"))
	}
}

// A stale ifHead on the syscall/js API is refused history_diverged with
// head and missing and changes nothing; a head of the wrong type, or a
// string that is not a head, is invalid_argument.
func TestRefusal_IfHeadSyscallJS(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	rt := mustRuntime(t, in, "agentrt", nil)
	session := func() any {
		s, err := in.Call(ctx, rt, "getSession", "h")
		if err != nil {
			t.Fatal(err)
		}
		return in.Export(s)
	}
	if _, err := in.CallAsync(ctx, rt, "startRun", "h", "one"); err != nil {
		t.Fatal(err)
	}
	h1 := get(session(), "head")
	v, err := in.CallAsync(ctx, rt, "startRun", "h", "two", map[string]any{"ifHead": h1})
	if err != nil {
		t.Fatal(err)
	}
	before := session()
	if h, ok := get(in.Export(v), "head").(string); !ok || h != get(before, "head") || h == h1 {
		t.Fatalf("result head %v, session head %v, first head %v", get(in.Export(v), "head"), get(before, "head"), h1)
	}
	msgs, _ := get(before, "messages").([]any)
	for _, method := range []string{"startRun", "startRunWithHistory"} {
		args := []any{"h", "stale", map[string]any{"ifHead": h1}}
		if method == "startRunWithHistory" {
			args = []any{"h", "stale", msgs[:2], map[string]any{"ifHead": h1}}
		}
		code, head, missing := diverged(t, in, rt, method, args...)
		if code != "history_diverged" || head != get(before, "head") || !reflect.DeepEqual(missing, msgs[2:]) {
			t.Errorf("%s: %s, head %v, missing %v; want history_diverged, %v, %v", method, code, head, missing, get(before, "head"), msgs[2:])
		}
		if after := session(); !reflect.DeepEqual(after, before) {
			t.Errorf("%s: a refused run changed the session: %v, was %v", method, after, before)
		}
	}
	for _, bad := range []any{"", "not a head", "h1-AAAAAAAAAAAAAAAAAAAAA", 42, true, map[string]any{}} {
		if code, _, _ := diverged(t, in, rt, "startRun", "h", "x", map[string]any{"ifHead": bad}); code != "invalid_argument" {
			t.Errorf("ifHead %#v: %s, want invalid_argument", bad, code)
		}
	}
	if after := session(); !reflect.DeepEqual(after, before) {
		t.Errorf("a refused ifHead changed the session: %v, was %v", after, before)
	}
	mustServe(t, in, rt, "after")
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
