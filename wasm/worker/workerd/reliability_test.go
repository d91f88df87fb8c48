//go:build !js

package workerd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// slowUpstream is an OpenAI-compatible server on 127.0.0.1 that answers
// every completion after delay, naming how many messages it was sent.
type slowUpstream struct {
	*httptest.Server
	delay    time.Duration
	calls    atomic.Int64
	inFlight atomic.Int64
	maxSeen  atomic.Int64
	// cancelled counts calls whose client went away before the answer.
	cancelled atomic.Int64
	// held, closed by release, holds every call whose last message
	// says "held" until then: a run that must still be running when
	// the test has done something else, however loaded the machine.
	held    chan struct{}
	release func()
}

func newSlowUpstream(t testing.TB, delay time.Duration) *slowUpstream {
	u := &slowUpstream{delay: delay, held: make(chan struct{})}
	u.release = sync.OnceFunc(func() { close(u.held) })
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := u.inFlight.Add(1)
		defer u.inFlight.Add(-1)
		for {
			m := u.maxSeen.Load()
			if n <= m || u.maxSeen.CompareAndSwap(m, n) {
				break
			}
		}
		u.calls.Add(1)
		var body struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		delay := u.delay
		if n := len(body.Messages); n > 0 && strings.Contains(body.Messages[n-1].Content, "very slow") {
			delay = 2 * time.Second
		} else if n > 0 && strings.Contains(body.Messages[n-1].Content, "held") {
			select {
			case <-u.held:
			case <-r.Context().Done():
				u.cancelled.Add(1)
				return
			}
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			u.cancelled.Add(1)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":"upstream saw %d messages"}}]}`, len(body.Messages))
	}))
	t.Cleanup(u.Close)
	t.Cleanup(u.release)
	return u
}

func openaiEnv(baseURL string) map[string]string {
	return map[string]string{
		"AGENTRT_MODEL":           "openai",
		"AGENTRT_OPENAI_BASE_URL": baseURL + "/v1",
		"AGENTRT_OPENAI_MODEL":    "slow-1",
		"AGENTRT_OPENAI_KEY":      "sk-slow-upstream-key",
	}
}

