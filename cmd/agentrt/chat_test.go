package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/internal/build"
)

// mustChatModule returns the module: dist/'s when $AGENTRT_DIST is set
// (make test), else built into the test's temp dir (go's build cache
// makes the second build of a test run cheap).
func mustChatModule(t *testing.T) string {
	t.Helper()
	return mustBuilt(t, func(ctx context.Context, root, dir string) (string, error) {
		return build.TestModule(ctx, root, dir)
	})
}

// mustChatWasiModule returns the WASI module: dist/'s when $AGENTRT_DIST
// is set, else the plain build in the test's temp dir.
func mustChatWasiModule(t *testing.T) string {
	t.Helper()
	return mustBuilt(t, func(ctx context.Context, root, dir string) (string, error) {
		if build.Prebuilt() != "" {
			w, err := build.TestWasiModules(ctx, root, dir, nil)
			return w.Module, err
		}
		p := filepath.Join(dir, build.WasiModuleName)
		return p, build.WasiModule(ctx, root, build.WasiPkg, p)
	})
}

// mustBuilt returns the path of the module get returns for the
// repository root and the test's temp dir; without a go toolchain the
// test skips (fails under CI).
func mustBuilt(t *testing.T, get func(ctx context.Context, root, dir string) (string, error)) string {
	t.Helper()
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
	p, err := get(context.Background(), root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestChatHelperProcess is not a test: it runs main as the agentrt
// command when the chat tests start this test binary as a child process.
func TestChatHelperProcess(t *testing.T) {
	if os.Getenv("AGENTRT_CHAT_HELPER") != "1" {
		return
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Args = append([]string{"agentrt"}, args...)
	main()
	os.Exit(0)
}

// runChatProcess runs `agentrt chat args...` as its own process with
// input on stdin.
func runChatProcess(t *testing.T, input string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestChatHelperProcess$", "--", "chat"}, args...)...)
	cmd.Env = append(append(os.Environ(), "AGENTRT_CHAT_HELPER=1"), env...)
	cmd.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

func readMessages(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]any
	if err := json.Unmarshal(b, &msgs); err != nil {
		t.Fatalf("history file is not a JSON array of messages: %v\n%s", err, b)
	}
	return msgs
}

// Ensure two chat processes share a conversation through the history
// file: the first appends its turns, the second starts cold and seeds its
// session from the file once.
func TestChat_TwoProcesses_SecondSeedsFromFile(t *testing.T) {
	for _, m := range chatModules(t) {
		t.Run(m.name, func(t *testing.T) { testChatTwoProcesses(t, m.flags) })
	}
}

func testChatTwoProcesses(t *testing.T, flags []string) {
	hist := filepath.Join(t.TempDir(), "conv.json")
	args := append([]string{"--session", "conv-1", "--history", hist, "--system", "be brief"}, flags...)

	out, errOut, err := runChatProcess(t, "hello\nhow are you?\n", nil, args...)
	if err != nil {
		t.Fatalf("first process: %v\nstderr: %s", err, errOut)
	}
	want := "[seed mode=noop seeded=0 skippedSystem=0]\n" +
		"assistant: echo: hello (model received 1 messages)\n" +
		"[seed mode=noop seeded=0 skippedSystem=0]\n" +
		"assistant: echo: how are you? (model received 3 messages)\n"
	if out != want {
		t.Errorf("first process printed\n%s\nwant\n%s", out, want)
	}
	if msgs := readMessages(t, hist); len(msgs) != 4 || msgs[0]["content"] != "hello" || msgs[0]["role"] != "user" {
		t.Fatalf("history after the first process = %v, want 4 messages starting with hello", msgs)
	}

	out, errOut, err = runChatProcess(t, "and now?\nonce more\n", nil, args...)
	if err != nil {
		t.Fatalf("second process: %v\nstderr: %s", err, errOut)
	}
	want = "[seed mode=cold seeded=4 skippedSystem=0]\n" +
		"assistant: echo: and now? (model received 5 messages)\n" +
		"[seed mode=noop seeded=0 skippedSystem=0]\n" +
		"assistant: echo: once more (model received 7 messages)\n"
	if out != want {
		t.Errorf("second process printed\n%s\nwant\n%s", out, want)
	}
	msgs := readMessages(t, hist)
	if len(msgs) != 8 {
		t.Fatalf("history after the second process has %d messages, want 8", len(msgs))
	}
	seen := map[string]int{}
	for _, m := range msgs {
		seen[m["content"].(string)]++
	}
	for c, n := range seen {
		if n != 1 {
			t.Errorf("message %q is stored %d times", c, n)
		}
	}
}

// chatModules is the modules chat runs, by name, each as the flags that
// select it: every chat test runs on both, through the one wire engine.
func chatModules(t *testing.T) []struct {
	name  string
	flags []string
} {
	return []struct {
		name  string
		flags []string
	}{
		{"GOOSJS", []string{"--module", mustChatModule(t)}},
		{"WASI", []string{"--wasi", "--module", mustChatWasiModule(t)}},
	}
}

// Ensure a history the module refuses is reported with its code and
// index, the turn is not stored, and bad flags or files fail the command.
func TestChat_Errors(t *testing.T) {
	for _, m := range chatModules(t) {
		t.Run(m.name, func(t *testing.T) { testChatErrors(t, m.flags) })
	}
}

func testChatErrors(t *testing.T, flags []string) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`[{"role":"wizard","content":"x"}]`), 0o644)
	out, errOut, err := runChatProcess(t, "hi\n", nil, append([]string{"--session", "s", "--history", bad}, flags...)...)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("chat with a refused turn: got %v, want exit status 1\n%s", err, errOut)
	}
	if out != "" || !strings.Contains(errOut, "error: unknown role \"wizard\" [invalid_history] (index 0)\n") {
		t.Errorf("stdout %q stderr %q; want one clean invalid_history error at index 0", out, errOut)
	}
	if strings.Contains(errOut, "Error:") || !strings.Contains(errOut, "agentrt chat: 1 of 1 turns failed") {
		t.Errorf("stderr %q: want no \"Error:\" and a closing count of failed turns", errOut)
	}
	if b, _ := os.ReadFile(bad); string(b) != `[{"role":"wizard","content":"x"}]` {
		t.Errorf("the refused turn changed the file: %s", b)
	}

	notJSON := filepath.Join(dir, "not.json")
	os.WriteFile(notJSON, []byte(`{"role":"user"}`), 0o644)
	badShape := filepath.Join(dir, "shape.json")
	os.WriteFile(badShape, []byte(`[{"role":"user","content":"a"},{"role":"user","content":5}]`), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "ErrNoSession", args: []string{"--history", filepath.Join(dir, "h.json")}, want: "--session and --history are required"},
		{name: "ErrNotAnArray", args: append([]string{"--session", "s", "--history", notJSON}, flags...), want: "not a JSON array"},
		{name: "ErrShape", args: append([]string{"--session", "s", "--history", badShape}, flags...), want: "invalid_history: content must be a string, an array of parts, or null (index 1)"},
		{name: "ErrUnknownModel", args: []string{"--session", "s", "--history", filepath.Join(dir, "h.json"), "--model", "gpt"}, want: `unknown --model "gpt"`},
		{name: "ErrMissingModule", args: []string{"--session", "s", "--history", filepath.Join(dir, "h.json"), "--module", filepath.Join(dir, "none.wasm")}, want: "none.wasm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, err := runChatProcess(t, "", nil, tt.args...)
			if err == nil || !strings.Contains(errOut, tt.want) {
				t.Errorf("err %v, stderr %q; want a failure mentioning %q", err, errOut, tt.want)
			}
		})
	}
}

