//go:build !js

package workerd_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// writer is one client of a conversation that keeps its own copy of it,
// as a host's store does, and sends it with every turn.
type writer struct {
	name     string
	copy     []msg
	accepted []string // the inputs of its turns the object answered 200
}

// turn runs input on session id with the writer's copy as the history
// (seed mode reconcile: the host's copy is the truth) and, when it is
// accepted, appends what the turn appended to the copy.
func (c *writer) turn(t *testing.T, p *workerd.Process, id, input string) {
	body, _ := json.Marshal(map[string]any{"input": input, "history": c.copy, "policy": map[string]any{"seedMode": "reconcile"}})
	res, err := client.Post(p.URL+"/v1/sessions/"+id+"/runs", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Error(err)
		return
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Errorf("%s %q: %d %s", c.name, input, res.StatusCode, b)
		return
	}
	var r struct {
		Appended []msg `json:"appended"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Errorf("%s %q: %v", c.name, input, err)
		return
	}
	c.accepted = append(c.accepted, input)
	c.copy = append(c.copy, r.Appended...)
}

// Ensure, on workerd, the lost updates the run option ifHead is for:
// three clients each keeping their own copy of one conversation write
// 90 turns to it concurrently, each turn sending the client's copy as
// the history. Every turn is accepted, yet the stored conversation lacks
// some of them (a client's stale copy replaced the turns the others
// stored meanwhile), and the clients' copies differ from it.
func TestDurable_ConcurrentWriters_LoseUpdatesWithoutIfHead(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	p := mustStart(t, workerd.Options{Durable: true})
	const clients, turns = 3, 30
	ws := make([]*writer, clients)
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = &writer{name: fmt.Sprintf("c%d", i)}
		wg.Add(1)
		go func(c *writer) {
			defer wg.Done()
			for n := 0; n < turns; n++ {
				c.turn(t, p, "lost", fmt.Sprintf("%s turn %d", c.name, n))
			}
		}(ws[i])
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	final := hostCopy(t, p, "lost")
	seen := map[string]int{}
	for _, m := range final {
		if m.Role == "user" {
			seen[m.Content]++
		}
	}
	lost, accepted, differ := 0, 0, 0
	for _, c := range ws {
		accepted += len(c.accepted)
		for _, in := range c.accepted {
			if seen[in] == 0 {
				lost++
			}
		}
		if !sameMessages(c.copy, final) {
			differ++
		}
	}
	t.Logf("%d turns accepted, %d of them not in the stored conversation of %d messages; %d of %d clients' copies differ from it",
		accepted, lost, len(final), differ, clients)
	if accepted != clients*turns {
		t.Fatalf("%d turns accepted, want %d", accepted, clients*turns)
	}
	if lost == 0 {
		t.Fatalf("no accepted turn was lost: the concurrent writers did not overlap")
	}
	if differ == 0 {
		t.Fatalf("every client's copy equals the stored conversation")
	}
}

func sameMessages(a, b []msg) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// headWriter is a client that writes with ifHead: it keeps its copy of
// the conversation and the head of it, and merges what it lacks when a
// turn is refused.
type headWriter struct {
	name     string
	copy     []json.RawMessage
	head     string
	accepted []string
	retries  int
}

// turn runs input with ifHead until it is accepted: a 412
// history_diverged gives the current head and the messages the copy
// lacks, which the client appends before it tries again.
func (c *headWriter) turn(t *testing.T, p *workerd.Process, id, input string) {
	for {
		body, _ := json.Marshal(map[string]any{"input": input, "ifHead": c.head})
		res, err := client.Post(p.URL+"/v1/sessions/"+id+"/runs", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Error(err)
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var r struct {
			Appended []json.RawMessage `json:"appended"`
			Head     string            `json:"head"`
			Error    struct {
				Code    string            `json:"code"`
				Head    string            `json:"head"`
				Missing []json.RawMessage `json:"missing"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Errorf("%s %q: %d %v %s", c.name, input, res.StatusCode, err, b)
			return
		}
		switch {
		case res.StatusCode == http.StatusOK:
			if res.Header.Get("ETag") != `"`+r.Head+`"` {
				t.Errorf("%s %q: ETag %q, head %q", c.name, input, res.Header.Get("ETag"), r.Head)
			}
			c.accepted = append(c.accepted, input)
			c.copy = append(c.copy, r.Appended...)
			c.head = r.Head
			return
		case res.StatusCode == http.StatusPreconditionFailed && r.Error.Code == "history_diverged" && r.Error.Head != "":
			c.copy = append(c.copy, r.Error.Missing...)
			c.head = r.Error.Head
			c.retries++
		default:
			t.Errorf("%s %q: %d %s", c.name, input, res.StatusCode, b)
			return
		}
	}
}

// Ensure, on workerd, that ifHead keeps every turn of concurrent
// writers: three clients write 1,000 turns in all to one conversation
// concurrently, each turn with ifHead, merging the missing messages and
// retrying when refused. Every accepted turn is in the stored
// conversation exactly once, each client's in the order it sent them,
// and every client's copy is the stored conversation (up to the turns
// the others stored after its last one, which it lacks: its copy is a
// prefix, never a divergent history). The same without ifHead loses
// turns (TestDurable_ConcurrentWriters_LoseUpdatesWithoutIfHead).
func TestDurable_ConcurrentWriters_IfHeadKeepsEveryTurn(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	p := mustStart(t, workerd.Options{Durable: true})
	const clients, turns = 3, 334 // 1,002 turns in all
	start := time.Now()
	ws := make([]*headWriter, clients)
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = &headWriter{name: fmt.Sprintf("c%d", i), head: core.Head(nil)}
		wg.Add(1)
		go func(c *headWriter) {
			defer wg.Done()
			for n := 0; n < turns && !t.Failed(); n++ {
				c.turn(t, p, "kept", fmt.Sprintf("%s turn %d", c.name, n))
			}
		}(ws[i])
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	final := hostCopy(t, p, "kept")
	pos := map[string]int{}
	for i, m := range final {
		if m.Role == "user" {
			if _, dup := pos[m.Content]; dup {
				t.Fatalf("%q is stored twice", m.Content)
			}
			pos[m.Content] = i
		}
	}
	retries := 0
	for _, c := range ws {
		retries += c.retries
		last := -1
		for _, in := range c.accepted {
			i, ok := pos[in]
			if !ok {
				t.Fatalf("%s's accepted %q is not stored", c.name, in)
			}
			if i < last {
				t.Fatalf("%s's %q is stored before its earlier turn", c.name, in)
			}
			last = i
		}
		if len(c.accepted) != turns {
			t.Fatalf("%s: %d turns accepted, want %d", c.name, len(c.accepted), turns)
		}
		if len(c.copy) > len(final) {
			t.Fatalf("%s's copy has %d messages, the store %d", c.name, len(c.copy), len(final))
		}
		for i, raw := range c.copy {
			var m msg
			_ = json.Unmarshal(raw, &m)
			if m != final[i] {
				t.Fatalf("%s's copy differs from the store at %d: %+v, stored %+v", c.name, i, m, final[i])
			}
		}
	}
	if len(final) != 2*clients*turns {
		t.Fatalf("%d messages stored, want %d", len(final), 2*clients*turns)
	}
	t.Logf("%d turns by %d clients in %v, %d refusals merged and retried", clients*turns, clients, time.Since(start).Round(time.Millisecond), retries)
}
