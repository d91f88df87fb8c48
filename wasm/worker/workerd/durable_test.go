//go:build !js

package workerd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// durableAbortEntry is abortEntry for the durable deployment: the object
// of the conversation gives a request with X-Test-Abort-After-Ms a
// request.signal that aborts after that many milliseconds, as workerd's
// own signal does when the client goes away.
const durableAbortEntry = `import { serve, AgentrtSession as Base } from "./worker.mjs";
export class AgentrtSession extends Base {
  async fetch(request) {
    const ms = Number(request.headers.get("x-test-abort-after-ms"));
    if (!ms) return super.fetch(request);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), ms);
    return super.fetch(new Request(request, { signal: ac.signal }));
  }
}
export default { fetch: serve };
`

// storageStats are an object's storage figures (the test route).
type storageStats struct {
	Messages     int   `json:"messages"`
	Bytes        int64 `json:"bytes"`
	Writes       int64 `json:"writes"`
	Rows         int64 `json:"rowsWritten"`
	BytesWritten int64 `json:"bytesWritten"`
	Loads        int64 `json:"loads"`
	// RunLogs are the continued runs' event logs: how many the object
	// keeps, and the most events and bytes one holds.
	RunLogs struct {
		Runs      int   `json:"runs"`
		MaxEvents int   `json:"maxEvents"`
		MaxBytes  int64 `json:"maxBytes"`
	} `json:"runLogs"`
	// Events are the conversation's event log's figures.
	Events struct {
		Watchers int `json:"watchers"`
		Events   int `json:"events"`
	} `json:"events"`
}

func storedOf(t testing.TB, p *workerd.Process, id string) storageStats {
	t.Helper()
	res, err := client.Get(p.URL + "/v1/sessions/" + id + "/_test/storage")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var s storageStats
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil || res.StatusCode != 200 {
		t.Fatalf("storage of %s: %d %v", id, res.StatusCode, err)
	}
	return s
}

// durableEnv is env with the fault switch (which also adds the storage
// test route).
func durableEnv(env map[string]string) map[string]string {
	out := map[string]string{"AGENTRT_TEST_FAULTS": "1"}
	for k, v := range env {
		out[k] = v
	}
	return out
}

// Ensure the restart survival of the durable deployment: a conversation
// of 5 turns sent without history carries its context; after workerd is
// stopped and started again with the same state directory, turn 6 seeds
// cold from storage and its model receives 11 messages.
func TestDurable_TurnsWithoutHistory_SurviveRestart(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	o := workerd.Options{Durable: true, StateDir: state, Env: durableEnv(nil)}
	p := mustStart(t, o)
	for i := 1; i <= 5; i++ {
		r := post(t, p, "/v1/sessions/kept/runs", turnBody{Input: fmt.Sprintf("turn %d", i)})
		want := fmt.Sprintf("(model received %d messages)", 2*i-1)
		if r.Status != 200 || !strings.HasSuffix(r.Reply.Content, want) || r.MessageCount != 2*i {
			t.Fatalf("turn %d: %d %q %+v, want %q", i, r.Status, r.Reply.Content, r.Error, want)
		}
	}
	if s := storedOf(t, p, "kept"); s.Messages != 10 || s.Writes != 5 || s.Rows != 10 {
		t.Fatalf("stored %+v, want 10 messages in 5 writes of 2 rows", s)
	}
	p.Stop()

	p2 := mustStart(t, o)
	r := post(t, p2, "/v1/sessions/kept/runs", turnBody{Input: "turn 6"})
	if r.Status != 200 || r.Seed.Mode != "cold" || r.Seed.Seeded != 10 || len(r.ModelCalls) != 1 || r.ModelCalls[0].MessageCount != 11 {
		t.Fatalf("turn 6: %d seed %+v calls %+v %+v, want cold, 10 seeded, the model sent 11 messages", r.Status, r.Seed, r.ModelCalls, r.Error)
	}
	r = post(t, p2, "/v1/sessions/kept/runs", turnBody{Input: "turn 7"})
	if r.Seed.Mode != "none" || r.ModelCalls[0].MessageCount != 13 {
		t.Fatalf("turn 7: seed %+v calls %+v, want a warm session", r.Seed, r.ModelCalls)
	}
	if s := storedOf(t, p2, "kept"); s.Messages != 14 || s.Loads != 1 {
		t.Fatalf("stored %+v, want 14 messages read once", s)
	}
	// Other conversations are other objects.
	if got := sessionCount(t, p2, "other"); got != -1 {
		t.Fatalf("an unknown conversation has %d messages", got)
	}
}

