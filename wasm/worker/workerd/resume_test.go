//go:build !js

package workerd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// sse is one Server-Sent Event as a client reads it.
type sse struct {
	id        int64
	typ, data string
}

// readSSE reads events until one of the run's final events, or the end.
func readSSE(sc *bufio.Scanner) []sse {
	var out []sse
	var ev sse
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.typ != "" {
				out = append(out, ev)
				if ev.typ == "run.completed" || ev.typ == "run.failed" || ev.typ == "run.cancelled" {
					return out
				}
			}
			ev = sse{}
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

// startContinued starts a streamed run with policy.onDisconnect
// "continue", reads its first event and leaves, once the upstream call
// is in flight. It returns the run's id.
func startContinued(t *testing.T, p *workerd.Process, up *slowUpstream, id, input string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", p.URL+"/v1/sessions/"+id+"/runs",
		strings.NewReader(`{"input":"`+input+`","policy":{"onDisconnect":"continue"}}`))
	req.Header.Set("Accept", "text/event-stream")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	runID := res.Header.Get("Agentrt-Run-Id")
	if res.StatusCode != 200 || runID == "" || res.Header.Get("Agentrt-Run-Continues") != "" {
		t.Fatalf("start: %d, run id %q, headers %v", res.StatusCode, runID, res.Header)
	}
	sc := bufio.NewScanner(res.Body)
	if !sc.Scan() || sc.Text() != "id: 1" || !sc.Scan() || sc.Text() != "event: run.started" {
		t.Fatalf("the first event does not start with id: 1 and run.started: %q", sc.Text())
	}
	waitFor(t, "the upstream call", func() bool { return up.inFlight.Load() > 0 })
	cancel()
	res.Body.Close()
	return runID
}

// Ensure, on workerd, that a continued run whose client left goes on
// (its upstream call is not abandoned), a client that reconnects with
// Last-Event-ID gets every later event once with the Result, the turn
// is stored once, and a replay after completion gives the tail.
func TestDurable_ResumeAfterDisconnect(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	up := newSlowUpstream(t, 100)
	p := mustStart(t, workerd.Options{Durable: true, AllowLocalNetwork: true, Env: durableEnv(openaiEnv(up.URL))})
	runID := startContinued(t, p, up, "phone", "a very slow question")
	req, _ := http.NewRequest("GET", p.URL+"/v1/sessions/phone/runs/"+runID+"/events", nil)
	req.Header.Set("Last-Event-ID", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	res, err := client.Do(req.WithContext(ctx))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("resume: %v %v", res, err)
	}
	evs := readSSE(bufio.NewScanner(res.Body))
	res.Body.Close()
	if len(evs) == 0 || evs[len(evs)-1].typ != "run.completed" || !strings.Contains(evs[len(evs)-1].data, "upstream saw 1 messages") {
		t.Fatalf("resumed events %+v, want them to end with run.completed and the Result (upstream calls %d, cancelled %d)", evs, up.calls.Load(), up.cancelled.Load())
	}
	for i, ev := range evs {
		if ev.id != int64(2+i) {
			t.Fatalf("resumed event %d has id %d, want %d: %+v", i, ev.id, 2+i, evs)
		}
	}
	if up.cancelled.Load() != 0 {
		t.Fatalf("the upstream call was abandoned when the client left")
	}
	if s := storedOf(t, p, "phone"); s.Messages != 2 || s.Writes != 1 {
		t.Fatalf("stored %+v, want the turn once", s)
	}
	last := evs[len(evs)-1].id
	req, _ = http.NewRequest("GET", p.URL+"/v1/sessions/phone/runs/"+runID+"/events?after="+strconv.FormatInt(last-1, 10), nil)
	res, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	tail := readSSE(bufio.NewScanner(res.Body))
	res.Body.Close()
	if len(tail) != 1 || tail[0].id != last || tail[0].typ != "run.completed" {
		t.Fatalf("the tail %+v, want run.completed alone", tail)
	}
	r := doReq(t, p, "GET", "/v1/sessions/phone/runs/"+runID, nil)
	if r.Status != 200 {
		t.Fatalf("the run's status: %d %+v", r.Status, r.Error)
	}
	if r = post(t, p, "/v1/sessions/phone/runs", turnBody{Input: "next"}); r.Status != 200 || r.MessageCount != 4 {
		t.Fatalf("the next turn: %d %+v", r.Status, r.Error)
	}
}

