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
// a continued run, keeping it in the run's log, and publishing each to
// the conversation's watchers. The turn is stored by the API's commit
// hook before it writes run.completed. An answer that is not a stream (a
// refused run: an error status, or JSON) is passed through as it is, and
// a continued run's log keeps its error as the run's only event,
// run.failed.
//
// With plainOut set the client asked for a plain answer: the stream's
// head and events are not sent to it, and its final event is answered
// as the API answers a plain run, the Result with 200 or the error with
// its status.
type eventStream struct {
	w        http.ResponseWriter
	log      *runLog // nil unless the run continues without its client
	feed     *feed   // the conversation's watchers' log
	plainOut bool
	header   http.Header // the stream's head, kept from a plain client
	answered bool        // a plain client has its answer
	session  string
	seq      int64
	partial  []byte
	err      error // the client's write error, for a run that stops with it
	headed   bool
	plain    bool   // the answer is not a stream
	refusal  []byte // the start of a plain answer, for the log
}

func (s *eventStream) Header() http.Header {
	if s.plainOut && !s.headed {
		if s.header == nil {
			s.header = http.Header{}
		}
		return s.header
	}
	return s.w.Header()
}

func (s *eventStream) WriteHeader(status int) {
	if s.headed {
		return
	}
	hd := s.Header()
	s.headed = true
	s.plain = status != http.StatusOK || !strings.HasPrefix(hd.Get("Content-Type"), "text/event-stream")
	if s.plainOut {
		if !s.plain {
			return // the events are answered as one JSON body
		}
		for k, v := range s.header {
			s.w.Header()[k] = v
		}
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
	if s.feed != nil {
		s.feed.publish(ev)
	}
	if s.plainOut {
		s.answer(ev)
		return
	}
	if s.err == nil {
		_, s.err = s.w.Write(append([]byte("id: "+strconv.FormatInt(s.seq, 10)+"\n"), ev...))
	}
}

// answer answers a plain client with the run's final event ev, when it
// is one: its result with 200, or its error with the error's status.
func (s *eventStream) answer(ev []byte) {
	st := finalStatus(ev)
	if st == "" || s.answered {
		return
	}
	s.answered = true
	var fields struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(eventData(ev), &fields)
	if (st == runCompleted || st == runAwaiting) && len(fields.Result) > 0 {
		// The conversation's head after the turn, as the API sends it
		// on a plain answer.
		var r struct {
			Head string `json:"head"`
		}
		if json.Unmarshal(fields.Result, &r) == nil && r.Head != "" {
			s.w.Header().Set("ETag", `"`+r.Head+`"`)
		}
		writeJSON(s.w, http.StatusOK, fields.Result)
		return
	}
	var code struct {
		Code core.Code `json:"code"`
	}
	if len(fields.Error) == 0 || json.Unmarshal(fields.Error, &code) != nil || code.Code == "" {
		httpapi.WriteError(s.w, 0, core.NewError(core.CodeInternal, "the run ended without its answer"))
		return
	}
	writeJSON(s.w, httpapi.StatusOf(code.Code), struct {
		Error json.RawMessage `json:"error"`
	}{fields.Error})
}

// Flush passes flushes through (not to a plain client before its
// answer).
func (s *eventStream) Flush() {
	if s.plainOut && !s.plain && !s.answered {
		return
	}
	if f, ok := s.w.(http.Flusher); ok && s.err == nil {
		f.Flush()
	}
}

// finish ends the run's log once the API is done with the run: a run
// refused before it started ends with its refusal.
func (s *eventStream) finish(h *Handler) {
	if s.plainOut && s.headed && !s.plain && !s.answered {
		// The stream ended without a final event: its client left.
		s.answered = true
		httpapi.WriteError(s.w, 0, core.NewError(core.CodeCancelled, "the client went away"))
	}
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
