//go:build !js

package workerd_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// resumeDocHarness runs the ```js block of docs/worker.md's "The client:
// `agentrt/http`" (argv: the URL of js/http.js, the worker's URL, the
// scenario; the snippet follows on stdin's first line as JSON) on Node,
// as a reader's app runs it, with the functions the snippet leaves to the
// app (show, done, reloadConversation) and its token defined. Its fetch
// is the network a phone has: the run's stream is cut after its first
// event. Scenario "resume" does nothing more; "stop" aborts the
// snippet's controller once the resumed stream is open; "lost" prints
// "cut" and waits for a line naming the URL of a restarted worker, which
// its fetch uses from then on; "queued" cuts instead the start's
// connection before any answer, once the run's status says it waits
// behind another (queued), however long the request took to get there,
// and prints "cut". It prints what the app saw as JSON.
const resumeDocHarness = `
import { createInterface } from "node:readline";
const [httpURL, base, scenario] = process.argv.slice(1);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const snippet = JSON.parse((await lines.next()).value);
let target = base;
let stopRef = null;
const out = { seqs: [], types: [], runId: "", shown: "", doneCount: -1, reloaded: false, code: "", name: "" };
const netFetch = globalThis.fetch;
let cut = false;
globalThis.fetch = async (input, init) => {
  const url = String(input).replace(base, target);
  if (scenario === "queued" && !cut) {
    cut = true;
    const ctl = new AbortController();
    const started = netFetch(url, { ...init, signal: ctl.signal });
    started.catch(() => {});
    const status = url + "/" + encodeURIComponent(JSON.parse(init.body).runId);
    while ((await (await netFetch(status)).json()).status !== "queued") {
      await new Promise((r) => setTimeout(r, 10));
    }
    ctl.abort(new TypeError("terminated"));
    console.log("cut");
    return started;
  }
  if (cut) {
    const res = await netFetch(url, init);
    if (scenario === "stop" && init.method === "GET") setTimeout(() => stopRef.abort(), 0);
    return res;
  }
  cut = true;
  const ctl = new AbortController();
  init.signal?.addEventListener("abort", () => ctl.abort(init.signal.reason));
  const res = await netFetch(url, { ...init, signal: ctl.signal });
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let seen = 0;
  const body = new ReadableStream({
    async pull(c) {
      const { value, done } = await reader.read();
      if (done) return c.close();
      c.enqueue(value);
      seen += dec.decode(value, { stream: true }).split("\n\n").length - 1;
      if (seen >= 1) {
        ctl.abort();
        c.error(new TypeError("terminated"));
        if (scenario === "lost") {
          console.log("cut");
          target = (await lines.next()).value;
        }
      }
    },
  });
  return new Response(body, { status: res.status, headers: res.headers });
};
const token = "unused";
const show = (d) => { out.shown += d; };
const done = (result) => { out.doneCount = result.messageCount; };
const reloadConversation = () => { out.reloaded = true; };
const record = (ev, stop) => {
  stopRef = stop;
  out.seqs.push(ev.seq);
  out.types.push(ev.type);
  out.runId = ev.runId;
};
const { streamRun } = await import(httpURL);
try {
  await new (Object.getPrototypeOf(async function () {}).constructor)(
    "streamRun", "token", "show", "done", "reloadConversation", "record", snippet,
  )(streamRun, token, show, done, reloadConversation, record);
} catch (e) {
  out.code = e.code ?? String(e);
  out.name = e.name;
}
console.log(JSON.stringify(out));
process.exit(0);
`

