package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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
	// A host whose history diverged replaces the stored tail.
	h3 := object(t, st, Config{})
	a = do(t, h3, "POST", "/v1/sessions/c1/runs", `{"input":"z","history":[{"role":"user","content":"other"},{"role":"assistant","content":"thing"}]}`)
	if a.Status != 200 || a.MessageCount != 4 {
		t.Fatalf("diverged: %s", a.Body)
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