// rawPost posts body and returns the status and the raw answer.
func rawPost(p *workerd.Process, path, body string, headers ...string) (int, string, error) {
	req, _ := http.NewRequest("POST", p.URL+path, strings.NewReader(body))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

// sessionCount returns the session's message count, or -1 when there is
// no session.
func sessionCount(t testing.TB, p *workerd.Process, id string) int {
	t.Helper()
	res, err := client.Get(p.URL + "/v1/sessions/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode == 404 {
		return -1
	}
	var s struct {
		MessageCount int `json:"messageCount"`
		Messages     []msg
	}
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil || res.StatusCode != 200 {
		t.Fatalf("session %s: status %d, %v", id, res.StatusCode, err)
	}
	return s.MessageCount
}

// Ensure overlapping POSTs on one session with the OpenAI-compatible
// model and a slow upstream each queue inside their own request: every
// one answers 200 JSON (never a 500), the session holds each turn once,
// and after DELETE a normal turn starts a fresh session. With
// policy.onBusy "reject" the overlapping ones answer 409 session_busy and
// leave nothing behind.
func TestWorker_OpenAI_OverlappingRequests(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	up := newSlowUpstream(t, 300*time.Millisecond)
	p, logs := mustStartLogs(t, workerd.Options{AllowLocalNetwork: true, Env: openaiEnv(up.URL)})
	defer func() {
		// workerd's words for work done in, or lost to, another request.
		for _, bad := range []string{"different request context", "hung", "Uncaught"} {
			if strings.Contains(logs.String(), bad) {
				t.Errorf("workerd logged %q", bad)
			}
		}
	}()
	for _, n := range []int{2, 6} {
		t.Run(fmt.Sprintf("queue-%d", n), func(t *testing.T) {
			sid := fmt.Sprintf("q%d", n)
			var wg sync.WaitGroup
			errs := make(chan string, 2*n)
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					var hd []string
					if i%2 == 1 {
						hd = []string{"Accept", "text/event-stream"}
					}
					st, b, err := rawPost(p, "/v1/sessions/"+sid+"/runs", fmt.Sprintf(`{"input":"overlap %d"}`, i), hd...)
					if err != nil || st != 200 || !strings.Contains(b, "upstream saw") {
						errs <- fmt.Sprintf("request %d: %d %q %v", i, st, b, err)
					}
					if i%2 == 1 && !strings.Contains(b, "event: run.completed") {
						errs <- fmt.Sprintf("request %d: stream without run.completed: %q", i, b)
					}
				}(i)
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}
			if got := sessionCount(t, p, sid); got != 2*n {
				t.Errorf("session holds %d messages, want %d", got, 2*n)
			}
			if m := up.maxSeen.Load(); m > 1 {
				t.Errorf("upstream saw %d concurrent calls on one session, want them queued", m)
			}
			if r := doReq(t, p, "DELETE", "/v1/sessions/"+sid, nil); r.Status != 204 {
				t.Fatalf("DELETE: %d", r.Status)
			}
			r := post(t, p, "/v1/sessions/"+sid+"/runs", turnBody{Input: "after delete"})
			if r.Status != 200 || r.Reply.Content != "upstream saw 1 messages" || r.MessageCount != 2 {
				t.Errorf("turn after DELETE: got %d %+v %+v", r.Status, r.Reply, r.Error)
			}
			up.maxSeen.Store(0)
		})
	}
	t.Run("reject", func(t *testing.T) {
		const n = 6
		var wg sync.WaitGroup
		var ok, busy atomic.Int64
		errs := make(chan string, 2*n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				st, b, err := rawPost(p, "/v1/sessions/rej/runs", fmt.Sprintf(`{"input":"overlap %d","policy":{"onBusy":"reject"}}`, i))
				switch {
				case err == nil && st == 200:
					ok.Add(1)
				case err == nil && st == 409 && strings.Contains(b, `"session_busy"`):
					busy.Add(1)
				default:
					errs <- fmt.Sprintf("request %d: %d %q %v", i, st, b, err)
				}
			}(i)
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		if ok.Load() < 1 || ok.Load()+busy.Load() != n {
			t.Errorf("200: %d, 409: %d, want at least one 200 and the rest 409", ok.Load(), busy.Load())
		}
		if got := sessionCount(t, p, "rej"); got != 2*int(ok.Load()) {
			t.Errorf("session holds %d messages, want %d", got, 2*ok.Load())
		}
		r := post(t, p, "/v1/sessions/rej/runs", turnBody{Input: "after", Policy: map[string]any{"onBusy": "reject"}})
		if r.Status != 200 {
			t.Errorf("a later turn: got %d %+v, want 200 (the session is not stuck busy)", r.Status, r.Error)
		}
	})
}

// waitFor polls cond every 10 ms for up to 10 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// abortEntry wraps the worker's handler for TestWorker_ClientDisconnect:
// a request with X-Test-Abort-After-Ms gets a request.signal that aborts
// after that many milliseconds, as workerd's own signal does in
// production when the client goes away (a local workerd does not signal
// it for a request that has not answered yet).
const abortEntry = `import { serve } from "./worker.mjs";
export default {
  async fetch(request, env, ctx) {
    const ms = Number(request.headers.get("x-test-abort-after-ms"));
    if (!ms) return serve(request, env, ctx);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), ms);
    return serve(new Request(request, { signal: ac.signal }), env, ctx);
  },
};
`

