//go:build !js

package workerd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentrt/agentrt/wasm/worker/workerd"
)

// Ensure, on workerd, that followers of a continued run whose clients
// never read hold at most a batch each in the object's Go bridge (the
// answers' bytes the worker's JavaScript has not taken, a count the test
// route reports), and that the run's log keeps within 1 MiB, when the
// run sends a 900 KB answer: its run.completed event (1.8 MB) is over the
// log's bound and is kept without its Result, and the model.delta and
// message.appended events make room in turn. The client that started the
// run gets it whole. workerd's resident size is logged: here it grew
// about as much with followers that read as with followers that do not
// (the answer's bytes passing through JavaScript once per follower).
func TestDurable_SlowFollowersBounded(t *testing.T) {
	t.Parallel()
	if bundle == nil {
		t.Skip(skipWhy)
	}
	const followers = 8
	answer := strings.Repeat("a", 900<<10) // under core's 1 MiB per message
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%q}}]}`, answer)
	}))
	defer up.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	p := mustStart(t, workerd.Options{Durable: true, AllowLocalNetwork: true, Env: durableEnv(openaiEnv(up.URL))})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", p.URL+"/v1/sessions/big/runs",
		strings.NewReader(`{"input":"a long answer","runId":"big-1","policy":{"onDisconnect":"continue"}}`))
	req.Header.Set("Accept", "text/event-stream")
	res, err := client.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("start: %v %v", res, err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 16<<20)
	if !sc.Scan() || sc.Text() != "id: 1" {
		t.Fatalf("the first line %q", sc.Text())
	}

	// Followers that never read, with small receive buffers (so that the
	// kernel holds little of what is sent to them).
	u, _ := url.Parse(p.URL)
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	for i := 0; i < followers; i++ {
		c, err := d.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /v1/sessions/big/runs/big-1/events?after=0 HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", u.Host)
	}
	time.Sleep(500 * time.Millisecond) // the followers reach the object
	rss0 := rssOf(p.Pid())
	close(release)
	evs := readSSE(sc)
	if len(evs) == 0 || evs[len(evs)-1].typ != "run.completed" || !strings.Contains(evs[len(evs)-1].data, answer) {
		t.Fatalf("the starting client's events end with %+v, want run.completed with the whole answer", evs[max(0, len(evs)-1):])
	}
	time.Sleep(time.Second) // the followers are sent what they are sent
	res2, err := client.Get(p.URL + "/v1/sessions/big/_test/storage")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		RunLogs struct {
			MaxBytes int64 `json:"maxBytes"`
		} `json:"runLogs"`
		Queued *struct {
			Messages int   `json:"messages"`
			Bytes    int64 `json:"bytes"`
		} `json:"queued"`
	}
	err = json.NewDecoder(res2.Body).Decode(&s)
	res2.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("log %d bytes; queued for the host: %+v; workerd's RSS %d -> %d KiB", s.RunLogs.MaxBytes, s.Queued, rss0, rssOf(p.Pid()))
	if s.RunLogs.MaxBytes > 1<<20 {
		t.Errorf("the run's log holds %d bytes, over 1 MiB", s.RunLogs.MaxBytes)
	}
	if s.Queued == nil || s.Queued.Bytes > followers*(64<<10+4096) {
		t.Errorf("%d non-reading followers: %+v queued in the bridge, want at most a batch each", followers, s.Queued)
	}
}

// rssOf is the resident size of process pid in KiB, from /proc (0 where
// there is none).
func rssOf(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return 0
}