// Ensure a stop (DELETE of the run) on a resumed run cancels it and
// rolls its turn back, and a workerd restart mid-run answers run_lost
// and leaves the stored history as it was.
func TestDurable_ResumedStop_RestartLost(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	up := newSlowUpstream(t, 100)
	o := workerd.Options{Durable: true, AllowLocalNetwork: true, StateDir: t.TempDir(), Env: durableEnv(openaiEnv(up.URL))}
	p := mustStart(t, o)
	if r := post(t, p, "/v1/sessions/stop/runs", turnBody{Input: "first"}); r.Status != 200 {
		t.Fatalf("first turn: %d %+v", r.Status, r.Error)
	}
	runID := startContinued(t, p, up, "stop", "a very slow question")
	req, _ := http.NewRequest("GET", p.URL+"/v1/sessions/stop/runs/"+runID+"/events?after=1", nil)
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []sse, 1)
	go func() { done <- readSSE(bufio.NewScanner(res.Body)) }()
	r := doReq(t, p, "DELETE", "/v1/sessions/stop/runs/"+runID, nil)
	if r.Status != 200 {
		t.Fatalf("stop: %d %+v", r.Status, r.Error)
	}
	evs := <-done
	res.Body.Close()
	if len(evs) == 0 || evs[len(evs)-1].typ != "run.cancelled" {
		t.Fatalf("the resumed stream %+v, want it to end with run.cancelled", evs)
	}
	if s := storedOf(t, p, "stop"); s.Messages != 2 {
		t.Fatalf("stored %+v after the stop, want the first turn only", s)
	}

	runID = startContinued(t, p, up, "stop", "a very slow question")
	p.Stop()
	p = mustStart(t, o)
	for _, path := range []string{"/runs/" + runID + "/events", "/runs/" + runID} {
		if r := doReq(t, p, "GET", "/v1/sessions/stop"+path, nil, "Last-Event-ID", "1"); r.Status != 404 || r.Error.Code != "run_lost" {
			t.Fatalf("GET %s after a restart: %d %+v, want 404 run_lost", path, r.Status, r.Error)
		}
	}
	if s := storedOf(t, p, "stop"); s.Messages != 2 {
		t.Fatalf("stored %+v after the restart, want the first turn only", s)
	}
}

// leaveContinued starts a streamed run with policy.onDisconnect
// "continue" on conversation id, reads its first event and leaves. It
// returns the run's id; it may run on any goroutine.
func leaveContinued(p *workerd.Process, id, input string) (string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", p.URL+"/v1/sessions/"+id+"/runs",
		strings.NewReader(`{"input":"`+input+`","policy":{"onDisconnect":"continue"}}`))
	req.Header.Set("Accept", "text/event-stream")
	res, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	runID := res.Header.Get("Agentrt-Run-Id")
	sc := bufio.NewScanner(res.Body)
	if res.StatusCode != 200 || runID == "" || !sc.Scan() || sc.Text() != "id: 1" {
		return "", fmt.Errorf("start of %s: %d, run id %q, first line %q", id, res.StatusCode, runID, sc.Text())
	}
	return runID, nil
}