// Ensure 50 conversations driven in parallel, each by its own object,
// keep exact counts.
func TestDurable_ParallelConversations(t *testing.T) {
	t.Parallel()
	p := mustStart(t, workerd.Options{Durable: true, Env: durableEnv(nil)})
	// An object left idle holds no timer, so workerd evicts it (after
	// about 10 s): checked at the end, on a conversation left alone while
	// the others run.
	if r := post(t, p, "/v1/sessions/idle/runs", turnBody{Input: "then silence"}); r.Status != 200 {
		t.Fatalf("idle conversation: %d %+v", r.Status, r.Error)
	}
	idleSince := time.Now()
	const convs, turns = 50, 3
	var wg sync.WaitGroup
	errs := make(chan string, convs*turns)
	for c := 0; c < convs; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			id := fmt.Sprintf("par-%d", c)
			for i := 1; i <= turns; i++ {
				b, _ := json.Marshal(turnBody{Input: fmt.Sprintf("%s turn %d", id, i)})
				res, err := client.Post(p.URL+"/v1/sessions/"+id+"/runs", "application/json", bytes.NewReader(b))
				if err != nil {
					errs <- err.Error()
					return
				}
				var r result
				_ = json.NewDecoder(res.Body).Decode(&r)
				res.Body.Close()
				want := fmt.Sprintf("echo: %s turn %d (model received %d messages)", id, i, 2*i-1)
				if res.StatusCode != 200 || r.Reply.Content != want || r.MessageCount != 2*i {
					errs <- fmt.Sprintf("%s turn %d: %d %q count %d, want %q", id, i, res.StatusCode, r.Reply.Content, r.MessageCount, want)
					return
				}
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for c := 0; c < convs; c++ {
		id := fmt.Sprintf("par-%d", c)
		// Writes and loads count from the object's last start: an object
		// idle long enough is evicted and seeds itself again.
		if s := storedOf(t, p, id); s.Messages != 2*turns {
			t.Errorf("%s: stored %+v, want %d messages", id, s, 2*turns)
		}
	}
	time.Sleep(time.Until(idleSince.Add(15 * time.Second)))
	if s := storedOf(t, p, "idle"); s.Messages != 2 || s.Writes != 0 {
		t.Errorf("idle conversation: %+v, want a new instance (no write yet) over the 2 stored messages", s)
	}
	if r := post(t, p, "/v1/sessions/idle/runs", turnBody{Input: "back"}); r.Status != 200 || r.Seed.Mode != "cold" || r.ModelCalls[0].MessageCount != 3 {
		t.Errorf("back after idling: %d seed %+v calls %+v, want a cold seed from storage", r.Status, r.Seed, r.ModelCalls)
	}
}

// Ensure, with a slow upstream, that overlapping requests on one
// conversation run one at a time (each model call sees the turns before
// it), that onBusy "reject" answers 409 at once and changes nothing,
// that a failure injected between the model's answer and the storage
// write (a failed write, or the instance ending there) stores nothing of
// that turn and loses none before it, and that a client that leaves
// rolls its turn back and stores nothing.
func TestDurable_OneTurnAtATime_Faults_ClientLeaves(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	up := newSlowUpstream(t, 150*time.Millisecond)
	p, logs := mustStartLogs(t, workerd.Options{Durable: true, AllowLocalNetwork: true, Env: durableEnv(openaiEnv(up.URL)), Entry: "durable-abort-entry.mjs"})
	defer func() {
		for _, bad := range []string{"different request context", "hung", "Uncaught"} {
			if strings.Contains(logs.String(), bad) {
				t.Errorf("workerd logged %q", bad)
			}
		}
	}()

	t.Run("serialize", func(t *testing.T) {
		const n = 4
		var wg sync.WaitGroup
		replies := make([]result, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				replies[i] = post(t, p, "/v1/sessions/ser/runs", turnBody{Input: fmt.Sprintf("q%d", i)})
			}(i)
		}
		wg.Wait()
		var seen []string
		for i, r := range replies {
			if r.Status != 200 {
				t.Fatalf("request %d: %d %+v", i, r.Status, r.Error)
			}
			seen = append(seen, r.Reply.Content)
		}
		sort.Strings(seen)
		want := []string{"upstream saw 1 messages", "upstream saw 3 messages", "upstream saw 5 messages", "upstream saw 7 messages"}
		if fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Errorf("replies %q, want %q (one turn after another)", seen, want)
		}
		if m := up.maxSeen.Load(); m != 1 {
			t.Errorf("%d upstream calls at once, want 1", m)
		}
		if s := storedOf(t, p, "ser"); s.Messages != 2*n {
			t.Errorf("stored %+v, want %d messages", s, 2*n)
		}
	})

	t.Run("reject", func(t *testing.T) {
		slow := make(chan result, 1)
		calls := up.calls.Load()
		go func() { slow <- post(t, p, "/v1/sessions/rej/runs", turnBody{Input: "a very slow question"}) }()
		waitFor(t, "the slow run's upstream call", func() bool { return up.calls.Load() > calls })
		start := time.Now()
		r := post(t, p, "/v1/sessions/rej/runs", turnBody{Input: "impatient", Policy: map[string]any{"onBusy": "reject"}})
		if r.Status != 409 || r.Error.Code != "session_busy" || time.Since(start) > time.Second {
			t.Errorf("rejected: %d %+v after %v, want 409 session_busy at once", r.Status, r.Error, time.Since(start))
		}
		if r := <-slow; r.Status != 200 || r.MessageCount != 2 {
			t.Fatalf("the slow run: %d %+v", r.Status, r.Error)
		}
		if s := storedOf(t, p, "rej"); s.Messages != 2 {
			t.Errorf("stored %+v, want the slow turn only", s)
		}
	})

	for _, fault := range []string{"storage", "exit"} {
		t.Run("fault-"+fault, func(t *testing.T) {
			id := "fault-" + fault
			if r := post(t, p, "/v1/sessions/"+id+"/runs", turnBody{Input: "kept"}); r.Status != 200 {
				t.Fatalf("first turn: %d %+v", r.Status, r.Error)
			}
			calls := up.calls.Load()
			r := post(t, p, "/v1/sessions/"+id+"/runs", turnBody{Input: "lost"}, "X-Agentrt-Test-Fault", fault)
			want := map[string]string{"storage": "the turn was not kept", "exit": "from the conversation's storage"}[fault]
			if r.Status != 500 || r.Error.Code != "internal" || !strings.Contains(r.Error.Message, want) {
				t.Fatalf("faulty turn: %d %+v, want 500 internal saying %q", r.Status, r.Error, want)
			}
			if up.calls.Load() != calls+1 {
				t.Fatalf("the model was not called before the fault")
			}
			if s := storedOf(t, p, id); s.Messages != 2 {
				t.Fatalf("stored %+v after the fault, want the first turn only", s)
			}
			r = post(t, p, "/v1/sessions/"+id+"/runs", turnBody{Input: "next"})
			if r.Status != 200 || r.Reply.Content != "upstream saw 3 messages" || r.Seed.Mode != "cold" || r.MessageCount != 4 {
				t.Fatalf("next turn: %d %q seed %+v count %d, want the stored turn and the input, seeded cold", r.Status, r.Reply.Content, r.Seed, r.MessageCount)
			}
		})
	}

	t.Run("client-leaves", func(t *testing.T) {
		if r := post(t, p, "/v1/sessions/gone/runs", turnBody{Input: "first"}); r.Status != 200 {
			t.Fatalf("first turn: %d %+v", r.Status, r.Error)
		}
		before := up.cancelled.Load()
		st, body, err := rawPost(p, "/v1/sessions/gone/runs", `{"input":"a very slow question"}`, "X-Test-Abort-After-Ms", "300")
		if err != nil || st != 503 || !strings.Contains(body, `"cancelled"`) {
			t.Fatalf("the client that left: %d %q %v, want the abort's 503 cancelled", st, body, err)
		}
		waitFor(t, "the upstream call to be abandoned", func() bool { return up.cancelled.Load() > before })
		if s := storedOf(t, p, "gone"); s.Messages != 2 {
			t.Errorf("stored %+v, want the first turn only", s)
		}
		r := post(t, p, "/v1/sessions/gone/runs", turnBody{Input: "next", Policy: map[string]any{"onBusy": "reject"}})
		if r.Status != 200 || r.Reply.Content != "upstream saw 3 messages" || r.MessageCount != 4 {
			t.Errorf("next turn: %d %q %+v, want 200 and no dangling message", r.Status, r.Reply.Content, r.Error)
		}
	})

	// A real disconnect: a stream read to its first event, then closed.
	// The Worker's stream, the object's stream and the run are cancelled.
	t.Run("client-leaves-stream", func(t *testing.T) {
		if r := post(t, p, "/v1/sessions/gone-sse/runs", turnBody{Input: "first"}); r.Status != 200 {
			t.Fatalf("first turn: %d %+v", r.Status, r.Error)
		}
		before := up.cancelled.Load()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", p.URL+"/v1/sessions/gone-sse/runs", strings.NewReader(`{"input":"a very slow question"}`))
		req.Header.Set("Accept", "text/event-stream")
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		// Every event of a durable stream carries its id (ADR 0020).
		br := bufio.NewReader(res.Body)
		line, err := br.ReadString('\n')
		if err != nil || line != "id: 1\n" {
			t.Fatalf("first line %q %v", line, err)
		}
		if line, err = br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "event: run.started") {
			t.Fatalf("second line %q %v", line, err)
		}
		waitFor(t, "the upstream call", func() bool { return up.inFlight.Load() > 0 })
		cancel()
		res.Body.Close()
		waitFor(t, "the upstream call to be abandoned", func() bool { return up.cancelled.Load() > before })
		if s := storedOf(t, p, "gone-sse"); s.Messages != 2 {
			t.Errorf("stored %+v, want the first turn only", s)
		}
		r := post(t, p, "/v1/sessions/gone-sse/runs", turnBody{Input: "next", Policy: map[string]any{"onBusy": "reject"}})
		if r.Status != 200 || r.Reply.Content != "upstream saw 3 messages" {
			t.Errorf("next turn: %d %q %+v, want 200 and no dangling message", r.Status, r.Reply.Content, r.Error)
		}
	})
}

