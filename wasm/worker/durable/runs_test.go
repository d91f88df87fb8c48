package durable

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
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
	if first := readEvents(t, bufio.NewScanner(res.Body), 1); len(first) != 1 || first[0].id != 1 {
		t.Fatalf("first event %+v", first)
	}
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

// Ensure hostile resumes are answered and change nothing: a
// Last-Event-ID that is negative, not a number, fractional, too large
// for an int64 or past the run's last event is refused 400
// invalid_argument (running or finished); two clients that reconnect at
// once each get every later event once; after a stop (DELETE of the run)
// a resume replays to run.cancelled; after DELETE of the conversation
// the run is run_lost.
func TestRuns_HostileResumes(t *testing.T) {
	st := &memStore{}
	m := &gateModel{deltas: 3, started: make(chan struct{}, 1), release: make(chan struct{})}
	h := gatedObject(t, st, m, Config{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/sessions/c1/runs",
		strings.NewReader(`{"input":"q","runId":"r1","policy":{"onDisconnect":"continue"}}`))
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-m.started
	first := readEvents(t, bufio.NewScanner(res.Body), 1)
	cancel()
	res.Body.Close()
	if len(first) != 1 || first[0].id != 1 {
		t.Fatalf("first event %+v", first)
	}
	refused := func(when string) {
		t.Helper()
		for _, v := range []string{"-1", "abc", "1.5", "0x2", "99999999999999999999", "100", "1000000"} {
			for _, hd := range []string{"Last-Event-ID", ""} {
				path := "/v1/sessions/c1/runs/r1/events"
				var a answer
				if hd == "" {
					a = do(t, h, "GET", path+"?after="+url.QueryEscape(v), "")
				} else {
					a = do(t, h, "GET", path, "", hd, v)
				}
				if a.Status != 400 || a.Error.Code != "invalid_argument" {
					t.Fatalf("%s: resume after %q (%s): %d %s, want 400 invalid_argument", when, v, hd, a.Status, a.Body)
				}
			}
		}
	}
	refused("running")

	// Two clients reconnect at once from different places.
	type seen struct {
		evs []sseEvent
		err error
	}
	results := make([]seen, 2)
	var wg sync.WaitGroup
	var ready sync.WaitGroup
	for i, after := range []string{"1", "2"} {
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", srv.URL+"/v1/sessions/c1/runs/r1/events", nil)
			req.Header.Set("Last-Event-ID", after)
			res, err := http.DefaultClient.Do(req)
			ready.Done()
			if err != nil {
				results[i].err = err
				return
			}
			defer res.Body.Close()
			results[i].evs = readEvents(t, bufio.NewScanner(res.Body), 1000)
		}()
	}
	ready.Wait()
	close(m.release)
	wg.Wait()
	var last int64
	for i, r := range results {
		if r.err != nil || len(r.evs) == 0 || r.evs[len(r.evs)-1].typ != "run.completed" {
			t.Fatalf("client %d: %v %+v, want events to run.completed", i, r.err, r.evs)
		}
		for j, ev := range r.evs {
			if ev.id != int64(i+2+j) {
				t.Fatalf("client %d's event %d has id %d, want %d: %+v", i, j, ev.id, i+2+j, r.evs)
			}
		}
		last = r.evs[len(r.evs)-1].id
	}
	if len(results[0].evs) != len(results[1].evs)+1 {
		t.Fatalf("client 0 saw %d events, client 1 %d; want one more for client 0", len(results[0].evs), len(results[1].evs))
	}
	if got := st.contents(t); len(got) != 2 || len(st.writes) != 1 {
		t.Fatalf("stored %q in %d writes, want the turn once", got, len(st.writes))
	}
	refused("finished")
	if a := do(t, h, "GET", "/v1/sessions/c1/runs/r1/events", "", "Last-Event-ID", strconv.FormatInt(last, 10)); a.Status != 200 || a.Body != "" {
		t.Fatalf("resume after the last event: %d %q, want an empty stream", a.Status, a.Body)
	}

	// A stopped run replays to run.cancelled.
	m2 := &gateModel{deltas: 1, started: make(chan struct{}, 1), release: make(chan struct{})}
	defer close(m2.release)
	h2 := gatedObject(t, &memStore{}, m2, Config{})
	srv2 := httptest.NewServer(h2)
	defer srv2.Close()
	ctx, cancel = context.WithCancel(context.Background())
	req, _ = http.NewRequestWithContext(ctx, "POST", srv2.URL+"/v1/sessions/c1/runs",
		strings.NewReader(`{"input":"q","runId":"r2","policy":{"onDisconnect":"continue"}}`))
	req.Header.Set("Accept", "text/event-stream")
	if res, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	<-m2.started
	cancel()
	res.Body.Close()
	if a := do(t, h2, "DELETE", "/v1/sessions/c1/runs/r2", ""); a.Status != 200 || !strings.Contains(a.Body, `"status":"cancelled"`) {
		t.Fatalf("stop: %d %s", a.Status, a.Body)
	}
	a := do(t, h2, "GET", "/v1/sessions/c1/runs/r2/events", "", "Last-Event-ID", "1")
	if a.Status != 200 || !strings.Contains(a.Body, "event: run.cancelled\n") || strings.Contains(a.Body, "id: 1\n") {
		t.Fatalf("resume after the stop: %d %q, want the events after 1 to run.cancelled", a.Status, a.Body)
	}

	// DELETE of the conversation forgets its runs.
	if a := do(t, h, "DELETE", "/v1/sessions/c1", ""); a.Status != 204 {
		t.Fatalf("DELETE: %d %s", a.Status, a.Body)
	}
	for _, path := range []string{"/runs/r1", "/runs/r1/events"} {
		if a := do(t, h, "GET", "/v1/sessions/c1"+path, "", "Last-Event-ID", "1"); a.Status != 404 || a.Error.Code != "run_lost" {
			t.Fatalf("GET %s after DELETE of the conversation: %d %s, want 404 run_lost", path, a.Status, a.Body)
		}
	}
}

