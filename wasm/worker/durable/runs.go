package durable

// This file holds resumable runs: a streamed run started with
// policy.onDisconnect "continue" goes on when its client leaves, its
// events are kept in the object, and a client picks them up again with
// GET /v1/sessions/{id}/runs/{runId}/events (docs/adr/0020-resumable-runs.md).

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// The bounds of a continued run's event log: when either is passed the
// oldest events are dropped, and a replay that starts before the oldest
// kept begins with a run.gap event. Config.MaxRunEvents and
// Config.MaxRunEventBytes override them.
const (
	DefaultMaxRunEvents     = 1024
	DefaultMaxRunEventBytes = 1 << 20
)

// keptRuns is how many finished runs' logs an object keeps besides the
// running one.
const keptRuns = 8

// CodeRunLost is the error code of a run the object does not know: it
// was never started here, or it was lost with the object's Go instance
// (an eviction or a restart), or its log was dropped for newer runs.
const CodeRunLost core.Code = "run_lost"

// CodeRunExists is the error code of a continued run whose runId names a
// run the object still knows (queued, running, or one of the finished
// runs whose log it keeps): a run id names one run, so that a request
// sent again with its id never runs its turn twice, and a stop or a
// status of that id can only mean that run.
const CodeRunExists core.Code = "run_exists"

// EventRunGap is the type of the event a replay begins with when the
// events it should replay first were dropped from the log: {type, runId,
// from, to}, the seqs lost.
const EventRunGap = "run.gap"

// ContinuesHeader marks the head of a continued run's stream: the
// Worker's entry then keeps driving the request after its client left
// (and removes the header). RunIDHeader carries the run's id.
const (
	ContinuesHeader = "Agentrt-Run-Continues"
	RunIDHeader     = "Agentrt-Run-Id"
)

// The statuses of a run, as GET /v1/sessions/{id}/runs/{runId} answers.
const (
	// runQueued is a continued run accepted while another held the
	// conversation: it runs when the lock frees, unless it is stopped
	// first (or its client's leaving reaches the object), and then it
	// never runs.
	runQueued    = "queued"
	runRunning   = "running"
	runCompleted = "completed"
	runFailed    = "failed"
	runCancelled = "cancelled"
	// runAwaiting is a run that paused for approvals: its turn is
	// written and it is over; a run with the approvals resumes it.
	runAwaiting = core.StatusAwaitingApproval
)

// runLog is a continued run's events and status.
type runLog struct {
	id        string
	maxEvents int
	maxBytes  int64

	mu     sync.Mutex
	events []keptEvent // oldest first
	last   int64       // the seq of the last event added
	bytes  int64       // the kept events' bytes
	done   bool
	status string
	// running is set while the run is in the runtime under its id: only
	// then does a stop (DELETE) reach it through core's CancelRun.
	running bool
	// stop is closed by a stop (DELETE) of the run while it is queued.
	stop    chan struct{}
	stopped bool
	final   json.RawMessage // the data of the final event, as kept
	wake    chan struct{}   // closed and replaced on every change
}

// keptEvent is one event of a log: its seq, and the whole event without
// its id line. A log's seqs increase; an event that was not kept leaves
// a hole, which a replay reports with run.gap.
type keptEvent struct {
	seq  int64
	data []byte
}

