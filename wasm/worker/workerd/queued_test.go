//go:build !js

package workerd_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// Ensure, on workerd, that a continued run queued behind another run of
// its conversation is known from the moment its request is accepted: a
// client whose connection dropped while it waited, and that then does
// what docs/worker.md says (ask for the run; on run_lost read the
// conversation and send the input again if its turn is not there;
// otherwise follow the run's events, and send the input again if it
// ended without running), finds it queued and gets its turn stored
// exactly once, after two upstream calls in all.
func TestDurable_QueuedContinuedRun_DocRecovery(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	up := newSlowUpstream(t, 100)
	p := mustStart(t, workerd.Options{Durable: true, AllowLocalNetwork: true, Env: durableEnv(openaiEnv(up.URL))})
	first := make(chan error, 1)
	go func() {
		_, _, err := rawPost(p, "/v1/sessions/queued/runs", `{"input":"a held question"}`)
		first <- err
	}()
	waitFor(t, "the first upstream call", func() bool { return up.inFlight.Load() > 0 })

	// The second run waits for the lock; its client's connection drops.
	const body = `{"input":"the queued one","runId":"q-1","policy":{"onDisconnect":"continue"}}`
	// It drops once the run waits in the object, however long the
	// request took to get there.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", p.URL+"/v1/sessions/queued/runs", strings.NewReader(body))
	req.Header.Set("Accept", "text/event-stream")
	answered := make(chan int, 1)
	go func() {
		res, err := client.Do(req)
		if err != nil {
			answered <- 0
			return
		}
		res.Body.Close()
		answered <- res.StatusCode
	}()
	waitFor(t, "the second run to be queued", func() bool { return runStatusOf(t, p, "queued", "q-1") == "queued" })
	cancel()
	if st := <-answered; st != 0 {
		t.Fatalf("the queued run answered %d before the first run ended", st)
	}
	up.release() // the first run ends after the second's client left

	resend := func() {
		t.Helper()
		st, out, err := rawPost(p, "/v1/sessions/queued/runs", `{"input":"the queued one","policy":{"onDisconnect":"continue"}}`, "Accept", "text/event-stream")
		if err != nil || st != 200 || !strings.Contains(out, "event: run.completed\n") {
			t.Fatalf("the input sent again: %d %v %q", st, err, out)
		}
	}
	r := doReq(t, p, "GET", "/v1/sessions/queued/runs/q-1", nil)
	switch {
	case r.Status == 404 && r.Error.Code == "run_lost":
		t.Errorf("the queued run answered 404 run_lost while it waited")
		if !strings.Contains(sessionText(t, p, "queued"), "the queued one") {
			resend()
		}
	case r.Status == 200:
		res, err := client.Get(p.URL + "/v1/sessions/queued/runs/q-1/events?after=0")
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("following the queued run: %v %v", res, err)
		}
		evs := readSSE(bufio.NewScanner(res.Body))
		res.Body.Close()
		if len(evs) == 0 {
			t.Fatal("the queued run's events ended with none")
		}
		switch last := evs[len(evs)-1]; {
		case last.typ == "run.cancelled" && evs[0].typ != "run.started":
			resend() // it never ran: its client's leaving reached the object
		case last.typ != "run.completed":
			t.Fatalf("the queued run's events %+v", evs)
		}
	default:
		t.Fatalf("GET of the queued run: %d %+v", r.Status, r.Error)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// Anything still queued has had time to run.
	time.Sleep(time.Second)
	got := hostCopy(t, p, "queued")
	n := 0
	for _, m := range got {
		if m.Content == "the queued one" {
			n++
		}
	}
	if n != 1 || len(got) != 4 || up.calls.Load() != 2 {
		t.Fatalf("stored %+v after %d upstream calls: want the queued input's turn once, after two calls", got, up.calls.Load())
	}
}

// sessionText is the raw answer of GET /v1/sessions/{id}.
func sessionText(t testing.TB, p *workerd.Process, id string) string {
	t.Helper()
	res, err := client.Get(p.URL + "/v1/sessions/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		b.WriteString(sc.Text())
	}
	return b.String()
}
