//go:build !js

package workerd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// docExample is one curl command of docs/worker.md and the answer the doc
// shows under it: JSON fragments, "..." where it leaves parts out.
// start, when set, is the `agentrt worker` command of the ```sh block that
// begins with it: the worker the example runs against is (re)started with
// that command's deployment before it.
type docExample struct {
	command string
	answer  []string
	start   string
}

// workerDocExamples reads the curl commands of docs/worker.md's ```sh
// blocks, joining continued lines, with the "# " comment lines that follow
// each as its answer, and the worker command a block starts with.
func workerDocExamples(t *testing.T) []docExample {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "worker.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []docExample
	inSh, cont, start := false, false, ""
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			inSh = true
			continue
		case strings.HasPrefix(line, "```"):
			inSh = false
			continue
		case !inSh:
			continue
		}
		l := strings.TrimSpace(line)
		switch {
		case cont:
			out[len(out)-1].command += " " + strings.TrimSuffix(l, "\\")
		case strings.HasPrefix(l, "go run ./cmd/agentrt worker"):
			start = l
		case strings.HasPrefix(l, "curl "):
			out = append(out, docExample{command: strings.TrimSuffix(l, "\\"), start: start})
			start = ""
		case strings.HasPrefix(l, "# ") && len(out) > 0:
			out[len(out)-1].answer = append(out[len(out)-1].answer, strings.TrimPrefix(l, "# "))
		}
		cont = strings.HasSuffix(l, "\\") && len(out) > 0
	}
	return out
}

// fragments splits the doc's answer at its "..." into the parts the real
// answer must contain, with the braces and commas around the cuts
// trimmed.
func fragments(answer []string) []string {
	var out []string
	for _, f := range strings.Split(strings.Join(answer, ""), "...") {
		f = strings.Trim(f, ", ")
		f = strings.TrimPrefix(f, "{")
		f = strings.TrimSuffix(f, "}")
		if f = strings.Trim(f, ","); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Ensure the curl examples of docs/worker.md run against the worker on
// workerd, in order on one worker as a reader would type them, and answer
// what the doc shows.
func TestWorker_DocExamples(t *testing.T) {
	t.Parallel()
	curl, err := exec.LookPath("curl")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("curl not found")
		}
		t.Skip("curl not found")
	}
	examples := workerDocExamples(t)
	if len(examples) < 2 {
		t.Fatalf("docs/worker.md: found %d curl examples, want at least 2", len(examples))
	}
	// The durable examples keep their storage across a restart, as
	// `--state ./state` does for a reader.
	state := t.TempDir()
	var p *workerd.Process
	for _, ex := range examples {
		if ex.start != "" || p == nil {
			if p != nil {
				p.Stop()
			}
			o := workerd.Options{}
			if strings.Contains(ex.start, "--durable") {
				o.Durable, o.StateDir = true, state
			}
			p = mustStart(t, o)
		}
		host := strings.TrimPrefix(p.URL, "http://")
		cmd := strings.ReplaceAll(ex.command, "localhost:8787", host)
		cmd = strings.Replace(cmd, "curl ", "'"+curl+"' --max-time 30 ", 1)
		out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", ex.command, err, out)
		}
		got := string(out)
		if len(ex.answer) == 0 {
			// A streamed run: the doc shows no answer; it must end well.
			if !strings.Contains(got, "run.completed") {
				t.Errorf("%s: got %q, want the events of a completed run", ex.command, got)
			}
			continue
		}
		for _, f := range fragments(ex.answer) {
			if !strings.Contains(got, f) {
				t.Errorf("%s:\n got  %s\n want it to contain %s (as docs/worker.md shows)", ex.command, got, f)
			}
		}
	}
}