// Ensure a client that goes away, plain or streamed, cancels its run:
// the upstream call is abandoned, the turn is rolled back (the session
// keeps only the turns the client received), and the next turn finds no
// dangling user message and no busy session.
func TestWorker_ClientDisconnect_CancelsRun(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	up := newSlowUpstream(t, 0)
	p := mustStart(t, workerd.Options{AllowLocalNetwork: true, Env: openaiEnv(up.URL), Entry: "abort-entry.mjs"})
	for _, mode := range []string{"plain", "sse"} {
		t.Run(mode, func(t *testing.T) {
			sid := "gone-" + mode
			if r := post(t, p, "/v1/sessions/"+sid+"/runs", turnBody{Input: "first"}); r.Status != 200 || r.MessageCount != 2 {
				t.Fatalf("first turn: %d %+v", r.Status, r.Error)
			}
			before := up.cancelled.Load()
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "POST", p.URL+"/v1/sessions/"+sid+"/runs", strings.NewReader(`{"input":"a very slow question"}`))
			if mode == "sse" {
				req.Header.Set("Accept", "text/event-stream")
			} else {
				req.Header.Set("X-Test-Abort-After-Ms", "300")
			}
			start := time.Now()
			errc := make(chan error, 1)
			go func() {
				res, err := client.Do(req)
				if err != nil {
					errc <- err
					return
				}
				defer res.Body.Close()
				// Read the first event, then leave.
				line, err := bufio.NewReader(res.Body).ReadString('\n')
				if err == nil && !strings.HasPrefix(line, "event: run.started") {
					err = fmt.Errorf("first line %q", line)
				}
				errc <- err
				<-ctx.Done()
			}()
			waitFor(t, "the upstream call", func() bool { return up.inFlight.Load() > 0 })
			if mode == "sse" {
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
			}
			cancel()
			waitFor(t, "the upstream call to be abandoned", func() bool { return up.cancelled.Load() > before })
			// Past the moment the upstream would have answered.
			time.Sleep(time.Until(start.Add(2500 * time.Millisecond)))
			if got := sessionCount(t, p, sid); got != 2 {
				t.Errorf("session holds %d messages after the client left, want 2 (the turn rolled back)", got)
			}
			r := post(t, p, "/v1/sessions/"+sid+"/runs", turnBody{Input: "next", Policy: map[string]any{"onBusy": "reject"}})
			if r.Status != 200 || r.Reply.Content != "upstream saw 3 messages" || r.MessageCount != 4 {
				t.Errorf("next turn: got %d %+v %+v, want 200 and no dangling message", r.Status, r.Reply, r.Error)
			}
		})
	}
	// A request queued behind a slow run on its session, whose client
	// leaves while it waits: it never runs, and the slow run's turn is the
	// only one added.
	t.Run("queued", func(t *testing.T) {
		slow := make(chan result, 1)
		calls := up.calls.Load()
		go func() { slow <- post(t, p, "/v1/sessions/gone-queued/runs", turnBody{Input: "a very slow question"}) }()
		waitFor(t, "the slow run's upstream call", func() bool { return up.calls.Load() > calls })
		st, b, err := rawPost(p, "/v1/sessions/gone-queued/runs", `{"input":"queued"}`, "X-Test-Abort-After-Ms", "300")
		if err != nil || st != 503 || !strings.Contains(b, `"cancelled"`) {
			t.Errorf("the queued request: %d %q %v, want the synthetic abort's 503 cancelled", st, b, err)
		}
		if r := <-slow; r.Status != 200 || r.MessageCount != 2 {
			t.Fatalf("the slow run: %d %+v", r.Status, r.Error)
		}
		if got := sessionCount(t, p, "gone-queued"); got != 2 {
			t.Errorf("session holds %d messages, want 2 (the queued turn never ran)", got)
		}
		if c := up.calls.Load(); c != calls+1 {
			t.Errorf("upstream calls: %d, want %d", c-calls, 1)
		}
	})
	// A first turn on a new session: nothing at all remains.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", p.URL+"/v1/sessions/gone-new/runs", strings.NewReader(`{"input":"a very slow question"}`))
	req.Header.Set("Accept", "text/event-stream")
	res, err := client.Do(req)
	if err == nil {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	time.Sleep(2500 * time.Millisecond)
	if got := sessionCount(t, p, "gone-new"); got != -1 {
		t.Errorf("a new session holds %d messages after its only client left, want none", got)
	}
}

