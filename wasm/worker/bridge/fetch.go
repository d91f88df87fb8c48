package bridge

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
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
// fetch job fid: false once it was answered, or its request's context
// ended (a timeout, an abort), or the exchange is gone. The host stops a
// fetch nobody waits for.
func (x *Exchange) Waiting(fid int) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.fetches[fid] != nil
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