// resumeDocSnippet returns the ```js block of docs/worker.md's section
// on agentrt/http, made runnable: its import dropped (the harness passes
// streamRun), its URL left for the harness to replace, and a record(ev,
// stop) call at the top of its loop.
func resumeDocSnippet(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "worker.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\n### The client: `agentrt/http`")
	if i < 0 {
		t.Fatal("docs/worker.md has no \"### The client: `agentrt/http`\" section")
	}
	m := regexp.MustCompile("(?s)```js\n(.*?)```").FindStringSubmatch(doc[i:])
	if m == nil {
		t.Fatal("the section has no ```js block")
	}
	code := m[1]
	for _, want := range []string{`import { streamRun } from "agentrt/http";`, `"https://chat.example.com"`, "for await (const ev of events) {", "const stop = new AbortController();"} {
		if !strings.Contains(code, want) {
			t.Fatalf("the snippet has no %s:\n%s", want, code)
		}
	}
	code = strings.Replace(code, `import { streamRun } from "agentrt/http";`, "", 1)
	return strings.Replace(code, "for await (const ev of events) {", "for await (const ev of events) {\n    record(ev, stop);", 1)
}

// resumeDocOutcome is what resumeDocHarness prints.
type resumeDocOutcome struct {
	Seqs      []int64
	Types     []string
	RunID     string
	Shown     string
	DoneCount int
	Reloaded  bool
	Code      string
	Name      string
}

