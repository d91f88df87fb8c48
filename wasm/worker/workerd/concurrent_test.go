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
