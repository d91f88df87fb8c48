//go:build !js

package workerd_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// evictStep is one request of a durable scenario on its conversation:
// method, the path after /v1/sessions/{id} and the body.
type evictStep struct{ method, tail, body string }

func runStep(body string) evictStep { return evictStep{"POST", "/runs", body} }

// A reply of the echo model to input at the n-th message.
func echoReply(input string, n int) string {
	return fmt.Sprintf("echo: %s (model received %d messages)", input, n)
}

// durableScenarios are the durable deployment's scenarios (turns without
// history, a host's history in each seed mode, the stored-bytes limit,
// DELETE, bodies the API refuses), each run on a warm object and on one
// whose instance ends before every request but the first.
var durableScenarios = []struct {
	name, desc string
	env        map[string]string
	steps      []evictStep
}{
	{"turns", "turns without history", nil,
		[]evictStep{runStep(`{"input":"a"}`), runStep(`{"input":"b"}`), runStep(`{"input":"c"}`), {"GET", "", ""}}},
	{"emptyHistory", "three turns, then an empty history", nil,
		[]evictStep{runStep(`{"input":"a"}`), runStep(`{"input":"b"}`), runStep(`{"input":"c"}`),
			runStep(`{"input":"d","history":[]}`), runStep(`{"input":"e"}`)}},
	{"prefixHistory", "three turns, then a prefix of them", nil,
		[]evictStep{runStep(`{"input":"a"}`), runStep(`{"input":"b"}`), runStep(`{"input":"c"}`),
			runStep(`{"input":"d","history":[{"role":"user","content":"a"},{"role":"assistant","content":"` + echoReply("a", 1) + `"}]}`)}},
	{"reconcileEmpty", "reconcile with an empty history", nil,
		[]evictStep{runStep(`{"input":"a"}`), runStep(`{"input":"b"}`), runStep(`{"input":"c","history":[],"policy":{"seedMode":"reconcile"}}`)}},
	{"reconcilePrefix", "reconcile with a prefix history", nil,
		[]evictStep{runStep(`{"input":"a"}`), runStep(`{"input":"b"}`),
			runStep(`{"input":"c","policy":{"seedMode":"reconcile"},"history":[{"role":"user","content":"a"},{"role":"assistant","content":"` + echoReply("a", 1) + `"}]}`)}},
	{"reconcileDiverged", "reconcile with another history", nil,
		[]evictStep{runStep(`{"input":"a"}`), runStep(`{"input":"b"}`),
			runStep(`{"input":"c","policy":{"seedMode":"reconcile"},"history":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}`),
			runStep(`{"input":"d"}`)}},
	{"ifEmptyDiverged", "if-empty with another history", nil,
		[]evictStep{runStep(`{"input":"a"}`), runStep(`{"input":"b","history":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}`),
			runStep(`{"input":"c"}`)}},
	{"limitDelete", "the stored-bytes limit, a host's history, DELETE", map[string]string{"AGENTRT_MAX_STORED_BYTES": "700"},
		[]evictStep{runStep(`{"input":"` + strings.Repeat("x", 60) + `"}`), runStep(`{"input":"` + strings.Repeat("x", 60) + `"}`),
			runStep(`{"input":"` + strings.Repeat("x", 60) + `"}`), runStep(`{"input":"` + strings.Repeat("x", 60) + `"}`),
			runStep(`{"input":"` + strings.Repeat("x", 400) + `"}`),
			runStep(`{"input":"short","policy":{"seedMode":"reconcile"},"history":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`),
			{"DELETE", "", ""}, {"GET", "", ""}, runStep(`{"input":"again"}`)}},
	{"repair", "a repaired history, then turns without repair", nil,
		[]evictStep{runStep(`{"input":"a"}`), runStep(`{"input":"b","history":` + brokenHistory + `,"policy":{"seedMode":"reconcile"}}`),
			runStep(`{"input":"b","history":` + brokenHistory + `,"policy":{"seedMode":"reconcile","repair":true}}`),
			runStep(`{"input":"c"}`), {"GET", "", ""}}},
	{"badBodies", "bodies the API refuses", nil,
		[]evictStep{runStep(`{"input":"a"}`), runStep(`null`), runStep(`[]`), runStep(`{"input":5}`),
			runStep(`{"input":"b","history":[{"role":"tool","content":"x"}]}`), runStep(`{"input":"c"}`)}},
}

// stepOutcome is what one request did: its answer and the stored count
// after it.
type stepOutcome struct {
	Status       int
	Code         string
	Reply        string
	MessageCount int
	Stored       int
}

// Ensure, on workerd, that what a request does to a durable conversation
// does not depend on whether its object held the session: each scenario
// runs on a warm object and on one whose Go instance ends (as on an
// eviction) between every pair of requests, and both answer and store
// the same.
func TestDurable_WarmAndEvicted_Agree(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	for _, sc := range durableScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel() // its own workerd
			p := mustStart(t, workerd.Options{Durable: true, Env: durableEnv(sc.env)})
			run := func(id string, evict bool) []stepOutcome {
				out := make([]stepOutcome, len(sc.steps))
				for i, s := range sc.steps {
					if evict && i > 0 {
						if r := post(t, p, "/v1/sessions/"+id+"/_test/fault/exit", ""); r.Status != http.StatusInternalServerError {
							t.Fatalf("ending the instance of %s: %d %+v", id, r.Status, r.Error)
						}
					}
					var r result
					if s.method == "POST" {
						r = post(t, p, "/v1/sessions/"+id+s.tail, s.body)
					} else {
						r = doReq(t, p, s.method, "/v1/sessions/"+id+s.tail, nil)
					}
					out[i] = stepOutcome{r.Status, r.Error.Code, r.Reply.Content, r.MessageCount, storedOf(t, p, id).Messages}
				}
				return out
			}
			warm, evicted := run(sc.name+"-warm", false), run(sc.name+"-evicted", true)
			for i := range warm {
				if warm[i] != evicted[i] {
					t.Errorf("%s, request %d (%s %s %s):\nwarm    %+v\nevicted %+v", sc.desc, i,
						sc.steps[i].method, sc.steps[i].tail, sc.steps[i].body, warm[i], evicted[i])
				}
			}
		})
	}
}

