package bridge

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// mustNext waits (natively, by polling as the host does) for the next
// message of x.
func mustNext(t *testing.T, x *Exchange) Message {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if m, ok := x.Next(); ok {
			return m
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no message within 5s")
	return Message{}
}

func get(path string) *http.Request { return NewRequest("GET", "http://w"+path, nil, nil, 0) }

// Ensure a handler that never flushes answers one response message, and
// taking it ends the exchange.
func TestExchange_Next_WholeResponse(t *testing.T) {
	s := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-A", "1")
		w.WriteHeader(201)
		w.WriteHeader(500) // ignored
		io.WriteString(w, "hello ")
		io.WriteString(w, r.URL.Path)
	}))
	x := s.Begin(get("/p"), nil)
	m := mustNext(t, x)
	if m.Kind != KindResponse || m.Status != 201 || string(m.Body) != "hello /p" || m.Header.Get("X-A") != "1" {
		t.Fatalf("got %+v", m)
	}
	if s.Lookup(x.ID()) != nil || s.Len() != 0 {
		t.Error("the exchange outlived its final message")
	}
	if x.Context().Err() == nil {
		t.Error("the context of a finished exchange is not done")
	}
	if _, ok := x.Next(); ok {
		t.Error("a message after the final one")
	}
}

// Ensure flushes stream: head first, then each flushed chunk, then end.
func TestExchange_Next_Streamed(t *testing.T) {
	s := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		io.WriteString(w, "a")
		w.(http.Flusher).Flush()
		w.(http.Flusher).Flush() // nothing new: no message
		io.WriteString(w, "b")
	}))
	x := s.Begin(get("/"), nil)
	var kinds, body []string
	for {
		m := mustNext(t, x)
		kinds = append(kinds, m.Kind)
		if m.Kind == KindHead && (m.Status != 200 || m.Header.Get("Content-Type") != "text/event-stream") {
			t.Errorf("head: %+v", m)
		}
		if m.Kind == KindBody {
			body = append(body, string(m.Body))
		}
		if m.Kind == KindEnd {
			break
		}
	}
	if got := strings.Join(kinds, ","); got != "head,body,body,end" || strings.Join(body, "") != "ab" {
		t.Errorf("got %s %q, want head,body,body,end \"ab\"", got, body)
	}
}

// Ensure a panicking handler answers 500 internal JSON, with no details.
func TestExchange_Next_PanicIsInternal(t *testing.T) {
	s := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "partial")
		panic("boom at secret.go:12")
	}))
	m := mustNext(t, s.Begin(get("/"), nil))
	if m.Status != 500 || string(m.Body) != `{"error":{"code":"internal","message":"internal error"}}` {
		t.Fatalf("got %d %q", m.Status, m.Body)
	}
}

// Ensure notify is called when a message lands on an empty queue, and
// Next reports false (not blocking) while nothing is queued.
func TestExchange_Next_NotifyAndEmpty(t *testing.T) {
	release := make(chan struct{})
	s := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		io.WriteString(w, "late")
	}))
	var notified atomic.Int32
	x := s.Begin(get("/"), func() { notified.Add(1) })
	if _, ok := x.Next(); ok {
		t.Fatal("a message before the handler answered")
	}
	close(release)
	m := mustNext(t, x)
	if string(m.Body) != "late" || notified.Load() != 1 {
		t.Errorf("got %q, notified %d times, want \"late\" and 1", m.Body, notified.Load())
	}
}

// Ensure Abort cancels the handler's context, drops the exchange and
// whatever it queues afterwards, and is false for an unknown id.
func TestServer_Abort(t *testing.T) {
	stopped := make(chan error, 1)
	s := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		_, err := io.WriteString(w, "too late")
		stopped <- err
	}))
	x := s.Begin(get("/"), nil)
	if !s.Abort(x.ID()) {
		t.Fatal("Abort: false for a live exchange")
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("write after abort: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler never saw the abort")
	}
	time.Sleep(10 * time.Millisecond)
	if _, ok := x.Next(); ok || s.Len() != 0 {
		t.Error("an aborted exchange still delivers")
	}
	if s.Abort(x.ID()) || s.Abort(12345) {
		t.Error("Abort: true for a gone or unknown exchange")
	}
}

