//go:build !js

package workerd_test

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
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