// Ensure a run id names one run: DELETE of a continued run that ended
// leaves alone a plain run in flight that reuses its id (the plain run
// completes and is stored), and a continued run that reuses a known id,
// refused 409 run_exists, changes nothing: the old run's log still
// answers with its Result.
func TestRuns_ReusedRunID(t *testing.T) {
	st := &memStore{}
	m := &gateModel{started: make(chan struct{}, 1), release: make(chan struct{})}
	h := gatedObject(t, st, m, Config{})
	go func() { m.release <- struct{}{} }()
	if a := do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"q","runId":"r1","policy":{"onDisconnect":"continue"}}`, "Accept", "text/event-stream"); !strings.Contains(a.Body, "event: run.completed\n") {
		t.Fatalf("the continued run: %d %q", a.Status, a.Body)
	}
	<-m.started

	// A plain run reuses the id; the ended run is stopped meanwhile.
	plain := make(chan answer, 1)
	go func() { plain <- do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"plain","runId":"r1"}`) }()
	<-m.started
	if a := do(t, h, "DELETE", "/v1/sessions/c1/runs/r1", ""); a.Status != 200 || !strings.Contains(a.Body, `"status":"completed"`) {
		t.Fatalf("DELETE of the ended run: %d %s", a.Status, a.Body)
	}
	select {
	case m.release <- struct{}{}:
	case <-time.After(2 * time.Second): // the plain run was cancelled
	}
	if a := <-plain; a.Status != 200 || a.MessageCount != 4 {
		t.Errorf("the plain run that reused the id: %d %s, want 200 and 4 messages (it was not the run stopped)", a.Status, a.Body)
	}

	// A continued run that reuses the id is refused, before it runs, and
	// whether or not its body is one the API takes. (A model call it
	// made would be answered.)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case m.release <- struct{}{}:
			case <-stop:
				return
			}
		}
	}()
	for _, body := range []string{
		`{"input":"again","runId":"r1","policy":{"onDisconnect":"continue"}}`,
		`{"input":"again","runId":"r1","history":5,"policy":{"onDisconnect":"continue"}}`,
	} {
		if a := do(t, h, "POST", "/v1/sessions/c1/runs", body, "Accept", "text/event-stream"); a.Status != 409 || a.Error.Code != "run_exists" {
			t.Fatalf("%s: %d %q, want 409 run_exists", body, a.Status, a.Body)
		}
	}
	if a := do(t, h, "GET", "/v1/sessions/c1/runs/r1", ""); a.Status != 200 || !strings.Contains(a.Body, `"status":"completed"`) || !strings.Contains(a.Body, `"content":"done"`) {
		t.Fatalf("the first run after the refusals: %d %s, want its log and Result", a.Status, a.Body)
	}
	if got := st.contents(t); len(got) != 4 || len(st.writes) != 2 {
		t.Fatalf("stored %q in %d writes, want the two turns", got, len(st.writes))
	}
}

