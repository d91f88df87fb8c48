// Package bridge serves an http.Handler to a JavaScript host that owns
// every I/O object: the worker's entry module (worker.mjs) hands each
// request over as plain values and pulls the answer back as messages.
// It is plain Go, so its queueing, cancellation and response writing are
// tested natively; wasm/worker adds the thin syscall/js layer.
//
//	s := bridge.New(handler)
//	x := s.Begin(req, nil)   // serves req in its own goroutine
//	m, ok := x.Next()        // the next message, or false: nothing yet
//
// A request is an Exchange. The handler's answer becomes messages: one
// KindResponse (the whole answer), or KindHead, then KindBody... and
// KindEnd (a flushed, streamed answer); and, at any point, KindFetch: an
// upstream request the host makes in the request's own context and
// answers with Exchange.Fetched.
//
// # Notes
//
//   - Nothing here calls the host. The host pulls with Next, from the
//     request the messages belong to; the notify function given to Begin
//     only says that something is queued. So no request's answer is ever
//     delivered from, or resolved in, another request's context.
//   - Abort cancels the request's context (the client went away): the
//     handler sees it and stops; whatever it queues afterwards is dropped.
//
// The API is unstable until version 1.0.
package bridge

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"sync"
)

// Message kinds. Keep in sync with worker.mjs.
const (
	KindResponse = "response"
	KindHead     = "head"
	KindBody     = "body"
	KindEnd      = "end"
	KindFetch    = "fetch"
)

// Message is one thing for the host, by Kind: Status and Header for
// KindResponse and KindHead, Body for KindResponse and KindBody, Fetch
// for KindFetch.
type Message struct {
	Kind   string
	Status int
	Header http.Header
	Body   []byte
	Fetch  *FetchJob
}

// final reports whether m is the last message of an exchange.
func (m *Message) final() bool { return m.Kind == KindResponse || m.Kind == KindEnd }

// Server serves one handler to many exchanges. Create it with New; it is
// safe for concurrent use.
type Server struct {
	h http.Handler

	mu     sync.Mutex
	nextID int
	xs     map[int]*Exchange
}

// New returns a Server for h.
func New(h http.Handler) *Server {
	return &Server{h: h, xs: make(map[int]*Exchange)}
}

// Exchange is one request in flight, from Begin until its final message
// is taken by Next or it is aborted.
type Exchange struct {
	id     int
	s      *Server
	ctx    context.Context
	cancel context.CancelFunc
	notify func()

	mu      sync.Mutex
	queue   []Message
	queued  int64         // the bytes of the bodies in queue
	taken   chan struct{} // closed and replaced when the host takes a message
	done    bool          // the final message has been queued
	gone    bool          // forgotten: aborted, or the final message was taken
	nextFID int
	fetches map[int]*FetchJob
	bodies  map[int]*streamBody // streamed fetch bodies being handed over
}

type exchangeKey struct{}

// Begin registers an exchange for req and serves it in a new goroutine.
// notify, if not nil, is called (from any goroutine, without locks held)
// whenever a message is queued on an empty queue. The request's context
// is cancelled when the exchange is aborted or its final message taken.
func (s *Server) Begin(req *http.Request, notify func()) *Exchange {
	ctx, cancel := context.WithCancel(req.Context())
	x := &Exchange{s: s, ctx: ctx, cancel: cancel, notify: notify, fetches: make(map[int]*FetchJob), bodies: make(map[int]*streamBody), taken: make(chan struct{})}
	s.mu.Lock()
	s.nextID++
	x.id = s.nextID
	s.xs[x.id] = x
	s.mu.Unlock()
	req = req.WithContext(context.WithValue(ctx, exchangeKey{}, x))
	go s.serve(x, req)
	return x
}

// Lookup returns the exchange with id, or nil when there is none (never
// begun, finished or aborted).
func (s *Server) Lookup(id int) *Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.xs[id]
}