// Ensure a history file in the shapes other hosts store (an OpenAI tool
// call, a UIMessage with a tool part) seeds the session, and the file
// keeps its messages as they were, with the new turn after them.
func TestChat_HostShapes(t *testing.T) {
	for _, m := range chatModules(t) {
		t.Run(m.name, func(t *testing.T) { testChatHostShapes(t, m.flags) })
	}
}

func testChatHostShapes(t *testing.T, flags []string) {
	hist := filepath.Join(t.TempDir(), "h.json")
	os.WriteFile(hist, []byte(`[
		{"role": "developer", "content": "Be brief."},
		{"role": "user", "content": [{"type": "text", "text": "add 1 and 2"}]},
		{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "add", "arguments": {"a": 1, "b": 2}}}]},
		{"role": "tool", "tool_call_id": "c1", "content": "3"},
		{"id": "m4", "role": "assistant", "parts": [{"type": "tool-add", "toolCallId": "c2", "state": "output-available", "input": {"a": 3}, "output": 3}, {"type": "text", "text": "3, then 3."}]}
	]`), 0o644)
	out, errOut, err := runChatProcess(t, "again\nonce more\n", nil, append([]string{"--session", "s", "--history", hist}, flags...)...)
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, errOut)
	}
	// system skipped; user, assistant, tool, then the UIMessage's three.
	if !strings.HasPrefix(out, "[seed mode=cold seeded=6 skippedSystem=1]\n") || !strings.Contains(out, "[seed mode=noop seeded=0 skippedSystem=1]\n") {
		t.Errorf("printed %q, want a cold seed of 6 messages, then a no-op", out)
	}
	if msgs := readMessages(t, hist); len(msgs) != 9 || msgs[4]["id"] != "m4" || msgs[7]["content"] != "once more" {
		t.Errorf("history = %v, want the 5 messages as they were and two turns", msgs)
	}
}

// Ensure --model openai sends the seeded context to an OpenAI-compatible
// endpoint from the host side and stores its answer.
func TestChat_OpenAIModel(t *testing.T) {
	for _, m := range chatModules(t) {
		t.Run(m.name, func(t *testing.T) { testChatOpenAIModel(t, m.flags) })
	}
}

func testChatOpenAIModel(t *testing.T, flags []string) {
	var mu sync.Mutex
	var gotMessages int
	var gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []map[string]any `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		gotMessages, gotAuth = len(body.Messages), r.Header.Get("Authorization")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"hi from upstream"}}]}`))
	}))
	defer srv.Close()
	hist := filepath.Join(t.TempDir(), "h.json")
	os.WriteFile(hist, []byte(`[{"role":"user","content":"earlier"},{"role":"assistant","content":"noted"}]`), 0o644)
	out, errOut, err := runChatProcess(t, "hello\n", []string{"AGENTRT_OPENAI_KEY=sk-test"},
		append([]string{"--session", "s", "--history", hist, "--system", "sys",
			"--model", "openai", "--openai-base-url", srv.URL, "--openai-model", "m1"}, flags...)...)
	if err != nil {
		t.Fatalf("chat: %v\n%s", err, errOut)
	}
	if want := "[seed mode=cold seeded=2 skippedSystem=0]\nassistant: hi from upstream\n"; out != want {
		t.Errorf("printed %q, want %q", out, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if gotMessages != 4 || gotAuth != "Bearer sk-test" { // system + 2 seeded + input
		t.Errorf("upstream got %d messages, auth %q; want 4 and the key", gotMessages, gotAuth)
	}
	if msgs := readMessages(t, hist); len(msgs) != 4 || msgs[3]["content"] != "hi from upstream" {
		t.Errorf("history = %v", msgs)
	}
}