// docClient is what docs/worker.md tells a client that lost the
// connection of a continued run to do: ask for the run; if it is
// run_lost, read the conversation and send the input again when its
// turn is not there; otherwise follow the run's events to its end (and
// send the input again if it never ran). It returns the run's status as
// it first found it.
func docClient(t *testing.T, h http.Handler, runID, input string) string {
	t.Helper()
	a := do(t, h, "GET", "/v1/sessions/c1/runs/"+runID, "")
	var st struct{ Status string }
	_ = json.Unmarshal([]byte(a.Body), &st)
	switch {
	case a.Status == 404 && a.Error.Code == "run_lost":
		if s := do(t, h, "GET", "/v1/sessions/c1", ""); !strings.Contains(s.Body, `"content":"`+input+`"`) {
			do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"`+input+`","policy":{"onDisconnect":"continue"}}`, "Accept", "text/event-stream")
		}
		return "run_lost"
	case a.Status == 200:
		ev := do(t, h, "GET", "/v1/sessions/c1/runs/"+runID+"/events", "", "Last-Event-ID", "0")
		if strings.Contains(ev.Body, "event: run.cancelled\n") && !strings.Contains(ev.Body, "event: run.started\n") {
			do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"`+input+`","policy":{"onDisconnect":"continue"}}`, "Accept", "text/event-stream")
		} else if !strings.Contains(ev.Body, "event: run.completed\n") {
			t.Fatalf("following %s: %q", runID, ev.Body)
		}
		return st.Status
	}
	t.Fatalf("GET of run %s: %d %s", runID, a.Status, a.Body)
	return ""
}

