package durable

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// gateModel streams deltas "d1".."dN" and answers "done" once release
// is closed; it honours cancellation.
type gateModel struct {
	deltas  int
	started chan struct{} // receives once per call, after the deltas
	release chan struct{}
}

func (m *gateModel) HonoursContext() {}

func (m *gateModel) Complete(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	for i := 1; i <= m.deltas; i++ {
		req.Delta("d" + strconv.Itoa(i))
	}
	select {
	case m.started <- struct{}{}:
	default:
	}
	select {
	case <-m.release:
		return &core.ModelReply{Content: "done"}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func gatedObject(t *testing.T, st Store, m core.Model, cfg Config) *Handler {
	t.Helper()
	rt, err := core.New(core.Config{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	cfg.API = httpapi.New(httpapi.Config{Runtime: rt, MaxBodyBytes: APIBodyLimit(0, 0)})
	cfg.Runtime, cfg.Store = rt, st
	return New(cfg)
}

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct {
	id   int64
	typ  string
	data string
}

func readEvents(t *testing.T, sc *bufio.Scanner, n int) []sseEvent {
	t.Helper()
	var out []sseEvent
	var ev sseEvent
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.typ != "" {
				out = append(out, ev)
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			ev.id, _ = strconv.ParseInt(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			ev.typ = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[6:]
		}
	}
	return out
}

// Ensure a continued run goes on when its client leaves: the client that
// comes back with Last-Event-ID gets every later event once (seqs
// strictly increasing, no gap, no repeat) and the Result; the turn is
// stored once; a replay after completion gives the tail; GET of the run
// answers its status and Result; an unknown run is run_lost.
func TestRuns_ContinueAndResume(t *testing.T) {
	st := &memStore{}
	m := &gateModel{deltas: 5, started: make(chan struct{}, 1), release: make(chan struct{})}
	h := gatedObject(t, st, m, Config{})
	srv := httptest.NewServer(h)
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/sessions/c1/runs",
		strings.NewReader(`{"input":"q","policy":{"onDisconnect":"continue"}}`))
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	runID := res.Header.Get(RunIDHeader)
	if res.StatusCode != 200 || !strings.HasPrefix(runID, "r-") {
		t.Fatalf("start: %d, run id %q", res.StatusCode, runID)
	}
	<-m.started
	first := readEvents(t, bufio.NewScanner(res.Body), 2)
	if len(first) != 2 || first[0].id != 1 || first[0].typ != "run.started" || first[1].id != 2 {
		t.Fatalf("first events %+v", first)
	}
	cancel()
	res.Body.Close()

	// The run is still running; its status says so.
	if a := do(t, h, "GET", "/v1/sessions/c1/runs/"+runID, ""); a.Status != 200 || !strings.Contains(a.Body, `"status":"running"`) {
		t.Fatalf("status while running: %d %s", a.Status, a.Body)
	}
	// Reconnect after event 2, then let the model answer.
	req, _ = http.NewRequest("GET", srv.URL+"/v1/sessions/c1/runs/"+runID+"/events", nil)
	req.Header.Set("Last-Event-ID", "2")
	res, err = http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("resume: %v %v", res, err)
	}
	close(m.release)
	rest := readEvents(t, bufio.NewScanner(res.Body), 1000)
	res.Body.Close()
	if len(rest) == 0 || rest[len(rest)-1].typ != "run.completed" {
		t.Fatalf("resumed events %+v, want them to end with run.completed", rest)
	}
	for i, ev := range rest {
		if ev.id != int64(3+i) {
			t.Fatalf("resumed event %d has id %d, want %d (%+v)", i, ev.id, 3+i, rest)
		}
	}
	var done struct {
		Result struct{ MessageCount int }
	}
	if err := json.Unmarshal([]byte(rest[len(rest)-1].data), &done); err != nil || done.Result.MessageCount != 2 {
		t.Fatalf("run.completed %s", rest[len(rest)-1].data)
	}
	if got := st.contents(t); len(got) != 2 || got[1] != "done" || len(st.writes) != 1 {
		t.Fatalf("stored %q in %d writes, want the turn once", got, len(st.writes))
	}
	// After completion: the tail, and the status with the Result.
	a := do(t, h, "GET", "/v1/sessions/c1/runs/"+runID+"/events?after="+strconv.Itoa(int(rest[len(rest)-2].id)), "")
	if a.Status != 200 || strings.Count(a.Body, "event: ") != 1 || !strings.HasPrefix(a.Body, "id: "+strconv.Itoa(int(rest[len(rest)-1].id))+"\nevent: run.completed\n") {
		t.Fatalf("tail: %d %q", a.Status, a.Body)
	}
	a = do(t, h, "GET", "/v1/sessions/c1/runs/"+runID, "")
	if a.Status != 200 || !strings.Contains(a.Body, `"status":"completed"`) || !strings.Contains(a.Body, `"result":{`) {
		t.Fatalf("status after completion: %d %s", a.Status, a.Body)
	}
	// A stop after completion changes nothing.
	if a = do(t, h, "DELETE", "/v1/sessions/c1/runs/"+runID, ""); a.Status != 200 || len(st.contents(t)) != 2 {
		t.Fatalf("DELETE after completion: %d %s", a.Status, a.Body)
	}
	for _, path := range []string{"/runs/r-unknown", "/runs/r-unknown/events"} {
		if a = do(t, h, "GET", "/v1/sessions/c1"+path, ""); a.Status != 404 || a.Error.Code != "run_lost" {
			t.Fatalf("GET %s: %d %s, want 404 run_lost", path, a.Status, a.Body)
		}
	}
	// A new instance over the same storage (a restart) knows no run.
	if a = do(t, gatedObject(t, st, m, Config{}), "GET", "/v1/sessions/c1/runs/"+runID+"/events", "", "Last-Event-ID", "2"); a.Status != 404 || a.Error.Code != "run_lost" {
		t.Fatalf("after a restart: %d %s, want 404 run_lost", a.Status, a.Body)
	}
}

// Ensure DELETE of a continued run whose client left cancels it, rolls
// its turn back (nothing stored), and a follower sees run.cancelled.
func TestRuns_StopResumed(t *testing.T) {
	st := &memStore{}
	m := &gateModel{deltas: 1, started: make(chan struct{}, 1), release: make(chan struct{})}
	h := gatedObject(t, st, m, Config{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/sessions/c1/runs",
		strings.NewReader(`{"input":"q","runId":"mine","policy":{"onDisconnect":"continue"}}`))
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-m.started
	cancel()
	res.Body.Close()
	req, _ = http.NewRequest("GET", srv.URL+"/v1/sessions/c1/runs/mine/events?after=1", nil)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var evs []sseEvent
	wg.Add(1)
	go func() {
		defer wg.Done()
		evs = readEvents(t, bufio.NewScanner(res.Body), 1000)
	}()
	a := do(t, h, "DELETE", "/v1/sessions/c1/runs/mine", "")
	if a.Status != 200 || !strings.Contains(a.Body, `"status":"cancelled"`) {
		t.Fatalf("DELETE: %d %s", a.Status, a.Body)
	}
	wg.Wait()
	res.Body.Close()
	if len(evs) == 0 || evs[len(evs)-1].typ != "run.cancelled" || evs[0].id != 2 {
		t.Fatalf("the follower saw %+v, want events from 2 ending with run.cancelled", evs)
	}
	if got := st.contents(t); len(got) != 0 {
		t.Fatalf("stored %q after the stop", got)
	}
	close(m.release)
	if a = turn(t, h, "next"); a.Status != 200 || a.MessageCount != 2 {
		t.Fatalf("the next turn: %s", a.Body)
	}
}

// Ensure the event logs stay within their bounds under 50 concurrent
// continued runs (one per conversation), a replay from the start then
// beginning with run.gap, and keep at most 8 finished runs besides.
func TestRuns_LogBounds(t *testing.T) {
	const runs = 50
	m := &gateModel{deltas: 300, started: make(chan struct{}, runs), release: make(chan struct{})}
	hs := make([]*Handler, runs)
	var wg sync.WaitGroup
	for i := range hs {
		hs[i] = gatedObject(t, &memStore{}, m, Config{MaxRunEvents: 64, MaxRunEventBytes: 4096, TestRoutes: true})
		wg.Add(1)
		go func(h *Handler) {
			defer wg.Done()
			do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"q","runId":"r","policy":{"onDisconnect":"continue"}}`, "Accept", "text/event-stream")
		}(hs[i])
	}
	for i := 0; i < runs; i++ {
		<-m.started
	}
	// The deltas reach the logs through the API's stream: wait until each
	// log has passed a bound, checking the bounds all along.
	for i, h := range hs {
		for {
			h.mu.Lock()
			f := h.runFigures()
			h.mu.Unlock()
			if f.Runs != 1 || f.MaxEvents > 64 || f.MaxBytes > 4096 {
				t.Fatalf("object %d: %+v, want one log within 64 events and 4096 bytes", i, f)
			}
			if f.MaxEvents == 64 || f.MaxBytes > 4096-200 { // an event is about 110 bytes
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	close(m.release)
	wg.Wait()
	a := do(t, hs[0], "GET", "/v1/sessions/c1/runs/r/events", "")
	if !strings.Contains(a.Body, "event: run.gap\n") || !strings.HasSuffix(a.Body, "\n\n") || !strings.Contains(a.Body, "event: run.completed\n") {
		t.Fatalf("replay from the start: %q", a.Body[:min(len(a.Body), 300)])
	}
	// Eleven more runs on one object: 8 finished logs kept besides.
	h := hs[1]
	for i := 0; i < 11; i++ {
		do(t, h, "POST", "/v1/sessions/c1/runs", fmt.Sprintf(`{"input":"q","runId":"n%d","policy":{"onDisconnect":"continue"}}`, i), "Accept", "text/event-stream")
	}
	h.mu.Lock()
	f := h.runFigures()
	h.mu.Unlock()
	if f.Runs != keptRuns+1 {
		t.Fatalf("%d logs kept, want %d", f.Runs, keptRuns+1)
	}
	if a := do(t, h, "GET", "/v1/sessions/c1/runs/n10", ""); a.Status != 200 {
		t.Fatalf("the last run: %d %s", a.Status, a.Body)
	}
}

// Ensure policy.onDisconnect is checked: a value other than "cancel" or
// "continue", and "continue" on a plain run, are refused
// invalid_argument and change nothing; "cancel" is taken.
func TestRuns_OnDisconnectRefusals(t *testing.T) {
	st := &memStore{}
	h := object(t, st, Config{})
	for _, tc := range []struct{ body, accept string }{
		{`{"input":"x","policy":{"onDisconnect":"continue"}}`, ""},
		{`{"input":"x","policy":{"onDisconnect":"later"}}`, "text/event-stream"},
		{`{"input":"x","policy":{"onDisconnect":1}}`, "text/event-stream"},
		{`{"input":"x","runId":5,"policy":{"onDisconnect":"continue"}}`, "text/event-stream"},
	} {
		var hd []string
		if tc.accept != "" {
			hd = []string{"Accept", tc.accept}
		}
		if a := do(t, h, "POST", "/v1/sessions/c1/runs", tc.body, hd...); a.Status != 400 || a.Error.Code != "invalid_argument" {
			t.Errorf("%s: %d %s, want 400 invalid_argument", tc.body, a.Status, a.Body)
		}
	}
	if len(st.contents(t)) != 0 {
		t.Fatal("a refused run stored something")
	}
	if a := do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"x","policy":{"onDisconnect":"cancel"}}`); a.Status != 200 || len(st.contents(t)) != 2 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
}
