//go:build js && wasm

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"syscall/js"
)

// The bridge is what worker.mjs calls. Keep in sync with worker.mjs.
//
//	agentrt.maxBodyBytes                                  number
//	agentrt.begin(method, url, headers, body, length)     -> id
//	agentrt.next(id)    -> Promise<message>
//	agentrt.fetched(id, fid, status, headers, body, error)
//	agentrt.abort(id)   cancels the request (the client went away)
//	agentrt.close()     ends the Go instance
//
// Messages: {type: "response", status, headers, body} (the whole answer),
// or {type: "head", status, headers}, then {type: "body", body}... and
// {type: "end"}; and, at any point, {type: "fetch", fid, method, url,
// headers, body}: an upstream request the JavaScript side makes in the
// request's own context and answers with fetched.
//
// Only plain values cross: headers are [name, value] pairs, bodies
// Uint8Arrays. Go never touches a Request, Response or stream, which
// workerd binds to the request that created them.
const (
	bindingName = "agentrt"

	msgResponse = "response"
	msgHead     = "head"
	msgBody     = "body"
	msgEnd      = "end"
	msgFetch    = "fetch"
)

var (
	jsObject     = js.Global().Get("Object")
	jsArray      = js.Global().Get("Array")
	jsUint8Array = js.Global().Get("Uint8Array")
	jsPromise    = js.Global().Get("Promise")
)

// bridge serves requests to one http.Handler.
type bridge struct {
	h       http.Handler
	maxBody int64
	closed  chan struct{}
	once    sync.Once

	mu     sync.Mutex
	nextID int
	xs     map[int]*exchange
}

func newBridge(h http.Handler, maxBody int64) *bridge {
	return &bridge{h: h, maxBody: maxBody, closed: make(chan struct{}), xs: make(map[int]*exchange)}
}

// message is one thing for the JavaScript side.
type message struct {
	typ    string
	status int
	header http.Header
	body   []byte
	fetch  *fetchJob
}

// exchange is one request in flight.
type exchange struct {
	id     int
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	queue   []message
	waiter  js.Value // resolve function of a pending next(), or undefined
	done    bool     // the final message has been queued
	nextFID int
	fetches map[int]*fetchJob
	// forget drops the exchange from the bridge once its final message
	// has been delivered.
	forget func()
}

type exchangeKey struct{}

// push queues m, or hands it to a waiting next() at once.
func (x *exchange) push(m message) {
	x.mu.Lock()
	if m.typ == msgResponse || m.typ == msgEnd {
		x.done = true
	}
	w := x.waiter
	if w.Truthy() {
		x.waiter = js.Undefined()
		final := x.done
		x.mu.Unlock()
		w.Invoke(m.toJS())
		if final {
			x.forget()
		}
		return
	}
	x.queue = append(x.queue, m)
	x.mu.Unlock()
}

func (m *message) toJS() js.Value {
	o := jsObject.New()
	o.Set("type", m.typ)
	switch m.typ {
	case msgResponse, msgHead:
		o.Set("status", m.status)
		o.Set("headers", headersToJS(m.header))
		if m.typ == msgResponse {
			o.Set("body", bytesToJS(m.body))
		}
	case msgBody:
		o.Set("body", bytesToJS(m.body))
	case msgFetch:
		f := m.fetch
		o.Set("fid", f.id)
		o.Set("method", f.method)
		o.Set("url", f.url)
		o.Set("headers", headersToJS(f.header))
		if f.body != nil {
			o.Set("body", bytesToJS(f.body))
		} else {
			o.Set("body", js.Null())
		}
	}
	return o
}

func bytesToJS(b []byte) js.Value {
	a := jsUint8Array.New(len(b))
	if len(b) > 0 {
		js.CopyBytesToJS(a, b)
	}
	return a
}

func headersToJS(h http.Header) js.Value {
	a := jsArray.New()
	i := 0
	for k, vs := range h {
		for _, v := range vs {
			pair := jsArray.New(2)
			pair.SetIndex(0, k)
			pair.SetIndex(1, v)
			a.SetIndex(i, pair)
			i++
		}
	}
	return a
}

