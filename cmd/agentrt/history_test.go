package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// engines are the two modules chat runs, each with its module built.
func engines(t *testing.T) map[string]chatOptions {
	t.Helper()
	return map[string]chatOptions{
		"jshost": {module: mustChatModule(t)},
		"wasi":   {module: mustChatWasiModule(t), wasi: true},
	}
}

// runChat runs chat in this process with o and input, and returns what
// it printed and its error.
func runChatWith(o chatOptions, input io.Reader) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	err = chat(context.Background(), o, input, &out, &errb)
	return out.String(), errb.String(), err
}

// unanswered is a history whose tool call has no result: refused without
// policy.repair, repaired with it.
const unanswered = `[{"content":"add 2 and 3","role":"user","id":"u1"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"add","arguments":"{}"}]}]`

// Ensure --repair makes a history with an unanswered tool call usable on
// both modules: refused without it (invalid_history at the call, nothing
// stored), repaired with it (the seed line names the repair, the turn is
// stored), and the file it leaves works for the next process. When the
// file is healed with the seed's repaired copy: the next process seeds it
// without --repair.
func TestChat_Repair(t *testing.T) {
	for name, o := range engines(t) {
		t.Run(name, func(t *testing.T) {
			o.session, o.history = "s", filepath.Join(t.TempDir(), "h.json")
			if err := os.WriteFile(o.history, []byte(unanswered), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, err := runChatWith(o, strings.NewReader("hi\n"))
			if err == nil || out != "" || !strings.Contains(errOut, `error: tool call "c1" has no tool result before the next user or assistant message [invalid_history] (index 1)`) {
				t.Fatalf("without --repair: err %v, stdout %q, stderr %q; want a refusal at index 1", err, out, errOut)
			}
			if b, _ := os.ReadFile(o.history); string(b) != unanswered {
				t.Fatalf("the refused turn changed the file: %s", b)
			}

			o.repair = true
			out, errOut, err = runChatWith(o, strings.NewReader("hi\nagain\n"))
			want := "[seed mode=cold seeded=3 skippedSystem=0 repairs=missing_tool_result@1]\nassistant: echo: hi (model received 4 messages)\n" +
				"[seed mode=noop seeded=0 skippedSystem=0]\nassistant: echo: again (model received 6 messages)\n"
			if err != nil || out != want {
				t.Fatalf("with --repair: err %v, stderr %q, stdout\n%s\nwant\n%s", err, errOut, out, want)
			}
			b, err := os.ReadFile(o.history)
			if err != nil {
				t.Fatal(err)
			}
			out, errOut, err = runChatWith(o, strings.NewReader("three\n"))
			if err != nil || !strings.HasPrefix(out, "[seed mode=cold") || !strings.Contains(out, "assistant: echo: three (model received 8 messages)") {
				t.Fatalf("the next process with --repair: err %v, stdout %q, stderr %q", err, out, errOut)
			}
			if !bytes.Contains(b, []byte(core.InterruptedToolResult)) {
				t.Fatalf("the repaired turn left the file unhealed: %s", b)
			}
			o.repair = false
			out, errOut, err = runChatWith(o, strings.NewReader("four\n"))
			if err != nil || !strings.HasPrefix(out, "[seed mode=cold seeded=9 skippedSystem=0]\n") {
				t.Fatalf("the healed file without --repair: err %v, stdout %q, stderr %q", err, out, errOut)
			}
		})
	}
}

// lineReader returns one line per Read, calling before(i) before it
// returns line i: chat has finished the turns before it by then.
type lineReader struct {
	lines  []string
	before func(i int)
	i      int
}

func (r *lineReader) Read(p []byte) (int, error) {
	if r.i == len(r.lines) {
		return 0, io.EOF
	}
	r.before(r.i)
	n := copy(p, r.lines[r.i]+"\n")
	r.i++
	return n, nil
}

// Ensure --seed-mode reconcile brings a warm session up to date with
// turns another process added to the file, on both modules, and that
// if-empty (the default) leaves it as it is.
func TestChat_SeedModeReconcile(t *testing.T) {
	for name, o := range engines(t) {
		t.Run(name, func(t *testing.T) {
			for mode, want := range map[string]string{
				"reconcile": "[seed mode=appended seeded=2 skippedSystem=0]\nassistant: echo: two (model received 5 messages)\n",
				"if-empty":  "[seed mode=noop seeded=0 skippedSystem=0]\nassistant: echo: two (model received 3 messages)\n",
			} {
				o.session, o.history, o.seedMode = "s", filepath.Join(t.TempDir(), "h.json"), mode
				in := &lineReader{lines: []string{"one", "two"}, before: func(i int) {
					if i != 1 {
						return
					}
					// Another process (a second window) stored a turn.
					h, err := readHistory(o.history)
					if err != nil {
						t.Error(err)
						return
					}
					h.append([]core.SeedMessage{{Role: core.RoleUser, Content: "elsewhere"}, {Role: core.RoleAssistant, Content: "noted"}})
					if err := h.write(); err != nil {
						t.Error(err)
					}
				}}
				out, errOut, err := runChatWith(o, in)
				first := "[seed mode=noop seeded=0 skippedSystem=0]\nassistant: echo: one (model received 1 messages)\n"
				if err != nil || out != first+want {
					t.Errorf("--seed-mode %s: err %v, stderr %q, stdout\n%s\nwant\n%s", mode, err, errOut, out, first+want)
				}
			}
		})
	}
}

// Ensure the history file keeps the host's key order when chat rewrites
// it: the file's messages are written back as they were, only indented,
// and the messages chat adds have role, content, then the rest.
func TestChat_HistoryKeepsKeyOrder(t *testing.T) {
	o := chatOptions{module: mustChatModule(t), session: "s", history: filepath.Join(t.TempDir(), "h.json")}
	host := `[{"id":"u1","content":"hello","role":"user","meta":{"z":1,"a":2}},{"parts":[{"type":"text","text":"hi"}],"role":"assistant","id":"a1"}]`
	if err := os.WriteFile(o.history, []byte(host), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := runChatWith(o, strings.NewReader("next\n")); err != nil {
		t.Fatalf("chat: %v\n%s", err, errOut)
	}
	b, err := os.ReadFile(o.history)
	if err != nil {
		t.Fatal(err)
	}
	want := `[
  {
    "id": "u1",
    "content": "hello",
    "role": "user",
    "meta": {
      "z": 1,
      "a": 2
    }
  },
  {
    "parts": [
      {
        "type": "text",
        "text": "hi"
      }
    ],
    "role": "assistant",
    "id": "a1"
  },
  {
    "role": "user",
    "content": "next"
  },
  {
    "role": "assistant",
    "content": "echo: next (model received 3 messages)"
  }
]
`
	if string(b) != want {
		t.Fatalf("the file is\n%s\nwant\n%s", b, want)
	}
}

// Ensure heal writes the healed copy a module returns: the messages it
// keeps as the file had them (key order and all), the ones it dropped
// gone, the new ones (a repair's marker) with their keys in keyOrder; and
// that it refuses a healed copy that is not a history, leaving h as it
// was.
func TestHistoryFile_Heal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.json")
	const file = `[{"content":"add","role":"user"},{"role":"assistant","content":"","tool_calls":[{"name":"add","id":"c1","arguments":"{}"}]},{"tool_call_id":"zz","role":"tool","content":"orphan"},{"content":"next","role":"user"}]`
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := readHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	marker := map[string]any{"content": core.InterruptedToolResult, "tool_call_id": "c1", "role": "tool"}
	if err := h.heal([]any{h.values[0], h.values[1], marker, h.values[3]}); err != nil {
		t.Fatal(err)
	}
	if err := h.write(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := `[
  {
    "content": "add",
    "role": "user"
  },
  {
    "role": "assistant",
    "content": "",
    "tool_calls": [
      {
        "name": "add",
        "id": "c1",
        "arguments": "{}"
      }
    ]
  },
  {
    "role": "tool",
    "content": "` + core.InterruptedToolResult + `",
    "tool_call_id": "c1"
  },
  {
    "content": "next",
    "role": "user"
  }
]
`
	if string(b) != want {
		t.Fatalf("healed file\n%s\nwant\n%s", b, want)
	}
	if len(h.seed) != 4 || h.seed[2].Role != core.RoleTool || h.seed[2].ToolCallID != "c1" {
		t.Fatalf("healed seed = %+v", h.seed)
	}

	before := append([]byte{}, b...)
	if err := h.heal([]any{map[string]any{"role": "user", "content": 5.0}}); err == nil || !strings.Contains(err.Error(), "content must be") {
		t.Fatalf("a healed copy of the wrong shape: got %v, want a refusal", err)
	}
	if err := h.write(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, before) {
		t.Fatalf("a refused healed copy changed the file:\n%s", b)
	}
}

// Ensure a turn stored by chat keeps the history file's mode: a 0600 file
// (a conversation its owner keeps private) stays 0600, where the
// temporary file chat renames over it was created 0644. A 0640 one stays
// 0640, and a temporary file left behind by a killed process with mode
// 0666 does not lend the file its mode.
func TestChat_HistoryKeepsMode(t *testing.T) {
	o := chatOptions{module: mustChatWasiModule(t), wasi: true, session: "s"}
	for _, perm := range []os.FileMode{0o600, 0o640} {
		o.history = filepath.Join(t.TempDir(), "h.json")
		if err := os.WriteFile(o.history, []byte(`[{"role":"user","content":"hello"},{"role":"assistant","content":"hi"}]`), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(o.history, perm); err != nil { // past the umask
			t.Fatal(err)
		}
		if err := os.WriteFile(o.history+".tmp", []byte("stale"), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(o.history+".tmp", 0o666); err != nil {
			t.Fatal(err)
		}
		if _, errOut, err := runChatWith(o, strings.NewReader("again\n")); err != nil {
			t.Fatalf("%v: %v %s", perm, err, errOut)
		}
		fi, err := os.Stat(o.history)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != perm {
			t.Errorf("history file of mode %v is %v after a turn", perm, fi.Mode().Perm())
		}
		if h, err := readHistory(o.history); err != nil || len(h.raw) != 4 {
			t.Fatalf("%v: the turn was not stored: %v", perm, err)
		}
		if _, err := os.Stat(o.history + ".tmp"); !os.IsNotExist(err) {
			t.Errorf("%v: the temporary file is left: %v", perm, err)
		}
	}
}

// Ensure the history is synced to storage before it replaces the file:
// the temporary file's bytes are synced while the file still holds the
// old history, and the directory after the rename, when the file holds
// the new one. A new file is created 0644 less the umask.
func TestHistoryFile_WriteSyncsBeforeRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "h.json")
	const old = `[{"role":"user","content":"hello"}]`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := readHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.append([]core.SeedMessage{{Role: core.RoleAssistant, Content: "hi"}}); err != nil {
		t.Fatal(err)
	}
	type sync struct{ name, file string }
	var syncs []sync
	defer func(f func(string, *os.File) error) { syncFile = f }(syncFile)
	syncFile = func(name string, f *os.File) error {
		b, _ := os.ReadFile(path)
		syncs = append(syncs, sync{name, string(b)})
		return f.Sync()
	}
	if err := h.write(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if len(syncs) != 2 || syncs[0].name != path+".tmp" || syncs[0].file != old ||
		syncs[1].name != dir || syncs[1].file != string(b) || !strings.Contains(syncs[1].file, `"hi"`) {
		t.Fatalf("syncs = %q, want the temporary file while the file is old, then the directory when it is new", syncs)
	}

	// A failed sync leaves the file as it was and no temporary file.
	syncFile = func(string, *os.File) error { return os.ErrInvalid }
	if err := h.append([]core.SeedMessage{{Role: core.RoleUser, Content: "lost"}}); err != nil {
		t.Fatal(err)
	}
	if err := h.write(); err == nil {
		t.Fatal("a failed sync: write returned nil")
	}
	if now, _ := os.ReadFile(path); string(now) != string(b) {
		t.Fatalf("a failed sync changed the file:\n%s", now)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("a failed sync left the temporary file: %v", err)
	}

	// A new file: 0644 less the umask (never wider).
	syncFile = func(string, *os.File) error { return nil }
	fresh := &historyFile{path: filepath.Join(dir, "new.json")}
	if err := fresh.write(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh.path); err != nil || fi.Mode().Perm()&^0o644 != 0 {
		t.Fatalf("a new history file: %v, %v", fi, err)
	}
}
