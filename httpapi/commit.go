package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/agentrt/agentrt/core"
)

// This file holds what a handler that wraps the API (the worker's
// Durable Object, package durable) uses of it, so that a run's request
// and answer shapes are written once, here: the hook that stores a
// completed turn before its answer leaves, and the API's writers.

// CommitFunc is called with a completed run's Result before the API
// answers it: before the plain answer is written, before a stream's
// run.completed event. r is the run's request. An error it returns is
// the answer instead: a plain run answers it with its status, a stream
// ends with a run.failed event carrying it. It runs on the goroutine
// serving r.
type CommitFunc func(r *http.Request, res *core.Result) *core.Error

// OnCommit sets the hook called with every completed or paused
// (awaiting_approval) run's Result (nil removes it). Call it before the handler serves a request.
func (h *Handler) OnCommit(f CommitFunc) { h.commit = f }

// KeepFunc is called with the error of a run that failed or was
// cancelled after a resume ran a call a person approved: the messages
// the run keeps in its session (core.Error.Appended, see
// docs/adr/0019-tool-approvals.md, "Amendment: nothing paid twice"),
// before the API answers the failure, also when the client left. An
// error it returns is the answer instead. It runs on the goroutine
// serving r.
type KeepFunc func(r *http.Request, e *core.Error) *core.Error

// OnKeep sets the hook called with every failed run's error that keeps
// messages (nil removes it). Call it before the handler serves a request.
func (h *Handler) OnKeep(f KeepFunc) { h.keep = f }

// kept runs the keep hook on a failed run's err when it keeps messages,
// and returns the error to answer: err, or the hook's.
func (h *Handler) kept(r *http.Request, err error) error {
	e := core.AsError(err)
	if h.keep == nil || e == nil || len(e.Appended) == 0 {
		return err
	}
	if kerr := h.keep(r, e); kerr != nil {
		return kerr
	}
	return err
}

// ended waits for a run its client left and cancelled, then runs the
// keep hook on its failure: the client is gone, the store still learns.
func (h *Handler) ended(r *http.Request, run *core.Run) {
	if _, err := run.Wait(context.Background()); err != nil {
		_ = h.kept(r, err)
	}
}

// committed runs the commit hook on res, if one is set.
func (h *Handler) committed(r *http.Request, res *core.Result) *core.Error {
	if h.commit == nil {
		return nil
	}
	return h.commit(r, res)
}

// MessageJSON returns m as the API writes it in a session or a Result.
func MessageJSON(m *core.Message) []byte {
	b, _ := json.Marshal(toWireMessage(m))
	return b
}

// WriteError answers {"error": {"code", "message", "index"?}} with
// status, or with StatusOf(e.Code) when status is 0.
func WriteError(w http.ResponseWriter, status int, e *core.Error) {
	if status == 0 {
		status = StatusOf(e.Code)
	}
	writeJSON(w, status, wireErrorBody{Error: *toWireError(e)})
}

// WriteJSON answers v as JSON with status, as every JSON answer of the
// API is written (its Content-Type, Content-Length and Cache-Control).
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// WriteSession answers GET /v1/sessions/{id} for a session whose count
// messages are given as one JSON array of messages as MessageJSON writes
// them (what a store of the conversation keeps).
func WriteSession(w http.ResponseWriter, id string, count int, messages json.RawMessage) {
	writeJSON(w, http.StatusOK, struct {
		ID           string          `json:"id"`
		MessageCount int             `json:"messageCount"`
		Messages     json.RawMessage `json:"messages"`
	}{id, count, messages})
}
