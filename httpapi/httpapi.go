// Package httpapi serves a core.Runtime over HTTP: the API of agentrt's
// server side (the Cloudflare Worker), as a plain net/http handler that
// runs and is tested natively too.
//
//	rt, _ := core.New(core.Config{})
//	h := httpapi.New(httpapi.Config{Runtime: rt, Token: "s3cret"})
//	http.ListenAndServe("127.0.0.1:8787", h)
//
// Routes:
//
//	POST   /v1/sessions/{id}/runs  {input, history?, policy?, runId?, inspect?}
//	                               or {approvals, history?, ...} to resume
//	                               calls awaiting approval
//	                               -> 200 Result, or Server-Sent Events when
//	                                  the request accepts text/event-stream
//	GET    /v1/sessions/{id}       -> 200 {id, messageCount, messages}, or 404
//	DELETE /v1/sessions/{id}       -> 204 (for an unknown session too)
//	POST   /v1/history/check       {history} -> 200 {ok, problems: [{code,
//	                                  index, message, repair}], awaiting?:
//	                                  [{index, toolCallId, name}]}, running
//	                                  nothing (core.CheckHistory)
//	GET    /healthz                -> 200 {"ok": true, "version": ...}
//
// A method no route serves (anything but GET, HEAD, POST and DELETE,
// lowercase spellings included) answers 405 method_not_allowed on every
// path.
// Every error is {"error": {"code", "message", "index"?}} with the status
// of StatusOf. Any isolate or process can answer any session: the client
// sends its history and the runtime seeds a cold session from it.
//
// The API is unstable until version 1.0.
package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/agentrt/agentrt/core"
)

// Codes the HTTP layer adds to the runtime's codes.
const (
	CodeUnauthorized     core.Code = "unauthorized"
	CodeNotFound         core.Code = "not_found"
	CodeMethodNotAllowed core.Code = "method_not_allowed"
)

// DefaultMaxBodyBytes is the body limit when Config.MaxBodyBytes is zero.
const DefaultMaxBodyBytes = 1 << 20

// statuses is the one table mapping error codes to HTTP statuses.
// tool_error is a failure of the agent's own tools, not of the request:
// like model_error it answers 502.
var statuses = map[core.Code]int{
	core.CodeInvalidArgument: http.StatusBadRequest,
	core.CodeInvalidHistory:  http.StatusBadRequest,
	CodeUnauthorized:         http.StatusUnauthorized,
	CodeNotFound:             http.StatusNotFound,
	CodeMethodNotAllowed:     http.StatusMethodNotAllowed,
	core.CodeSessionBusy:     http.StatusConflict,
	core.CodeLimitExceeded:   http.StatusRequestEntityTooLarge,
	core.CodeModelError:      http.StatusBadGateway,
	core.CodeToolError:       http.StatusBadGateway,
	core.CodeTimeout:         http.StatusGatewayTimeout,
	core.CodeCancelled:       http.StatusServiceUnavailable,
	core.CodeInternal:        http.StatusInternalServerError,
	core.CodeHistoryDiverged: http.StatusPreconditionFailed,
}

// StatusOf returns the HTTP status for an error code; an unknown code is
// 500, like internal.
func StatusOf(code core.Code) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Config configures a Handler.
type Config struct {
	// Runtime serves the sessions. It must not be nil.
	Runtime *core.Runtime
	// Token, when not empty, is required on every route but /healthz as
	// "Authorization: Bearer <Token>". Empty means no authentication.
	Token string
	// MaxBodyBytes bounds request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Version is reported by /healthz; empty means "dev".
	Version string
}

// Handler is the API's http.Handler. Create it with New. It is safe for
// concurrent use.
type Handler struct {
	rt        *core.Runtime
	tokenHash [sha256.Size]byte
	auth      bool
	maxBody   int64
	version   string
	commit    CommitFunc // see OnCommit
	keep      KeepFunc   // see OnKeep
}

// New returns the handler for cfg. It panics if cfg.Runtime is nil, a
// programming error.
func New(cfg Config) *Handler {
	if cfg.Runtime == nil {
		panic("httpapi: Config.Runtime is nil")
	}
	h := &Handler{rt: cfg.Runtime, maxBody: cfg.MaxBodyBytes, version: cfg.Version}
	if cfg.Token != "" {
		h.auth = true
		h.tokenHash = sha256.Sum256([]byte(cfg.Token))
	}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.version == "" {
		h.version = "dev"
	}
	return h
}