// Ensure a Go instance that dies (out of memory, an unrecovered panic, an
// exit) is noticed: the request that killed it and a request it was
// serving get a typed JSON error, /healthz answers at once from a fresh
// instance, and sessions are then cold and seeded from history.
func TestWorker_InstanceDies_Restarts(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	up := newSlowUpstream(t, 0)
	env := openaiEnv(up.URL)
	env["AGENTRT_TEST_FAULTS"] = "1"
	env["AGENTRT_TOKEN"] = "t0ken"
	auth := []string{"Authorization", "Bearer t0ken"}
	p, logs := mustStartLogs(t, workerd.Options{AllowLocalNetwork: true, Env: env})
	defer func() {
		for _, bad := range []string{"different request context", "hung"} {
			if strings.Contains(logs.String(), bad) {
				t.Errorf("workerd logged %q", bad)
			}
		}
		if !strings.Contains(logs.String(), "fatal error: out of memory") {
			t.Error("the oom fault did not end in Go's fatal out of memory")
		}
	}()
	// Without the token the fault route is just an unknown route.
	if st, b, _ := rawPost(p, "/_test/fault/exit", ""); st != 404 {
		t.Fatalf("fault without token: %d %s", st, b)
	}
	for _, kind := range []string{"oom", "panic", "exit"} {
		t.Run(kind, func(t *testing.T) {
			sid := "die-" + kind
			r := post(t, p, "/v1/sessions/"+sid+"/runs", turnBody{Input: "hi"}, auth...)
			if r.Status != 200 || r.MessageCount != 2 {
				t.Fatalf("first turn: %d %+v", r.Status, r.Error)
			}
			// A request in flight when the instance dies.
			inflight := make(chan result, 1)
			calls := up.calls.Load()
			go func() {
				inflight <- post(t, p, "/v1/sessions/other-"+kind+"/runs", turnBody{Input: "a very slow question"}, auth...)
			}()
			waitFor(t, "the upstream call", func() bool { return up.calls.Load() > calls })
			start := time.Now()
			st, b, err := rawPost(p, "/_test/fault/"+kind, "", auth...)
			var e result
			_ = json.Unmarshal([]byte(b), &e)
			if err != nil || st != 500 || e.Error.Code != "internal" || !strings.Contains(e.Error.Message, "Go instance stopped") {
				t.Fatalf("the request that killed the instance: %d %q %v", st, b, err)
			}
			t.Logf("%s: the instance died and answered in %v", kind, time.Since(start))
			if g := doReq(t, p, "GET", "/healthz", nil); g.Status != 200 {
				t.Fatalf("healthz after the death: %d", g.Status)
			}
			f := <-inflight
			if f.Status != 500 || f.Error.Code != "internal" || !strings.Contains(f.Error.Message, "Go instance stopped") {
				t.Errorf("the request in flight: got %d %+v", f.Status, f.Error)
			}
			if g := doReq(t, p, "GET", "/v1/sessions/"+sid, nil, auth...); g.Status != 404 {
				t.Errorf("session after restart: %d, want 404 (cold)", g.Status)
			}
			r = post(t, p, "/v1/sessions/"+sid+"/runs", turnBody{Input: "again", History: []msg{{"user", "hi", ""}, {"assistant", "upstream saw 1 messages", ""}}}, auth...)
			if r.Status != 200 || r.Seed.Mode != "cold" || r.Seed.Seeded != 2 || r.Reply.Content != "upstream saw 3 messages" {
				t.Errorf("turn after restart: %d %+v %+v %+v", r.Status, r.Seed, r.Reply, r.Error)
			}
		})
	}
}