// Ensure a continued run queued behind another on its conversation is
// known from the moment its request is accepted: its status is queued
// (not run_lost) and its events can be followed; a client that lost the
// connection and follows docs/worker.md gets its turn stored exactly
// once, whether the object learns that the client left (the queued run
// then never runs, and ends run.cancelled) or not (it runs when the lock
// frees); a stop (DELETE) of a queued run ends it cancelled without
// running it.
func TestRuns_QueuedContinuedRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		leave bool // the client's leaving reaches the object
		stop  bool // the queued run is stopped with DELETE
	}{{"unnoticed", false, false}, {"noticed", true, false}, {"stopped", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			st := &memStore{}
			m := &gateModel{started: make(chan struct{}, 1), release: make(chan struct{})}
			h := gatedObject(t, st, m, Config{})
			first := make(chan answer, 1)
			go func() { first <- do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"first"}`) }()
			<-m.started

			// The second request waits for the lock; its client is gone.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req := httptest.NewRequest("POST", "/v1/sessions/c1/runs", strings.NewReader(`{"input":"second","runId":"q1","policy":{"onDisconnect":"continue"}}`)).WithContext(ctx)
			req.Header.Set("Accept", "text/event-stream")
			queued := make(chan struct{})
			go func() {
				defer close(queued)
				h.ServeHTTP(httptest.NewRecorder(), req)
			}()
			for deadline := time.Now().Add(2 * time.Second); h.runOf("q1") == nil && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			if a := do(t, h, "GET", "/v1/sessions/c1/runs/q1", ""); a.Status != 200 || !strings.Contains(a.Body, `"status":"queued"`) {
				t.Errorf("a queued run's status: %d %s, want 200 queued", a.Status, a.Body)
			}
			if tc.leave {
				cancel()
				<-queued
			}
			if tc.stop {
				if a := do(t, h, "DELETE", "/v1/sessions/c1/runs/q1", ""); a.Status != 200 || !strings.Contains(a.Body, `"status":"cancelled"`) {
					t.Fatalf("stop of a queued run: %d %s", a.Status, a.Body)
				}
				select {
				case <-queued:
				case <-time.After(2 * time.Second):
					t.Fatal("the stopped run's request still waits")
				}
			}
			go func() {
				for range 4 {
					select {
					case m.release <- struct{}{}:
					case <-time.After(5 * time.Second):
					}
				}
			}()
			docClient(t, h, "q1", "second")
			if a := <-first; a.Status != 200 {
				t.Fatalf("the first run: %d %s", a.Status, a.Body)
			}
			<-queued
			got := st.contents(t)
			n := 0
			for _, c := range got {
				if c == "second" {
					n++
				}
			}
			if n != 1 || len(got) != 4 {
				t.Fatalf("stored %q: want the second input's turn once after the first", got)
			}
		})
	}
}

// Ensure a streamed run the API refuses answers its plain JSON error
// through the object (it answered an empty body), and a continued one's
// log, known since the request was accepted, ends run.failed with that
// error: a follower is told why the run never ran.
func TestRuns_RefusedStreamedRun(t *testing.T) {
	st := &memStore{}
	h := object(t, st, Config{})
	a := do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"q","history":5,"runId":"x","policy":{"onDisconnect":"continue"}}`, "Accept", "text/event-stream")
	if a.Status != 400 || a.Error.Code != "invalid_argument" {
		t.Fatalf("refused run: %d %q, want 400 invalid_argument", a.Status, a.Body)
	}
	if a := do(t, h, "GET", "/v1/sessions/c1/runs/x", ""); a.Status != 200 || !strings.Contains(a.Body, `"status":"failed"`) || !strings.Contains(a.Body, `"code":"invalid_argument"`) {
		t.Fatalf("the refused run's status: %d %s", a.Status, a.Body)
	}
	if a := do(t, h, "GET", "/v1/sessions/c1/runs/x/events", ""); a.Status != 200 || !strings.HasPrefix(a.Body, "id: 1\nevent: run.failed\n") || !strings.Contains(a.Body, `"code":"invalid_argument"`) {
		t.Fatalf("the refused run's events: %d %q", a.Status, a.Body)
	}
	if a := do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"q","history":5}`, "Accept", "text/event-stream"); a.Status != 400 || a.Error.Code != "invalid_argument" {
		t.Fatalf("refused plain stream: %d %q, want 400 invalid_argument", a.Status, a.Body)
	}
	if len(st.contents(t)) != 0 {
		t.Fatal("a refused run stored something")
	}
}

// bigModel streams a delta of 6,000 bytes and a small one, and answers
// 20,000 bytes.
type bigModel struct{}

func (bigModel) Complete(_ core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	req.Delta(strings.Repeat("x", 6000))
	req.Delta("small")
	return &core.ModelReply{Content: strings.Repeat("y", 20000)}, nil
}

// Ensure a run log's bytes bound holds for events larger than it on
// their own: a large delta is not kept (a replay gives run.gap in its
// place), a large run.completed is kept without its Result
// (resultOmitted), the log stays within its bytes, and the status says
// completed with resultOmitted; the turn is stored whole.
func TestRuns_LogBounds_LargeEvents(t *testing.T) {
	st := &memStore{}
	h := gatedObject(t, st, bigModel{}, Config{MaxRunEventBytes: 4096})
	live := do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"q","runId":"big","policy":{"onDisconnect":"continue"}}`, "Accept", "text/event-stream")
	if !strings.Contains(live.Body, strings.Repeat("y", 20000)) {
		t.Fatalf("the live client did not get the whole answer: %.300q", live.Body)
	}
	h.mu.Lock()
	f := h.runFigures()
	h.mu.Unlock()
	if f.MaxBytes > 4096 {
		t.Errorf("the log holds %d bytes, over its bound of 4096", f.MaxBytes)
	}
	a := do(t, h, "GET", "/v1/sessions/c1/runs/big/events", "")
	evs := readEvents(t, bufio.NewScanner(strings.NewReader(a.Body)), 1000)
	if len(evs) < 3 || evs[len(evs)-1].typ != "run.completed" || !strings.Contains(evs[len(evs)-1].data, `"resultOmitted":true`) || strings.Contains(evs[len(evs)-1].data, `"result"`) {
		t.Fatalf("the replay %.600q: want it to end with run.completed without its result", a.Body)
	}
	gaps := 0
	for i, ev := range evs {
		if i > 0 && ev.id <= evs[i-1].id {
			t.Fatalf("replay ids not increasing: %+v", evs)
		}
		if ev.typ == "run.gap" {
			gaps++
		}
		if strings.Contains(ev.data, "xxxxxxxxxx") {
			t.Fatalf("the replay holds the large delta: %.300q", ev.data)
		}
	}
	if gaps == 0 || !strings.Contains(a.Body, `"delta":"small"`) {
		t.Fatalf("the replay %.600q: want run.gap for the large events and the small delta", a.Body)
	}
	if a := do(t, h, "GET", "/v1/sessions/c1/runs/big", ""); !strings.Contains(a.Body, `"status":"completed"`) || !strings.Contains(a.Body, `"resultOmitted":true`) {
		t.Fatalf("the status: %s", a.Body)
	}
	if got := st.contents(t); len(got) != 2 || len(got[1]) != 20000 {
		t.Fatalf("stored %d messages, want the turn whole", len(got))
	}
}

