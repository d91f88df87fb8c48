// Package durable serves one conversation from a Durable Object: the
// HTTP API of package httpapi over the object's own core.Runtime, with
// the conversation kept in the object's storage so that an evicted or
// restarted object picks it up again (docs/adr/0014-durable-sessions.md).
//
//	api := httpapi.New(httpapi.Config{Runtime: rt, MaxBodyBytes: durable.APIBodyLimit(max, stored)})
//	h := durable.New(durable.Config{API: api, Runtime: rt, Store: st, MaxBodyBytes: max, MaxStoredBytes: stored})
//
// The handler wraps the API:
//
//   - POST /v1/sessions/{id}/runs takes the conversation's lock (one turn
//     at a time; policy.onBusy "reject" answers 409 while it is held),
//     treats the stored messages as the session: when the runtime holds
//     no session, a request that a session holding them would not seed
//     from its own history (no history, seed mode if-empty, or a
//     reconcile history that is a prefix of them) gets them as its
//     history instead (a cold seed), so that what a request does to the
//     stored conversation does not depend on whether the object was in
//     memory; refuses before the model call a turn that cannot fit the
//     stored-bytes limit; runs the turn, and
//     writes the turn to the Store before the answer leaves, from the
//     run's core.Result, through the API's commit hook
//     (httpapi.Handler.OnCommit): before a plain answer, before a
//     stream's run.completed event. A run that fails after a resume ran
//     an approved call keeps that call's result: the API's keep hook
//     (httpapi.Handler.OnKeep) writes it before the failure is answered,
//     or once a client that left has the run cancelled. New sets both
//     hooks on Config.API.
//   - A streamed run with policy.onDisconnect "continue" goes on when its
//     client leaves; GET /v1/sessions/{id}/runs/{runId}/events resumes
//     its events, GET .../runs/{runId} answers its status and DELETE
//     stops it (runs.go, docs/adr/0020-resumable-runs.md). Every event of
//     a streamed run carries "id: <seq>".
//   - GET /v1/sessions/{id}/events streams every event of every run on
//     the conversation, plain or streamed, to any number of watchers,
//     from a bounded log with ids of its own and Last-Event-ID (watch.go).
//     Every run is streamed by the API for it; a plain run's client is
//     answered as the API answers a plain run.
//   - DELETE /v1/sessions/{id} empties the Store once the API accepted it,
//     and forgets the logs of the conversation's runs (they answer
//     run_lost from then on).
//   - GET /v1/sessions/{id} answers from the Store when the runtime holds
//     no session.
//
// Everything else goes to the API unchanged. The package is plain Go and
// is tested natively; the worker binds a Store to the object's SQLite
// storage.
package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// DefaultMaxStoredBytes is the stored-bytes limit of a conversation when
// Config.MaxStoredBytes is zero: under the core's default seed and
// session limits (8 MiB), so that a stored conversation can always be
// seeded again.
const DefaultMaxStoredBytes = 4 << 20

// Store is an object's storage of its conversation: the messages, in
// order, each as the JSON the API returns for it. The worker implements
// it over the object's SQLite storage; it is called from one goroutine at
// a time.
type Store interface {
	// Stat returns the number of stored messages and their total size in
	// bytes.
	Stat() (count int, size int64, err error)
	// Load returns the stored messages as one JSON array, oldest first
	// ("[]" when there is none).
	Load() ([]byte, error)
	// Write removes the messages from index from on (when from is less
	// than the stored count) and stores msgs after them, all or nothing.
	// It returns the rows the storage reports written.
	Write(from int, msgs [][]byte) (rows int64, err error)
	// Clear removes every stored message.
	Clear() error
}

