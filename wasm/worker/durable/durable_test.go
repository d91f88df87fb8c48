package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// memStore is a Store in memory that counts what it is asked to do.
type memStore struct {
	mu     sync.Mutex
	rows   [][]byte
	writes []int64 // bytes per Write
	loads  int
	fail   error
}

func (m *memStore) Stat() (int, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, r := range m.rows {
		n += int64(len(r))
	}
	return len(m.rows), n, nil
}

func (m *memStore) Load() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads++
	return append(append([]byte("["), bytes.Join(m.rows, []byte(","))...), ']'), nil
}

func (m *memStore) Write(from int, msgs [][]byte) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return 0, m.fail
	}
	if from > len(m.rows) {
		return 0, errors.New("memStore: a gap")
	}
	var n int64
	for _, r := range msgs {
		n += int64(len(r))
	}
	m.writes = append(m.writes, n)
	rows := int64(len(m.rows) - from + len(msgs))
	m.rows = append(m.rows[:from:from], msgs...)
	return rows, nil
}

func (m *memStore) Clear() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows = nil
	return nil
}

func (m *memStore) contents(t *testing.T) []string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, len(m.rows))
	for i, r := range m.rows {
		var msg struct{ Content string }
		if err := json.Unmarshal(r, &msg); err != nil {
			t.Fatalf("stored row %d is not a message: %s", i, r)
		}
		out[i] = msg.Content
	}
	return out
}

// object is one Durable Object's handler over st: a fresh runtime, as
// after a restart.
func object(t *testing.T, st Store, cfg Config) *Handler {
	t.Helper()
	rt, err := core.New(core.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	cfg.API = httpapi.New(httpapi.Config{Runtime: rt, Token: "tok", MaxBodyBytes: APIBodyLimit(cfg.MaxBodyBytes, cfg.MaxStoredBytes)})
	cfg.Runtime, cfg.Store = rt, st
	return New(cfg)
}

type answer struct {
	Status int    `json:"-"`
	Body   string `json:"-"`
	Reply  struct{ Content string }
	Seed   struct {
		Mode   string
		Seeded int
	}
	MessageCount int
	Error        struct{ Code string }
}

func do(t *testing.T, h http.Handler, method, path, body string, headers ...string) answer {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	a := answer{Status: rec.Code, Body: rec.Body.String()}
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") && rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, rec.Body)
		}
	}
	return a
}

func turn(t *testing.T, h http.Handler, input string) answer {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"input": input})
	return do(t, h, "POST", "/v1/sessions/c1/runs", string(b))
}

// Ensure turns without history carry context, are stored one turn per
// write, and an object started again over the same storage seeds its
// session from it once (seed.mode cold) and goes on.
func TestHandler_Run_StoresAndSeedsCold(t *testing.T) {
	st := &memStore{}
	h := object(t, st, Config{})
	for i := 1; i <= 5; i++ {
		a := turn(t, h, "m")
		want := "(model received " + itoa(2*i-1) + " messages)"
		if a.Status != 200 || !strings.Contains(a.Reply.Content, want) {
			t.Fatalf("turn %d: got %d %q, want 200 and %q", i, a.Status, a.Body, want)
		}
	}
	if got := len(st.contents(t)); got != 10 {
		t.Fatalf("stored %d messages, want 10", got)
	}
	if len(st.writes) != 5 || st.loads != 0 {
		t.Fatalf("writes %d, loads %d: want 5 writes and no load", len(st.writes), st.loads)
	}
	for i, n := range st.writes {
		if n != st.writes[0] {
			t.Errorf("write %d is %d bytes, write 0 %d: want one turn each", i, n, st.writes[0])
		}
	}
	h2 := object(t, st, Config{})
	a := turn(t, h2, "again")
	if a.Status != 200 || a.Seed.Mode != "cold" || a.Seed.Seeded != 10 || !strings.Contains(a.Reply.Content, "received 11 messages") {
		t.Fatalf("after restart: got %d %s, want cold, 10 seeded, 11 messages", a.Status, a.Body)
	}
	a = turn(t, h2, "more")
	if a.Seed.Mode != "none" || a.MessageCount != 14 {
		t.Fatalf("the next turn: got %s, want seed none and 14 messages", a.Body)
	}
	if got := len(st.contents(t)); got != 14 || st.loads != 1 {
		t.Fatalf("stored %d, loads %d: want 14 and one load", got, st.loads)
	}
	// Answered from storage by an object that holds no session.
	h3 := object(t, st, Config{})
	if g := do(t, h3, "GET", "/v1/sessions/c1", ""); g.Status != 200 || g.MessageCount != 14 {
		t.Fatalf("GET from storage: %d %s", g.Status, g.Body)
	}
}