// brokenHistory ends with a tool call that has no result: seeded only
// with policy.repair, which inserts the interrupted-call marker.
const brokenHistory = `[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"lookup","arguments":"{}"}]}]`

// Ensure the object stores the healed copy itself: after a turn seeded
// with policy.repair from a broken history, the stored copy (read back
// after a restart of workerd) passes POST /v1/history/check and a turn
// without repair seeds from it.
func TestDurable_RepairIsStored(t *testing.T) {
	t.Parallel()
	o := workerd.Options{Durable: true, StateDir: t.TempDir(), Env: durableEnv(nil)}
	p := mustStart(t, o)
	r := post(t, p, "/v1/sessions/healed/runs", `{"input":"next","policy":{"repair":true},"history":`+brokenHistory+`}`)
	if r.Status != 200 || r.MessageCount != 5 {
		t.Fatalf("the repaired turn: %d %+v", r.Status, r.Error)
	}
	p.Stop()
	p = mustStart(t, o)
	stored := hostCopy(t, p, "healed")
	if len(stored) != 5 || stored[2].Role != "tool" || !strings.HasPrefix(stored[2].Content, "Tool call interrupted") {
		t.Fatalf("stored %+v, want the history, the marker and the turn", stored)
	}
	var check struct {
		OK       bool  `json:"ok"`
		Problems []any `json:"problems"`
	}
	// The stored copy as it is (msg leaves tool_calls out).
	res, err := client.Get(p.URL + "/v1/sessions/healed")
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Messages json.RawMessage `json:"messages"`
	}
	err = json.NewDecoder(res.Body).Decode(&raw)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	b := []byte(`{"history":` + string(raw.Messages) + `}`)
	res, err = client.Post(p.URL+"/v1/history/check", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(res.Body).Decode(&check)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 || !check.OK {
		t.Fatalf("check of the stored copy: %d %+v %v", res.StatusCode, check, err)
	}
	r = post(t, p, "/v1/sessions/healed/runs", `{"input":"later"}`)
	if r.Status != 200 || r.Seed.Mode != "cold" || r.Seed.Seeded != 5 || r.MessageCount != 7 {
		t.Fatalf("a later turn without repair: %d seed %+v count %d %+v", r.Status, r.Seed, r.MessageCount, r.Error)
	}
}

// Ensure the finding's case across a restart of workerd: three stored
// turns, then a request with an empty history after the restart keeps
// all of them (8 messages stored, as on a warm object).
func TestDurable_EmptyHistory_AfterRestart(t *testing.T) {
	t.Parallel()
	o := workerd.Options{Durable: true, StateDir: t.TempDir(), Env: durableEnv(nil)}
	p := mustStart(t, o)
	for _, in := range []string{"a", "b", "c"} {
		if r := post(t, p, "/v1/sessions/kept/runs", turnBody{Input: in}); r.Status != 200 {
			t.Fatalf("turn %s: %d %+v", in, r.Status, r.Error)
		}
	}
	p.Stop()
	p = mustStart(t, o)
	r := post(t, p, "/v1/sessions/kept/runs", `{"input":"d","history":[]}`)
	if r.Status != 200 || r.MessageCount != 8 || r.Reply.Content != echoReply("d", 7) {
		t.Fatalf("after the restart: %d %q count %d %+v, want 8 messages", r.Status, r.Reply.Content, r.MessageCount, r.Error)
	}
	if s := storedOf(t, p, "kept"); s.Messages != 8 {
		t.Fatalf("stored %+v, want 8 messages", s)
	}
}

// Ensure session ids that decodeURIComponent refuses are refused
// invalid_argument in the durable deployment (no object can be named by
// them, and the Worker's own instance would keep them nowhere), while an
// id of encoded UTF-8 reaches its object.
func TestDurable_UndecodableIDs(t *testing.T) {
	t.Parallel()
	p := mustStart(t, workerd.Options{Durable: true, Env: durableEnv(nil)})
	for _, id := range []string{"%FF", "%ED%A0%80", "a%E2%82", "%C0%AF"} {
		for _, m := range []string{"POST /runs", "GET ", "DELETE "} {
			method, tail, _ := strings.Cut(m, " ")
			var r result
			if method == "POST" {
				r = post(t, p, "/v1/sessions/"+id+tail, `{"input":"x"}`)
			} else {
				r = doReq(t, p, method, "/v1/sessions/"+id+tail, nil)
			}
			if r.Status != 400 || r.Error.Code != "invalid_argument" {
				t.Errorf("%s /v1/sessions/%s%s: %d %+v, want 400 invalid_argument", method, id, tail, r.Status, r.Error)
			}
		}
	}
	if r := post(t, p, "/v1/sessions/%E2%82%AC/runs", `{"input":"x"}`); r.Status != 200 {
		t.Fatalf("an encoded euro sign: %d %+v", r.Status, r.Error)
	}
	if s := storedOf(t, p, "%E2%82%AC"); s.Messages != 2 {
		t.Fatalf("stored %+v, want the turn in the object", s)
	}
}