// stuckWriter is a ResponseWriter whose client takes nothing until take
// is called (a follower that does not read), as the worker's bridge
// reports it through Backlog.
type stuckWriter struct {
	mu    sync.Mutex
	hd    http.Header
	body  bytes.Buffer
	took  int64
	taken chan struct{}
}

func newStuckWriter() *stuckWriter {
	return &stuckWriter{hd: http.Header{}, taken: make(chan struct{})}
}

func (w *stuckWriter) Header() http.Header { return w.hd }
func (w *stuckWriter) WriteHeader(int)     {}
func (w *stuckWriter) Flush()              {}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.Write(p)
}

func (w *stuckWriter) Backlog() (int64, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return int64(w.body.Len()) - w.took, w.taken
}

// take lets the client take what was written; it returns the bytes
// written so far.
func (w *stuckWriter) take() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.took = int64(w.body.Len())
	close(w.taken)
	w.taken = make(chan struct{})
	return w.body.Len()
}

func (w *stuckWriter) written() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.Len()
}

// burstModel waits for go, then streams deltas of 100 bytes and
// answers "done".
type burstModel struct {
	deltas int
	run    chan struct{} // receives once the call started
	goOn   chan struct{}
}

func (m *burstModel) Complete(_ core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	m.run <- struct{}{}
	<-m.goOn
	for i := 0; i < m.deltas; i++ {
		req.Delta(strings.Repeat("z", 100))
	}
	return &core.ModelReply{Content: "done"}, nil
}

// Ensure followers of a run whose clients do not read hold at most one
// batch each, whatever the run sends (here 10 followers and 3,000 events
// of about 220 bytes, 660 KB each): a follower waits for its client to
// take what it was sent before it sends more, and when it reads again it
// gets the events from the shared log, a run.gap first for those
// dropped meanwhile, to the end.
func TestRuns_SlowFollowersBounded(t *testing.T) {
	const followers = 10
	m := &burstModel{deltas: 3000, run: make(chan struct{}, 1), goOn: make(chan struct{})}
	h := gatedObject(t, &memStore{}, m, Config{MaxRunEvents: 64})
	started := make(chan answer, 1)
	go func() {
		started <- do(t, h, "POST", "/v1/sessions/c1/runs", `{"input":"q","runId":"f","policy":{"onDisconnect":"continue"}}`, "Accept", "text/event-stream")
	}()
	<-m.run
	ws := make([]*stuckWriter, followers)
	ends := make(chan struct{}, followers)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range ws {
		ws[i] = newStuckWriter()
		req := httptest.NewRequest("GET", "/v1/sessions/c1/runs/f/events?after=0", nil).WithContext(ctx)
		req.Header.Set("Authorization", "Bearer tok")
		go func(w *stuckWriter) {
			h.ServeHTTP(w, req)
			ends <- struct{}{}
		}(ws[i])
	}
	for _, w := range ws {
		for w.written() == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	close(m.goOn)
	if a := <-started; !strings.Contains(a.Body, "event: run.completed\n") {
		t.Fatalf("the run: %.300q", a.Body)
	}
	time.Sleep(50 * time.Millisecond) // time for a follower that does not wait to write on
	total := 0
	for i, w := range ws {
		n := w.written()
		total += n
		if n > 64<<10+4096 {
			t.Errorf("follower %d holds %d bytes its client did not take, want at most one batch (%d)", i, n, 64<<10)
		}
	}
	t.Logf("%d followers hold %d bytes in all", followers, total)
	// Each reads again and gets the rest from the log, to the end.
	for i, w := range ws {
		for deadline := time.Now().Add(5 * time.Second); ; {
			n := w.take()
			time.Sleep(2 * time.Millisecond)
			if w.written() == n {
				select {
				case <-ends:
				case <-time.After(time.Millisecond):
					if time.Now().Before(deadline) {
						continue
					}
					t.Fatalf("follower %d did not end", i)
				}
				break
			}
		}
		w.mu.Lock()
		out := w.body.String()
		w.mu.Unlock()
		if !strings.Contains(out, "event: run.gap\n") || !strings.HasSuffix(out, "\n\n") || !strings.Contains(out[max(0, len(out)-4096):], "event: run.completed\n") {
			t.Fatalf("follower %d read %d bytes, want a run.gap and run.completed at the end", i, len(out))
		}
	}
}