// Ensure the stored-bytes limit answers 413 limit_exceeded and leaves the
// object answering, the host's history rewrites only what differs, and
// DELETE removes the stored copy.
func TestDurable_Limit_History_Delete(t *testing.T) {
	t.Parallel()
	p := mustStart(t, workerd.Options{Durable: true, Env: durableEnv(map[string]string{"AGENTRT_MAX_STORED_BYTES": "700"})})
	var r result
	n := 0
	for ; n < 20; n++ {
		if r = post(t, p, "/v1/sessions/big/runs", turnBody{Input: strings.Repeat("x", 60)}); r.Status != 200 {
			break
		}
	}
	if n == 0 || r.Status != 413 || r.Error.Code != "limit_exceeded" {
		t.Fatalf("after %d turns: %d %+v, want 413 limit_exceeded", n, r.Status, r.Error)
	}
	s := storedOf(t, p, "big")
	if s.Bytes > 700 || s.Messages != 2*n {
		t.Fatalf("stored %+v after %d turns, want %d messages within 700 bytes", s, n, 2*n)
	}
	if got := sessionCount(t, p, "big"); got != 2*n {
		t.Fatalf("the session holds %d messages, want %d", got, 2*n)
	}
	// A host's history in reconcile mode is the truth: a short one
	// replaces the stored copy.
	r = post(t, p, "/v1/sessions/big/runs", turnBody{Input: "short", History: []msg{{"user", "hi", ""}, {"assistant", "hello", ""}},
		Policy: map[string]any{"seedMode": "reconcile"}})
	if r.Status != 200 || r.MessageCount != 4 || r.ModelCalls[0].MessageCount != 3 {
		t.Fatalf("with history: %d %+v %+v", r.Status, r.ModelCalls, r.Error)
	}
	if s := storedOf(t, p, "big"); s.Messages != 4 {
		t.Fatalf("stored %+v, want the host's history and the turn", s)
	}
	if d := doReq(t, p, "DELETE", "/v1/sessions/big", nil); d.Status != 204 {
		t.Fatalf("DELETE: %d", d.Status)
	}
	if s := storedOf(t, p, "big"); s.Messages != 0 || s.Bytes != 0 {
		t.Fatalf("stored %+v after DELETE", s)
	}
	if got := sessionCount(t, p, "big"); got != -1 {
		t.Fatalf("GET after DELETE: %d messages, want 404", got)
	}
	if r = post(t, p, "/v1/sessions/big/runs", turnBody{Input: "again"}); r.Status != 200 || r.MessageCount != 2 {
		t.Fatalf("after DELETE: %d %+v", r.Status, r.Error)
	}
}

