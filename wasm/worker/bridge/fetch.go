package bridge

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// FetchJob is an upstream request the host makes for the handler, in the
// context of the request being served.
type FetchJob struct {
	ID     int
	Method string
	URL    string
	Header http.Header
	// Body is nil for a request without one.
	Body []byte

	done chan FetchResult
}

// FetchResult is the host's answer to a FetchJob: Err when the fetch
// failed, otherwise the upstream's status, header and whole body.
type FetchResult struct {
	Status int
	Header http.Header
	Body   []byte
	Err    error

	// stream, when set, is the body, which the host hands over in parts
	// (FetchedHead, FetchedBody, FetchedEnd) instead of Body.
	stream *streamBody
}

// ErrNoExchange is returned by FetchClient.Do for a request that is not
// served by a Server.
var ErrNoExchange = errors.New("bridge: fetch outside a request served by the bridge")

// Fetched answers the fetch job fid. It reports false for an unknown or
// already answered job, or an exchange that is gone.
func (x *Exchange) Fetched(fid int, r FetchResult) bool {
	x.mu.Lock()
	f := x.fetches[fid]
	delete(x.fetches, fid)
	x.mu.Unlock()
	if f == nil {
		return false
	}
	f.done <- r // buffered: never blocks
	return true
}

// Waiting reports whether the handler still waits for the answer to
// fetch job fid, or reads its streamed body: false once it was answered
// whole, or its body was read to the end or closed, or its request's
// context ended (a timeout, an abort), or the exchange is gone. The host
// stops a fetch nobody waits for.
func (x *Exchange) Waiting(fid int) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.fetches[fid] != nil {
		return true
	}
	b := x.bodies[fid]
	return b != nil && b.reading()
}

// FetchedHead answers fetch job fid with the upstream's status and
// header; its body follows in parts, handed over with FetchedBody and
// ended with FetchedEnd, which the handler reads as they come (a
// streamed answer, such as Server-Sent Events). It reports false for an
// unknown or already answered job, or an exchange that is gone.
func (x *Exchange) FetchedHead(fid, status int, header http.Header) bool {
	b := &streamBody{ctx: x.ctx, wake: make(chan struct{})}
	x.mu.Lock()
	f := x.fetches[fid]
	delete(x.fetches, fid)
	if f != nil {
		x.bodies[fid] = b
	}
	x.mu.Unlock()
	if f == nil {
		return false
	}
	f.done <- FetchResult{Status: status, Header: header, stream: b} // buffered: never blocks
	return true
}

// FetchedBody hands over the next part of fetch job fid's body. It
// reports false when the handler no longer reads it (it closed the body,
// or its context ended): the host then stops the fetch.
func (x *Exchange) FetchedBody(fid int, part []byte) bool {
	x.mu.Lock()
	b := x.bodies[fid]
	x.mu.Unlock()
	return b != nil && b.put(part)
}

// FetchedEnd ends fetch job fid's body: at its end when err is nil, cut
// by err otherwise.
func (x *Exchange) FetchedEnd(fid int, err error) {
	x.mu.Lock()
	b := x.bodies[fid]
	delete(x.bodies, fid)
	x.mu.Unlock()
	if b != nil {
		b.end(err)
	}
}

// streamBody is a fetch's body that the host hands over in parts. Read
// waits for the next part; the parts wait in memory until read (the
// handler's reader bounds what it reads, and closes the body past its
// bound, which stops the fetch).
type streamBody struct {
	ctx interface {
		Done() <-chan struct{}
		Err() error
	}

	mu     sync.Mutex
	parts  [][]byte
	ended  bool
	err    error
	closed bool
	wake   chan struct{} // closed and replaced when something changes
}

func (b *streamBody) signal() {
	close(b.wake)
	b.wake = make(chan struct{})
}

func (b *streamBody) reading() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.closed && !b.ended && b.ctx.Err() == nil
}

func (b *streamBody) put(p []byte) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.ended || b.ctx.Err() != nil {
		return false
	}
	if len(p) > 0 {
		b.parts = append(b.parts, p)
		b.signal()
	}
	return true
}

func (b *streamBody) end(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.ended {
		b.ended, b.err = true, err
		b.signal()
	}
}

// Read implements io.Reader.
func (b *streamBody) Read(p []byte) (int, error) {
	for {
		b.mu.Lock()
		switch {
		case b.closed:
			b.mu.Unlock()
			return 0, errors.New("bridge: read of a closed body")
		case len(b.parts) > 0:
			n := copy(p, b.parts[0])
			if n == len(b.parts[0]) {
				b.parts[0] = nil
				b.parts = b.parts[1:]
			} else {
				b.parts[0] = b.parts[0][n:]
			}
			b.mu.Unlock()
			return n, nil
		case b.ended:
			err := b.err
			b.mu.Unlock()
			if err == nil {
				err = io.EOF
			}
			return 0, err
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		}
	}
}

// Close implements io.Closer: the parts not read are dropped, and the
// host told to stop (Waiting and FetchedBody answer false).
func (b *streamBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.parts = nil
	return nil
}

// FetchClient is an openai.Doer that asks the host to fetch, in the
// context of the request being served: it works only for requests whose
// context comes from a Server's exchange (ErrNoExchange otherwise). It
// returns the context's error when the exchange is aborted first.
type FetchClient struct{}

// Do implements openai.Doer.
func (FetchClient) Do(req *http.Request) (*http.Response, error) {
	x, _ := req.Context().Value(exchangeKey{}).(*Exchange)
	if x == nil {
		return nil, ErrNoExchange
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
	f := &FetchJob{Method: req.Method, URL: req.URL.String(), Header: req.Header, Body: body, done: make(chan FetchResult, 1)}
	x.mu.Lock()
	if x.gone {
		x.mu.Unlock()
		return nil, x.ctx.Err()
	}
	x.nextFID++
	f.ID = x.nextFID
	x.fetches[f.ID] = f
	x.mu.Unlock()
	x.push(Message{Kind: KindFetch, Fetch: f})
	select {
	case r := <-f.done:
		if r.Err != nil {
			return nil, r.Err
		}
		if r.stream != nil {
			return &http.Response{
				Status:        strconv.Itoa(r.Status) + " " + http.StatusText(r.Status),
				StatusCode:    r.Status,
				Proto:         "HTTP/1.1",
				ProtoMajor:    1,
				ProtoMinor:    1,
				Header:        r.Header,
				Body:          r.stream,
				ContentLength: -1,
				Request:       req,
			}, nil
		}
		return &http.Response{
			Status:        strconv.Itoa(r.Status) + " " + http.StatusText(r.Status),
			StatusCode:    r.Status,
			Proto:         "HTTP/1.1",
			ProtoMajor:    1,
			ProtoMinor:    1,
			Header:        r.Header,
			Body:          io.NopCloser(bytes.NewReader(r.Body)),
			ContentLength: int64(len(r.Body)),
			Request:       req,
		}, nil
	case <-req.Context().Done():
		x.mu.Lock()
		delete(x.fetches, f.ID)
		x.mu.Unlock()
		return nil, req.Context().Err()
	}
}
