//go:build !js

package workerd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrt/agentrt/internal/build"
	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// The worker module is built once per test binary into a temp dir, or
// copied from $AGENTRT_DIST/worker (make test builds it there once).
var (
	bundle  *workerd.Bundle
	root    string
	skipWhy string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if root, err = build.Root(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := workerd.Binary(root); err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, "CI is set and workerd is missing:", err)
			return 1
		}
		skipWhy = err.Error()
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "agentrt-worker-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if bundle, err = workerd.TestBundle(ctx, root, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// entries are the test entry modules, by the file name Options.Entry
// gives: mustStart writes the one named into the process's own bundle.
var entries = map[string]string{
	"abort-entry.mjs":         abortEntry,
	"durable-abort-entry.mjs": durableAbortEntry,
	"per-request.mjs":         perRequestEntry,
}

// ownBundle returns a bundle directory for one workerd process: links to
// (or copies of) the files of the test binary's bundle, and the test
// entry named entry, if any. workerd.Start writes its configuration into
// the bundle directory, so processes of tests running in parallel on one
// directory would start with each other's configuration: another
// environment, upstream, entry or state directory.
func ownBundle(t testing.TB, entry string) *workerd.Bundle {
	t.Helper()
	dir := t.TempDir()
	for _, f := range workerd.BundleFiles {
		src, dst := filepath.Join(bundle.Dir, f), filepath.Join(dir, f)
		if os.Link(src, dst) == nil {
			continue
		}
		b, err := os.ReadFile(src)
		if err == nil {
			err = os.WriteFile(dst, b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if entry != "" {
		src, ok := entries[entry]
		if !ok {
			t.Fatalf("no test entry %q", entry)
		}
		if err := os.WriteFile(filepath.Join(dir, entry), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &workerd.Bundle{Dir: dir, Size: bundle.Size}
}

// testV8Flags are the V8 flags of every workerd the tests start: the
// worker's module compiled by the baseline compiler alone. Its tier-up
// recompiled the 6.6 MB module in every process the tests start, CPU the
// tests' requests never needed: the package's tests took 56-60 s of user
// time and 42-44 s alone with it, 41 s and 36-37 s without (two runs
// each, without -race). Deployed workers keep V8's defaults.
var testV8Flags = []string{"--liftoff-only"}

// mustStart starts workerd on 127.0.0.1 with a free port, from its own
// bundle directory (ownBundle), and stops it at the end of the test.
func mustStart(t testing.TB, o workerd.Options) *workerd.Process {
	t.Helper()
	p, _ := mustStartLogs(t, o)
	return p
}

// mustStartLogs is mustStart that also returns workerd's output.
func mustStartLogs(t testing.TB, o workerd.Options) (*workerd.Process, *syncBuffer) {
	t.Helper()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	o.Root = root
	o.Listener = ln.(*net.TCPListener)
	logs := &syncBuffer{}
	o.Stdout, o.Stderr = logs, logs
	o.V8Flags = testV8Flags
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := workerd.Start(ctx, ownBundle(t, o.Entry), o)
	if err != nil {
		t.Fatalf("start: %v\n%s", err, logs.String())
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("workerd output:\n%s", logs.String())
		}
	})
	return p, logs
}

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

type msg struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id,omitempty"`
}

type result struct {
	Status int `json:"-"`
	Reply  msg `json:"reply"`
	Seed   struct {
		Mode          string `json:"mode"`
		Seeded        int    `json:"seeded"`
		SkippedSystem int    `json:"skippedSystem"`
	} `json:"seed"`
	MessageCount int `json:"messageCount"`
	ModelCalls   []struct {
		MessageCount int `json:"messageCount"`
	} `json:"modelCalls"`
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Index   *int   `json:"index"`
	} `json:"error"`
}

var client = &http.Client{Timeout: time.Minute}

func post(t testing.TB, p *workerd.Process, path string, body any, headers ...string) result {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	return doReq(t, p, "POST", path, rd, headers...)
}

func doReq(t testing.TB, p *workerd.Process, method, path string, body io.Reader, headers ...string) result {
	t.Helper()
	req, err := http.NewRequest(method, p.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var r result
	if len(b) > 0 {
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s %s: status %d, body not JSON: %q", method, path, res.StatusCode, b)
		}
	}
	r.Status = res.StatusCode
	return r
}

type turnBody struct {
	Input   string         `json:"input"`
	History []msg          `json:"history"`
	Policy  map[string]any `json:"policy,omitempty"`
}

// Ensure the ADR's reference behaviour on the real worker (the test keeps
// the ADR test's name): turn 1 with history seeds cold; turn 2 on the same
// isolate is a no-op; after a restart of workerd (a new isolate) the
// session seeds cold again.
func TestColdStartedSessionIsSeededFromSuppliedHistory(t *testing.T) {
	t.Parallel()
	p := mustStart(t, workerd.Options{})
	history := []msg{{"system", "old prompt", ""}, {"user", "hi", ""}, {"assistant", "hello", ""}}
	r1 := post(t, p, "/v1/sessions/chat-1/runs", turnBody{Input: "and now?", History: history})
	if r1.Status != 200 || r1.Seed.Mode != "cold" || r1.Seed.Seeded != 2 || r1.Seed.SkippedSystem != 1 {
		t.Fatalf("turn 1: got %+v, want 200 cold/2/1", r1)
	}
	if want := "echo: and now? (model received 3 messages)"; r1.Reply.Content != want {
		t.Errorf("turn 1 reply: got %q, want %q", r1.Reply.Content, want)
	}
	history = append(history, msg{"user", "and now?", ""}, r1.Reply)
	r2 := post(t, p, "/v1/sessions/chat-1/runs", turnBody{Input: "more", History: history})
	if r2.Status != 200 || r2.Seed.Mode != "noop" || r2.Seed.Seeded != 0 {
		t.Fatalf("turn 2: got %+v, want 200 noop", r2)
	}
	if want := "echo: more (model received 5 messages)"; r2.Reply.Content != want {
		t.Errorf("turn 2 reply: got %q, want %q", r2.Reply.Content, want)
	}
	// A new isolate: nothing in memory, the history repairs it.
	p.Stop()
	p2 := mustStart(t, workerd.Options{})
	if g := doReq(t, p2, "GET", "/v1/sessions/chat-1", nil); g.Status != 404 {
		t.Errorf("session after restart: got %d, want 404", g.Status)
	}
	history = append(history, msg{"user", "more", ""}, r2.Reply)
	r3 := post(t, p2, "/v1/sessions/chat-1/runs", turnBody{Input: "again", History: history})
	if r3.Status != 200 || r3.Seed.Mode != "cold" || r3.Seed.Seeded != 6 {
		t.Fatalf("turn 3 after restart: got %+v, want 200 cold/6", r3)
	}
	if want := "echo: again (model received 7 messages)"; r3.Reply.Content != want {
		t.Errorf("turn 3 reply: got %q, want %q", r3.Reply.Content, want)
	}
}

// Ensure two workerd processes answering alternate turns with seedMode
// "reconcile" each give the model the full context.
func TestWorker_Reconcile_TwoProcessesAlternate(t *testing.T) {
	t.Parallel()
	procs := []*workerd.Process{mustStart(t, workerd.Options{}), mustStart(t, workerd.Options{})}
	history := []msg{} // an empty history on a new session: "noop"
	wantModes := []string{"noop", "cold", "appended", "appended", "appended", "appended"}
	for turn := 1; turn <= len(wantModes); turn++ {
		p := procs[(turn-1)%2]
		input := fmt.Sprintf("turn %d", turn)
		r := post(t, p, "/v1/sessions/shared/runs", turnBody{Input: input, History: history, Policy: map[string]any{"seedMode": "reconcile"}})
		if r.Status != 200 {
			t.Fatalf("turn %d: status %d %+v", turn, r.Status, r.Error)
		}
		want := 2*turn - 1
		if len(r.ModelCalls) != 1 || r.ModelCalls[0].MessageCount != want {
			t.Errorf("turn %d: model calls %+v, want one with %d messages", turn, r.ModelCalls, want)
		}
		if r.Seed.Mode != wantModes[turn-1] {
			t.Errorf("turn %d: seed mode %q, want %q", turn, r.Seed.Mode, wantModes[turn-1])
		}
		history = append(history, msg{"user", input, ""}, r.Reply)
	}
}

// Ensure bad requests get the right status and code, and the worker keeps
// serving afterwards: the same Go instance, with its warm session.
func TestWorker_BadRequests(t *testing.T) {
	t.Parallel()
	p := mustStart(t, workerd.Options{Env: map[string]string{"AGENTRT_TOKEN": "t0ken", "AGENTRT_MAX_BODY_BYTES": "2048"}})
	auth := []string{"Authorization", "Bearer t0ken"}
	if r := post(t, p, "/v1/sessions/warm/runs", `{"input":"first"}`, auth...); r.Status != 200 {
		t.Fatalf("first run: %+v", r)
	}
	tests := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		code                     string
		index                    int
	}{
		{"ErrNoToken", "POST", "/v1/sessions/a/runs", `{"input":"x"}`, nil, 401, "unauthorized", -1},
		{"ErrWrongToken", "POST", "/v1/sessions/a/runs", `{"input":"x"}`, []string{"Authorization", "Bearer t0ke"}, 401, "unauthorized", -1},
		{"ErrInvalidJSON", "POST", "/v1/sessions/a/runs", `{"input":`, auth, 400, "invalid_argument", -1},
		{"ErrWrongType", "POST", "/v1/sessions/a/runs", `{"input":["x"]}`, auth, 400, "invalid_argument", -1},
		{"ErrUnknownRole", "POST", "/v1/sessions/a/runs", `{"input":"x","history":[{"role":"user","content":"a"},{"role":"wizard","content":"b"}]}`, auth, 400, "invalid_history", 1},
		{"ErrOrphanTool", "POST", "/v1/sessions/a/runs", `{"input":"x","history":[{"role":"tool","content":"r","tool_call_id":"c"}]}`, auth, 400, "invalid_history", 0},
		{"ErrBodyTooLarge", "POST", "/v1/sessions/a/runs", `{"input":"` + strings.Repeat("x", 5000) + `"}`, auth, 413, "limit_exceeded", -1},
		{"ErrUnknownRoute", "GET", "/nowhere", ``, auth, 404, "not_found", -1},
		{"ErrUnknownSession", "GET", "/v1/sessions/nobody", ``, auth, 404, "not_found", -1},
		{"ErrMethod", "PATCH", "/v1/sessions/a", `{}`, auth, 405, "method_not_allowed", -1},
		{"ErrToolFails", "POST", "/v1/sessions/a/runs", `{"input":"/tool none"}`, auth, 502, "tool_error", -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			r := doReq(t, p, tc.method, tc.path, body, tc.headers...)
			if r.Status != tc.status || r.Error.Code != tc.code {
				t.Fatalf("got %d %+v, want %d %s", r.Status, r.Error, tc.status, tc.code)
			}
			if (tc.index < 0) != (r.Error.Index == nil) || (r.Error.Index != nil && *r.Error.Index != tc.index) {
				t.Errorf("index: got %v, want %d", r.Error.Index, tc.index)
			}
			if strings.Contains(r.Error.Message, "goroutine") || strings.Contains(r.Error.Message, ".go:") {
				t.Errorf("stack trace in the message: %q", r.Error.Message)
			}
		})
	}
	r := post(t, p, "/v1/sessions/warm/runs", `{"input":"second","history":[]}`, auth...)
	if r.Status != 200 || r.MessageCount != 4 || r.Reply.Content != "echo: second (model received 3 messages)" {
		t.Errorf("after the bad requests: got %+v, want the warm session to answer", r)
	}
	if g := doReq(t, p, "GET", "/healthz", nil); g.Status != 200 {
		t.Errorf("healthz: %d", g.Status)
	}
}

