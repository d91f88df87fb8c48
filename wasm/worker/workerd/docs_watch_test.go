//go:build !js

package workerd_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// watchDocHarness runs the watcher snippet of docs/worker.md's "Live
// conversation events" (argv: the worker's URL; the snippet on stdin as
// JSON) on Node, with the onEvent and token it leaves to the app. Its
// fetch cuts the first connection after its first event, as a network
// that drops would, and reconnects 1.5 s later, once the run went on
// (and ended) without it. The snippet's onEvent records each event and stops
// the watcher after the first run.completed. It prints what it saw.
const watchDocHarness = `
const [base] = process.argv.slice(1);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const snippet = JSON.parse(input);
const out = { ids: [], types: [], fetches: 0, cut: false, error: "" };
const netFetch = globalThis.fetch;
globalThis.fetch = async (url, init) => {
  out.fetches++;
  if (out.fetches > 1) {
    // Back once the run went on without this watcher.
    await new Promise((r) => setTimeout(r, 1500));
    return netFetch(url, init);
  }
  const res = await netFetch(url, init);
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let text = "";
  const body = new ReadableStream({
    async pull(c) {
      const { value, done } = await reader.read();
      if (done) return c.close();
      c.enqueue(value);
      text += dec.decode(value, { stream: true });
      if (text.includes("event: ") && text.slice(text.indexOf("event: ")).includes("\n\n")) {
        out.cut = true;
        reader.cancel().catch(() => {});
        c.error(new TypeError("terminated"));
      }
    },
  });
  return new Response(body, { status: res.status, headers: res.headers });
};
setTimeout(() => { out.error = "no run.completed within 15 s"; console.log(JSON.stringify(out)); process.exit(0); }, 15000);
const token = "unused";
const onEvent = (ev, id, stop) => {
  out.ids.push(id);
  out.types.push(ev.type);
  if (ev.type === "run.completed") stop.abort();
};
try {
  await new (Object.getPrototypeOf(async function () {}).constructor)("token", "onEvent", snippet)(token, onEvent);
} catch (e) {
  out.error = String(e);
}
console.log(JSON.stringify(out));
process.exit(0);
`

// watchDocSnippet returns the ```js block of docs/worker.md's "Live
// conversation events", its URL left for the harness and its onEvent
// call given the event's id and the controller.
func watchDocSnippet(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "worker.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\n## Live conversation events")
	if i < 0 {
		t.Fatal("docs/worker.md has no \"## Live conversation events\" section")
	}
	m := regexp.MustCompile("(?s)```js\n(.*?)```").FindStringSubmatch(doc[i:])
	if m == nil {
		t.Fatal("the section has no ```js block")
	}
	code := m[1]
	for _, want := range []string{`"https://chat.example.com/v1/sessions/chat-1/events"`, "onEvent(data);", `headers["Last-Event-ID"] = lastId;`} {
		if !strings.Contains(code, want) {
			t.Fatalf("the snippet has no %s:\n%s", want, code)
		}
	}
	return strings.Replace(code, "onEvent(data);", "onEvent(data, id, stop);", 1)
}

// Ensure the watcher snippet of docs/worker.md runs on workerd as it is
// written: started before a run another client starts, its connection
// cut after its first event and back only after the run ended, it
// reconnects with Last-Event-ID and sees the run from run.started to
// run.completed, each event once, the ids increasing by one.
func TestWorker_DocWatchFlow(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed")
		}
		t.Skip("node is not installed")
	}
	up := newSlowUpstream(t, 500*time.Millisecond)
	p := mustStart(t, workerd.Options{Durable: true, AllowLocalNetwork: true, Env: durableEnv(openaiEnv(up.URL))})
	snippet := strings.ReplaceAll(watchDocSnippet(t), `"https://chat.example.com/`, `"`+p.URL+`/`)
	js, _ := json.Marshal(snippet)
	cmd := exec.Command(node, "--input-type=module", "-e", watchDocHarness, p.URL)
	cmd.Stdin = strings.NewReader(string(js))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	guard := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	defer guard.Stop()
	waitFor(t, "the snippet's watcher", func() bool { return storedOf(t, p, "chat-1").Events.Watchers == 1 })
	if st, body, err := rawPost(p, "/v1/sessions/chat-1/runs", `{"input":"from another device"}`); err != nil || st != 200 {
		t.Fatalf("the run: %d %s %v", st, body, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var o struct {
		IDs     []string
		Types   []string
		Fetches int
		Cut     bool
		Error   string
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout.String())), &o); err != nil {
		t.Fatalf("node printed %q\n%s", stdout.String(), stderr.String())
	}
	if o.Error != "" || !o.Cut || o.Fetches != 2 {
		t.Fatalf("the snippet: %+v, want one cut and one reconnect", o)
	}
	if got := strings.ReplaceAll(strings.Join(o.Types, " "), " model.delta", ""); got != "run.started message.appended message.appended run.completed" {
		t.Fatalf("the snippet saw %s", got)
	}
	for i := 1; i < len(o.IDs); i++ {
		var a, b int64
		_ = json.Unmarshal([]byte(o.IDs[i-1]), &a)
		_ = json.Unmarshal([]byte(o.IDs[i]), &b)
		if b != a+1 {
			t.Fatalf("ids %v: not one more each", o.IDs)
		}
	}
	waitFor(t, "the snippet's watchers dropped", func() bool { return storedOf(t, p, "chat-1").Events.Watchers == 0 })
}
