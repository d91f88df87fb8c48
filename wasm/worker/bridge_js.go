//go:build js && wasm

package main

import (
	"errors"
	"net/http"
	"sync"
	"syscall/js"

	"github.com/agentrt/agentrt/wasm/internal/jsutil"
	"github.com/agentrt/agentrt/wasm/worker/bridge"
)

// The bridge is what worker.mjs calls. Keep in sync with worker.mjs.
//
//	agentrt.maxBodyBytes                                        number
//	agentrt.begin(method, url, headers, body, length, state)    -> id
//	agentrt.next(id)    -> message, null (nothing yet) or false (no such id)
//	agentrt.fetched(id, fid, status, headers, body, error)
//	agentrt.fetchHead(id, fid, status, headers) -> whether Go took it
//	agentrt.fetchBody(id, fid, chunk) -> whether Go still reads the body
//	agentrt.fetchEnd(id, fid, error)
//	agentrt.waiting(id, fid) -> whether Go still waits for that fetch
//	agentrt.abort(id)   cancels the request (the client went away)
//	agentrt.close()     ends the Go instance
//
// Messages are those of package bridge: {type: "response", status,
// headers, body} (the whole answer), or {type: "head", status, headers},
// then {type: "body", body}... and {type: "end"}; and, at any point,
// {type: "fetch", fid, method, url, headers, body}: an upstream request
// the JavaScript side makes in the request's own context and answers
// with fetched (the whole answer), or with fetchHead, then fetchBody for
// each chunk of the body as it arrives, then fetchEnd (a streamed answer:
// the model reads it as it comes).
//
// Go never calls JavaScript back: each request's handler pulls its own
// messages with next, in its own context. When a message is queued on an
// empty queue Go only sets state.ready = true on the plain object the
// handler passed to begin, so that the handler knows to pull.
//
// Only plain values cross: headers are [name, value] pairs, bodies
// Uint8Arrays. Go never touches a Request, Response or stream, which
// workerd binds to the request that created them.
const (
	bindingName = "agentrt"

	fieldReady = "ready"
	badCall    = "agentrt: bad call into the worker bridge"
)

// jsBridge exposes a bridge.Server to worker.mjs.
type jsBridge struct {
	s       *bridge.Server
	maxBody int64
	closed  chan struct{}
	once    sync.Once
}

func newJSBridge(h http.Handler, maxBody int64) *jsBridge {
	return &jsBridge{s: bridge.New(h), maxBody: maxBody, closed: make(chan struct{})}
}

// export publishes the bridge on binding.agentrt. Every function
// recovers, so bad arguments never kill the instance: they return an
// Error (see jsutil.Func).
func (b *jsBridge) export(binding js.Value) {
	api := jsutil.Object.New()
	api.Set("maxBodyBytes", float64(b.maxBody))
	api.Set("begin", jsutil.Func(badCall, b.begin))
	api.Set("next", jsutil.Func(badCall, b.next))
	api.Set("fetched", jsutil.Func(badCall, b.fetched))
	api.Set("fetchHead", jsutil.Func(badCall, b.fetchHead))
	api.Set("fetchBody", jsutil.Func(badCall, b.fetchBody))
	api.Set("fetchEnd", jsutil.Func(badCall, b.fetchEnd))
	api.Set("waiting", jsutil.Func(badCall, b.waiting))
	api.Set("abort", jsutil.Func(badCall, b.abort))
	api.Set("close", jsutil.Func(badCall, func(js.Value, []js.Value) any {
		b.once.Do(func() { close(b.closed) })
		return nil
	}))
	binding.Set(bindingName, api)
}

func (b *jsBridge) lookup(v js.Value) *bridge.Exchange {
	if v.Type() != js.TypeNumber {
		return nil
	}
	return b.s.Lookup(v.Int())
}

// begin(method, url, headers, body, length, state) starts serving a
// request and returns its id.
func (b *jsBridge) begin(_ js.Value, args []js.Value) any {
	method, rawURL := jsutil.Arg(args, 0), jsutil.Arg(args, 1)
	if method.Type() != js.TypeString || rawURL.Type() != js.TypeString {
		panic("begin: method and url must be strings")
	}
	length := int64(-1)
	if l := jsutil.Arg(args, 4); l.Type() == js.TypeNumber {
		length = int64(l.Float())
	}
	req := bridge.NewRequest(method.String(), rawURL.String(), headersFromJS(jsutil.Arg(args, 2)), jsutil.BytesFromJS(jsutil.Arg(args, 3)), length)
	var notify func()
	if state := jsutil.Arg(args, 5); state.Type() == js.TypeObject {
		notify = func() { state.Set(fieldReady, true) }
	}
	return b.s.Begin(req, notify).ID()
}