// runResumeDoc runs the snippet of docs/worker.md against p in scenario;
// cut is called when the connection was cut ("lost" and "queued"): for
// "lost" it returns the restarted worker, for "queued" nil.
func runResumeDoc(t *testing.T, p *workerd.Process, scenario string, cut func() *workerd.Process) resumeDocOutcome {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed")
		}
		t.Skip("node is not installed")
	}
	snippet := strings.ReplaceAll(resumeDocSnippet(t), `"https://chat.example.com"`, `"`+p.URL+`"`)
	js, _ := json.Marshal(snippet)
	cmd := exec.Command(node, "--input-type=module", "-e", resumeDocHarness,
		"file://"+filepath.ToSlash(filepath.Join(root, "js", "http.js")), p.URL, scenario)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A guard against a hang, not a speed assertion.
	guard := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	defer guard.Stop()
	_, _ = stdin.Write(append(js, '\n'))
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	var last string
	for sc.Scan() {
		last = sc.Text()
		if last == "cut" && cut != nil {
			if q := cut(); q != nil {
				_, _ = io.WriteString(stdin, q.URL+"\n")
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var o resumeDocOutcome
	if err := json.Unmarshal([]byte(last), &o); err != nil {
		t.Fatalf("node printed %q\n%s", last, stderr.String())
	}
	return o
}

// Ensure the resume flow docs/worker.md shows runs on workerd as its
// snippet is written, with a slow model and a connection cut after the
// run's first event: the snippet reconnects with Last-Event-ID and gets
// every later event once (seqs 1..n, no gap, no repeat) and the Result;
// the turn is stored once; a reconnect after completion replays the
// tail; a stop on the resumed stream cancels the run and rolls its turn
// back; a workerd restart mid-run reaches the snippet as run_lost (its
// reloadConversation), the stored history unchanged.
func TestWorker_DocResumeFlow(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	up := newSlowUpstream(t, 2*time.Second)
	o := workerd.Options{Durable: true, AllowLocalNetwork: true, StateDir: t.TempDir(), Env: durableEnv(openaiEnv(up.URL))}
	p := mustStart(t, o)

	t.Run("Resume", func(t *testing.T) {
		r := runResumeDoc(t, p, "resume", nil)
		if r.Code != "" || r.DoneCount != 2 || len(r.Types) < 2 || r.Types[len(r.Types)-1] != "run.completed" || !strings.HasPrefix(r.RunID, "r-") {
			t.Fatalf("the snippet saw %+v, want every event to run.completed and the Result", r)
		}
		for i, s := range r.Seqs {
			if s != int64(i+1) {
				t.Fatalf("event %d has seq %d, want %d: %v", i, s, i+1, r.Seqs)
			}
		}
		if up.cancelled.Load() != 0 {
			t.Fatal("the upstream call was abandoned when the connection was cut")
		}
		if s := storedOf(t, p, "chat-1"); s.Messages != 2 || s.Writes != 1 {
			t.Fatalf("stored %+v, want the turn once", s)
		}
		last := r.Seqs[len(r.Seqs)-1]
		req, _ := http.NewRequest("GET", p.URL+"/v1/sessions/chat-1/runs/"+r.RunID+"/events", nil)
		req.Header.Set("Last-Event-ID", strconv.FormatInt(last-2, 10))
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		tail := readSSE(bufio.NewScanner(res.Body))
		res.Body.Close()
		if len(tail) != 2 || tail[0].id != last-1 || tail[1].id != last || tail[1].typ != "run.completed" {
			t.Fatalf("the tail after completion %+v, want events %d and %d, run.completed", tail, last-1, last)
		}
	})

	t.Run("StopResumed", func(t *testing.T) {
		r := runResumeDoc(t, p, "stop", nil)
		if r.Code != "cancelled" || r.Name != "AbortError" || r.RunID == "" || r.DoneCount != -1 {
			t.Fatalf("the snippet saw %+v, want AbortError cancelled", r)
		}
		waitFor(t, "the stopped run's end", func() bool { return runStatusOf(t, p, "chat-1", r.RunID) == "cancelled" })
		if s := storedOf(t, p, "chat-1"); s.Messages != 2 || s.Writes != 1 {
			t.Fatalf("stored %+v after the stop, want the first turn only", s)
		}
	})

	t.Run("RestartLost", func(t *testing.T) {
		var q *workerd.Process
		r := runResumeDoc(t, p, "lost", func() *workerd.Process {
			p.Stop()
			q = mustStart(t, o)
			return q
		})
		if r.Code != "" || !r.Reloaded || r.DoneCount != -1 || len(r.Seqs) == 0 || r.Types[len(r.Types)-1] == "run.completed" {
			t.Fatalf("the snippet saw %+v, want the first events, then run_lost and reloadConversation", r)
		}
		if q == nil {
			t.Fatal("the stream was never cut")
		}
		if got := runStatusOf(t, q, "chat-1", r.RunID); got != "run_lost" {
			t.Fatalf("the run after the restart: %s, want run_lost", got)
		}
		if s := storedOf(t, q, "chat-1"); s.Messages != 2 {
			t.Fatalf("stored %+v after the restart, want the first turn only", s)
		}
	})
}

// Ensure the snippet of docs/worker.md recovers a run whose start lost
// its connection while the run waited behind another run of the
// conversation: it reconnects to the run's events, finds the run queued
// (not run_lost, which sent the reader to reload the conversation and
// send the input again while the queued run still ran), and gets every
// event once and the Result; the turn is stored once.
func TestWorker_DocResumeFlow_Queued(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	up := newSlowUpstream(t, 100*time.Millisecond)
	p := mustStart(t, workerd.Options{Durable: true, AllowLocalNetwork: true, Env: durableEnv(openaiEnv(up.URL))})
	first := make(chan error, 1)
	go func() {
		_, _, err := rawPost(p, "/v1/sessions/chat-1/runs", `{"input":"a held question"}`)
		first <- err
	}()
	waitFor(t, "the first upstream call", func() bool { return up.inFlight.Load() > 0 })
	// The first run holds the conversation until the snippet's start,
	// queued behind it, has lost its connection.
	r := runResumeDoc(t, p, "queued", func() *workerd.Process { up.release(); return nil })
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if r.Code != "" || r.Reloaded || r.DoneCount != 4 || len(r.Types) < 2 || r.Types[len(r.Types)-1] != "run.completed" {
		t.Fatalf("the snippet saw %+v, want every event of the queued run to run.completed and its Result", r)
	}
	for i, s := range r.Seqs {
		if s != int64(i+1) {
			t.Fatalf("event %d has seq %d, want %d: %v", i, s, i+1, r.Seqs)
		}
	}
	if s := storedOf(t, p, "chat-1"); s.Messages != 4 || s.Writes != 2 {
		t.Fatalf("stored %+v, want the two turns once each", s)
	}
}