// Config configures a Handler.
type Config struct {
	// API serves the routes over Runtime. Its body limit must leave room
	// for the stored history a cold seed adds (see APIBodyLimit). New
	// sets its commit hook; it must serve no other Handler.
	API *httpapi.Handler
	// Runtime is the runtime API serves.
	Runtime *core.Runtime
	// Store keeps the conversation. It must not be nil.
	Store Store
	// MaxBodyBytes bounds the bodies clients send; 0 means
	// httpapi.DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxStoredBytes bounds the stored bytes of the conversation; 0 means
	// DefaultMaxStoredBytes.
	MaxStoredBytes int64
	// BeforeWrite, if set, is called between a turn's answer and its
	// write, with the run's request; an error it returns fails the write.
	// For fault injection in tests.
	BeforeWrite func(r *http.Request) error
	// TestRoutes adds GET /v1/sessions/{id}/_test/storage, which answers
	// the Store's figures (see Stats). Never in a deployment.
	TestRoutes bool
	// MaxRunEvents and MaxRunEventBytes bound each continued run's event
	// log; 0 means DefaultMaxRunEvents and DefaultMaxRunEventBytes.
	MaxRunEvents     int
	MaxRunEventBytes int64
	// MaxSessionEvents and MaxSessionEventBytes bound the conversation's
	// event log (GET /v1/sessions/{id}/events); 0 means
	// DefaultMaxSessionEvents and DefaultMaxSessionEventBytes.
	MaxSessionEvents     int
	MaxSessionEventBytes int64
	// Queued, if set, reports what the host has not taken yet of the
	// answers in flight (messages and bytes; the worker's bridge), for
	// the test route's figures.
	Queued func() (messages int, bytes int64)
}

// APIBodyLimit is the body limit to give the wrapped API: what a client
// may send plus what a cold seed adds (the stored messages, which JSON
// may escape to up to six bytes each, and their array).
func APIBodyLimit(maxBody, maxStored int64) int64 {
	if maxBody <= 0 {
		maxBody = httpapi.DefaultMaxBodyBytes
	}
	if maxStored <= 0 {
		maxStored = DefaultMaxStoredBytes
	}
	return maxBody + 6*maxStored + 1024
}

// Stats are the Store's figures as the handler knows them.
type Stats struct {
	// Messages and Bytes are what is stored now.
	Messages int   `json:"messages"`
	Bytes    int64 `json:"bytes"`
	// Writes counts the Store writes since the object started; Rows and
	// BytesWritten are the rows the storage reported written and the
	// message bytes handed to it, in total.
	Writes       int64 `json:"writes"`
	Rows         int64 `json:"rowsWritten"`
	BytesWritten int64 `json:"bytesWritten"`
	// Loads counts the times the stored messages were read whole.
	Loads int64 `json:"loads"`
	// Runs are the figures of the continued runs' event logs: how many
	// are kept, and the most events and bytes one holds.
	Runs runStats `json:"runLogs"`
	// Events are the figures of the conversation's event log: the
	// watchers connected now, the events and bytes kept, the last id.
	Events feedStats `json:"events"`
	// Queued are Config.Queued's figures, when it is set.
	Queued *queuedStats `json:"queued,omitempty"`
}

// queuedStats are what the host has not taken yet of the answers in
// flight.
type queuedStats struct {
	Messages int   `json:"messages"`
	Bytes    int64 `json:"bytes"`
}

// Handler is the object's http.Handler. Create it with New.
type Handler struct {
	api       *httpapi.Handler
	rt        *core.Runtime
	store     Store
	maxBody   int64
	maxStored int64
	before    func(*http.Request) error
	test      bool
	queued    func() (int, int64)

	// turn is the conversation's lock: held for a whole turn, and for a
	// DELETE.
	turn chan struct{}

	maxRunEvents int
	maxRunBytes  int64

	// feed is the conversation's event log, which watchers follow.
	feed *feed

	mu     sync.Mutex
	loaded bool // count and size below are read from the Store
	count  int
	size   int64
	stats  Stats
	// runs are the continued runs' logs by run id; runOrder their ids,
	// oldest first.
	runs     map[string]*runLog
	runOrder []string
}

