package httpapi_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
	"github.com/agentrt/agentrt/mock"
)

type headMessage struct {
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
}

type headAnswer struct {
	Head     string        `json:"head"`
	Appended []headMessage `json:"appended"`
	Messages []headMessage `json:"messages"`
	Error    *struct {
		Code    string        `json:"code"`
		Head    string        `json:"head"`
		Missing []headMessage `json:"missing"`
	} `json:"error"`
}

func decodeHead(t testing.TB, r response) headAnswer {
	t.Helper()
	var a headAnswer
	if err := json.Unmarshal(r.body, &a); err != nil {
		t.Fatalf("%d %s: %v", r.status, r.body, err)
	}
	return a
}

// The head at HTTP: result.head and the ETag of a run's answer and of the
// session, ifHead in the body or as If-Match, 412 history_diverged with
// the head and the messages the caller lacks, nothing changed.
func TestHandler_Heads(t *testing.T) {
	h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{Model: &mock.Model{}})})
	empty := core.Head(nil)
	r := do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"one","ifHead":"`+empty+`"}`)
	first := decodeHead(t, r)
	if r.status != 200 || !core.ValidHead(first.Head) || r.header.Get("ETag") != `"`+first.Head+`"` {
		t.Fatalf("first run: %d %s etag %q", r.status, r.body, r.header.Get("ETag"))
	}
	g := do(t, h, "GET", "/v1/sessions/s", "")
	if s := decodeHead(t, g); s.Head != first.Head || g.header.Get("ETag") != `"`+first.Head+`"` {
		t.Fatalf("session: %s etag %q", g.body, g.header.Get("ETag"))
	}
	r = do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"two"}`, "If-Match", `"`+first.Head+`"`)
	second := decodeHead(t, r)
	if r.status != 200 {
		t.Fatalf("If-Match run: %d %s", r.status, r.body)
	}
	before := do(t, h, "GET", "/v1/sessions/s", "").body
	r = do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"late","ifHead":"`+first.Head+`"}`)
	refused := decodeHead(t, r)
	if r.status != 412 || refused.Error == nil || refused.Error.Code != "history_diverged" || refused.Error.Head != second.Head {
		t.Fatalf("stale ifHead: %d %s", r.status, r.body)
	}
	if !reflect.DeepEqual(refused.Error.Missing, second.Appended) {
		t.Fatalf("missing %+v, want %+v", refused.Error.Missing, second.Appended)
	}
	if after := do(t, h, "GET", "/v1/sessions/s", "").body; string(after) != string(before) {
		t.Fatalf("a refused run changed the session:\n%s\n%s", before, after)
	}
	for name, c := range map[string][2]string{
		"different":  {`{"input":"x","ifHead":"` + first.Head + `"}`, `"` + second.Head + `"`},
		"unquoted":   {`{"input":"x"}`, second.Head},
		"not a head": {`{"input":"x","ifHead":"v1"}`, ""},
		"not text":   {`{"input":"x","ifHead":1}`, ""},
	} {
		var hd []string
		if c[1] != "" {
			hd = []string{"If-Match", c[1]}
		}
		r := do(t, h, "POST", "/v1/sessions/s/runs", c[0], hd...)
		if a := decodeHead(t, r); r.status != 400 || a.Error == nil || a.Error.Code != "invalid_argument" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	if after := do(t, h, "GET", "/v1/sessions/s", "").body; string(after) != string(before) {
		t.Fatal("a refused run changed the session")
	}
	// Both given and the same is one precondition.
	r = do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"x","ifHead":"`+second.Head+`"}`, "If-Match", `"`+second.Head+`"`)
	if r.status != 200 {
		t.Fatalf("same head twice: %d %s", r.status, r.body)
	}
}