// BenchmarkDurable_Turn measures one turn side by side on workerd, on a
// conversation that holds 10 or 1,000 turns: "isolate" is the isolate
// deployment with the host sending its history (the only way it keeps
// context across isolates), "durable" the durable deployment with no
// history on a warm object, "wake" the durable deployment with no
// history on an object whose Go instance has just ended (the test fault
// "exit"), as after an eviction: a Go start-up and a cold seed from
// storage. Each iteration prepares its own conversation with one
// untimed request carrying the prior turns as history (which also
// stores them, in the durable deployment), then times the next turn. It
// reports the latency quantiles, the request bytes of the timed turn,
// and the storage bytes and rows that turn wrote.
//
//	go test -run XXX -bench BenchmarkDurable_Turn -benchtime 100x ./wasm/worker/workerd/
func BenchmarkDurable_Turn(b *testing.B) {
	for _, mode := range []string{"isolate", "durable", "wake"} {
		for _, prior := range []int{10, 1000} {
			b.Run(fmt.Sprintf("%s/%d", mode, prior), func(b *testing.B) {
				o := workerd.Options{Env: durableEnv(nil)}
				durable := mode != "isolate"
				o.Durable = durable
				p := mustStart(b, o)
				// The prior turns, as the module's messages.
				history := make([]msg, 0, 2*prior)
				for i := 0; i < prior; i++ {
					history = append(history, msg{"user", fmt.Sprintf("question %d about something", i), ""},
						msg{"assistant", fmt.Sprintf("answer %d with some words in it", i), ""})
				}
				send := func(id string, tb turnBody, want int) (time.Duration, int) {
					body, _ := json.Marshal(tb)
					start := time.Now()
					res, err := client.Post(p.URL+"/v1/sessions/"+id+"/runs", "application/json", bytes.NewReader(body))
					if err != nil {
						b.Fatal(err)
					}
					var r result
					err = json.NewDecoder(res.Body).Decode(&r)
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					d := time.Since(start)
					if err != nil || res.StatusCode != http.StatusOK || r.MessageCount != want {
						b.Fatalf("status %d, %d messages, %v", res.StatusCode, r.MessageCount, err)
					}
					return d, len(body)
				}
				lat := make([]time.Duration, 0, b.N)
				var sent int
				var stored, rows int64
				for i := 0; i < b.N; i++ {
					id := fmt.Sprintf("bench-%d-%d", b.N, i)
					// Untimed: a conversation of prior turns (minus the last
					// reply, which the setup turn itself answers).
					b.StopTimer()
					send(id, turnBody{Input: history[2*prior-2].Content, History: history[:2*prior-2]}, 2*prior)
					if mode == "wake" {
						body, _ := json.Marshal(turnBody{Input: "lost"})
						req, _ := http.NewRequest("POST", p.URL+"/v1/sessions/"+id+"/runs", bytes.NewReader(body))
						req.Header.Set("X-Agentrt-Test-Fault", "exit")
						if res, err := client.Do(req); err == nil {
							io.Copy(io.Discard, res.Body)
							res.Body.Close()
						}
					}
					var before storageStats // a woken object's counters start at zero
					if mode == "durable" {
						before = storedOf(b, p, id)
					}
					tb := turnBody{Input: "next question"}
					if mode == "isolate" {
						// The host's copy: the prior turns as the worker answered them.
						tb.History = hostCopy(b, p, id)
					}
					b.StartTimer()
					d, n := send(id, tb, 2*prior+2)
					b.StopTimer()
					lat = append(lat, d)
					sent += n
					if durable {
						after := storedOf(b, p, id)
						stored += after.BytesWritten - before.BytesWritten
						rows += after.Rows - before.Rows
					}
					b.StartTimer()
				}
				b.StopTimer()
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				q := func(f float64) float64 { return float64(lat[int(f*float64(len(lat)-1))]) / 1e6 }
				b.ReportMetric(q(0.50), "p50-ms")
				b.ReportMetric(q(0.99), "p99-ms")
				b.ReportMetric(float64(sent)/float64(b.N), "sent-B/turn")
				b.ReportMetric(float64(stored)/float64(b.N), "stored-B/turn")
				b.ReportMetric(float64(rows)/float64(b.N), "rows/turn")
			})
		}
	}
}

// hostCopy returns the session's messages, as a host that keeps its own
// copy would send them.
func hostCopy(t testing.TB, p *workerd.Process, id string) []msg {
	t.Helper()
	res, err := client.Get(p.URL + "/v1/sessions/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var s struct {
		Messages []msg `json:"messages"`
	}
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s.Messages
}
