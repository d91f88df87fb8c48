package durable

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// This file holds how the handler answers: errors and JSON, the recorder
// that holds the API's answer until the turn is stored, and the event
// stream that numbers, keeps and forwards a run's events.

// writeError answers {"error": {"code", "message"}} with the API's status
// for the code.
func writeError(w http.ResponseWriter, e *core.Error) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": e.Code, "message": e.Message}})
	status := httpapi.StatusOf(e.Code)
	if e.Code == CodeRunLost {
		status = http.StatusNotFound
	}
	writeRaw(w, status, append(b, '\n'))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	writeRaw(w, status, append(b, '\n'))
}

func writeRaw(w http.ResponseWriter, status int, b []byte) {
	hd := w.Header()
	hd.Set("Content-Type", "application/json; charset=utf-8")
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// recorder holds a whole answer until the turn is written.
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

// completedEvent starts the event that ends a completed run's stream;
// awaitingEvent the one that ends a run paused for approvals, whose turn
// is written as a completed one's.
var (
	completedEvent = []byte("event: " + string(core.EventRunCompleted) + "\n")
	awaitingEvent  = []byte("event: " + string(core.EventRunAwaitingApproval) + "\n")
)

// eventStream passes a run's stream through event by event (the API
// writes whole events), giving each an "id: <seq>" line from 1 and, for
// a continued run, keeping it in the run's log. It holds back the
// run.completed (or run.awaiting_approval) event, which finish sends once
// the turn is written, or replaces with run.failed.
type eventStream struct {
	w       http.ResponseWriter
	log     *runLog // nil unless the run continues without its client
	seq     int64
	partial []byte
	held    []byte
	err     error // the client's write error, for a run that stops with it
}

func (s *eventStream) Header() http.Header { return s.w.Header() }

func (s *eventStream) WriteHeader(status int) { s.w.WriteHeader(status) }

func (s *eventStream) Write(p []byte) (int, error) {
	s.partial = append(s.partial, p...)
	for {
		i := bytes.Index(s.partial, []byte("\n\n"))
		if i < 0 {
			break
		}
		ev := append([]byte(nil), s.partial[:i+2]...)
		s.partial = append(s.partial[:0], s.partial[i+2:]...)
		if s.held == nil && (bytes.HasPrefix(ev, completedEvent) || bytes.HasPrefix(ev, awaitingEvent)) {
			s.held = ev
			continue
		}
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

// finish writes the held event's turn, then sends the event or a
// run.failed event with the error, and ends the run's log.
func (s *eventStream) finish(t *turnState) {
	if s.held != nil {
		var ev struct {
			RunID  string          `json:"runId"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(eventData(s.held), &ev) == nil && len(ev.Result) > 0 {
			if cerr := t.commit(ev.Result); cerr != nil {
				s.held = failedEvent(ev.RunID, t.id, cerr)
			}
		} else {
			t.h.rt.DeleteSession(t.id)
			s.held = failedEvent(ev.RunID, t.id, core.NewError(core.CodeInternal, "the run's result could not be read; the turn was not kept"))
		}
		s.emit(s.held)
	}
	s.Flush()
	if s.log != nil {
		s.log.end()
		if s.seq == 0 {
			// Refused before it started: there is no run to resume.
			t.h.mu.Lock()
			t.h.dropRun(s.log.id)
			t.h.mu.Unlock()
		}
	}
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

// failedEvent is the run.failed event of a run whose turn was not kept.
func failedEvent(runID, sessionID string, cerr *core.Error) []byte {
	b, _ := json.Marshal(map[string]any{"type": core.EventRunFailed, "runId": runID, "sessionId": sessionID,
		"error": map[string]any{"code": cerr.Code, "message": cerr.Message}})
	return []byte("event: " + string(core.EventRunFailed) + "\ndata: " + string(b) + "\n\n")
}