// Ensure FetchClient hands the upstream request to the host as a fetch
// message and returns the host's answer; an answer is taken once.
func TestFetchClient_Do(t *testing.T) {
	s := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), "POST", "https://up.example/v1/x", strings.NewReader("ask"))
		req.Header.Set("Authorization", "Bearer k")
		res, err := FetchClient{}.Do(req)
		if err != nil {
			io.WriteString(w, "error: "+err.Error())
			return
		}
		b, _ := io.ReadAll(res.Body)
		io.WriteString(w, res.Status+" "+string(b))
	}))
	x := s.Begin(get("/"), nil)
	m := mustNext(t, x)
	if m.Kind != KindFetch || m.Fetch.Method != "POST" || m.Fetch.URL != "https://up.example/v1/x" || string(m.Fetch.Body) != "ask" || m.Fetch.Header.Get("Authorization") != "Bearer k" {
		t.Fatalf("fetch message: %+v %+v", m, m.Fetch)
	}
	if !x.Waiting(m.Fetch.ID) || x.Waiting(m.Fetch.ID+1) {
		t.Error("Waiting: wrong before the answer")
	}
	if !x.Fetched(m.Fetch.ID, FetchResult{Status: 200, Header: http.Header{}, Body: []byte("answer")}) {
		t.Fatal("Fetched: false")
	}
	if x.Fetched(m.Fetch.ID, FetchResult{Status: 200}) {
		t.Error("Fetched: true twice")
	}
	if r := mustNext(t, x); string(r.Body) != "200 OK answer" {
		t.Errorf("got %q", r.Body)
	}

	// A host error, and an abort while the fetch is pending.
	x = s.Begin(get("/"), nil)
	m = mustNext(t, x)
	x.Fetched(m.Fetch.ID, FetchResult{Err: errors.New("network down")})
	if r := mustNext(t, x); string(r.Body) != "error: network down" {
		t.Errorf("got %q", r.Body)
	}
	done := make(chan struct{})
	s2 := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		req, _ := http.NewRequestWithContext(r.Context(), "GET", "https://up.example/", nil)
		if _, err := (FetchClient{}).Do(req); !errors.Is(err, context.Canceled) {
			t.Errorf("Do after abort: %v, want context.Canceled", err)
		}
	}))
	x = s2.Begin(get("/"), nil)
	m = mustNext(t, x)
	s2.Abort(x.ID())
	<-done
	if x.Waiting(m.Fetch.ID) {
		t.Error("Waiting: true after the abort")
	}
	if x.Fetched(m.Fetch.ID, FetchResult{Status: 200}) {
		t.Error("Fetched: true on an aborted exchange")
	}
}

// Ensure FetchClient refuses a request no exchange serves.
func TestFetchClient_Do_ErrNoExchange(t *testing.T) {
	req, _ := http.NewRequest("GET", "https://up.example/", nil)
	if _, err := (FetchClient{}).Do(req); !errors.Is(err, ErrNoExchange) {
		t.Errorf("got %v, want ErrNoExchange", err)
	}
}

// Ensure NewRequest keeps what the host sent, falls back to "/" for a URL
// that does not parse, and declares an unread body's length.
func TestNewRequest(t *testing.T) {
	r := NewRequest("get", "http://h/a%20b?q=1", http.Header{"X": {"y"}}, []byte("body"), -1)
	if r.Method != "get" || r.URL.Path != "/a b" || r.URL.RawQuery != "q=1" || r.Host != "h" || r.ContentLength != 4 || r.Header.Get("X") != "y" {
		t.Errorf("got %+v", r)
	}
	r = NewRequest("POST", "http://h/%zz", nil, nil, 1<<30)
	if r.URL.Path != "/" || r.ContentLength != 1<<30 || r.Header == nil {
		t.Errorf("got %+v", r)
	}
}

// Ensure many exchanges served, fetched, aborted and drained at once
// each get their own answer and leave nothing behind (a hammer test for
// the server's and the exchanges' locks; run with -race).
func TestServer_Hammer(t *testing.T) {
	s := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), "GET", "https://up.example"+r.URL.Path, nil)
		res, err := FetchClient{}.Do(req)
		if err != nil {
			return
		}
		b, _ := io.ReadAll(res.Body)
		w.Write(b)
	}))
	const n = 200
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			path := "/" + strings.Repeat("x", i%7) + string(rune('a'+i%26))
			x := s.Begin(get(path), nil)
			if i%5 == 0 {
				s.Abort(x.ID())
				return
			}
			for {
				m, ok := x.Next()
				if !ok {
					time.Sleep(time.Microsecond)
					continue
				}
				if m.Kind == KindFetch {
					x.Fetched(m.Fetch.ID, FetchResult{Status: 200, Body: []byte(m.Fetch.URL)})
					continue
				}
				if string(m.Body) != "https://up.example"+path {
					t.Errorf("exchange %d: got %q", i, m.Body)
				}
				return
			}
		}(i)
	}
	wg.Wait()
	if s.Len() != 0 {
		t.Errorf("%d exchanges left behind", s.Len())
	}
}

