package durable

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// watcher is an open GET /v1/sessions/{id}/events.
type watcher struct {
	res    *http.Response
	sc     *bufio.Scanner
	cancel context.CancelFunc
}

func (w *watcher) close() { w.cancel(); w.res.Body.Close() }

// openWatch opens the events route of session c1 with headers (name,
// value pairs); it fails the test unless the answer is 200.
func openWatch(t *testing.T, url string, headers ...string) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/v1/sessions/c1/events", nil)
	req.Header.Set("Authorization", "Bearer tok")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		cancel()
		t.Fatalf("watch: %d %s", res.StatusCode, b)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 4<<20)
	w := &watcher{res: res, sc: sc, cancel: cancel}
	t.Cleanup(w.close)
	return w
}

// runs reads events until the nth run.completed, failing the test if
// they do not come within 10 s.
func (w *watcher) runs(t *testing.T, n int) []sseEvent {
	t.Helper()
	done := make(chan []sseEvent, 1)
	go func() {
		var out []sseEvent
		for k := 0; k < n; {
			evs := readEvents(t, w.sc, 1)
			if len(evs) == 0 {
				break
			}
			out = append(out, evs[0])
			if evs[0].typ == "run.completed" {
				k++
			}
		}
		done <- out
	}()
	select {
	case evs := <-done:
		return evs
	case <-time.After(10 * time.Second):
		w.close()
		t.Fatalf("no %d runs within 10 s", n)
	}
	return nil
}

// post runs a turn on c1 from another client: plain, or streamed when
// stream is set (then the answer is its events).
func post(t *testing.T, url, input string, stream bool) (int, string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"input": input})
	req, _ := http.NewRequest("POST", url+"/v1/sessions/c1/runs", strings.NewReader(string(b)))
	req.Header.Set("Authorization", "Bearer tok")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// types are the types of evs, model.delta left out.
func types(evs []sseEvent) string {
	var out []string
	for _, e := range evs {
		if e.typ != "model.delta" {
			out = append(out, e.typ)
		}
	}
	return strings.Join(out, " ")
}

// split cuts evs after each run.completed.
func split(evs []sseEvent) [][]sseEvent {
	var out [][]sseEvent
	start := 0
	for i, e := range evs {
		if e.typ == "run.completed" {
			out = append(out, evs[start:i+1])
			start = i + 1
		}
	}
	return out
}