// Ensure every method workerd delivers that no route serves (PUT,
// PATCH, OPTIONS, WebDAV's) answers JSON 405 method_not_allowed on the
// worker. Methods workerd's HTTP parser does not know (lowercase
// spellings, arbitrary tokens) never reach the worker: workerd answers
// them 501 itself, and the instance keeps serving.
func TestWorker_UnknownMethods(t *testing.T) {
	t.Parallel()
	p := mustStart(t, workerd.Options{})
	check := func(method, path string, want int) {
		t.Helper()
		req, _ := http.NewRequest(method, p.URL+path, nil)
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if want == 501 {
			if res.StatusCode != 501 {
				t.Errorf("%s %s: got %d %q; workerd now delivers it: move it to the JSON 405 list", method, path, res.StatusCode, b)
			}
			return
		}
		var e result
		if res.StatusCode != 405 || json.Unmarshal(b, &e) != nil || e.Error.Code != "method_not_allowed" || res.Header.Get("Allow") != "GET, HEAD, POST, DELETE" {
			t.Errorf("%s %s: got %d %q, want JSON 405 method_not_allowed", method, path, res.StatusCode, b)
		}
	}
	for _, path := range []string{"/healthz", "/v1/sessions/a", "/v1/sessions/a/runs", "/nowhere"} {
		for _, m := range []string{"PUT", "PATCH", "OPTIONS", "PROPFIND", "MKCOL", "PURGE"} {
			check(m, path, 405)
		}
		for _, m := range []string{"get", "post", "Delete", "FOO", "M-SEARCH"} {
			check(m, path, 501)
		}
	}
	if g := doReq(t, p, "GET", "/healthz", nil); g.Status != 200 {
		t.Errorf("healthz afterwards: %d", g.Status)
	}
}

// Ensure policy.timeoutMs stops a run on time while its upstream call is
// in flight, also when the run started executing in another request's
// call into Go (it was queued behind that request's run): the run
// answers 504 timeout at once, the upstream call is abandoned, and the
// turn is rolled back.
func TestWorker_OpenAI_QueuedRunTimesOut(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	up := newSlowUpstream(t, 300*time.Millisecond)
	p := mustStart(t, workerd.Options{AllowLocalNetwork: true, Env: openaiEnv(up.URL)})
	first := make(chan result, 1)
	calls := up.calls.Load()
	go func() { first <- post(t, p, "/v1/sessions/to/runs", turnBody{Input: "quick"}) }()
	waitFor(t, "the first upstream call", func() bool { return up.calls.Load() > calls })
	start := time.Now()
	r := post(t, p, "/v1/sessions/to/runs", turnBody{Input: "a very slow question", Policy: map[string]any{"timeoutMs": 500}})
	took := time.Since(start)
	if f := <-first; f.Status != 200 {
		t.Fatalf("first: %d %+v", f.Status, f.Error)
	}
	if r.Status != 504 || r.Error.Code != "timeout" {
		t.Errorf("queued run with timeoutMs 500: got %d %+v after %v, want 504 timeout", r.Status, r.Error, took)
	}
	if took > 1500*time.Millisecond {
		t.Errorf("the timeout answered after %v, want about 800 ms (the wait in the queue, then 500 ms)", took)
	}
	t.Logf("queued run timed out after %v", took)
	waitFor(t, "the timed-out run's upstream call to be abandoned", func() bool { return up.cancelled.Load() >= 1 })
	start = time.Now()
	r = post(t, p, "/v1/sessions/to2/runs", turnBody{Input: "a very slow question", Policy: map[string]any{"timeoutMs": 500}})
	if took := time.Since(start); r.Status != 504 || took > 1500*time.Millisecond {
		t.Errorf("run with timeoutMs 500, not queued: got %d after %v, want 504 after about 500 ms", r.Status, took)
	}
	if got := sessionCount(t, p, "to"); got != 2 {
		t.Errorf("session holds %d messages, want 2", got)
	}
}