func headersFromJS(v js.Value) http.Header {
	h := http.Header{}
	if v.Type() != js.TypeObject {
		return h
	}
	n := v.Length()
	for i := 0; i < n; i++ {
		p := v.Index(i)
		if p.Type() != js.TypeObject || p.Length() < 2 {
			continue
		}
		k, val := p.Index(0), p.Index(1)
		if k.Type() == js.TypeString && val.Type() == js.TypeString {
			h.Add(k.String(), val.String())
		}
	}
	return h
}

func bytesFromJS(v js.Value) []byte {
	if v.Type() != js.TypeObject || !v.InstanceOf(jsUint8Array) {
		return nil
	}
	b := make([]byte, v.Length())
	js.CopyBytesToGo(b, v)
	return b
}

func jsonString(s string) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

// export publishes the bridge on binding.agentrt. Every function
// recovers, so bad arguments never kill the instance.
func (b *bridge) export(binding js.Value) {
	api := jsObject.New()
	api.Set("maxBodyBytes", float64(b.maxBody))
	api.Set("begin", safeFunc(b.begin))
	api.Set("next", safeFunc(b.next))
	api.Set("fetched", safeFunc(b.fetched))
	api.Set("abort", safeFunc(b.abort))
	api.Set("close", safeFunc(func(js.Value, []js.Value) any {
		b.once.Do(func() { close(b.closed) })
		return nil
	}))
	binding.Set(bindingName, api)
}

// safeFunc wraps f so that a panic becomes a thrown Error.
func safeFunc(f func(this js.Value, args []js.Value) any) js.Func {
	return js.FuncOf(func(this js.Value, args []js.Value) (out any) {
		defer func() {
			if p := recover(); p != nil {
				out = js.Global().Get("Error").New("agentrt: bad call into the worker bridge")
			}
		}()
		return f(this, args)
	})
}

func arg(args []js.Value, i int) js.Value {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined()
}

func (b *bridge) lookup(v js.Value) *exchange {
	if v.Type() != js.TypeNumber {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.xs[v.Int()]
}

// begin(method, url, headers, body, length) starts serving a request and
// returns its id.
func (b *bridge) begin(_ js.Value, args []js.Value) any {
	method, rawURL := arg(args, 0), arg(args, 1)
	if method.Type() != js.TypeString || rawURL.Type() != js.TypeString {
		panic("begin: method and url must be strings")
	}
	u, err := url.Parse(rawURL.String())
	if err != nil {
		u = &url.URL{Path: "/"}
	}
	body := bytesFromJS(arg(args, 3))
	length := int64(len(body))
	if l := arg(args, 4); l.Type() == js.TypeNumber && l.Float() > float64(length) {
		// The declared length of a body JavaScript did not read (over the
		// limit): the handler refuses it from the length alone.
		length = int64(l.Float())
	}
	ctx, cancel := context.WithCancel(context.Background())
	x := &exchange{ctx: ctx, cancel: cancel, waiter: js.Undefined(), fetches: make(map[int]*fetchJob)}
	x.forget = func() {
		b.mu.Lock()
		delete(b.xs, x.id)
		b.mu.Unlock()
		x.cancel()
	}
	b.mu.Lock()
	b.nextID++
	x.id = b.nextID
	b.xs[x.id] = x
	b.mu.Unlock()
	req := &http.Request{
		Method:        method.String(),
		URL:           u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        headersFromJS(arg(args, 2)),
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: length,
		Host:          u.Host,
		RequestURI:    u.RequestURI(),
	}
	req = req.WithContext(context.WithValue(ctx, exchangeKey{}, x))
	go b.serve(x, req)
	return x.id
}

func (b *bridge) serve(x *exchange, req *http.Request) {
	w := &responseWriter{x: x, header: http.Header{}}
	defer func() {
		if p := recover(); p != nil && !w.headSent {
			w.header = http.Header{"Content-Type": {"application/json; charset=utf-8"}}
			w.status = http.StatusInternalServerError
			w.buf.Reset()
			w.buf.WriteString(`{"error":{"code":"internal","message":"internal error"}}`)
		}
		w.finish()
	}()
	b.h.ServeHTTP(w, req)
}

// next(id) returns a Promise of the request's next message.
func (b *bridge) next(_ js.Value, args []js.Value) any {
	x := b.lookup(arg(args, 0))
	if x == nil {
		panic("next: unknown id")
	}
	x.mu.Lock()
	if len(x.queue) > 0 {
		m := x.queue[0]
		x.queue = x.queue[1:]
		last := x.done && len(x.queue) == 0
		x.mu.Unlock()
		if last {
			x.forget()
		}
		return jsPromise.Call("resolve", m.toJS())
	}
	x.mu.Unlock()
	var executor js.Func
	executor = js.FuncOf(func(_ js.Value, pa []js.Value) any {
		x.mu.Lock()
		x.waiter = pa[0]
		x.mu.Unlock()
		return nil
	})
	p := jsPromise.New(executor)
	executor.Release()
	return p
}

// abort(id) cancels a request whose client went away.
func (b *bridge) abort(_ js.Value, args []js.Value) any {
	if x := b.lookup(arg(args, 0)); x != nil {
		x.forget()
	}
	return nil
}

// fetched(id, fid, status, headers, body, error) answers a fetch message.
func (b *bridge) fetched(_ js.Value, args []js.Value) any {
	x := b.lookup(arg(args, 0))
	fid := arg(args, 1)
	if x == nil || fid.Type() != js.TypeNumber {
		return nil
	}
	x.mu.Lock()
	f := x.fetches[fid.Int()]
	delete(x.fetches, fid.Int())
	x.mu.Unlock()
	if f == nil {
		return nil
	}
	r := fetchResult{}
	if e := arg(args, 5); e.Type() == js.TypeString && e.String() != "" {
		r.err = errors.New(e.String())
	} else {
		r.status = arg(args, 2).Int()
		r.header = headersFromJS(arg(args, 3))
		r.body = bytesFromJS(arg(args, 4))
	}
	f.done <- r
	return nil
}

// responseWriter collects the handler's answer. A handler that never
// flushes is sent as one "response" message; Flush (Server-Sent Events)
// sends the head and streams the body.
type responseWriter struct {
	x        *exchange
	header   http.Header
	status   int
	headSent bool
	buf      bytes.Buffer
}

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(code int) {
	if w.status == 0 && !w.headSent {
		w.status = code
	}
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if err := w.x.ctx.Err(); err != nil {
		return 0, err
	}
	return w.buf.Write(p)
}

// Flush implements http.Flusher.
func (w *responseWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if !w.headSent {
		w.headSent = true
		w.x.push(message{typ: msgHead, status: w.status, header: w.header.Clone()})
	}
	if w.buf.Len() > 0 {
		w.x.push(message{typ: msgBody, body: bytes.Clone(w.buf.Bytes())})
		w.buf.Reset()
	}
}

func (w *responseWriter) finish() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if !w.headSent {
		w.headSent = true
		w.x.push(message{typ: msgResponse, status: w.status, header: w.header, body: w.buf.Bytes()})
		return
	}
	w.Flush()
	w.x.push(message{typ: msgEnd})
}

