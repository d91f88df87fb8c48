//go:build !js

package workerd_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// watchEvents opens GET /v1/sessions/{id}/events with headers (name,
// value pairs) and returns its scanner; the watcher leaves when ctx ends.
func watchEvents(t *testing.T, ctx context.Context, p *workerd.Process, id string, headers ...string) *bufio.Scanner {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", p.URL+"/v1/sessions/"+id+"/events", nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("watch %s: %d %s", id, res.StatusCode, b)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 4<<20)
	return sc
}

// Ensure, on workerd, that a watcher of a conversation sees a run that
// another client started, live: connected before the conversation
// exists, it gets run.started while the run's model call is still in
// flight, then the run's events to run.completed carrying the Result,
// with ids increasing by one; the starting client gets its plain JSON
// answer. A second watcher that joins with the first's Last-Event-ID
// after run.started gets the rest of the run with the same ids, none
// twice. Both leave, and the object drops them (its watcher count, on
// the test route, goes back to 0). Without a token the route is refused
// 401 when the deployment has one.
func TestDurable_WatchSeesOtherClientsRun(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	up := newSlowUpstream(t, 700*time.Millisecond)
	p := mustStart(t, workerd.Options{Durable: true, AllowLocalNetwork: true, Env: durableEnv(openaiEnv(up.URL))})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wctx, leave := context.WithCancel(ctx)
	defer leave()
	a := watchEvents(t, wctx, p, "watched")

	answered := make(chan string, 1)
	go func() {
		st, body, err := rawPost(p, "/v1/sessions/watched/runs", `{"input":"hello"}`)
		answered <- strconv.Itoa(st) + " " + body + " " + errString(err)
	}()
	first := readEvents1(t, a)
	if first.typ != "run.started" {
		t.Fatalf("the first watched event %+v, want run.started", first)
	}
	waitFor(t, "the upstream call", func() bool { return up.inFlight.Load() > 0 })
	select {
	case got := <-answered:
		t.Fatalf("the run answered (%s) before the watcher saw more than run.started: not live", got)
	default:
	}
	b := watchEvents(t, wctx, p, "watched", "Last-Event-ID", strconv.FormatInt(first.id, 10))
	restA := readSSE(a)
	restB := readSSE(b)
	if len(restA) == 0 || restA[len(restA)-1].typ != "run.completed" || !strings.Contains(restA[len(restA)-1].data, "upstream saw 1 messages") {
		t.Fatalf("the watched run ends with %+v, want run.completed with the reply", restA)
	}
	prev := first.id
	for _, e := range restA {
		if e.id != prev+1 {
			t.Fatalf("id %d after %d", e.id, prev)
		}
		prev = e.id
	}
	if len(restB) != len(restA) {
		t.Fatalf("the watcher that joined with Last-Event-ID got %d events, want %d: %+v", len(restB), len(restA), restB)
	}
	for i := range restA {
		if restA[i] != restB[i] {
			t.Fatalf("event %d: %+v and %+v", i, restA[i], restB[i])
		}
	}
	got := <-answered
	if !strings.HasPrefix(got, "200 {") || !strings.Contains(got, `"status":"completed"`) {
		t.Fatalf("the starting client's answer: %s", got)
	}
	if s := storedOf(t, p, "watched"); s.Events.Watchers != 2 {
		t.Fatalf("%d watchers while two are connected", s.Events.Watchers)
	}
	leave()
	waitFor(t, "the watchers to be dropped", func() bool { return storedOf(t, p, "watched").Events.Watchers == 0 })
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// readEvents1 reads one event.
func readEvents1(t *testing.T, sc *bufio.Scanner) sse {
	t.Helper()
	var ev sse
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.typ != "" {
				return ev
			}
		case strings.HasPrefix(line, "id: "):
			ev.id, _ = strconv.ParseInt(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			ev.typ = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[6:]
		}
	}
	t.Fatalf("the stream ended: %v", sc.Err())
	return ev
}

// Ensure, on workerd, that the events route takes the deployment's
// token as the other routes do: 401 without it, 200 with it.
func TestDurable_WatchNeedsToken(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	p := mustStart(t, workerd.Options{Durable: true, Env: map[string]string{"AGENTRT_TOKEN": "tok-1"}})
	res, err := client.Get(p.URL + "/v1/sessions/x/events")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 401 || !strings.Contains(string(b), "unauthorized") {
		t.Fatalf("no token: %d %s", res.StatusCode, b)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watchEvents(t, ctx, p, "x", "Authorization", "Bearer tok-1")
}

// Ensure, on workerd, that the isolate deployment, which keeps no
// conversation's events, answers the route 404 not_found.
func TestWorker_WatchIsolate404(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	p := mustStart(t, workerd.Options{})
	res, err := client.Get(p.URL + "/v1/sessions/x/events")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 404 || !strings.Contains(string(b), "not_found") {
		t.Fatalf("isolate: %d %s", res.StatusCode, b)
	}
}

// Ensure, on workerd, that a conversation's watcher learns that it was
// deleted: a DELETE that succeeds publishes session.deleted with the
// conversation's id, after the run's events and with the next id, and
// the stream goes on (a run after it is watched too); a DELETE the
// object refuses (no token) publishes nothing.
func TestDurable_WatchSeesDelete(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	p := mustStart(t, workerd.Options{Durable: true, Env: durableEnv(map[string]string{"AGENTRT_TOKEN": "tok-2"})})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	auth := []string{"Authorization", "Bearer tok-2", "Content-Type", "application/json"}
	if r := doReq(t, p, "POST", "/v1/sessions/gone/runs", strings.NewReader(`{"input":"hello"}`), auth...); r.Status != 200 {
		t.Fatalf("first run: %d %+v", r.Status, r.Error)
	}
	w := watchEvents(t, ctx, p, "gone", auth[:2]...)
	if d := doReq(t, p, "DELETE", "/v1/sessions/gone", nil); d.Status != 401 {
		t.Fatalf("DELETE without a token: %d %+v, want 401", d.Status, d.Error)
	}
	if d := doReq(t, p, "DELETE", "/v1/sessions/gone", nil, auth...); d.Status != 204 {
		t.Fatalf("DELETE: %d %+v", d.Status, d.Error)
	}
	ev := readEvents1(t, w)
	if ev.typ != "session.deleted" || ev.data != `{"sessionId":"gone","type":"session.deleted"}` {
		t.Fatalf("after DELETE the watcher got %+v, want session.deleted of gone (and nothing for the refused DELETE)", ev)
	}
	if r := doReq(t, p, "POST", "/v1/sessions/gone/runs", strings.NewReader(`{"input":"again"}`), auth...); r.Status != 200 || r.MessageCount != 2 {
		t.Fatalf("a run after the DELETE: %d %d %+v, want a fresh conversation", r.Status, r.MessageCount, r.Error)
	}
	rest := readSSE(w)
	if len(rest) == 0 || rest[0].typ != "run.started" || rest[0].id != ev.id+1 || rest[len(rest)-1].typ != "run.completed" {
		t.Fatalf("after session.deleted (id %d) the watcher got %+v, want the next run from the next id", ev.id, rest)
	}
}
