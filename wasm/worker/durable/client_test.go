package durable

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// streamRunScript runs agentrt/http's streamRun (js/http.js) on Node
// against the handler at argv url. Its fetch cuts the start's stream
// after its first events (aborting the request, as a lost connection
// does), so that streamRun must resume; with scenario "abort" it cuts
// nothing and aborts its signal (cancelOnAbort) at the second event. It
// prints what it saw as JSON.
const streamRunScript = `
const [httpURL, url, scenario] = process.argv.slice(1);
const { streamRun } = await import(httpURL);
let cut = scenario === "abort";
async function cutting(input, init) {
  if (cut || init.method !== "POST") return fetch(input, init);
  cut = true;
  const ctl = new AbortController();
  init.signal?.addEventListener("abort", () => ctl.abort(init.signal.reason));
  const res = await fetch(input, { ...init, signal: ctl.signal });
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let seen = 0;
  const body = new ReadableStream({
    async pull(c) {
      const { value, done } = await reader.read();
      if (done) return c.close();
      c.enqueue(value);
      seen += dec.decode(value, { stream: true }).split("\n\n").length - 1;
      if (seen >= 2) {
        ctl.abort();
        c.error(new TypeError("terminated"));
      }
    },
  });
  return new Response(body, { status: res.status, headers: res.headers });
}
const ctl = new AbortController();
const out = { seqs: [], types: [], runId: "" };
try {
  const it = streamRun(url, { sessionId: "c1", input: "q", fetch: cutting, signal: ctl.signal, cancelOnAbort: true, retry: { attempts: 2, delayMs: 0 } });
  for (;;) {
    const step = await it.next();
    if (step.done) {
      out.messageCount = step.value?.messageCount;
      break;
    }
    out.seqs.push(step.value.seq);
    out.types.push(step.value.type);
    out.runId = step.value.runId;
    if (scenario === "abort" && out.seqs.length === 2) ctl.abort();
  }
} catch (e) {
  out.code = e.code;
  out.name = e.name;
}
console.log(JSON.stringify(out));
`

// streamRunOutcome is what streamRunScript prints.
type streamRunOutcome struct {
	Seqs         []int64
	Types        []string
	RunID        string
	MessageCount int
	Code, Name   string
}

// hookedHandler serves h, calling onEvents once, before the first GET of
// a run's events is served; onEvents may swap h.
type hookedHandler struct {
	mu       sync.Mutex
	h        http.Handler
	onEvents func(*hookedHandler)
}

func (x *hookedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x.mu.Lock()
	if f := x.onEvents; f != nil && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/events") {
		x.onEvents = nil
		f(x)
	}
	h := x.h
	x.mu.Unlock()
	h.ServeHTTP(w, r)
}

// runStreamRun runs streamRunScript against h; before runs when node has
// exited, before the server is closed (which waits for the requests in
// flight, a continued run's too).
func runStreamRun(t *testing.T, h http.Handler, scenario string, before func()) streamRunOutcome {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed")
		}
		t.Skip("node is not installed")
	}
	abs, err := filepath.Abs(filepath.Join("..", "..", "..", "js", "http.js"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	out, err := exec.Command(node, "--input-type=module", "-e", streamRunScript,
		"file://"+filepath.ToSlash(abs), srv.URL, scenario).CombinedOutput()
	if before != nil {
		before()
	}
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var o streamRunOutcome
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &o); err != nil {
		t.Fatalf("node printed %s", out)
	}
	return o
}

// Ensure agentrt/http's streamRun, against this handler, resumes a run
// whose stream was cut after its first events: every event once, seqs
// 1..n, the Result, and the turn stored once.
func TestRuns_StreamRunClient_Resumes(t *testing.T) {
	st := &memStore{}
	m := &gateModel{deltas: 5, started: make(chan struct{}, 1), release: make(chan struct{})}
	hk := &hookedHandler{h: gatedObject(t, st, m, Config{}), onEvents: func(*hookedHandler) { close(m.release) }}
	o := runStreamRun(t, hk, "resume", nil)
	if o.Code != "" || len(o.Seqs) < 4 || o.Types[len(o.Types)-1] != "run.completed" || o.MessageCount != 2 {
		t.Fatalf("streamRun saw %+v, want every event to run.completed and the Result", o)
	}
	for i, s := range o.Seqs {
		if s != int64(i+1) {
			t.Fatalf("event %d has seq %d, want %d (%v)", i, s, i+1, o.Seqs)
		}
	}
	hk.mu.Lock()
	reconnected := hk.onEvents == nil
	hk.mu.Unlock()
	if !reconnected {
		t.Fatal("streamRun never reconnected: the stream was not cut")
	}
	if got := st.contents(t); len(got) != 2 || got[1] != "done" || len(st.writes) != 1 {
		t.Fatalf("stored %q in %d writes, want the turn once", got, len(st.writes))
	}
}

// Ensure a run lost with a restart (a new object over the same storage)
// reaches streamRun as an AgentrtError run_lost, the history unchanged.
func TestRuns_StreamRunClient_Lost(t *testing.T) {
	st := &memStore{}
	m := &gateModel{deltas: 5, started: make(chan struct{}, 1), release: make(chan struct{})}
	restarted := gatedObject(t, st, m, Config{})
	hk := &hookedHandler{h: gatedObject(t, st, m, Config{}), onEvents: func(x *hookedHandler) { x.h = restarted }}
	var stored []string
	o := runStreamRun(t, hk, "lost", func() {
		// What the restart left: nothing of the lost run. Then the old
		// object's run is let go, so that the server can close.
		stored = st.contents(t)
		close(m.release)
	})
	if o.Code != "run_lost" || o.Name != "AgentrtError" || len(o.Seqs) == 0 {
		t.Fatalf("streamRun saw %+v, want events then run_lost", o)
	}
	if len(stored) != 0 {
		t.Fatalf("stored %q, want nothing", stored)
	}
}

// Ensure an abort with cancelOnAbort stops the run (DELETE): streamRun
// rejects AbortError "cancelled", the run's status is cancelled and its
// turn rolled back.
func TestRuns_StreamRunClient_AbortCancels(t *testing.T) {
	st := &memStore{}
	m := &gateModel{deltas: 5, started: make(chan struct{}, 1), release: make(chan struct{})}
	defer close(m.release)
	h := gatedObject(t, st, m, Config{})
	o := runStreamRun(t, h, "abort", nil)
	if o.Code != "cancelled" || o.Name != "AbortError" || len(o.Seqs) != 2 || o.RunID == "" {
		t.Fatalf("streamRun saw %+v, want two events then AbortError cancelled", o)
	}
	if a := do(t, h, "GET", "/v1/sessions/c1/runs/"+o.RunID, ""); a.Status != 200 || !strings.Contains(a.Body, `"status":"cancelled"`) {
		t.Fatalf("the run after the abort: %d %s", a.Status, a.Body)
	}
	if got := st.contents(t); len(got) != 0 {
		t.Fatalf("stored %q after the stop", got)
	}
}