// Ensure a request's history is the truth: the stored copy is brought in
// line, rewriting only from where it differs.
func TestHandler_Run_HistoryReconciles(t *testing.T) {
	st := &memStore{}
	h := object(t, st, Config{})
	turn(t, h, "a")
	turn(t, h, "b")
	before := append([]string(nil), st.contents(t)...)
	// A host that sends what is stored appends only the turn.
	h2 := object(t, st, Config{})
	hist, _ := json.Marshal(map[string]any{"input": "c", "history": []map[string]string{
		{"role": "user", "content": before[0]}, {"role": "assistant", "content": before[1]},
		{"role": "user", "content": before[2]}, {"role": "assistant", "content": before[3]}}})
	a := do(t, h2, "POST", "/v1/sessions/c1/runs", string(hist))
	if a.Status != 200 || a.Seed.Mode != "cold" || a.MessageCount != 6 {
		t.Fatalf("turn with history: %s", a.Body)
	}
	if got := st.contents(t); len(got) != 6 || got[4] != "c" {
		t.Fatalf("stored %q", got)
	}
	if last := st.writes[len(st.writes)-1]; last != st.writes[0] {
		t.Errorf("the reconciled turn wrote %d bytes, one turn is %d", last, st.writes[0])
	}
	// A history that diverged is not taken in if-empty mode, as a warm
	// session would not take it: the turn follows the stored copy.
	h3 := object(t, st, Config{})
	a = do(t, h3, "POST", "/v1/sessions/c1/runs", `{"input":"y","history":[{"role":"user","content":"other"},{"role":"assistant","content":"thing"}]}`)
	if a.Status != 200 || a.MessageCount != 8 {
		t.Fatalf("diverged, if-empty: %s", a.Body)
	}
	// In reconcile mode it replaces the stored tail.
	h3 = object(t, st, Config{})
	a = do(t, h3, "POST", "/v1/sessions/c1/runs", `{"input":"z","policy":{"seedMode":"reconcile"},"history":[{"role":"user","content":"other"},{"role":"assistant","content":"thing"}]}`)
	if a.Status != 200 || a.MessageCount != 4 || a.Seed.Mode != "cold" {
		t.Fatalf("diverged, reconcile: %s", a.Body)
	}
	if got := st.contents(t); len(got) != 4 || got[0] != "other" || got[2] != "z" {
		t.Fatalf("stored %q, want the host's history and the turn", got)
	}
}

// Ensure a failure between the answer and the write keeps nothing of the
// turn and answers an error: the stored copy and the next turn's context
// are those of the answered turns.
func TestHandler_Run_WriteFails(t *testing.T) {
	for _, name := range []string{"before", "store"} {
		t.Run(name, func(t *testing.T) {
			st := &memStore{}
			fail := false
			h := object(t, st, Config{BeforeWrite: func(*http.Request) error {
				if fail && name == "before" {
					return errors.New("injected")
				}
				return nil
			}})
			turn(t, h, "a")
			fail = true
			if name == "store" {
				st.fail = errors.New("disk full")
			}
			a := turn(t, h, "lost")
			if a.Status != 500 || a.Error.Code != "internal" {
				t.Fatalf("got %d %s, want 500 internal", a.Status, a.Body)
			}
			fail, st.fail = false, nil
			if got := st.contents(t); len(got) != 2 {
				t.Fatalf("stored %q, want the first turn only", got)
			}
			a = turn(t, h, "next")
			if a.Status != 200 || !strings.Contains(a.Reply.Content, "received 3 messages") || a.Seed.Mode != "cold" {
				t.Fatalf("next turn: %s, want a cold seed of the 2 stored messages", a.Body)
			}
		})
	}
}