// next(id) returns the request's next message, null when none is queued
// yet, or false when there is no such request.
func (b *jsBridge) next(_ js.Value, args []js.Value) any {
	x := b.lookup(jsutil.Arg(args, 0))
	if x == nil {
		return false
	}
	m, ok := x.Next()
	if !ok {
		return js.Null()
	}
	return messageToJS(&m)
}

// abort(id) cancels a request whose client went away.
func (b *jsBridge) abort(_ js.Value, args []js.Value) any {
	if id := jsutil.Arg(args, 0); id.Type() == js.TypeNumber {
		return b.s.Abort(id.Int())
	}
	return false
}

// fetched(id, fid, status, headers, body, error) answers a fetch message.
func (b *jsBridge) fetched(_ js.Value, args []js.Value) any {
	x := b.lookup(jsutil.Arg(args, 0))
	fid := jsutil.Arg(args, 1)
	if x == nil || fid.Type() != js.TypeNumber {
		return false
	}
	var r bridge.FetchResult
	if e := jsutil.Arg(args, 5); e.Type() == js.TypeString && e.String() != "" {
		r.Err = errors.New(e.String())
	} else {
		if s := jsutil.Arg(args, 2); s.Type() == js.TypeNumber {
			r.Status = s.Int()
		}
		r.Header = headersFromJS(jsutil.Arg(args, 3))
		r.Body = jsutil.BytesFromJS(jsutil.Arg(args, 4))
	}
	return x.Fetched(fid.Int(), r)
}

// fetchHead(id, fid, status, headers) answers a fetch message with the
// upstream's head; its body follows with fetchBody and fetchEnd.
func (b *jsBridge) fetchHead(_ js.Value, args []js.Value) any {
	x := b.lookup(jsutil.Arg(args, 0))
	fid, status := jsutil.Arg(args, 1), jsutil.Arg(args, 2)
	if x == nil || fid.Type() != js.TypeNumber || status.Type() != js.TypeNumber {
		return false
	}
	return x.FetchedHead(fid.Int(), status.Int(), headersFromJS(jsutil.Arg(args, 3)))
}

// fetchBody(id, fid, chunk) hands Go the next chunk of a fetch's body;
// false when Go no longer reads it (stop the fetch).
func (b *jsBridge) fetchBody(_ js.Value, args []js.Value) any {
	x := b.lookup(jsutil.Arg(args, 0))
	fid := jsutil.Arg(args, 1)
	if x == nil || fid.Type() != js.TypeNumber {
		return false
	}
	return x.FetchedBody(fid.Int(), jsutil.BytesFromJS(jsutil.Arg(args, 2)))
}

// fetchEnd(id, fid, error) ends a fetch's body: cut by error when it is a
// non-empty string.
func (b *jsBridge) fetchEnd(_ js.Value, args []js.Value) any {
	x := b.lookup(jsutil.Arg(args, 0))
	fid := jsutil.Arg(args, 1)
	if x == nil || fid.Type() != js.TypeNumber {
		return false
	}
	var err error
	if e := jsutil.Arg(args, 2); e.Type() == js.TypeString && e.String() != "" {
		err = errors.New(e.String())
	}
	x.FetchedEnd(fid.Int(), err)
	return true
}

// waiting(id, fid) reports whether Go still waits for the fetch's answer.
func (b *jsBridge) waiting(_ js.Value, args []js.Value) any {
	x := b.lookup(jsutil.Arg(args, 0))
	fid := jsutil.Arg(args, 1)
	return x != nil && fid.Type() == js.TypeNumber && x.Waiting(fid.Int())
}

func messageToJS(m *bridge.Message) js.Value {
	o := jsutil.Object.New()
	o.Set("type", m.Kind)
	switch m.Kind {
	case bridge.KindResponse, bridge.KindHead:
		o.Set("status", m.Status)
		o.Set("headers", headersToJS(m.Header))
		if m.Kind == bridge.KindResponse {
			o.Set("body", jsutil.BytesToJS(m.Body))
		}
	case bridge.KindBody:
		o.Set("body", jsutil.BytesToJS(m.Body))
	case bridge.KindFetch:
		f := m.Fetch
		o.Set("fid", f.ID)
		o.Set("method", f.Method)
		o.Set("url", f.URL)
		o.Set("headers", headersToJS(f.Header))
		if f.Body != nil {
			o.Set("body", jsutil.BytesToJS(f.Body))
		} else {
			o.Set("body", js.Null())
		}
	}
	return o
}

func headersToJS(h http.Header) js.Value {
	a := jsutil.Array.New()
	i := 0
	for k, vs := range h {
		for _, v := range vs {
			pair := jsutil.Array.New(2)
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