// Abort cancels the exchange with id and drops it, with whatever it had
// queued. It reports whether there was one.
func (s *Server) Abort(id int) bool {
	x := s.Lookup(id)
	if x == nil {
		return false
	}
	x.forget()
	return true
}

// Queued returns the messages queued for the host across the exchanges
// in flight, and the bytes of their bodies: what the host has not taken
// yet.
func (s *Server) Queued() (messages int, bytes int64) {
	s.mu.Lock()
	xs := make([]*Exchange, 0, len(s.xs))
	for _, x := range s.xs {
		xs = append(xs, x)
	}
	s.mu.Unlock()
	for _, x := range xs {
		x.mu.Lock()
		messages += len(x.queue)
		bytes += x.queued
		x.mu.Unlock()
	}
	return messages, bytes
}

// Len returns the number of exchanges in flight.
func (s *Server) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.xs)
}

func (s *Server) serve(x *Exchange, req *http.Request) {
	w := &ResponseWriter{x: x, header: http.Header{}}
	defer func() {
		if p := recover(); p != nil && !w.headSent {
			w.header = http.Header{"Content-Type": {"application/json; charset=utf-8"}}
			w.status = http.StatusInternalServerError
			w.buf.Reset()
			w.buf.WriteString(`{"error":{"code":"internal","message":"internal error"}}`)
		}
		w.finish()
	}()
	s.h.ServeHTTP(w, req)
}

// ID returns the exchange's id, the host's handle for it.
func (x *Exchange) ID() int { return x.id }

// Context returns the request's context: done when the exchange is
// aborted or finished.
func (x *Exchange) Context() context.Context { return x.ctx }

// push queues m; it is dropped when the exchange is gone.
func (x *Exchange) push(m Message) {
	x.mu.Lock()
	if x.gone || x.done {
		x.mu.Unlock()
		return
	}
	if m.final() {
		x.done = true
	}
	x.queue = append(x.queue, m)
	x.queued += int64(len(m.Body))
	wake := len(x.queue) == 1 && x.notify != nil
	x.mu.Unlock()
	if wake {
		x.notify()
	}
}

// Next takes the next message, or reports false when none is queued yet
// (or the exchange is gone). Taking the final message ends the exchange.
func (x *Exchange) Next() (Message, bool) {
	x.mu.Lock()
	if len(x.queue) == 0 || x.gone {
		x.mu.Unlock()
		return Message{}, false
	}
	m := x.queue[0]
	x.queue[0] = Message{}
	x.queue = x.queue[1:]
	x.queued -= int64(len(m.Body))
	close(x.taken)
	x.taken = make(chan struct{})
	last := x.done && len(x.queue) == 0
	x.mu.Unlock()
	if last {
		x.forget()
	}
	return m, true
}

// forget drops the exchange from its server and cancels its context.
func (x *Exchange) forget() {
	x.mu.Lock()
	x.gone = true
	x.queue = nil
	x.queued = 0
	x.fetches = nil
	x.bodies = nil
	x.mu.Unlock()
	x.s.mu.Lock()
	if x.s.xs[x.id] == x {
		delete(x.s.xs, x.id)
	}
	x.s.mu.Unlock()
	x.cancel()
}

// NewRequest builds the request the host describes: method and rawURL as
// received, header, the body it read, and length, the declared length of
// a body it did not read because it is over the limit (-1 or less than
// len(body): unknown). The request's context is context.Background; a
// URL that does not parse becomes "/".
func NewRequest(method, rawURL string, header http.Header, body []byte, length int64) *http.Request {
	u, err := url.Parse(rawURL)
	if err != nil {
		u = &url.URL{Path: "/"}
	}
	if header == nil {
		header = http.Header{}
	}
	n := int64(len(body))
	if length > n {
		// The handler refuses an unread body from its declared length.
		n = length
	}
	return &http.Request{
		Method:        method,
		URL:           u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: n,
		Host:          u.Host,
		RequestURI:    u.RequestURI(),
	}
}