// Ensure Accept: text/event-stream streams the events from the worker,
// ending with run.completed and its result.
func TestWorker_ServerSentEvents(t *testing.T) {
	t.Parallel()
	p := mustStart(t, workerd.Options{})
	req, _ := http.NewRequest("POST", p.URL+"/v1/sessions/sse/runs", strings.NewReader(`{"input":"stream me please","history":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`))
	req.Header.Set("Accept", "text/event-stream")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	var names []string
	var last map[string]any
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, n)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			last = nil
			if err := json.Unmarshal([]byte(d), &last); err != nil {
				t.Fatalf("data %q: %v", d, err)
			}
		}
	}
	if len(names) < 6 || names[0] != "run.started" || names[1] != "session.seeded" || names[len(names)-1] != "run.completed" {
		t.Fatalf("events: %v", names)
	}
	deltas := 0
	for _, n := range names {
		if n == "model.delta" {
			deltas++
		}
	}
	if deltas < 2 {
		t.Errorf("model.delta events: got %d, want several", deltas)
	}
	reply := last["result"].(map[string]any)["reply"].(map[string]any)
	if reply["content"] != "echo: stream me please (model received 3 messages)" {
		t.Errorf("result reply: %v", reply)
	}
}

// Ensure the OpenAI-compatible model path: the worker calls a fake
// upstream on 127.0.0.1 with fetch, sends the key and the full context,
// and maps upstream errors to model_error without leaking the key.
func TestWorker_OpenAI_FakeUpstream(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	const key = "sk-fake-upstream-key-123"
	var mu sync.Mutex
	var got []map[string]any
	var auths []string
	fail := false
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		got = append(got, body)
		auths = append(auths, r.Header.Get("Authorization"))
		f := fail
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if f || r.URL.Path != "/v1/chat/completions" {
			w.WriteHeader(500)
			io.WriteString(w, `{"error":{"message":"overloaded, key `+key+`"}}`)
			return
		}
		n := len(body["messages"].([]any))
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":"upstream saw %d messages"}}]}`, n)
	}))
	defer up.Close()
	p := mustStart(t, workerd.Options{AllowLocalNetwork: true, Env: map[string]string{
		"AGENTRT_MODEL":           "openai",
		"AGENTRT_OPENAI_BASE_URL": up.URL + "/v1",
		"AGENTRT_OPENAI_MODEL":    "fake-1",
		"AGENTRT_OPENAI_KEY":      key,
		"AGENTRT_SYSTEM_PROMPT":   "Be brief.",
	}})
	r := post(t, p, "/v1/sessions/o/runs", turnBody{Input: "hello", History: []msg{{"user", "a", ""}, {"assistant", "b", ""}}})
	if r.Status != 200 || r.Reply.Content != "upstream saw 4 messages" {
		t.Fatalf("run: got %d %+v %+v", r.Status, r.Reply, r.Error)
	}
	mu.Lock()
	if len(got) != 1 || got[0]["model"] != "fake-1" || auths[0] != "Bearer "+key {
		t.Errorf("upstream got %v, auth %v", got, auths)
	}
	first := got[0]["messages"].([]any)[0].(map[string]any)
	if first["role"] != "system" || first["content"] != "Be brief." {
		t.Errorf("first message: %v", first)
	}
	fail = true
	mu.Unlock()
	r = post(t, p, "/v1/sessions/o/runs", turnBody{Input: "again"})
	if r.Status != 502 || r.Error.Code != "model_error" || !strings.Contains(r.Error.Message, "500") {
		t.Errorf("upstream failure: got %d %+v", r.Status, r.Error)
	}
	if strings.Contains(r.Error.Message, key) {
		t.Errorf("the key leaked: %q", r.Error.Message)
	}
	// The failed turn was rolled back; the session still serves.
	mu.Lock()
	fail = false
	mu.Unlock()
	if r := post(t, p, "/v1/sessions/o/runs", turnBody{Input: "third"}); r.Status != 200 || r.Reply.Content != "upstream saw 6 messages" {
		t.Errorf("after the failure: got %d %+v %+v", r.Status, r.Reply, r.Error)
	}
}

