//go:build !js

package workerd_test

import (
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
}

func newSlowUpstream(t testing.TB, delay time.Duration) *slowUpstream {
	u := &slowUpstream{delay: delay}
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
			Messages []json.RawMessage `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		select {
		case <-time.After(u.delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":"upstream saw %d messages"}}]}`, len(body.Messages))
	}))
	t.Cleanup(u.Close)
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