// add keeps ev as event seq, dropping the oldest over the bounds. An
// event larger than the log's bytes on its own is not kept (a replay
// gives run.gap in its place), except a final one, which is kept without
// its result (see omitResult): the log's bounds hold for any event.
func (l *runLog) add(seq int64, ev []byte) {
	st := finalStatus(ev)
	if int64(len(ev)) > l.maxBytes {
		if st == "" {
			ev = nil
		} else {
			ev = omitResult(ev)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = seq
	if ev != nil {
		l.events = append(l.events, keptEvent{seq, ev})
		l.bytes += int64(len(ev))
		for len(l.events) > 1 && (len(l.events) > l.maxEvents || l.bytes > l.maxBytes) {
			l.bytes -= int64(len(l.events[0].data))
			l.events[0] = keptEvent{}
			l.events = l.events[1:]
		}
	}
	if st != "" {
		l.status = st
		l.final = eventData(ev)
	}
	close(l.wake)
	l.wake = make(chan struct{})
}

// omitResult returns the final event ev without its result (the
// Result of run.completed or run.awaiting_approval) and with
// "resultOmitted": true: what a log keeps of a final event too large for
// it. The turn itself is in the conversation (GET /v1/sessions/{id}).
func omitResult(ev []byte) []byte {
	typ, _, _ := bytes.Cut(bytes.TrimPrefix(ev, []byte("event: ")), []byte("\n"))
	var fields map[string]json.RawMessage
	if json.Unmarshal(eventData(ev), &fields) != nil || fields == nil {
		fields = map[string]json.RawMessage{}
	}
	small := map[string]json.RawMessage{"resultOmitted": json.RawMessage("true")}
	for _, k := range []string{"type", "runId", "sessionId", "seq", "error"} {
		if v, ok := fields[k]; ok && len(v) <= 4096 {
			small[k] = v
		}
	}
	data, _ := json.Marshal(small)
	return []byte("event: " + string(typ) + "\ndata: " + string(data) + "\n\n")
}

// begin marks a queued run running; false when it was stopped.
func (l *runLog) begin() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return false
	}
	l.status, l.running = runRunning, true
	close(l.wake)
	l.wake = make(chan struct{})
	return true
}

// notRun ends the log of a continued run that never ran: its request was
// cancelled or stopped while it waited for its turn (e is the error its
// client gets, and the log's final event, run.cancelled), or refused at
// once because the conversation was busy (policy.onBusy "reject"), when
// it is forgotten: nobody could have followed it.
func (h *Handler) notRun(l *runLog, session string, e *core.Error) {
	if e.Code == core.CodeSessionBusy {
		h.mu.Lock()
		if h.runs[l.id] == l {
			h.dropRun(l.id)
		}
		h.mu.Unlock()
		return
	}
	l.refuse(core.EventRunCancelled, session, errorJSON(e))
	l.end()
}

// refuse keeps, as the only event of a run that never started, a final
// event of type typ carrying errJSON (the wire form of the error its
// client was answered).
func (l *runLog) refuse(typ core.EventType, session string, errJSON []byte) {
	data, _ := json.Marshal(map[string]any{"type": typ, "runId": l.id, "sessionId": session, "seq": 0, "error": json.RawMessage(errJSON)})
	l.add(1, []byte("event: "+string(typ)+"\ndata: "+string(data)+"\n\n"))
}

// errorJSON is e as the API writes an error: {code, message, index?}.
func errorJSON(e *core.Error) []byte {
	rec := newRecorder()
	writeError(rec, e)
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(rec.body.Bytes(), &body) != nil || len(body.Error) == 0 {
		return []byte(`{"code":"internal","message":"the run ended before it started"}`)
	}
	return body.Error
}

func stoppedQueued() *core.Error {
	return core.NewError(core.CodeCancelled, "the run was stopped while it waited for its turn; it never ran")
}

// end marks the run finished (a run that ended with no final event
// failed).
func (l *runLog) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.status == runRunning || l.status == runQueued {
		l.status = runFailed
	}
	l.done, l.running = true, false
	close(l.wake)
	l.wake = make(chan struct{})
}

// finalStatus is the status a run's final event ev gives it, or "" for
// another event.
func finalStatus(ev []byte) string {
	switch {
	case hasEvent(ev, core.EventRunCompleted):
		return runCompleted
	case hasEvent(ev, core.EventRunAwaitingApproval):
		return runAwaiting
	case hasEvent(ev, core.EventRunFailed):
		return runFailed
	case hasEvent(ev, core.EventRunCancelled):
		return runCancelled
	}
	return ""
}

// hasEvent reports whether ev is an event of type typ, without copying
// ev (which may be megabytes).
func hasEvent(ev []byte, typ core.EventType) bool {
	rest, ok := bytes.CutPrefix(ev, []byte("event: "))
	return ok && bytes.HasPrefix(rest, []byte(string(typ)+"\n"))
}

// newRunID returns a run id no earlier instance of the object gave out:
// the runtime's generated ids restart with each instance.
func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "r-" + hex.EncodeToString(b[:])
}