// Ensure the module stays under the Workers free plan's 3 MB compressed
// limit (gzip at best compression, the module alone).
func TestWorker_ModuleSize(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	t.Logf("worker module: %s", bundle.Size)
	if bundle.Size.Gzip >= 3_000_000 {
		t.Errorf("worker module is %d bytes gzip, over the 3 MB limit", bundle.Size.Gzip)
	}
}

// perRequestEntry starts a new Go instance for every request, as the
// entry generated by github.com/syumai/workers does: the baseline of the
// benchmark.
const perRequestEntry = `import { startInstance, handle } from "./worker.mjs";
export default {
  async fetch(request, env) {
    const inst = await startInstance(env);
    let closed = false;
    const done = () => { if (!closed) { closed = true; inst.api.close(); } };
    return handle(inst, request, done);
  },
};
`

// BenchmarkWorker_Turn measures one turn over HTTP on workerd, on a
// session whose client sends 10 messages of history each turn: with the
// isolate's one reused Go instance (warm: seeding is a no-op), and with a
// new Go instance per request (always cold). It reports p50 and p99.
func BenchmarkWorker_Turn(b *testing.B) {
	var history []msg
	for i := 0; i < 5; i++ {
		history = append(history, msg{"user", fmt.Sprintf("question %d about something", i), ""}, msg{"assistant", fmt.Sprintf("answer %d with some words in it", i), ""})
	}
	body, _ := json.Marshal(turnBody{Input: "next", History: history})
	for _, mode := range []string{"reused", "per-request"} {
		b.Run(mode, func(b *testing.B) {
			o := workerd.Options{}
			if mode == "per-request" {
				o.Entry = "per-request.mjs"
			}
			p := mustStart(b, o)
			turn := func() time.Duration {
				start := time.Now()
				res, err := client.Post(p.URL+"/v1/sessions/bench/runs", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Fatalf("status %d", res.StatusCode)
				}
				return time.Since(start)
			}
			for i := 0; i < 5; i++ { // warm up
				turn()
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				lat = append(lat, turn())
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			q := func(f float64) float64 { return float64(lat[int(f*float64(len(lat)-1))]) / 1e6 }
			b.ReportMetric(q(0.50), "p50-ms")
			b.ReportMetric(q(0.99), "p99-ms")
		})
	}
}

// Ensure concurrent requests on the one Go instance, streamed and not,
// all complete with their own answers, and one shared session ends up
// holding every turn once.
func TestWorker_ConcurrentRequests(t *testing.T) {
	t.Parallel()
	p := mustStart(t, workerd.Options{})
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sid := fmt.Sprintf("own-%d", i)
			if i%3 == 0 {
				sid = "shared"
			}
			body := fmt.Sprintf(`{"input":"hello %d"}`, i)
			req, _ := http.NewRequest("POST", p.URL+"/v1/sessions/"+sid+"/runs", strings.NewReader(body))
			if i%2 == 1 {
				req.Header.Set("Accept", "text/event-stream")
			}
			res, err := client.Do(req)
			if err != nil {
				errs <- err.Error()
				return
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || !strings.Contains(string(b), fmt.Sprintf("echo: hello %d (model received", i)) {
				errs <- fmt.Sprintf("request %d: %d %q", i, res.StatusCode, b)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	g := doReq(t, p, "GET", "/v1/sessions/shared", nil)
	var s struct {
		MessageCount int `json:"messageCount"`
	}
	res, err := client.Get(p.URL + "/v1/sessions/shared")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil || g.Status != 200 || s.MessageCount != 2*((n+2)/3) {
		t.Errorf("shared session: status %d, %d messages (err %v), want %d", g.Status, s.MessageCount, err, 2*((n+2)/3))
	}
}

// Ensure TestBundle copies the bundle of $AGENTRT_DIST/worker, not
// building one, into the test's own directory (where workerd.Start
// writes its configuration), and builds when that bundle is incomplete.
// It stays serial: it sets $AGENTRT_DIST with t.Setenv, which a parallel
// test may not (the environment is the process's).
func TestTestBundle_FromDist(t *testing.T) {
	dist := t.TempDir()
	src := filepath.Join(dist, build.WorkerDir)
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range workerd.BundleFiles {
		if err := os.WriteFile(filepath.Join(src, f), []byte("the "+f+" of dist"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(build.DistEnv, dist)
	dir := filepath.Join(t.TempDir(), "bundle")
	// root is no repository: a build would fail.
	b, err := workerd.TestBundle(context.Background(), t.TempDir(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if b.Dir != dir || b.Size.Raw != int64(len("the "+workerd.ModuleFile+" of dist")) {
		t.Fatalf("bundle %+v, want the copy in %s", b, dir)
	}
	for _, f := range workerd.BundleFiles {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || string(got) != "the "+f+" of dist" {
			t.Fatalf("%s: %q, %v; want dist's copy", f, got, err)
		}
	}
	if err := os.Remove(filepath.Join(src, workerd.ModuleFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := workerd.TestBundle(context.Background(), t.TempDir(), filepath.Join(t.TempDir(), "bundle")); err == nil {
		t.Fatal("an incomplete dist bundle outside a repository: no error, want the build's")
	}
}
