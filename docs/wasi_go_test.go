package docs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/internal/build"
)

// fenced returns the first fenced block of text with the info string
// lang after the first occurrence of after, or fails.
func fenced(t *testing.T, text, after, lang, doc string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, after)
	if !ok {
		t.Fatalf("%s has no %q", doc, after)
	}
	_, code, ok := strings.Cut(rest, "```"+lang+"\n")
	if ok {
		code, _, ok = strings.Cut(code, "```")
	}
	if !ok {
		t.Fatalf("%s has no ```%s block after %q", doc, lang, after)
	}
	return code
}

// Ensure the Go program of docs/wasi.md ("From Go: wasihost") runs as
// the docs say, in a module of its own that depends on this checkout by
// the replace directive README.md gives ("Using it from Go"), after the
// `go mod tidy` README tells to run, with the built WASI module in its
// dist/.
func TestWasiDoc_GoProgramRuns(t *testing.T) {
	root := repoRoot(t)
	dist := builtDist(t, root)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	wasiDoc, err := os.ReadFile(filepath.Join(root, "docs", "wasi.md"))
	if err != nil {
		t.Fatal(err)
	}
	gomod := fenced(t, string(readme), "## Using it from Go", "text", "README.md")
	if !strings.Contains(gomod, "replace github.com/agentrt/agentrt => ../agentrt") {
		t.Fatalf("README's go.mod lines have no replace directive to ../agentrt:\n%s", gomod)
	}
	program := fenced(t, string(wasiDoc), "## From Go: `wasihost`", "go", "docs/wasi.md")

	dir := t.TempDir()
	gomod = "module example.com/wasiapp\n\ngo 1.26\n\n" + strings.ReplaceAll(gomod, "../agentrt", root)
	for name, text := range map[string]string{"go.mod": gomod, "main.go": program} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The checkout's go.sum: the hashes `go mod tidy` would fetch.
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(filepath.Join(dist, build.WasiModuleName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dist", build.WasiModuleName), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	gocmd := func(args ...string) string {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		// Offline: the checkout's dependencies are in the module cache
		// and their hashes in its go.sum.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	gocmd("mod", "tidy")
	got := gocmd("run", ".")
	want := "noop: echo: hello (model received 1 messages)\nnoop: echo: and now? (model received 3 messages)\n"
	if got != want {
		t.Fatalf("the program printed\n%s\nwant (as docs/wasi.md says)\n%s", got, want)
	}
	for _, line := range strings.Split(strings.TrimSpace(want), "\n") {
		if !strings.Contains(string(wasiDoc), "`"+line+"`") {
			t.Errorf("docs/wasi.md does not say it prints %q", line)
		}
	}
}