// New returns the handler for cfg. It panics if cfg.API, cfg.Runtime or
// cfg.Store is nil, a programming error.
func New(cfg Config) *Handler {
	if cfg.API == nil || cfg.Runtime == nil || cfg.Store == nil {
		panic("durable: Config.API, Runtime and Store must be set")
	}
	h := &Handler{api: cfg.API, rt: cfg.Runtime, store: cfg.Store, maxBody: cfg.MaxBodyBytes, maxStored: cfg.MaxStoredBytes,
		before: cfg.BeforeWrite, test: cfg.TestRoutes, queued: cfg.Queued, turn: make(chan struct{}, 1),
		maxRunEvents: cfg.MaxRunEvents, maxRunBytes: cfg.MaxRunEventBytes, runs: map[string]*runLog{}}
	if h.maxRunEvents <= 0 {
		h.maxRunEvents = DefaultMaxRunEvents
	}
	if h.maxRunBytes <= 0 {
		h.maxRunBytes = DefaultMaxRunEventBytes
	}
	if cfg.MaxSessionEvents <= 0 {
		cfg.MaxSessionEvents = DefaultMaxSessionEvents
	}
	if cfg.MaxSessionEventBytes <= 0 {
		cfg.MaxSessionEventBytes = DefaultMaxSessionEventBytes
	}
	h.feed = newFeed(cfg.MaxSessionEvents, cfg.MaxSessionEventBytes)
	if h.maxBody <= 0 {
		h.maxBody = httpapi.DefaultMaxBodyBytes
	}
	if h.maxStored <= 0 {
		h.maxStored = DefaultMaxStoredBytes
	}
	cfg.API.OnCommit(h.commitHook)
	cfg.API.OnKeep(h.keepHook)
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, tail, ok := httpapi.SessionRoute(r.URL.EscapedPath())
	if !ok || !h.api.Authorized(r) {
		h.api.ServeHTTP(w, r)
		return
	}
	switch {
	case tail == "runs" && r.Method == http.MethodPost:
		h.run(w, r, id)
	case tail == "" && r.Method == http.MethodDelete:
		h.remove(w, r, id)
	case tail == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		h.get(w, r, id)
	case tail == "events" && r.Method == http.MethodGet:
		h.watch(w, r, id)
	case tail == "_test/storage" && h.test && r.Method == http.MethodGet:
		h.mu.Lock()
		_ = h.loadStat()
		s := h.stats
		s.Messages, s.Bytes = h.count, h.size
		s.Runs = h.runFigures()
		h.mu.Unlock()
		s.Events = h.feed.figures()
		if h.queued != nil {
			var q queuedStats
			q.Messages, q.Bytes = h.queued()
			s.Queued = &q
		}
		writeJSON(w, http.StatusOK, s)
	case strings.HasPrefix(tail, "runs/") && h.runRoute(w, r, tail[len("runs/"):]):
	default:
		h.api.ServeHTTP(w, r)
	}
}

// lock takes the conversation's lock, waiting unless reject is set;
// false when it is busy and reject is set, or the client left, or the
// continued run l (nil for another request) was stopped while it waited.
// A run l that takes the lock is running from then on.
func (h *Handler) lock(r *http.Request, reject bool, l *runLog) (bool, *core.Error) {
	select {
	case h.turn <- struct{}{}:
		return h.begin(l)
	default:
	}
	if reject {
		return false, core.NewError(core.CodeSessionBusy, "the session is running another run")
	}
	var stop chan struct{}
	if l != nil {
		stop = l.stop
	}
	select {
	case h.turn <- struct{}{}:
		return h.begin(l)
	case <-r.Context().Done():
		return false, core.NewError(core.CodeCancelled, "the client went away")
	case <-stop:
		return false, stoppedQueued()
	}
}

// begin marks the continued run l (when not nil) running, once the lock
// is taken; a run stopped meanwhile gives the lock back and does not run.
func (h *Handler) begin(l *runLog) (bool, *core.Error) {
	if l == nil || l.begin() {
		return true, nil
	}
	h.unlock()
	return false, stoppedQueued()
}

func (h *Handler) unlock() { <-h.turn }

