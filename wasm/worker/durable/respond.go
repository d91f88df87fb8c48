package durable

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// This file holds how the handler answers: errors and JSON through the
// API's writers, and the event stream that numbers, keeps and forwards a
// run's events.

// writeError answers {"error": {"code", "message"}} as the API does,
// run_lost with 404 and run_exists with 409.
func writeError(w http.ResponseWriter, e *core.Error) {
	status := 0
	switch e.Code {
	case CodeRunLost:
		status = http.StatusNotFound
	case CodeRunExists:
		status = http.StatusConflict
	}
	httpapi.WriteError(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) { httpapi.WriteJSON(w, status, v) }

// recorder holds a whole answer until the handler has acted on it.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (c *recorder) Header() http.Header { return c.header }

func (c *recorder) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}

func (c *recorder) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.body.Write(p)
}

func (c *recorder) copyTo(w http.ResponseWriter) {
	for k, v := range c.header {
		w.Header()[k] = v
	}
	if c.status == 0 {
		c.status = http.StatusOK
	}
	w.WriteHeader(c.status)
	_, _ = w.Write(c.body.Bytes())
}

// eventStream passes a run's stream through event by event (the API
// writes whole events), giving each an "id: <seq>" line from 1 and, for
// a continued run, keeping it in the run's log. The turn is stored by
// the API's commit hook before it writes run.completed. An answer that
// is not a stream (a refused run: an error status, or JSON) is passed
// through as it is, and a continued run's log keeps its error as the
// run's only event, run.failed.
type eventStream struct {
	w       http.ResponseWriter
	log     *runLog // nil unless the run continues without its client
	session string
	seq     int64
	partial []byte
	err     error // the client's write error, for a run that stops with it
	headed  bool
	plain   bool   // the answer is not a stream
	refusal []byte // the start of a plain answer, for the log
}

func (s *eventStream) Header() http.Header { return s.w.Header() }

func (s *eventStream) WriteHeader(status int) {
	if !s.headed {
		s.headed = true
		s.plain = status != http.StatusOK || !strings.HasPrefix(s.w.Header().Get("Content-Type"), "text/event-stream")
	}
	s.w.WriteHeader(status)
}

// maxRefusal bounds what is kept of a refused run's answer.
const maxRefusal = 16 << 10

func (s *eventStream) Write(p []byte) (int, error) {
	if !s.headed {
		s.WriteHeader(http.StatusOK)
	}
	if s.plain {
		if s.log != nil && len(s.refusal) < maxRefusal {
			s.refusal = append(s.refusal, p[:min(len(p), maxRefusal-len(s.refusal))]...)
		}
		return s.w.Write(p)
	}
	s.partial = append(s.partial, p...)
	for {
		i := bytes.Index(s.partial, []byte("\n\n"))
		if i < 0 {
			break
		}
		ev := append([]byte(nil), s.partial[:i+2]...)
		s.partial = append(s.partial[:0], s.partial[i+2:]...)
		s.emit(ev)
	}
	if s.log == nil && s.err != nil {
		// The client left: the API cancels the run.
		return 0, s.err
	}
	return len(p), nil
}

// emit numbers ev, keeps it in the log and sends it to the client. A
// continued run goes on when the client is gone.
func (s *eventStream) emit(ev []byte) {
	s.seq++
	if s.log != nil {
		s.log.add(s.seq, ev)
	}
	if s.err == nil {
		_, s.err = s.w.Write(append([]byte("id: "+strconv.FormatInt(s.seq, 10)+"\n"), ev...))
	}
}

// Flush passes flushes through.
func (s *eventStream) Flush() {
	if f, ok := s.w.(http.Flusher); ok && s.err == nil {
		f.Flush()
	}
}

// finish ends the run's log once the API is done with the run: a run
// refused before it started ends with its refusal.
func (s *eventStream) finish(h *Handler) {
	s.Flush()
	if s.log == nil {
		return
	}
	if s.seq == 0 {
		var body struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(s.refusal, &body) != nil || len(body.Error) == 0 {
			body.Error = errorJSON(core.NewError(core.CodeInternal, "the run ended before it started"))
		}
		s.log.refuse(core.EventRunFailed, s.session, body.Error)
	}
	s.log.end()
}

// eventData returns the JSON of an event's data line.
func eventData(ev []byte) []byte {
	_, data, ok := bytes.Cut(ev, []byte("\ndata: "))
	if !ok {
		data, _ = bytes.CutPrefix(ev, []byte("data: "))
	}
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data = data[:i]
	}
	return data
}
