package durable

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// This file holds what a run request stores: the conversation as the
// request found it and the messages its turn appends, written by the
// API's commit hook once the turn completed, before its answer leaves.

// turnState is one run request's view of the conversation.
type turnState struct {
	h        *Handler
	r        *http.Request
	id       string
	count    int  // stored messages when the turn began
	injected bool // the run was seeded from the Store
}

// turnKey is the context key of a run request's turnState.
type turnKey struct{}

// commitHook is the API's commit hook (httpapi.CommitFunc): it stores
// the turn of a run request that run started, before the API answers it.
func (h *Handler) commitHook(r *http.Request, res *core.Result) *core.Error {
	t, _ := r.Context().Value(turnKey{}).(*turnState)
	if t == nil || t.h != h {
		return nil
	}
	return t.commit(res)
}

// keepHook is the API's keep hook (httpapi.KeepFunc): it stores what a
// failed run keeps in its session (the results of calls a person
// approved, docs/adr/0019-tool-approvals.md, "Amendment: nothing paid
// twice") before the API answers the failure, or after its client left.
func (h *Handler) keepHook(r *http.Request, _ *core.Error) *core.Error {
	t, _ := r.Context().Value(turnKey{}).(*turnState)
	if t == nil || t.h != h {
		return nil
	}
	// The live session holds what the run kept: the stored copy is
	// brought in line with it.
	from, msgs, cut, err := t.diverged()
	if err != nil {
		h.rt.DeleteSession(t.id)
		return storageError("read", err)
	}
	return t.write(from, msgs, cut)
}

// commit writes the turn whose Result is res, or drops the live session
// and returns the error the client gets instead of the Result.
func (t *turnState) commit(res *core.Result) *core.Error {
	h := t.h
	from, msgs := t.count, messagesJSON(res.Appended)
	var cut int64 // the stored bytes the write removes
	mode := res.Seed.Mode
	// The session was the stored copy when the turn began (a warm session,
	// or one seeded from the Store): the turn's messages follow it.
	follows := mode == core.SeedNone || mode == core.SeedNoop || (mode == core.SeedCold && t.injected)
	if !follows || from+len(msgs) != res.MessageCount {
		// The host's history changed the session: bring the stored copy in
		// line from the first message that differs.
		var err error
		if from, msgs, cut, err = t.diverged(); err != nil {
			h.rt.DeleteSession(t.id)
			return storageError("read", err)
		}
	}
	return t.write(from, msgs, cut)
}

// write stores msgs from stored message from on, cut the stored bytes
// they replace, or drops the live session and returns the error the
// client gets instead.
func (t *turnState) write(from int, msgs [][]byte, cut int64) *core.Error {
	h := t.h
	h.mu.Lock()
	size := h.size
	h.mu.Unlock()
	var add int64
	for _, m := range msgs {
		add += int64(len(m))
	}
	next := size - cut + add
	if next > h.maxStored {
		h.rt.DeleteSession(t.id)
		return h.full(next)
	}
	if h.before != nil {
		if err := h.before(t.r); err != nil {
			h.rt.DeleteSession(t.id)
			return storageError("write", err)
		}
	}
	rows, err := h.store.Write(from, msgs)
	if err != nil {
		h.rt.DeleteSession(t.id)
		// What is stored is unknown now: read it again next time.
		h.mu.Lock()
		h.loaded = false
		h.mu.Unlock()
		return storageError("write", err)
	}
	h.mu.Lock()
	h.count, h.size = from+len(msgs), next
	h.stats.Writes++
	h.stats.Rows += rows
	h.stats.BytesWritten += add
	h.mu.Unlock()
	return nil
}

// diverged compares the live session with the Store and returns where
// they part and the session's messages from there on.
// The third result is the size of the stored messages from there on.
func (t *turnState) diverged() (int, [][]byte, int64, error) {
	s, ok := t.h.rt.Session(t.id)
	if !ok {
		return 0, nil, 0, errors.New("the session could not be read")
	}
	a, err := t.h.load()
	if err != nil {
		return 0, nil, 0, err
	}
	var stored []json.RawMessage
	if err := json.Unmarshal(a, &stored); err != nil {
		return 0, nil, 0, errors.New("the stored messages could not be read")
	}
	msgs := messagesJSON(s.Messages)
	k := 0
	for k < len(stored) && k < len(msgs) && bytes.Equal(stored[k], msgs[k]) {
		k++
	}
	var cut int64
	for _, m := range stored[k:] {
		cut += int64(len(m))
	}
	return k, msgs[k:], cut, nil
}

// messagesJSON returns ms as the API writes them, which is how the Store
// keeps them.
func messagesJSON(ms []core.Message) [][]byte {
	out := make([][]byte, len(ms))
	for i := range ms {
		out[i] = httpapi.MessageJSON(&ms[i])
	}
	return out
}