// Ensure, on workerd, that 50 continued runs in flight at once, on 50
// conversations whose clients all left, keep each event log within its
// bounds (here 3 events and 1,000 bytes), that a replay from the start
// begins with run.gap and ends with run.completed, seqs increasing, and
// that every turn is stored once.
func TestDurable_RunLogsBounded_50Concurrent(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	const runs, maxEvents, maxBytes = 50, 3, 1000
	up := newSlowUpstream(t, 100)
	env := durableEnv(openaiEnv(up.URL))
	env["AGENTRT_TEST_RUN_EVENTS"] = strconv.Itoa(maxEvents)
	env["AGENTRT_TEST_RUN_EVENT_BYTES"] = strconv.Itoa(maxBytes)
	p := mustStart(t, workerd.Options{Durable: true, AllowLocalNetwork: true, Env: env})
	ids := make([]string, runs)
	errs := make(chan error, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			ids[i], err = leaveContinued(p, "many-"+strconv.Itoa(i), "a very slow question")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := up.maxSeen.Load(); n < 2 {
		t.Logf("at most %d upstream calls were in flight at once", n)
	}
	for i, runID := range ids {
		conv := "many-" + strconv.Itoa(i)
		waitFor(t, conv+"'s run to end", func() bool {
			return runStatusOf(t, p, conv, runID) == "completed"
		})
		s := storedOf(t, p, conv)
		if s.Messages != 2 || s.Writes != 1 {
			t.Errorf("%s stored %+v, want its turn once", conv, s)
		}
		if l := s.RunLogs; l.Runs != 1 || l.MaxEvents > maxEvents || l.MaxBytes > maxBytes || l.MaxEvents == 0 {
			t.Errorf("%s's run logs %+v, want one log within %d events and %d bytes", conv, l, maxEvents, maxBytes)
		}
		res, err := client.Get(p.URL + "/v1/sessions/" + conv + "/runs/" + runID + "/events?after=0")
		if err != nil {
			t.Fatal(err)
		}
		evs := readSSE(bufio.NewScanner(res.Body))
		res.Body.Close()
		if len(evs) < 2 || evs[0].typ != "run.gap" || evs[len(evs)-1].typ != "run.completed" || len(evs) > maxEvents+1 {
			t.Fatalf("%s's replay from the start: %+v, want run.gap, at most %d events, run.completed", conv, evs, maxEvents)
		}
		for j := 1; j < len(evs); j++ {
			if evs[j].id <= evs[j-1].id {
				t.Fatalf("%s's replay: ids not increasing: %+v", conv, evs)
			}
		}
	}
}

// runStatusOf returns the status GET /v1/sessions/{id}/runs/{runId}
// answers, or the error code.
func runStatusOf(t testing.TB, p *workerd.Process, id, runID string) string {
	t.Helper()
	res, err := client.Get(p.URL + "/v1/sessions/" + id + "/runs/" + runID)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var s struct {
		Status string `json:"status"`
		Error  struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil {
		t.Fatalf("the status of %s: %d %v", runID, res.StatusCode, err)
	}
	if s.Status == "" {
		return s.Error.Code
	}
	return s.Status
}

// Ensure policy.onDisconnect "continue" is refused 400 invalid_argument
// where it cannot hold: in the isolate deployment, and on a plain run in
// the durable one; nothing is run or stored, and the runs routes of the
// isolate deployment do not exist.
func TestWorker_ContinueRefusedOutsideDurableStreams(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	body := `{"input":"q","policy":{"onDisconnect":"continue"}}`
	p := mustStart(t, workerd.Options{})
	if r := post(t, p, "/v1/sessions/iso/runs", body, "Accept", "text/event-stream"); r.Status != 400 || r.Error.Code != "invalid_argument" {
		t.Fatalf("isolate deployment: %d %+v, want 400 invalid_argument", r.Status, r.Error)
	}
	if r := doReq(t, p, "GET", "/v1/sessions/iso", nil); r.Status != 404 {
		t.Fatalf("the session after the refusal: %d, want 404", r.Status)
	}
	if r := doReq(t, p, "GET", "/v1/sessions/iso/runs/r-0000000000000000", nil); r.Status != 404 || r.Error.Code != "not_found" {
		t.Fatalf("a run's status in the isolate deployment: %d %+v, want 404 not_found", r.Status, r.Error)
	}
	d := mustStart(t, workerd.Options{Durable: true, Env: durableEnv(nil)})
	if r := post(t, d, "/v1/sessions/plain/runs", body); r.Status != 400 || r.Error.Code != "invalid_argument" {
		t.Fatalf("plain run, durable deployment: %d %+v, want 400 invalid_argument", r.Status, r.Error)
	}
	if s := storedOf(t, d, "plain"); s.Messages != 0 || s.Writes != 0 {
		t.Fatalf("stored %+v after the refusal", s)
	}
}