// continuedBody checks policy.onDisconnect (onDisconnect, not null) and
// removes it from body, which the API does not know it in. For
// "continue" it also gives the body a run id when it has none, and
// returns it.
func continuedBody(body []byte, onDisconnect, rawRunID json.RawMessage, stream bool) (bool, string, []byte, *core.Error) {
	var mode string
	if json.Unmarshal(onDisconnect, &mode) != nil || (mode != "cancel" && mode != "continue") {
		return false, "", nil, core.NewError(core.CodeInvalidArgument, `policy.onDisconnect must be "cancel" or "continue"`)
	}
	cont := mode == "continue"
	if cont && !stream {
		return false, "", nil, core.NewError(core.CodeInvalidArgument, `policy.onDisconnect "continue" needs a streamed run (Accept: text/event-stream)`)
	}
	var fields map[string]json.RawMessage
	var policy map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil || json.Unmarshal(fields["policy"], &policy) != nil {
		return false, "", nil, core.NewError(core.CodeInvalidArgument, "the body must be a JSON object")
	}
	delete(policy, "onDisconnect")
	fields["policy"], _ = json.Marshal(policy)
	runID := ""
	if cont {
		if len(rawRunID) == 0 || string(rawRunID) == "null" {
			runID = newRunID()
			fields["runId"], _ = json.Marshal(runID)
		} else if json.Unmarshal(rawRunID, &runID) != nil || runID == "" {
			return false, "", nil, core.NewError(core.CodeInvalidArgument, "runId must be a non-empty string")
		}
	}
	out, err := json.Marshal(fields)
	if err != nil {
		return false, "", nil, core.NewError(core.CodeInvalidArgument, "the body could not be read")
	}
	return cont, runID, out, nil
}

// startLog registers the log of a continued run, queued, as its request
// is accepted, dropping the oldest finished logs over keptRuns (a log
// queued or running is never dropped for room). A run id the object
// knows is refused run_exists, and the log it names is left as it is.
func (h *Handler) startLog(id string) (*runLog, *core.Error) {
	l := &runLog{id: id, maxEvents: h.maxRunEvents, maxBytes: h.maxRunBytes, status: runQueued, stop: make(chan struct{}), wake: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.runs[id] != nil {
		return nil, runExists(id)
	}
	finished := 0
	for _, r := range h.runOrder {
		if h.runs[r].ended() {
			finished++
		}
	}
	for _, r := range append([]string(nil), h.runOrder...) {
		if finished <= keptRuns {
			break
		}
		if h.runs[r].ended() {
			h.dropRun(r)
			finished--
		}
	}
	h.runs[id] = l
	h.runOrder = append(h.runOrder, id)
	return l, nil
}

func runExists(runID string) *core.Error {
	return core.NewError(CodeRunExists, "run "+strconv.Quote(runID)+" is already known to the conversation: follow it "+
		"(GET .../runs/{runId}/events) or read its status; a new run needs a runId of its own")
}

// ended reports whether the run is over.
func (l *runLog) ended() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done
}

// dropFinished forgets the logs of the runs that ended: the
// conversation was deleted, and its runs with it. Call with mu held.
func (h *Handler) dropFinished() {
	for _, id := range append([]string(nil), h.runOrder...) {
		l := h.runs[id]
		l.mu.Lock()
		done := l.done
		l.mu.Unlock()
		if done {
			h.dropRun(id)
		}
	}
}

// dropRun forgets run id. Call with mu held.
func (h *Handler) dropRun(id string) {
	delete(h.runs, id)
	for i, r := range h.runOrder {
		if r == id {
			h.runOrder = append(h.runOrder[:i], h.runOrder[i+1:]...)
			break
		}
	}
}

// runOf returns the log of run id, or nil.
func (h *Handler) runOf(id string) *runLog {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.runs[id]
}

