package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Ensure `chat --wasi` runs the WASI module: the first process starts
// cold with the file's history, the next turn is a noop, and a second
// process (a new instance) seeds cold again from the file it wrote.
func TestChat_WASI_ColdStartSeedsFromFile(t *testing.T) {
	module := mustChatWasiModule(t)
	dir := t.TempDir()
	hist := filepath.Join(dir, "h.json")
	if err := os.WriteFile(hist, []byte(`[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	o := chatOptions{session: "s", history: hist, module: module, wasi: true}
	run := func(input string) string {
		var stdout, stderr bytes.Buffer
		if err := chat(context.Background(), o, strings.NewReader(input), &stdout, &stderr); err != nil {
			t.Fatalf("chat: %v\n%s", err, stderr.String())
		}
		if stderr.Len() > 0 {
			t.Fatalf("stderr: %s", stderr.String())
		}
		return stdout.String()
	}
	got := run("one\ntwo\n")
	want := "[seed mode=cold seeded=2 skippedSystem=0]\nassistant: echo: one (model received 3 messages)\n" +
		"[seed mode=noop seeded=0 skippedSystem=0]\nassistant: echo: two (model received 5 messages)\n"
	if got != want {
		t.Fatalf("first process:\n%s\nwant\n%s", got, want)
	}
	got = run("three\n")
	want = "[seed mode=cold seeded=6 skippedSystem=0]\nassistant: echo: three (model received 7 messages)\n"
	if got != want {
		t.Fatalf("second process:\n%s\nwant\n%s", got, want)
	}
}

// Ensure `chat --wasi` ends like the jshost path: a refused turn is
// reported on one line with its code and index, is not stored, the next
// turn runs on, and the command fails with the count of failed turns.
func TestChat_WASI_FailedTurnFailsTheCommand(t *testing.T) {
	module := mustChatWasiModule(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	const badHistory = `[{"role":"wizard","content":"x"}]`
	if err := os.WriteFile(bad, []byte(badHistory), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runChatProcess(t, "hi\nagain\n", nil, "--wasi", "--session", "s", "--history", bad, "--module", module)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("chat --wasi with refused turns: got %v, want exit status 1\n%s", err, errOut)
	}
	line := "error: unknown role \"wizard\" [invalid_history] (index 0)\n"
	if out != "" || strings.Count(errOut, line) != 2 {
		t.Errorf("stdout %q stderr %q; want two clean invalid_history errors at index 0", out, errOut)
	}
	if strings.Contains(errOut, "Error:") || !strings.Contains(errOut, "agentrt chat: 2 of 2 turns failed") {
		t.Errorf("stderr %q: want no \"Error:\" and a closing count of failed turns", errOut)
	}
	if b, _ := os.ReadFile(bad); string(b) != badHistory {
		t.Errorf("the refused turns changed the file: %s", b)
	}

	// With a history the module accepts, the command exits 0.
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(`[]`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err = runChatProcess(t, "hi\n", nil, "--wasi", "--session", "s", "--history", good, "--module", module)
	if err != nil || !strings.Contains(out, "assistant: echo: hi") || errOut != "" {
		t.Fatalf("a good turn: err %v, stdout %q, stderr %q", err, out, errOut)
	}
}