// clientsWrite has n clients write one conversation through h, turns
// turns in all, interleaved at random; each keeps its own copy of the
// conversation (the host's store). With ifHead a refused client appends
// what it lacks and retries on the head it was given. It returns the
// inputs accepted in order, the final conversation and each client's copy.
func clientsWrite(t *testing.T, h *httpapi.Handler, n, turns int, ifHead bool) ([]string, []headMessage, [][]headMessage) {
	type client struct {
		copy []headMessage
		head string
	}
	cs := make([]client, n)
	for i := range cs {
		cs[i].head = core.Head(nil)
	}
	rnd := rand.New(rand.NewSource(45))
	var accepted []string
	for k := 0; k < turns; k++ {
		c := &cs[rnd.Intn(n)]
		input := fmt.Sprintf("turn %d", k)
		for try := 0; ; try++ {
			body := `{"input":"` + input + `"`
			if ifHead {
				body += `,"ifHead":"` + c.head + `"`
			}
			r := do(t, h, "POST", "/v1/sessions/conv/runs", body+"}")
			a := decodeHead(t, r)
			if r.status == 200 {
				c.copy, c.head = append(c.copy, a.Appended...), a.Head
				accepted = append(accepted, input)
				break
			}
			if r.status != 412 || a.Error == nil || a.Error.Missing == nil || try > 0 {
				t.Fatalf("turn %d try %d: %d %s", k, try, r.status, r.body)
			}
			c.copy, c.head = append(c.copy, a.Error.Missing...), a.Error.Head
		}
	}
	// Each client reads what it lacks at the end the same way.
	session := decodeHead(t, do(t, h, "GET", "/v1/sessions/conv", ""))
	final := session.Messages
	copies := make([][]headMessage, n)
	for i := range cs {
		c := &cs[i]
		if ifHead && c.head != session.Head {
			r := do(t, h, "POST", "/v1/sessions/conv/runs", `{"input":"check","ifHead":"`+c.head+`"}`)
			if a := decodeHead(t, r); r.status == 412 {
				c.copy = append(c.copy, a.Error.Missing...)
			} else {
				t.Fatalf("client %d is behind at the end, yet: %d %s", i, r.status, r.body)
			}
		}
		copies[i] = c.copy
	}
	return accepted, final, copies
}

func users(msgs []headMessage) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == "user" {
			out = append(out, m.Content)
		}
	}
	return out
}

// Three clients, 1,000 turns: with ifHead every accepted turn is in the
// conversation once and in order, and every client's copy is it; without,
// the copies lose turns (which shows the test can fail).
func TestHandler_HeadsManyClients(t *testing.T) {
	const clients, turns = 3, 1000
	for _, ifHead := range []bool{true, false} {
		h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{Model: &mock.Model{}, Limits: core.Limits{MaxMessagesPerSession: 4 * turns}})})
		accepted, final, copies := clientsWrite(t, h, clients, turns, ifHead)
		if got := users(final); strings.Join(got, "|") != strings.Join(accepted, "|") || len(accepted) != turns {
			t.Fatalf("ifHead %v: the conversation's inputs are not the accepted turns in order (%d, %d)", ifHead, len(got), len(accepted))
		}
		same := 0
		for _, c := range copies {
			if reflect.DeepEqual(c, final) {
				same++
			}
		}
		if ifHead && same != clients {
			t.Fatalf("with ifHead, %d of %d copies are the conversation", same, clients)
		}
		if !ifHead && same == clients {
			t.Fatal("without ifHead no update was lost: the test cannot tell")
		}
	}
}

// The head corpus (testdata/edges/heads.json) over HTTP: the history
// check's head of each shape, each prefix's refusal with its missing,
// each edit's refusal without.
func TestEdges_Heads(t *testing.T) {
	c := contract.MustLoadHeads(t)
	h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{Model: &mock.Model{}})})
	checkHead := func(history json.RawMessage) string {
		r := do(t, h, "POST", "/v1/history/check", `{"history":`+string(history)+`}`)
		return decodeHead(t, r).Head
	}
	for name, raw := range c.Shapes {
		if got := checkHead(raw); got != c.Head {
			t.Errorf("%s: head %s, want %s", name, got, c.Head)
		}
	}
	if got := checkHead(c.Awaiting.History); got != c.Awaiting.Head {
		t.Errorf("awaiting: head %s, want %s", got, c.Awaiting.Head)
	}
	for i, p := range c.Prefixes {
		head := checkHead(c.PrefixJSON(t, p))
		if p.Head != "" && head != p.Head {
			t.Errorf("prefix %d: head %s, want %s", p.Messages, head, p.Head)
		}
		id := fmt.Sprintf("p%d", i)
		r := do(t, h, "POST", "/v1/sessions/"+id+"/runs", `{"input":"next","history":`+string(c.Shapes["module"])+`,"ifHead":"`+head+`"}`)
		a := decodeHead(t, r)
		if r.status != 412 || a.Error == nil || a.Error.Head != c.Head || len(a.Error.Missing) != p.Missing {
			t.Errorf("prefix %d: %d %s", p.Messages, r.status, r.body)
		}
		if g := do(t, h, "GET", "/v1/sessions/"+id, ""); g.status != 404 {
			t.Errorf("prefix %d: a refused run created the session", p.Messages)
		}
	}
	for _, ed := range c.Edits {
		if checkHead(ed.History) == c.Head {
			t.Errorf("edit %s: the head did not change", ed.Name)
		}
		r := do(t, h, "POST", "/v1/sessions/e/runs", `{"input":"next","history":`+string(ed.History)+`,"ifHead":"`+c.Head+`"}`)
		if a := decodeHead(t, r); r.status != 412 || a.Error == nil || a.Error.Missing != nil {
			t.Errorf("edit %s: %d %s", ed.Name, r.status, r.body)
		}
	}
}