// Ensure a streamed answer's backlog counts the bytes flushed that the
// host has not taken, across the Server too (Queued), and that taking a
// message wakes a handler waiting for it to shrink.
func TestResponseWriter_Backlog(t *testing.T) {
	step := make(chan struct{})
	backlog := make(chan int64, 4)
	s := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bw := w.(*ResponseWriter)
		io.WriteString(w, "12345")
		w.(http.Flusher).Flush()
		io.WriteString(w, "678")
		n, taken := bw.Backlog()
		backlog <- n
		<-step
		select {
		case <-taken:
		case <-time.After(5 * time.Second):
			backlog <- -1
			return
		}
		n, _ = bw.Backlog()
		backlog <- n
	}))
	x := s.Begin(get("/"), nil)
	if n := <-backlog; n != 8 {
		t.Fatalf("backlog %d, want 8 (5 queued, 3 not flushed)", n)
	}
	if m, b := s.Queued(); m != 2 || b != 5 {
		t.Fatalf("Queued: %d messages, %d bytes; want the head and 5 bytes", m, b)
	}
	close(step)
	if m := mustNext(t, x); m.Kind != KindHead {
		t.Fatalf("first message %+v", m)
	}
	if n := <-backlog; n != 8 {
		t.Fatalf("backlog after the head was taken: %d, want 8", n)
	}
	mustNext(t, x)
	if m := mustNext(t, x); m.Kind != KindBody || string(m.Body) != "678" {
		t.Fatalf("last body %+v", m)
	}
	if m, b := s.Queued(); m > 1 || b != 0 {
		t.Fatalf("Queued at the end: %d messages, %d bytes; want the end message at most", m, b)
	}
}

// Ensure a fetch answered in parts (FetchedHead, FetchedBody, FetchedEnd)
// is read by the handler as the parts arrive, the job is waited for
// while its body is read, and a body the handler closes tells the host
// to stop (FetchedBody and Waiting answer false).
func TestFetchClient_StreamedBody(t *testing.T) {
	got := make(chan string, 8)
	closeAfter := make(chan struct{})
	s := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), "POST", "https://up.example/v1/x", strings.NewReader("ask"))
		res, err := FetchClient{}.Do(req)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- res.Header.Get("Content-Type")
		buf := make([]byte, 64)
		for i := 0; i < 2; i++ {
			n, err := res.Body.Read(buf)
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			got <- string(buf[:n])
		}
		<-closeAfter
		res.Body.Close()
		got <- "closed"
	}))
	x := s.Begin(get("/"), nil)
	m := mustNext(t, x)
	if m.Kind != KindFetch {
		t.Fatalf("first message %+v", m)
	}
	fid := m.Fetch.ID
	if !x.FetchedHead(fid, 200, http.Header{"Content-Type": {"text/event-stream"}}) || x.FetchedHead(fid, 200, nil) {
		t.Fatal("FetchedHead: want true once")
	}
	if h := <-got; h != "text/event-stream" {
		t.Fatalf("head: %q", h)
	}
	for _, part := range []string{"data: 1\n\n", "data: 2\n\n"} {
		if !x.Waiting(fid) || !x.FetchedBody(fid, []byte(part)) {
			t.Fatalf("part %q: not waited for", part)
		}
		if g := <-got; g != part {
			t.Fatalf("read %q, want %q as it arrived", g, part)
		}
	}
	close(closeAfter)
	if g := <-got; g != "closed" {
		t.Fatal(g)
	}
	if x.Waiting(fid) || x.FetchedBody(fid, []byte("more")) {
		t.Error("a closed body is still waited for")
	}
	x.FetchedEnd(fid, nil)
}

// Ensure a streamed body ends with io.EOF, or with the host's error, and
// a read waiting for a part ends when the exchange is aborted.
func TestFetchClient_StreamedBody_EndAndAbort(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(x *Exchange, fid int)
		want string
	}{
		{"end", func(x *Exchange, fid int) { x.FetchedEnd(fid, nil) }, "ab|EOF"},
		{"cut", func(x *Exchange, fid int) { x.FetchedEnd(fid, errors.New("reset")) }, "ab|reset"},
		{"abort", func(x *Exchange, fid int) { x.s.Abort(x.ID()) }, "ab|context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan string, 1)
			s := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				req, _ := http.NewRequestWithContext(r.Context(), "GET", "https://up.example/", nil)
				res, err := FetchClient{}.Do(req)
				if err != nil {
					got <- err.Error()
					return
				}
				b, err := io.ReadAll(res.Body)
				msg := "EOF"
				if err != nil {
					msg = err.Error()
				}
				got <- string(b) + "|" + msg
			}))
			x := s.Begin(get("/"), nil)
			fid := mustNext(t, x).Fetch.ID
			x.FetchedHead(fid, 200, http.Header{})
			x.FetchedBody(fid, []byte("a"))
			x.FetchedBody(fid, []byte("b"))
			time.Sleep(10 * time.Millisecond)
			tc.end(x, fid)
			select {
			case g := <-got:
				if g != tc.want {
					t.Fatalf("got %q, want %q", g, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the read did not end")
			}
		})
	}
}
