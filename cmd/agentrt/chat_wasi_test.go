package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/internal/build"
)

// Ensure `chat --wasi` runs the WASI module: the first process starts
// cold with the file's history, the next turn is a noop, and a second
// process (a new instance) seeds cold again from the file it wrote.
func TestChat_WASI_ColdStartSeedsFromFile(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("go toolchain not found")
		}
		t.Skip("go toolchain not found: cannot build the module")
	}
	root, err := build.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	module := filepath.Join(dir, build.WasiModuleName)
	if err := build.WasiModule(context.Background(), root, build.WasiPkg, module); err != nil {
		t.Fatal(err)
	}
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