// loadStat reads the Store's count and size once. Call with mu held.
func (h *Handler) loadStat() error {
	if h.loaded {
		return nil
	}
	n, size, err := h.store.Stat()
	if err != nil {
		return err
	}
	h.count, h.size, h.loaded = n, size, true
	return nil
}

// runProbe is what the handler reads of a run's body.
type runProbe struct {
	Input   string          `json:"input"`
	History json.RawMessage `json:"history"`
	RunID   json.RawMessage `json:"runId"`
	Policy  *struct {
		OnBusy       string          `json:"onBusy"`
		OnDisconnect json.RawMessage `json:"onDisconnect"`
	} `json:"policy"`
}

// minTurnBytes is the least a turn adds to the stored bytes besides its
// input: an empty user message and an empty reply, as the API writes
// them.
const minTurnBytes = int64(len(`{"role":"user","content":""}`) + len(`{"role":"assistant","content":""}`))

// isObject reports whether body starts as a JSON object.
func isObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

func (h *Handler) run(w http.ResponseWriter, r *http.Request, id string) {
	if r.ContentLength > h.maxBody {
		w.Header().Set("Connection", "close")
		writeError(w, h.tooLarge())
		return
	}
	var body []byte
	var err error
	if r.Body != nil {
		body, err = io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
	}
	if err != nil {
		writeError(w, core.NewError(core.CodeInvalidArgument, "the body could not be read"))
		return
	}
	if int64(len(body)) > h.maxBody {
		w.Header().Set("Connection", "close")
		writeError(w, h.tooLarge())
		return
	}
	var probe runProbe
	if !isObject(body) || json.Unmarshal(body, &probe) != nil {
		// The API refuses it with its own message, changing nothing,
		// whether or not the object holds the session.
		h.api.ServeHTTP(w, withBody(r, body))
		return
	}
	cont, runID := false, ""
	if probe.Policy != nil && len(probe.Policy.OnDisconnect) > 0 && string(probe.Policy.OnDisconnect) != "null" {
		var cerr *core.Error
		if cont, runID, body, cerr = continuedBody(body, probe.Policy.OnDisconnect, probe.RunID, httpapi.WantsStream(r)); cerr != nil {
			writeError(w, cerr)
			return
		}
	}
	reject := probe.Policy != nil && probe.Policy.OnBusy == string(core.BusyReject)
	var l *runLog // a continued run's log, from the moment it is accepted
	if cont {
		var cerr *core.Error
		if l, cerr = h.startLog(runID); cerr != nil {
			writeError(w, cerr)
			return
		}
	}
	if ok, cerr := h.lock(r, reject, l); !ok {
		if l != nil {
			h.notRun(l, id, cerr)
		}
		writeError(w, cerr)
		return
	}
	defer h.unlock()
	// Every run is streamed by the API, so that its events reach the
	// conversation's watchers; a plain run's client gets its answer as
	// JSON (see eventStream). A refusal passes through as plain JSON,
	// and is kept in the log of a continued run as its end.
	stream := httpapi.WantsStream(r)
	sw := &eventStream{w: w, log: l, session: id, feed: h.feed, plainOut: !stream}
	defer sw.finish(h)
	w = sw

	h.mu.Lock()
	err = h.loadStat()
	count, size := h.count, h.size
	h.mu.Unlock()
	if err != nil {
		writeError(w, storageError("read", err))
		return
	}
	withHistory := len(probe.History) > 0 && string(probe.History) != "null"
	live := h.live(id)
	// stored is true when the turn starts from the stored conversation:
	// a request without history, or one whose history a session holding
	// the stored messages would not take (see storedWins). What a
	// request does to the conversation must not depend on whether the
	// object held the session in memory.
	stored := !withHistory
	var history []byte // the stored messages, when storedWins read them
	if withHistory && count > 0 {
		if stored, history, err = h.storedWins(body, live); err != nil {
			writeError(w, storageError("read", err))
			return
		}
	}
	if least := size + int64(len(probe.Input)) + minTurnBytes; stored && least > h.maxStored {
		// No turn fits: refused before the model is called.
		writeError(w, h.full(least))
		return
	}
	injected := false
	if stored && !live && count > 0 {
		if body, err = h.seedBody(body, history, withHistory || string(probe.History) == "null"); err != nil {
			writeError(w, storageError("read", err))
			return
		}
		injected = true
	}
	t := &turnState{h: h, r: r, id: id, count: count, injected: injected}
	req := withBody(r, body)
	if !stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	ctx := r.Context()
	if injected {
		// The history is the stored conversation: its pending calls were
		// made here (docs/adr/0023-approval-trust.md).
		ctx = httpapi.TrustHistory(ctx)
	}
	if cont {
		// The run does not see its client leave (ADR 0020).
		ctx = context.WithoutCancel(ctx)
		w.Header().Set(ContinuesHeader, "1")
		w.Header().Set(RunIDHeader, runID)
	}
	h.api.ServeHTTP(w, req.WithContext(context.WithValue(ctx, turnKey{}, t)))
}