// runRoute serves /v1/sessions/{id}/runs/{runId}[/events]; rest is the
// path after "runs/". It reports false for a route it does not serve.
func (h *Handler) runRoute(w http.ResponseWriter, r *http.Request, rest string) bool {
	rawID, sub, _ := strings.Cut(rest, "/")
	runID, err := url.PathUnescape(rawID)
	if err != nil || runID == "" {
		return false
	}
	switch {
	case sub == "events" && r.Method == http.MethodGet:
		h.events(w, r, runID)
	case sub == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		h.runStatus(w, runID, false, r)
	case sub == "" && r.Method == http.MethodDelete:
		h.runStatus(w, runID, true, r)
	default:
		return false
	}
	return true
}

func runLost(runID string) *core.Error {
	return core.NewError(CodeRunLost, "run "+strconv.Quote(runID)+" is not known to the conversation: it was lost with an eviction or a restart "+
		"(nothing of it was stored), or it ended long ago; read the conversation to see whether its turn was stored")
}

// runStatus answers {runId, status, result?, error?}; with cancel set it
// first cancels the run if it is running and waits for its end.
func (h *Handler) runStatus(w http.ResponseWriter, runID string, cancel bool, r *http.Request) {
	l := h.runOf(runID)
	if l == nil {
		writeError(w, runLost(runID))
		return
	}
	if cancel {
		// Only a run still under its id in the runtime is cancelled by
		// it: once the log ended, the id may name another run in flight
		// (a plain run may reuse it), which is not this one. The log's
		// lock is held across the cancel, so the run cannot end, and
		// another take its id, in between.
		l.mu.Lock()
		switch {
		case l.running:
			h.rt.CancelRun(runID)
		case l.status == runQueued && !l.stopped:
			// It never runs: its request ends with run.cancelled.
			l.stopped = true
			close(l.stop)
		}
		l.mu.Unlock()
		for {
			l.mu.Lock()
			done, wake := l.done, l.wake
			l.mu.Unlock()
			if done {
				break
			}
			select {
			case <-wake:
			case <-r.Context().Done():
				writeError(w, core.NewError(core.CodeCancelled, "the client went away"))
				return
			}
		}
	}
	l.mu.Lock()
	out := map[string]any{"runId": runID, "status": l.status, "lastEventId": l.last}
	var final struct {
		Result        json.RawMessage `json:"result"`
		Error         json.RawMessage `json:"error"`
		ResultOmitted bool            `json:"resultOmitted"`
	}
	if l.final != nil && json.Unmarshal(l.final, &final) == nil {
		if len(final.Result) > 0 {
			out["result"] = final.Result
		}
		if final.ResultOmitted {
			out["resultOmitted"] = true
		}
		if len(final.Error) > 0 {
			out["error"] = final.Error
		}
	}
	l.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// events replays a run's events after Last-Event-ID (or ?after=N), then
// follows it until its end or the client leaves. An id that is not a
// non-negative integer, or is past the run's last event, is refused
// invalid_argument. Any number of clients may follow a run at once, each
// with its own position.
func (h *Handler) events(w http.ResponseWriter, r *http.Request, runID string) {
	after, _, cerr := resumeFrom(r)
	if cerr != nil {
		writeError(w, cerr)
		return
	}
	l := h.runOf(runID)
	if l == nil {
		writeError(w, runLost(runID))
		return
	}
	l.mu.Lock()
	last := l.last
	l.mu.Unlock()
	if after > last {
		// No event of the run has that id yet: a client that claims it
		// would wait for events it will never get.
		writeError(w, core.NewError(core.CodeInvalidArgument, "Last-Event-ID (or after) "+strconv.FormatInt(after, 10)+
			" is past the run's last event ("+strconv.FormatInt(last, 10)+")"))
		return
	}
	flusher := httpapi.StartEventStream(w)
	ctx := r.Context()
	gap := func(buf []byte, from, to int64) []byte { return appendGap(buf, runID, from, to) }
	var buf []byte
	for {
		l.mu.Lock()
		var more bool
		buf, after, more = appendAfter(buf[:0], l.events, after, gap)
		if !more && l.done && after < l.last {
			// The run's last events were not kept.
			buf = gap(buf, after+1, l.last)
			after = l.last
		}
		done, wake := l.done && after >= l.last, l.wake
		l.mu.Unlock()
		if !sendBatch(ctx, w, flusher, buf) || done {
			return
		}
		if !more && !waitWake(ctx, wake) {
			return
		}
	}
}

// resumeFrom reads the id a client of an event stream resumes after:
// its Last-Event-ID header, or else ?after=N; given is false when it
// sent neither. A value that is not a non-negative integer is refused
// invalid_argument.
func resumeFrom(r *http.Request) (after int64, given bool, err *core.Error) {
	v := r.Header.Get("Last-Event-ID")
	if q := r.URL.Query().Get("after"); v == "" {
		v = q
	}
	if v == "" {
		return 0, false, nil
	}
	n, perr := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if perr != nil || n < 0 {
		return 0, false, core.NewError(core.CodeInvalidArgument, "Last-Event-ID (or after) must be a non-negative integer")
	}
	return n, true, nil
}

// appendAfter appends to buf the events of a log (oldest first) after
// the id after, up to about followBatch bytes, with the gap event gap
// makes before each run of ids that was not kept. It returns buf, the id
// of the last event appended (after when none), and whether events were
// left for the next batch.
func appendAfter(buf []byte, events []keptEvent, after int64, gap func(buf []byte, from, to int64) []byte) ([]byte, int64, bool) {
	for _, e := range events {
		if e.seq <= after {
			continue
		}
		if len(buf) >= followBatch {
			return buf, after, true
		}
		if e.seq > after+1 {
			buf = gap(buf, after+1, e.seq-1)
		}
		buf = appendEvent(buf, e.seq, e.data)
		after = e.seq
	}
	return buf, after, false
}

// sendBatch writes buf, when it holds anything, to an event stream's
// client, flushes it and waits until the client took it (waitTaken).
// False when the client left.
func sendBatch(ctx context.Context, w http.ResponseWriter, flusher http.Flusher, buf []byte) bool {
	if len(buf) == 0 {
		return true
	}
	if _, err := w.Write(buf); err != nil {
		return false
	}
	if flusher != nil {
		flusher.Flush()
	}
	return waitTaken(ctx, w)
}

// Backlogger is a ResponseWriter that holds what it was written until
// its client takes it (the worker's bridge): Backlog returns the bytes
// not taken yet, and a channel closed when the client next takes some.
type Backlogger interface {
	Backlog() (int64, <-chan struct{})
}

// waitTaken waits until w's client took everything written to it, when
// w is a Backlogger, so that a follower that does not read holds at most
// one batch: it reads the shared log from its position when it reads
// again (run.gap for what was dropped meanwhile). False when ctx ended
// first.
func waitTaken(ctx context.Context, w http.ResponseWriter) bool {
	b, ok := w.(Backlogger)
	if !ok {
		return true // a net/http writer blocks in Write instead
	}
	for {
		n, taken := b.Backlog()
		if n == 0 || taken == nil {
			return true
		}
		select {
		case <-taken:
		case <-ctx.Done():
			return false
		}
	}
}

// followBatch is about the most a follower of a run is sent in one write
// (one event may pass it).
const followBatch = 64 << 10

// appendGap appends the run.gap event of the seqs from..to, with id to.
func appendGap(buf []byte, runID string, from, to int64) []byte {
	gap, _ := json.Marshal(map[string]any{"type": EventRunGap, "runId": runID, "from": from, "to": to})
	return appendEvent(buf, to, []byte("event: "+EventRunGap+"\ndata: "+string(gap)+"\n\n"))
}

func appendEvent(buf []byte, seq int64, ev []byte) []byte {
	buf = append(buf, "id: "...)
	buf = strconv.AppendInt(buf, seq, 10)
	buf = append(buf, '\n')
	return append(buf, ev...)
}

// runStats are the figures of the run logs, for the test route.
type runStats struct {
	Runs      int   `json:"runs"`
	MaxEvents int   `json:"maxEvents"`
	MaxBytes  int64 `json:"maxBytes"`
}

// runFigures returns the number of logs kept and the most events and
// bytes any holds. Call with mu held.
func (h *Handler) runFigures() runStats {
	s := runStats{Runs: len(h.runs)}
	for _, l := range h.runs {
		l.mu.Lock()
		s.MaxEvents = max(s.MaxEvents, len(l.events))
		s.MaxBytes = max(s.MaxBytes, l.bytes)
		l.mu.Unlock()
	}
	return s
}