// fetchJob is an upstream request the JavaScript side makes for Go.
type fetchJob struct {
	id     int
	method string
	url    string
	header http.Header
	body   []byte
	done   chan fetchResult
}

type fetchResult struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// fetchClient is an openai.Doer that asks the handler of the request
// being served to fetch: the JavaScript side makes the call in that
// request's context. It works only under a request served by the bridge
// (the request's context carries the exchange). It is not an
// http.RoundTripper on purpose: see openai.Doer.
type fetchClient struct{}

// Do implements openai.Doer.
func (fetchClient) Do(req *http.Request) (*http.Response, error) {
	x, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if x == nil {
		return nil, errors.New("worker: fetch outside a request")
	}
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	f := &fetchJob{method: req.Method, url: req.URL.String(), header: req.Header, body: body, done: make(chan fetchResult, 1)}
	x.mu.Lock()
	x.nextFID++
	f.id = x.nextFID
	x.fetches[f.id] = f
	x.mu.Unlock()
	x.push(message{typ: msgFetch, fetch: f})
	select {
	case r := <-f.done:
		if r.err != nil {
			return nil, r.err
		}
		return &http.Response{
			Status:        strconv.Itoa(r.status) + " " + http.StatusText(r.status),
			StatusCode:    r.status,
			Proto:         "HTTP/1.1",
			ProtoMajor:    1,
			ProtoMinor:    1,
			Header:        r.header,
			Body:          io.NopCloser(bytes.NewReader(r.body)),
			ContentLength: int64(len(r.body)),
			Request:       req,
		}, nil
	case <-req.Context().Done():
		x.mu.Lock()
		delete(x.fetches, f.id)
		x.mu.Unlock()
		return nil, req.Context().Err()
	}
}