// Ensure a watcher connected before anything ran on the conversation
// (it does not exist yet: the route answers 200 and waits) sees the
// runs other clients start, plain and streamed, each from run.started to
// run.completed, with ids increasing by one across runs and the same
// event JSON as the streamed run's own client got; a second watcher sees
// the same events with the same ids; the plain client still gets its
// Result as JSON.
func TestWatch_SeesOtherClientsRuns(t *testing.T) {
	h := object(t, &memStore{}, Config{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	a := openWatch(t, srv.URL)
	b := openWatch(t, srv.URL)

	st, body := post(t, srv.URL, "one", false)
	var plain struct {
		Status string `json:"status"`
		Reply  struct{ Content string }
	}
	if st != 200 || json.Unmarshal([]byte(body), &plain) != nil || plain.Status != "completed" || plain.Reply.Content == "" {
		t.Fatalf("plain run: %d %s", st, body)
	}
	st, streamed := post(t, srv.URL, "two", true)
	if st != 200 {
		t.Fatalf("streamed run: %d %s", st, streamed)
	}
	own := readEvents(t, bufio.NewScanner(strings.NewReader(streamed)), 100)

	const want = "run.started message.appended message.appended run.completed"
	evA := a.runs(t, 2)
	evB := b.runs(t, 2)
	runs := split(evA)
	if len(runs) != 2 || len(evA) != len(evB) {
		t.Fatalf("watched %d and %d events: %+v", len(evA), len(evB), evA)
	}
	if got := types(runs[0]); got != want {
		t.Fatalf("the plain run as watched: %s, want %s", got, want)
	}
	if got := types(runs[1]); got != want {
		t.Fatalf("the streamed run as watched: %s, want %s", got, want)
	}
	for i := range evA {
		if i > 0 && evA[i].id != evA[i-1].id+1 {
			t.Fatalf("ids %d then %d, want one more", evA[i-1].id, evA[i].id)
		}
		if evA[i] != evB[i] {
			t.Fatalf("the two watchers differ at %d: %+v and %+v", i, evA[i], evB[i])
		}
	}
	end := runs[0][len(runs[0])-1]
	if !strings.Contains(end.data, `"result":`) || !strings.Contains(end.data, plain.Reply.Content) {
		t.Fatalf("the plain run's run.completed as watched: %s", end.data)
	}
	if len(own) != len(runs[1]) {
		t.Fatalf("the streamed run's client got %d events, the watcher %d", len(own), len(runs[1]))
	}
	for i, e := range own {
		if runs[1][i].data != e.data {
			t.Fatalf("event %d: watched %s, the run's client got %s", i, runs[1][i].data, e.data)
		}
	}
}

// Ensure a watcher that reconnects with Last-Event-ID gets the events
// after it once (no event it had, none skipped); ?after= does the same.
func TestWatch_ReconnectNoDuplicates(t *testing.T) {
	h := object(t, &memStore{}, Config{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	a := openWatch(t, srv.URL)
	// The watcher reads each run before the next is posted: a run's
	// events fit in the 5 kept, two runs' do not, and a watcher behind by
	// more than 5 (a loaded machine: it once missed the first run's
	// run.completed) would get a gap of its own.
	post(t, srv.URL, "one", false)
	all := a.runs(t, 1)
	post(t, srv.URL, "two", false)
	all = append(all, a.runs(t, 1)...)
	a.close()
	first := all[:2] // the watcher had read these

	last := strconv.FormatInt(first[1].id, 10)
	for _, hdr := range [][]string{{"Last-Event-ID", last}, {}} {
		u := srv.URL
		w := openWatch(t, u, hdr...)
		if len(hdr) == 0 {
			// The same position as a query parameter.
			w.close()
			w = openWatchURL(t, srv.URL+"/v1/sessions/c1/events?after="+last)
		}
		rest := w.runs(t, 2)
		if len(rest) != len(all)-2 {
			t.Fatalf("after %s: %d events, want %d", last, len(rest), len(all)-2)
		}
		for i, e := range rest {
			if e != all[2+i] {
				t.Fatalf("after %s, event %d: %+v, want %+v", last, i, e, all[2+i])
			}
		}
		w.close()
	}
}

func openWatchURL(t *testing.T, u string) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	req.Header.Set("Authorization", "Bearer tok")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		cancel()
		t.Fatalf("watch %s: %v %v", u, res, err)
	}
	w := &watcher{res: res, sc: bufio.NewScanner(res.Body), cancel: cancel}
	t.Cleanup(w.close)
	return w
}

// Ensure the log is bounded: with 5 events kept, a watcher asking for
// events from before the oldest kept gets run.gap {sessionId, from, to}
// naming the ids it lost, then the kept ones; the test route reports 5
// events kept. The ids come from the test route, not from a live watcher:
// a run here has more events than the log keeps, so a live watcher gets
// gaps of its own whenever it falls behind (it did on a loaded machine).
func TestWatch_BoundAndGap(t *testing.T) {
	const kept = 5
	h := object(t, &memStore{}, Config{MaxSessionEvents: kept, TestRoutes: true})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	base := storageStatsOf(t, h).Events.LastID
	post(t, srv.URL, "one", false)
	post(t, srv.URL, "two", false)
	last := storageStatsOf(t, h).Events.LastID
	if last-base <= kept+1 {
		t.Fatalf("two runs had %d events: too few for a gap after %d kept", last-base, kept)
	}
	// From the first run's first event: the rest up to the kept ones is lost.
	w := openWatch(t, srv.URL, "Last-Event-ID", strconv.FormatInt(base+1, 10))
	evs := w.runs(t, 1)
	var gap struct {
		Type      string `json:"type"`
		SessionID string `json:"sessionId"`
		From, To  int64
	}
	if evs[0].typ != "run.gap" || json.Unmarshal([]byte(evs[0].data), &gap) != nil || gap.SessionID != "c1" ||
		gap.From != base+2 || gap.To != last-kept || evs[0].id != last-kept {
		t.Fatalf("first event %+v, want run.gap from %d to %d", evs[0], base+2, last-kept)
	}
	if len(evs) != kept+1 {
		t.Fatalf("%d events after the gap, want the %d kept", len(evs)-1, kept)
	}
	for i, e := range evs[1:] {
		if e.id != last-kept+1+int64(i) || e.typ == "run.gap" {
			t.Fatalf("kept event %d: %+v, want id %d", i, e, last-kept+1+int64(i))
		}
	}
	if evs[kept].typ != "run.completed" {
		t.Fatalf("the last kept event is %s, want the second run's run.completed", evs[kept].typ)
	}
	if s := storageStatsOf(t, h); s.Events.Events != kept {
		t.Fatalf("the log keeps %d events, want %d", s.Events.Events, kept)
	}
}

func storageStatsOf(t *testing.T, h http.Handler) Stats {
	t.Helper()
	a := do(t, h, "GET", "/v1/sessions/c1/_test/storage", "")
	var s Stats
	if a.Status != 200 || json.Unmarshal([]byte(a.Body), &s) != nil {
		t.Fatalf("storage: %d %s", a.Status, a.Body)
	}
	return s
}

// Ensure a watcher that goes away is dropped: the test route counts two
// watchers while they are connected, and none once they left, with no
// run to wake them.
func TestWatch_ClosedWatcherDropped(t *testing.T) {
	h := object(t, &memStore{}, Config{TestRoutes: true})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	a := openWatch(t, srv.URL)
	b := openWatch(t, srv.URL)
	waitUntil(t, "two watchers", func() bool { return storageStatsOf(t, h).Events.Watchers == 2 })
	a.close()
	b.close()
	waitUntil(t, "no watcher", func() bool { return storageStatsOf(t, h).Events.Watchers == 0 })
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("no %s within 5 s", what)
}

// Ensure the route's refusals: without the bearer token 401, an id that
// is not a non-negative integer or is past the last event 400
// invalid_argument; none of them counts as a watcher.
func TestWatch_Refusals(t *testing.T) {
	h := object(t, &memStore{}, Config{TestRoutes: true})
	req := httptest.NewRequest("GET", "/v1/sessions/c1/events", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 401 || !strings.Contains(rec.Body.String(), "unauthorized") {
		t.Fatalf("no token: %d %s", rec.Code, rec.Body)
	}
	last := h.feed.figures().LastID
	for _, id := range []string{"x", "-1", strconv.FormatInt(last+1, 10)} {
		a := do(t, h, "GET", "/v1/sessions/c1/events", "", "Last-Event-ID", id)
		if a.Status != 400 || a.Error.Code != "invalid_argument" {
			t.Fatalf("Last-Event-ID %s: %d %s", id, a.Status, a.Body)
		}
	}
	if s := storageStatsOf(t, h); s.Events.Watchers != 0 || s.Events.LastID != last {
		t.Fatalf("after refusals: %+v", s.Events)
	}
}

// Ensure a continued run whose client left still reaches the watchers:
// a watcher connected before it sees it from run.started to
// run.completed, the events after the client left included.
func TestWatch_ContinuedRunAfterItsClientLeft(t *testing.T) {
	m := &gateModel{deltas: 3, started: make(chan struct{}, 1), release: make(chan struct{})}
	h := gatedObject(t, &memStore{}, m, Config{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	w := openWatch(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/sessions/c1/runs",
		strings.NewReader(`{"input":"q","policy":{"onDisconnect":"continue"}}`))
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("start: %v %v", res, err)
	}
	<-m.started
	readEvents(t, bufio.NewScanner(res.Body), 1)
	cancel()
	res.Body.Close()
	close(m.release)
	evs := w.runs(t, 1)
	if got := types(evs); got != "run.started message.appended message.appended run.completed" {
		t.Fatalf("watched %s", got)
	}
	if n := strings.Count(fmtEvents(evs), `"delta":"d`); n != 3 {
		t.Fatalf("watched %d deltas, want 3", n)
	}
}

func fmtEvents(evs []sseEvent) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.data)
	}
	return b.String()
}

// Ensure a watcher that never reads holds up no run: with one connected
// over a socket nobody reads, 20 runs of 200 KB events each (4 MB in
// all, past what the kernel buffers) answer as before, and a watcher
// that joins afterwards with an old id gets run.gap and the kept tail.
func TestWatch_NonReadingWatcherHoldsNothingUp(t *testing.T) {
	h := object(t, &memStore{}, Config{})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	io.WriteString(c, "GET /v1/sessions/c1/events?after=0 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok\r\n\r\n")
	waitUntil(t, "the watcher", func() bool { return h.feed.figures().Watchers == 1 })
	big := strings.Repeat("x", 100<<10)
	start := time.Now()
	for i := 0; i < 20; i++ {
		if st, body := post(t, srv.URL, big+strconv.Itoa(i), false); st != 200 {
			t.Fatalf("run %d: %d %.200s", i, st, body)
		}
		if a := do(t, h, "DELETE", "/v1/sessions/c1", ""); a.Status != 204 {
			t.Fatalf("delete: %d", a.Status)
		}
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("20 runs took %v", d)
	}
	f := h.feed.figures()
	if f.Bytes > DefaultMaxSessionEventBytes {
		t.Fatalf("the log holds %d bytes", f.Bytes)
	}
	w := openWatch(t, srv.URL, "Last-Event-ID", "0")
	evs := w.runs(t, 1)
	if evs[0].typ != "run.gap" {
		t.Fatalf("first event %+v, want run.gap", evs[0].typ)
	}
}