// Ensure the stored-bytes limit refuses with limit_exceeded and keeps the
// object working; DELETE empties it.
func TestHandler_Run_Limit(t *testing.T) {
	st := &memStore{}
	h := object(t, st, Config{MaxStoredBytes: 400})
	n := 0
	var a answer
	for n = 0; n < 20; n++ {
		if a = turn(t, h, strings.Repeat("x", 40)); a.Status != 200 {
			break
		}
	}
	if a.Status != 413 || a.Error.Code != "limit_exceeded" {
		t.Fatalf("turn %d: got %d %s, want 413 limit_exceeded", n, a.Status, a.Body)
	}
	_, size, _ := st.Stat()
	if size > 400 || len(st.contents(t)) != 2*n {
		t.Fatalf("stored %d bytes in %d messages after %d turns", size, len(st.contents(t)), n)
	}
	if d := do(t, h, "DELETE", "/v1/sessions/c1", ""); d.Status != 204 {
		t.Fatalf("DELETE: %d", d.Status)
	}
	if len(st.contents(t)) != 0 {
		t.Fatal("DELETE left stored messages")
	}
	if a = turn(t, h, "fresh"); a.Status != 200 || a.MessageCount != 2 {
		t.Fatalf("after DELETE: %s", a.Body)
	}
	// An unauthorized DELETE changes nothing.
	req := httptest.NewRequest("DELETE", "/v1/sessions/c1", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 401 || len(st.contents(t)) != 2 {
		t.Fatalf("unauthorized DELETE: %d, %d stored", rec.Code, len(st.contents(t)))
	}
}

// Ensure onBusy "reject" answers 409 while a turn holds the conversation,
// and a queued request whose client left never runs.
func TestHandler_Run_Busy(t *testing.T) {
	st := &memStore{}
	h := object(t, st, Config{})
	h.turn <- struct{}{} // a turn in flight
	a := do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"x","policy":{"onBusy":"reject"}}`)
	if a.Status != 409 || a.Error.Code != "session_busy" {
		t.Fatalf("got %d %s, want 409 session_busy", a.Status, a.Body)
	}
	req := httptest.NewRequest("POST", "/v1/sessions/c1/runs", strings.NewReader(`{"input":"x"}`))
	req.Header.Set("Authorization", "Bearer tok")
	ctx, cancel := context.WithCancel(req.Context())
	cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req.WithContext(ctx))
	if rec.Code != 503 {
		t.Fatalf("a queued request whose client left: %d, want 503", rec.Code)
	}
	<-h.turn
	if len(st.contents(t)) != 0 {
		t.Fatal("a refused request stored something")
	}
}

// Ensure a stream holds back run.completed until the turn is written,
// and replaces it with run.failed when the write fails.
func TestHandler_Run_Stream(t *testing.T) {
	st := &memStore{}
	h := object(t, st, Config{})
	a := do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"s"}`, "Accept", "text/event-stream")
	if a.Status != 200 || !strings.Contains(a.Body, "event: run.completed\n") || len(st.contents(t)) != 2 {
		t.Fatalf("stream: %d %q, %d stored", a.Status, a.Body, len(st.contents(t)))
	}
	st.fail = errors.New("disk full")
	a = do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"s"}`, "Accept", "text/event-stream")
	if strings.Contains(a.Body, "run.completed") || !strings.Contains(a.Body, "event: run.failed\n") || len(st.contents(t)) != 2 {
		t.Fatalf("failed write: %q, %d stored", a.Body, len(st.contents(t)))
	}
}

// Ensure a body over the client limit is refused before anything runs.
func TestHandler_Run_BodyLimit(t *testing.T) {
	st := &memStore{}
	h := object(t, st, Config{MaxBodyBytes: 64})
	a := turn(t, h, strings.Repeat("y", 100))
	if a.Status != 413 || a.Error.Code != "limit_exceeded" || len(st.contents(t)) != 0 {
		t.Fatalf("got %d %s", a.Status, a.Body)
	}
	if a = do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":`); a.Status != 400 {
		t.Fatalf("bad JSON: %d %s", a.Status, a.Body)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// Ensure every spelling of "no history" on a woken object seeds it from
// storage, and the body's other fields still apply.
func TestHandler_Run_SeedBodies(t *testing.T) {
	tests := []struct{ name, body string }{
		{"OK/plain", `{"input":"x"}`},
		{"OK/spaces", " \n {  \"input\" : \"x\" } "},
		{"OK/nullHistory", `{"input":"x","history":null}`},
		{"OK/nullHistoryFirst", `{"history":null,"input":"x","runId":"r-1"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &memStore{}
			turn(t, object(t, st, Config{}), "a")
			a := do(t, object(t, st, Config{}), "POST", "/v1/sessions/c1/runs", tc.body)
			if a.Status != 200 || a.Seed.Mode != "cold" || a.Seed.Seeded != 2 || a.MessageCount != 4 {
				t.Fatalf("got %d %s, want a cold seed of 2", a.Status, a.Body)
			}
		})
	}
}

// durableScenarios are request sequences on one conversation (bodies of
// POST /v1/sessions/c1/runs), each run on a warm object and on one
// evicted between every pair of requests.
var durableScenarios = []struct {
	name, desc string
	bodies     []string
}{
	{"turns", "turns without history", []string{`{"input":"a"}`, `{"input":"b"}`, `{"input":"c"}`}},
	{"emptyHistory", "three turns, then an empty history",
		[]string{`{"input":"a"}`, `{"input":"b"}`, `{"input":"c"}`, `{"input":"d","history":[]}`, `{"input":"e"}`}},
	{"prefixHistory", "three turns, then a prefix of them as history",
		[]string{`{"input":"a"}`, `{"input":"b"}`, `{"input":"c"}`,
			`{"input":"d","history":[{"role":"user","content":"a"},{"role":"assistant","content":"echo: a (model received 1 messages)"}]}`}},
	{"reconcileEmpty", "reconcile with an empty history",
		[]string{`{"input":"a"}`, `{"input":"b"}`, `{"input":"c","history":[],"policy":{"seedMode":"reconcile"}}`}},
	{"reconcilePrefix", "reconcile with a prefix history",
		[]string{`{"input":"a"}`, `{"input":"b"}`,
			`{"input":"c","policy":{"seedMode":"reconcile"},"history":[{"role":"user","content":"a"},{"role":"assistant","content":"echo: a (model received 1 messages)"}]}`}},
	{"reconcileLonger", "reconcile with the stored turns and one more",
		[]string{`{"input":"a"}`,
			`{"input":"c","policy":{"seedMode":"reconcile"},"history":[{"role":"user","content":"a"},{"role":"assistant","content":"echo: a (model received 1 messages)"},{"role":"user","content":"b"},{"role":"assistant","content":"host"}]}`}},
	{"reconcileDiverged", "reconcile with another history",
		[]string{`{"input":"a"}`, `{"input":"b"}`,
			`{"input":"c","policy":{"seedMode":"reconcile"},"history":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}`, `{"input":"d"}`}},
	{"ifEmptyDiverged", "if-empty with another history",
		[]string{`{"input":"a"}`, `{"input":"b","history":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}`, `{"input":"c"}`}},
	{"systemHistory", "a history of a system message only",
		[]string{`{"input":"a"}`, `{"input":"b","policy":{"seedMode":"reconcile"},"history":[{"role":"system","content":"s"}]}`}},
	{"badBodies", "bodies the API refuses",
		[]string{`{"input":"a"}`, `null`, `[]`, `"x"`, `{"input":5}`, `{"input":"b","history":[{"role":"tool","content":"x"}]}`,
			`{"input":"b","history":[],"policy":{"seedMode":"sometimes"}}`, `{"input":"c"}`}},
}

// step is what one request did: its answer and the stored copy after it.
type step struct {
	Status       int
	Code         string
	Reply        string
	MessageCount int
	Stored       []string
}

// Ensure what a request does to the stored conversation does not depend
// on whether the object held the session: every scenario run on a warm
// object and on an object evicted (a fresh runtime over the same
// storage) before every request answers the same and stores the same.
func TestHandler_WarmAndEvicted_Agree(t *testing.T) {
	run := func(t *testing.T, bodies []string, evict bool) []step {
		st := &memStore{}
		h := object(t, st, Config{})
		out := make([]step, len(bodies))
		for i, b := range bodies {
			if evict {
				h = object(t, st, Config{})
			}
			a := do(t, h, "POST", "/v1/sessions/c1/runs", b)
			out[i] = step{a.Status, a.Error.Code, a.Reply.Content, a.MessageCount, st.contents(t)}
		}
		return out
	}
	for _, sc := range durableScenarios {
		t.Run(sc.name, func(t *testing.T) {
			warm, evicted := run(t, sc.bodies, false), run(t, sc.bodies, true)
			for i := range warm {
				if fmt.Sprint(warm[i]) != fmt.Sprint(evicted[i]) {
					t.Errorf("%s, request %d %s:\nwarm    %+v\nevicted %+v", sc.desc, i, sc.bodies[i], warm[i], evicted[i])
				}
			}
		})
	}
	// The finding's case, spelled out: three stored turns and an empty
	// history keep all of them.
	st := &memStore{}
	h := object(t, st, Config{})
	for _, in := range []string{"a", "b", "c"} {
		turn(t, h, in)
	}
	a := do(t, object(t, st, Config{}), "POST", "/v1/sessions/c1/runs", `{"input":"d","history":[]}`)
	if a.Status != 200 || a.MessageCount != 8 || len(st.contents(t)) != 8 {
		t.Fatalf("an empty history on an evicted object: %s, %d stored, want 8", a.Body, len(st.contents(t)))
	}
}

// Ensure a null body answers 400 on an evicted object holding stored
// turns, as on a warm one, and changes nothing.
func TestHandler_Run_NullBody(t *testing.T) {
	st := &memStore{}
	turn(t, object(t, st, Config{}), "a")
	for _, body := range []string{`null`, ` null `, `[]`, `"x"`, `1`} {
		a := do(t, object(t, st, Config{}), "POST", "/v1/sessions/c1/runs", body)
		if a.Status != 400 || a.Error.Code != "invalid_argument" || len(st.contents(t)) != 2 {
			t.Errorf("%s: %d %s, %d stored, want 400 invalid_argument and 2", body, a.Status, a.Body, len(st.contents(t)))
		}
	}
}

// countingModel is the echo model counting its calls.
type countingModel struct{ calls atomic.Int64 }

func (m *countingModel) Complete(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	m.calls.Add(1)
	return core.Echo{}.Complete(ctx, req)
}

// Ensure a conversation that no turn fits in any more is refused
// limit_exceeded before the model is called, on every retry, warm and
// evicted, with or without a history it would not take.
func TestHandler_Run_FullRefusedBeforeModel(t *testing.T) {
	st := &memStore{}
	m := &countingModel{}
	mk := func() *Handler {
		rt, err := core.New(core.Config{Model: m})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(rt.Close)
		cfg := Config{MaxStoredBytes: 300}
		cfg.API = httpapi.New(httpapi.Config{Runtime: rt, Token: "tok", MaxBodyBytes: APIBodyLimit(0, cfg.MaxStoredBytes)})
		cfg.Runtime, cfg.Store = rt, st
		return New(cfg)
	}
	h := mk()
	in := strings.Repeat("x", 40)
	var a answer
	for i := 0; i < 20; i++ {
		if a = turn(t, h, in); a.Status != 200 {
			break
		}
	}
	if a.Status != 413 {
		t.Fatalf("filling: %d %s", a.Status, a.Body)
	}
	_, size, _ := st.Stat()
	calls := m.calls.Load()
	// The least input with which no turn fits.
	in = strings.Repeat("x", int(300-size-minTurnBytes+1))
	bodies := []string{`{"input":"` + in + `"}`, `{"input":"` + in + `","history":[]}`, `{"input":"` + in + `","history":[{"role":"user","content":"o"}],"policy":{"onBusy":"queue"}}`}
	for i := 0; i < 3; i++ {
		for _, b := range bodies {
			for _, hh := range []*Handler{h, mk()} {
				if a = do(t, hh, "POST", "/v1/sessions/c1/runs", b); a.Status != 413 || a.Error.Code != "limit_exceeded" {
					t.Fatalf("retry %s: %d %s, want 413 limit_exceeded", b, a.Status, a.Body)
				}
			}
		}
	}
	if got := m.calls.Load(); got != calls {
		t.Errorf("the model was called %d times on the full conversation, want 0", got-calls)
	}
	if _, after, _ := st.Stat(); after != size {
		t.Errorf("stored %d bytes after the refusals, %d before", after, size)
	}
	// One byte less, and a turn could fit: the model is asked.
	if a = turn(t, h, in[1:]); m.calls.Load() != calls+1 {
		t.Errorf("an input with which a turn fits: %d %s, the model not called", a.Status, a.Body)
	}
}

// brokenHistory ends with a tool call that has no result: seeded only
// with policy.repair, which inserts the interrupted-call marker.
const brokenHistory = `[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"lookup","arguments":"{}"}]}]`

// Ensure the object stores the healed copy itself: after one turn seeded
// with policy.repair from a broken history, the stored messages are
// whole (the marker included, and POST /v1/history/check of them is
// ok), and a later request without repair on an evicted object seeds
// from them; on an object with stored turns, in reconcile mode, too.
func TestHandler_Run_RepairIsStored(t *testing.T) {
	for _, tc := range []struct{ name, first, body string }{
		{"empty", "", `{"input":"next","policy":{"repair":true},"history":` + brokenHistory + `}`},
		{"reconcile", "a", `{"input":"next","policy":{"repair":true,"seedMode":"reconcile"},"history":` + brokenHistory + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &memStore{}
			if tc.first != "" {
				turn(t, object(t, st, Config{}), tc.first)
			}
			// Refused without repair, and nothing changes.
			plain := strings.Replace(tc.body, `"repair":true`, `"repair":false`, 1)
			if a := do(t, object(t, st, Config{}), "POST", "/v1/sessions/c1/runs", plain); a.Status != 400 || a.Error.Code != "invalid_history" {
				t.Fatalf("without repair: %d %s", a.Status, a.Body)
			}
			a := do(t, object(t, st, Config{}), "POST", "/v1/sessions/c1/runs", tc.body)
			if a.Status != 200 || a.MessageCount != 5 || !strings.Contains(a.Body, `"repairs":[{"kind":"missing_tool_result"`) {
				t.Fatalf("repaired turn: %d %s", a.Status, a.Body)
			}
			got := st.contents(t)
			if len(got) != 5 || got[2] != core.InterruptedToolResult || got[3] != "next" {
				t.Fatalf("stored %q, want the history, the marker and the turn", got)
			}
			h := object(t, st, Config{})
			g := do(t, h, "GET", "/v1/sessions/c1", "")
			var s struct{ Messages json.RawMessage }
			if err := json.Unmarshal([]byte(g.Body), &s); err != nil || g.Status != 200 {
				t.Fatalf("GET from storage: %d %s", g.Status, g.Body)
			}
			if c := do(t, h, "POST", "/v1/history/check", `{"history":`+string(s.Messages)+`}`); c.Status != 200 || !strings.Contains(c.Body, `"ok":true`) {
				t.Fatalf("check of the stored copy: %d %s", c.Status, c.Body)
			}
			a = do(t, object(t, st, Config{}), "POST", "/v1/sessions/c1/runs", `{"input":"later"}`)
			if a.Status != 200 || a.Seed.Mode != "cold" || a.Seed.Seeded != 5 || a.MessageCount != 7 {
				t.Fatalf("a later turn without repair: %d %s", a.Status, a.Body)
			}
			// And with the stored copy as its history, without repair.
			a = do(t, object(t, st, Config{}), "POST", "/v1/sessions/c1/runs", `{"input":"again","policy":{"seedMode":"reconcile"},"history":`+string(s.Messages)+`}`)
			if a.Status != 200 || a.MessageCount != 9 || len(st.contents(t)) != 9 {
				t.Fatalf("the stored copy as history: %d %s", a.Status, a.Body)
			}
		})
	}
}