// MaxBodyBytes returns the body limit in force.
func (h *Handler) MaxBodyBytes() int64 { return h.maxBody }

// ServeHTTP implements http.Handler. A panic below it answers 500
// internal with no details: responses never carry stack traces.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rw := &trackingWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			if !rw.wrote {
				writeError(rw, core.NewError(core.CodeInternal, "internal error"))
			}
		}
	}()
	h.serve(rw, r)
}

// apiMethods are the methods some route serves. Any other method, or one
// in another case ("get": methods are case-sensitive), is refused on
// every path with 405 and this Allow list.
const apiMethods = "GET, HEAD, POST, DELETE"

func knownMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodDelete:
		return true
	}
	return false
}

// sessionsPrefix begins the path of every route of one conversation.
const sessionsPrefix = "/v1/sessions/"

// SessionRoute splits an escaped path /v1/sessions/{id}[/tail] into the
// unescaped session id and the rest after its slash; ok is false for a
// path of no session route (another prefix, or an empty or badly escaped
// id). A server in front of the API (the durable object) routes with it,
// so that both read a path alike.
func SessionRoute(path string) (id, tail string, ok bool) {
	rest, ok := strings.CutPrefix(path, sessionsPrefix)
	if !ok {
		return "", "", false
	}
	rawID, tail, _ := strings.Cut(rest, "/")
	id, err := url.PathUnescape(rawID)
	if err != nil || id == "" {
		return "", "", false
	}
	return id, tail, true
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	if !knownMethod(r.Method) {
		methodNotAllowed(w, apiMethods)
		return
	}
	path := r.URL.EscapedPath()
	if path == "/healthz" {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, "GET, HEAD")
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "version": h.version})
		return
	}
	if path == "/v1/history/check" {
		if !h.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentrt"`)
			writeError(w, core.NewError(CodeUnauthorized, "a valid bearer token is required"))
			return
		}
		if r.Method != http.MethodPost {
			methodNotAllowed(w, "POST")
			return
		}
		h.postCheck(w, r)
		return
	}
	if !strings.HasPrefix(path, sessionsPrefix) {
		writeError(w, core.NewError(CodeNotFound, "no such route"))
		return
	}
	if !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="agentrt"`)
		writeError(w, core.NewError(CodeUnauthorized, "a valid bearer token is required"))
		return
	}
	id, tail, ok := SessionRoute(path)
	if !ok {
		writeError(w, core.NewError(CodeNotFound, "no such route"))
		return
	}
	switch tail {
	case "":
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			h.getSession(w, id)
		case http.MethodDelete:
			h.rt.DeleteSession(id)
			w.WriteHeader(http.StatusNoContent)
		default:
			methodNotAllowed(w, "GET, HEAD, DELETE")
		}
	case "runs":
		if r.Method != http.MethodPost {
			methodNotAllowed(w, "POST")
			return
		}
		h.postRun(w, r, id)
	default:
		writeError(w, core.NewError(CodeNotFound, "no such route"))
	}
}

// Authorized reports whether r may use the session routes: true when
// Config.Token is empty, or when r carries "Authorization: Bearer
// <Token>". A handler that wraps this one (the worker's Durable Object)
// asks it before acting on a request itself.
func (h *Handler) Authorized(r *http.Request) bool { return h.authorized(r) }

// authorized compares SHA-256 digests in constant time, so that neither
// the content nor the length of the token leaks through timing.
func (h *Handler) authorized(r *http.Request) bool {
	if !h.auth {
		return true
	}
	v := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(v) < len(prefix) || !strings.EqualFold(v[:len(prefix)], prefix) {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(v[len(prefix):])))
	return subtle.ConstantTimeCompare(got[:], h.tokenHash[:]) == 1
}

func (h *Handler) getSession(w http.ResponseWriter, id string) {
	s, ok := h.rt.Session(id)
	if !ok {
		writeError(w, core.NewError(CodeNotFound, "no session "+strconv.Quote(truncate(id, 64))))
		return
	}
	w.Header().Set("ETag", `"`+s.Head+`"`)
	writeJSON(w, http.StatusOK, wireSession{ID: s.ID, MessageCount: len(s.Messages), Head: s.Head, Messages: toWireMessages(s.Messages)})
}

// readBody reads the body within the limit: a declared Content-Length
// over it is refused before reading, and http.MaxBytesReader stops a
// body that lies or streams without one.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *core.Error) {
	tooLarge := core.NewError(core.CodeLimitExceeded, "the body is larger than "+strconv.FormatInt(h.maxBody, 10)+" bytes")
	if r.ContentLength > h.maxBody {
		return nil, tooLarge
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge
		}
		return nil, invalidArg("the body could not be read")
	}
	return b, nil
}

// WantsStream reports whether r asks for its answer as Server-Sent
// Events (an Accept of text/event-stream, among others or with
// parameters). A server in front of the API (the durable object) asks it
// too, so that both read the header alike.
func WantsStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
				return true
			}
		}
	}
	return false
}

func (h *Handler) postRun(w http.ResponseWriter, r *http.Request, id string) {
	body, cerr := h.readBody(w, r)
	if cerr != nil {
		if cerr.Code == core.CodeLimitExceeded {
			// The rest of the body is not read: ask to close the connection.
			w.Header().Set("Connection", "close")
		}
		writeError(w, cerr)
		return
	}
	req, cerr := decodeRunBody(body, h.rt.Limits().MaxSeedMessages)
	if cerr == nil {
		req.IfHead, cerr = ifMatch(r, req.IfHead)
	}
	if cerr != nil {
		writeError(w, cerr)
		return
	}
	rr := core.RunRequest{
		SessionID:   id,
		Input:       req.Input,
		Policy:      req.Policy,
		History:     req.History,
		WithHistory: req.WithHistory,
		RunID:       req.RunID,
		Inspect:     req.Inspect,
		Approvals:   req.Approvals,
		IfHead:      req.IfHead,

		HistoryTrusted: historyTrusted(r.Context()),
	}
	if !WantsStream(r) {
		run, err := h.rt.Start(r.Context(), rr)
		if err != nil {
			writeError(w, core.AsError(err))
			return
		}
		res, err := run.Wait(r.Context())
		if err != nil {
			// The client went away (Wait's ctx) or the run failed: what
			// the failed run keeps is stored either way.
			run.Cancel()
			if _, rerr := run.Wait(context.Background()); rerr != nil {
				err = h.kept(r, rerr)
			}
			writeError(w, core.AsError(err))
			return
		}
		if cerr := h.committed(r, res); cerr != nil {
			writeError(w, cerr)
			return
		}
		wr := toWireResult(res)
		wr.Seed.Repaired = healedHistory(body, &res.Seed)
		w.Header().Set("ETag", `"`+wr.Head+`"`)
		writeJSON(w, http.StatusOK, wr)
		return
	}
	h.stream(w, r, rr, body)
}

// ifMatch returns the run's ifHead from the body's (body) and the
// If-Match header's ("<head>"): either alone, or both when they are the
// same. Two that differ, or an If-Match that is not one quoted value,
// are refused invalid_argument; core refuses a value that is not a head.
func ifMatch(r *http.Request, body string) (string, *core.Error) {
	vs := r.Header.Values("If-Match")
	if len(vs) == 0 {
		return body, nil
	}
	v := strings.TrimSpace(strings.Join(vs, ","))
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || strings.Contains(v[1:len(v)-1], `"`) {
		return "", invalidArg(`If-Match must be one head in quotes: If-Match: "<head>"`)
	}
	v = v[1 : len(v)-1]
	if body != "" && body != v {
		return "", invalidArg("ifHead and If-Match name different heads")
	}
	return v, nil
}

