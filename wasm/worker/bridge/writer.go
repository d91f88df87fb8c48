package bridge

import (
	"bytes"
	"net/http"
)

// ResponseWriter collects a handler's answer for an exchange. A handler
// that never flushes is sent as one KindResponse message; Flush (Server-
// Sent Events) sends KindHead and then the body in KindBody messages.
// Writes fail with the context's error once the exchange is aborted.
type ResponseWriter struct {
	x        *Exchange
	header   http.Header
	status   int
	headSent bool
	buf      bytes.Buffer
}

// Header implements http.ResponseWriter.
func (w *ResponseWriter) Header() http.Header { return w.header }

// WriteHeader implements http.ResponseWriter; only the first call counts.
func (w *ResponseWriter) WriteHeader(code int) {
	if w.status == 0 && !w.headSent {
		w.status = code
	}
}

// Write implements http.ResponseWriter.
func (w *ResponseWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if err := w.x.ctx.Err(); err != nil {
		return 0, err
	}
	return w.buf.Write(p)
}

// Flush implements http.Flusher: the head goes out first, then whatever
// was written since the last flush.
func (w *ResponseWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if !w.headSent {
		w.headSent = true
		w.x.push(Message{Kind: KindHead, Status: w.status, Header: w.header.Clone()})
	}
	if w.buf.Len() > 0 {
		w.x.push(Message{Kind: KindBody, Body: bytes.Clone(w.buf.Bytes())})
		w.buf.Reset()
	}
}

// Backlog returns the bytes written that the host has not taken yet
// (queued, or not flushed), and a channel closed when the host next
// takes a message. A handler that streams to a client that may not read
// (a follower of a run) waits for its backlog to clear before it writes
// more, so that what it holds for that client stays bounded.
func (w *ResponseWriter) Backlog() (int64, <-chan struct{}) {
	w.x.mu.Lock()
	defer w.x.mu.Unlock()
	if w.x.gone {
		return 0, nil
	}
	return w.x.queued + int64(w.buf.Len()), w.x.taken
}

// finish queues the final message.
func (w *ResponseWriter) finish() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if !w.headSent {
		w.headSent = true
		w.x.push(Message{Kind: KindResponse, Status: w.status, Header: w.header, Body: w.buf.Bytes()})
		return
	}
	w.Flush()
	w.x.push(Message{Kind: KindEnd})
}
