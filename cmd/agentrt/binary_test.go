package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentrt/agentrt/internal/build"
	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// mustBinary builds the agentrt command into dir/agentrt, as
// `go build ./cmd/agentrt` does, and returns its path.
func mustBinary(t *testing.T, dir string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("go toolchain not found")
		}
		t.Skip("go toolchain not found: cannot build the command")
	}
	root, err := build.Root()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "agentrt")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/agentrt")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/agentrt: %v\n%s", err, out)
	}
	return bin
}

// runBinary runs bin with args in the directory dir, input on stdin, and
// returns its output and exit code.
func runBinary(t *testing.T, bin, dir, input string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func copyTestFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Ensure a built binary runs chat and chat --wasi from an empty folder
// outside the repository, with the modules next to it (agentrt.wasm)
// and in a dist/ next to it (agentrt-wasi.wasm); that without them it
// says how to get them; and that its exit codes are those docs/cli.md
// documents.
func TestBinary_ChatInEmptyFolder(t *testing.T) {
	tmp := t.TempDir()
	binDir, work, bare := filepath.Join(tmp, "bin"), filepath.Join(tmp, "work"), filepath.Join(tmp, "bare")
	for _, d := range []string{binDir, work, bare} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := mustBinary(t, binDir)
	copyTestFile(t, mustChatModule(t), filepath.Join(binDir, "agentrt.wasm"))
	copyTestFile(t, mustChatWasiModule(t), filepath.Join(binDir, "dist", build.WasiModuleName))

	out, errOut, code := runBinary(t, bin, work, "hello\n", nil, "chat", "--session", "s", "--history", "h.json")
	if code != 0 || out != "[seed mode=noop seeded=0 skippedSystem=0]\nassistant: echo: hello (model received 1 messages)\n" {
		t.Fatalf("chat: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = runBinary(t, bin, work, "again\n", nil, "chat", "--wasi", "--session", "s", "--history", "h.json")
	if code != 0 || out != "[seed mode=cold seeded=2 skippedSystem=0]\nassistant: echo: again (model received 3 messages)\n" {
		t.Fatalf("chat --wasi: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if msgs := readMessages(t, filepath.Join(work, "h.json")); len(msgs) != 4 {
		t.Fatalf("the history file holds %d messages, want 4: %v", len(msgs), msgs)
	}

	// Alone, the binary says where it looked and how to get the module.
	alone := filepath.Join(bare, "agentrt")
	copyTestFile(t, bin, alone)
	if err := os.Chmod(alone, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"chat"}, {"chat", "--wasi"}} {
		_, errOut, code = runBinary(t, alone, work, "hi\n", nil, append(args, "--session", "s", "--history", "h.json")...)
		if code != 1 || !strings.Contains(errOut, "not found in "+bare) || !strings.Contains(errOut, "go run ./cmd/agentrt build") || !strings.Contains(errOut, "--module FILE") {
			t.Errorf("%v without a module: exit %d, stderr %q; want 1 and how to get the module", args, code, errOut)
		}
	}
	_, errOut, code = runBinary(t, alone, work, "", nil, "worker")
	if code != 1 || !strings.Contains(errOut, "worker --build-only") {
		t.Errorf("worker without a bundle: exit %d, stderr %q; want 1 and how to get the bundle", code, errOut)
	}

	// The exit codes of docs/cli.md, "Output and exit codes".
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{args: []string{"--help"}, code: 0},
		{args: []string{"help", "chat"}, code: 0},
		{args: nil, code: 2, want: "commands:"},
		{args: []string{"nope"}, code: 2, want: `unknown command "nope"`},
		{args: []string{"chat", "--nope"}, code: 2, want: "-session"},
		{args: []string{"chat", "--history", "h.json"}, code: 2, want: "--session and --history are required"},
		{args: []string{"chat", "--session", "s", "--history", "h.json", "--seed-mode", "always"}, code: 2, want: `--seed-mode "always"`},
		{args: []string{"worker", "--state", "st"}, code: 2, want: "-state needs -durable"},
		{args: []string{"chat", "--session", "s", "--history", "h.json", "--module", "none.wasm"}, code: 1, want: "agentrt chat: --module none.wasm: no such file"},
	} {
		_, errOut, code := runBinary(t, alone, work, "", nil, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("agentrt %v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "st")); err == nil {
		t.Error("worker --state without --durable made its state directory")
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader at a
// time.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Ensure a built binary runs the worker from an empty folder outside the
// repository, with the bundle `worker --build-only` writes in a dist/worker
// next to it and workerd on PATH.
func TestBinary_WorkerInEmptyFolder(t *testing.T) {
	root, err := build.Root()
	if err != nil {
		t.Fatal(err)
	}
	wd, err := workerd.Binary(root)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	tmp := t.TempDir()
	binDir, work := filepath.Join(tmp, "bin"), filepath.Join(tmp, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := mustBinary(t, binDir)
	bundle := filepath.Join(binDir, "dist", "worker")
	if _, err := workerd.TestBundle(context.Background(), root, bundle); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "worker", "--addr", "127.0.0.1:0")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(wd)+string(os.PathListSeparator)+os.Getenv("PATH"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer // written by the process while the test reads it
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		for range lines {
		}
		if err := <-exited; err != nil {
			t.Errorf("the worker after SIGTERM: %v\n%s", err, stderr.String())
		}
	}()
	url := ""
	for url == "" {
		line, ok := <-lines
		if !ok {
			t.Fatalf("the worker exited before serving\n%s", stderr.String())
		}
		if rest, found := strings.CutPrefix(line, "agentrt worker on "); found {
			url, _, _ = strings.Cut(rest, " ")
		}
	}
	if !strings.Contains(stderr.String(), "the worker bundle of "+bundle) {
		t.Errorf("stderr %q: want it to name the bundle it runs", stderr.String())
	}
	client := &http.Client{Timeout: time.Minute}
	res, err := client.Post(url+"/v1/sessions/s/runs", "application/json", strings.NewReader(`{"input":"hi","history":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "echo: hi") {
		t.Fatalf("POST /v1/sessions/s/runs: %s %s", res.Status, body)
	}
	// The bundle next to the binary is copied, not written into.
	if _, err := os.Stat(filepath.Join(bundle, workerd.ConfigFile)); err == nil {
		t.Errorf("the worker wrote %s into the bundle next to the binary", workerd.ConfigFile)
	}
}