// postCheck answers POST /v1/history/check.
func (h *Handler) postCheck(w http.ResponseWriter, r *http.Request) {
	body, cerr := h.readBody(w, r)
	if cerr != nil {
		if cerr.Code == core.CodeLimitExceeded {
			w.Header().Set("Connection", "close")
		}
		writeError(w, cerr)
		return
	}
	check, cerr := checkHistory(h.rt, body)
	if cerr != nil {
		writeError(w, cerr)
		return
	}
	writeJSON(w, http.StatusOK, toWireCheck(check))
}

// stream answers a run as Server-Sent Events: one "event: TYPE" and
// "data: JSON" per event, ending with run.completed (carrying result),
// run.awaiting_approval (carrying result), run.failed or run.cancelled
// (carrying error). A refused run answers
// plain JSON with its status.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, rr core.RunRequest, body []byte) {
	q := &eventQueue{signal: make(chan struct{}, 1)}
	rr.OnEvent = q.push
	run, err := h.rt.Start(r.Context(), rr)
	if err != nil {
		writeError(w, core.AsError(err))
		return
	}
	flusher := StartEventStream(w)
	var buf bytes.Buffer
	for {
		evs, ok := q.wait(r.Context())
		if !ok {
			run.Cancel()
			h.ended(r, run)
			return
		}
		buf.Reset()
		terminal := false
		for i := range evs {
			ev := &evs[i]
			if ev.Type == core.EventRunCompleted || ev.Type == core.EventRunAwaitingApproval {
				if cerr := h.committed(r, ev.Result); cerr != nil {
					evs[i] = core.Event{Type: core.EventRunFailed, RunID: ev.RunID, SessionID: ev.SessionID, Seq: ev.Seq, Err: cerr}
				}
			}
			if (ev.Type == core.EventRunFailed || ev.Type == core.EventRunCancelled) && ev.Err != nil && len(ev.Err.Appended) > 0 {
				if kerr := h.kept(r, ev.Err); kerr != ev.Err {
					evs[i] = core.Event{Type: core.EventRunFailed, RunID: ev.RunID, SessionID: ev.SessionID, Seq: ev.Seq, Err: core.AsError(kerr)}
				}
			}
			we := toWireEvent(ev)
			if we.Result != nil {
				we.Result.Seed.Repaired = healedHistory(body, &ev.Result.Seed)
			}
			data, err := json.Marshal(we)
			if err != nil {
				data = []byte(`{"type":"run.failed","error":{"code":"internal","message":"an event could not be encoded"}}`)
			}
			buf.WriteString("event: ")
			buf.WriteString(string(ev.Type))
			buf.WriteString("\ndata: ")
			buf.Write(data)
			buf.WriteString("\n\n")
			switch ev.Type {
			case core.EventRunCompleted, core.EventRunAwaitingApproval, core.EventRunFailed, core.EventRunCancelled:
				terminal = true
			}
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			run.Cancel()
			if !terminal {
				h.ended(r, run)
			}
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		if terminal {
			return
		}
	}
}

