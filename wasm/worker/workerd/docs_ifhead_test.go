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

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// ifHeadDocHarness runs the send function of docs/worker.md's ifHead
// section on Node (argv: the empty conversation's head; the snippet on
// stdin as JSON) for three clients at once, each with its own copy and
// head, 20 turns each, and prints each client's copy.
const ifHeadDocHarness = `
const [empty] = process.argv.slice(1);
let input = "";
for await (const chunk of process.stdin) input += chunk;
const snippet = JSON.parse(input);
const make = new Function("token", "copy", "head", snippet + "\nreturn send;");
const copies = [[], [], []];
const out = { copies, error: "" };
try {
  await Promise.all(copies.map(async (copy, c) => {
    const send = make("unused", copy, empty);
    for (let n = 0; n < 20; n++) await send("c" + c + " turn " + n);
  }));
} catch (e) {
  out.error = String(e);
}
console.log(JSON.stringify(out));
`

// Ensure the merge-and-retry loop of docs/worker.md's ifHead section
// runs on workerd as written: three clients sending 20 turns each at
// once to one conversation get every turn stored once, and each
// client's copy is a prefix of the stored conversation.
func TestWorker_DocIfHeadLoop(t *testing.T) {
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
	b, err := os.ReadFile(filepath.Join(root, "docs", "worker.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\n## Writing one conversation from many clients")
	if i < 0 {
		t.Fatal("docs/worker.md has no ifHead section")
	}
	m := regexp.MustCompile("(?s)```js\n(.*?)```").FindStringSubmatch(doc[i:])
	if m == nil || !strings.Contains(m[1], `"https://chat.example.com/v1/sessions/chat-1/runs"`) {
		t.Fatal("the section has no ```js block posting to chat-1")
	}
	p := mustStart(t, workerd.Options{Durable: true})
	snippet := strings.ReplaceAll(m[1], `"https://chat.example.com/`, `"`+p.URL+`/`)
	js, _ := json.Marshal(snippet)
	cmd := exec.Command(node, "--input-type=module", "-e", ifHeadDocHarness, core.Head(nil))
	cmd.Stdin = strings.NewReader(string(js))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	guard := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	defer guard.Stop()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var o struct {
		Copies [][]msg
		Error  string
	}
	if err := json.Unmarshal(out, &o); err != nil || o.Error != "" {
		t.Fatalf("node printed %s (%v)\n%s", out, err, stderr.String())
	}
	final := hostCopy(t, p, "chat-1")
	if len(final) != 2*3*20 {
		t.Fatalf("%d messages stored, want %d", len(final), 2*3*20)
	}
	seen := map[string]bool{}
	for _, m := range final {
		if m.Role == "user" {
			if seen[m.Content] {
				t.Fatalf("%q stored twice", m.Content)
			}
			seen[m.Content] = true
		}
	}
	for c, cp := range o.Copies {
		if len(cp) > len(final) {
			t.Fatalf("client %d's copy is longer than the store", c)
		}
		for k := range cp {
			if cp[k] != final[k] {
				t.Fatalf("client %d's copy differs from the store at %d: %+v, stored %+v", c, k, cp[k], final[k])
			}
		}
	}
}