// live reports whether the runtime holds the session id, without
// copying its messages.
func (h *Handler) live(id string) bool {
	for _, s := range h.rt.ListSessions() {
		if s == id {
			return true
		}
	}
	return false
}

func (h *Handler) remove(w http.ResponseWriter, r *http.Request, id string) {
	if ok, cerr := h.lock(r, false, nil); !ok {
		writeError(w, cerr)
		return
	}
	defer h.unlock()
	rec := newRecorder()
	h.api.ServeHTTP(rec, r)
	if rec.status == http.StatusNoContent {
		if err := h.store.Clear(); err != nil {
			h.mu.Lock()
			h.loaded = false
			h.mu.Unlock()
			writeError(w, storageError("delete", err))
			return
		}
		h.mu.Lock()
		h.loaded, h.count, h.size = true, 0, 0
		h.dropFinished()
		h.mu.Unlock()
		h.feed.publishDeleted(id)
	}
	rec.copyTo(w)
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request, id string) {
	if h.live(id) {
		h.api.ServeHTTP(w, r)
		return
	}
	h.mu.Lock()
	err := h.loadStat()
	count := h.count
	h.mu.Unlock()
	if err != nil {
		writeError(w, storageError("read", err))
		return
	}
	if count == 0 {
		h.api.ServeHTTP(w, r)
		return
	}
	msgs, err := h.load()
	if err != nil {
		writeError(w, storageError("read", err))
		return
	}
	sb, derr := httpapi.DecodeRunBody(append(append([]byte(`{"input":"","history":`), msgs...), '}'))
	if derr != nil {
		writeError(w, storageError("read", errors.New(derr.Message)))
		return
	}
	// The head of the stored conversation, as the API answers it for a
	// live session: in the body and as the ETag.
	head := core.HistoryHead(sb.History)
	w.Header().Set("ETag", `"`+head+`"`)
	writeJSON(w, http.StatusOK, struct {
		ID           string          `json:"id"`
		MessageCount int             `json:"messageCount"`
		Head         string          `json:"head"`
		Messages     json.RawMessage `json:"messages"`
	}{id, count, head, msgs})
}

func (h *Handler) tooLarge() *core.Error {
	return core.NewError(core.CodeLimitExceeded, "the body is larger than "+strconv.FormatInt(h.maxBody, 10)+" bytes")
}

func (h *Handler) full(size int64) *core.Error {
	return core.NewError(core.CodeLimitExceeded, "the conversation would store "+strconv.FormatInt(size, 10)+
		" bytes, the limit is "+strconv.FormatInt(h.maxStored, 10)+" (AGENTRT_MAX_STORED_BYTES); delete it or start another")
}

func storageError(op string, err error) *core.Error {
	return core.NewError(core.CodeInternal, "the conversation's storage failed to "+op+" ("+err.Error()+"); the turn was not kept")
}

func withBody(r *http.Request, body []byte) *http.Request {
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	return r2
}