// eventQueue hands events from the run's goroutine to the handler without
// ever blocking the run.
type eventQueue struct {
	mu     sync.Mutex
	evs    []core.Event
	signal chan struct{}
}

func (q *eventQueue) push(ev core.Event) {
	q.mu.Lock()
	q.evs = append(q.evs, ev)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// wait returns the queued events, waiting for at least one; false when
// ctx is done first.
func (q *eventQueue) wait(ctx interface{ Done() <-chan struct{} }) ([]core.Event, bool) {
	for {
		q.mu.Lock()
		evs := q.evs
		q.evs = nil
		q.mu.Unlock()
		if len(evs) > 0 {
			return evs, true
		}
		select {
		case <-q.signal:
		case <-ctx.Done():
			return nil, false
		}
	}
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, core.NewError(CodeMethodNotAllowed, "method not allowed; use "+allow))
}

// writeError answers {"error": {...}} with the status of its code.
func writeError(w http.ResponseWriter, e *core.Error) {
	writeJSON(w, StatusOf(e.Code), wireErrorBody{Error: *toWireError(e)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"the response could not be encoded"}}`)
	}
	b = append(b, '\n')
	hd := w.Header()
	hd.Set("Content-Type", "application/json; charset=utf-8")
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// trackingWriter remembers whether anything was written, so that a panic
// after the header went out does not write a second one.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) {
	t.wrote = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// Flush passes flushes through for Server-Sent Events.
func (t *trackingWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// StartEventStream answers 200 with the headers of a Server-Sent Events
// stream that a proxy must not buffer, flushes them, and returns w's
// Flusher (nil when it has none). A streamed run starts its answer with
// it, and so do the durable deployment's run followers and watchers.
func StartEventStream(w http.ResponseWriter) http.Flusher {
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream; charset=utf-8")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	return flusher
}
