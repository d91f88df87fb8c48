package durable

// This file holds the conversation's live events: every event of every
// run on the conversation, whichever client started it, numbered in one
// sequence of the object and kept in a bounded log, which
// GET /v1/sessions/{id}/events streams to any number of watchers.

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// The bounds of the conversation's event log: when either is passed the
// oldest events are dropped, and a watcher that asks for events before
// the oldest kept is sent a run.gap event first. Config.MaxSessionEvents
// and Config.MaxSessionEventBytes override them.
const (
	DefaultMaxSessionEvents     = 1024
	DefaultMaxSessionEventBytes = 1 << 20
)

// feed is the conversation's event log. Its ids start after a base taken
// from the clock when the object's instance starts (milliseconds × 1000),
// so that ids keep increasing across an eviction or a restart, which
// loses the log: an id a watcher kept from an earlier instance is below
// every id of this one, and it gets run.gap for what it missed.
type feed struct {
	maxEvents int
	maxBytes  int64

	mu       sync.Mutex
	base     int64       // the id before this instance's first event
	events   []keptEvent // oldest first
	last     int64       // the id of the last event added (base when none)
	bytes    int64
	watchers int           // watchers connected now
	wake     chan struct{} // closed and replaced on every event
}

func newFeed(maxEvents int, maxBytes int64) *feed {
	base := time.Now().UnixMilli() * 1000
	return &feed{maxEvents: maxEvents, maxBytes: maxBytes, base: base, last: base, wake: make(chan struct{})}
}

// publish adds ev (a whole event, "event: ...\ndata: ...\n\n") under
// the next id. An event larger than the log's bytes on its own is given
// its id but not kept (a watcher then gets run.gap in its place), except
// a final one, kept without its result, as a run's log does.
func (f *feed) publish(ev []byte) {
	if int64(len(ev)) > f.maxBytes {
		if finalStatus(ev) == "" {
			ev = nil
		} else {
			ev = omitResult(ev)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last++
	if ev != nil {
		f.events = append(f.events, keptEvent{f.last, ev})
		f.bytes += int64(len(ev))
		for len(f.events) > 1 && (len(f.events) > f.maxEvents || f.bytes > f.maxBytes) {
			f.bytes -= int64(len(f.events[0].data))
			f.events[0] = keptEvent{}
			f.events = f.events[1:]
		}
	}
	close(f.wake)
	f.wake = make(chan struct{})
}

// feedStats are the figures of the conversation's event log, for the
// test route.
type feedStats struct {
	Watchers int   `json:"watchers"`
	Events   int   `json:"events"`
	Bytes    int64 `json:"bytes"`
	LastID   int64 `json:"lastEventId"`
}

func (f *feed) figures() feedStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return feedStats{Watchers: f.watchers, Events: len(f.events), Bytes: f.bytes, LastID: f.last}
}

// watch serves GET /v1/sessions/{id}/events: the conversation's events
// after Last-Event-ID (or ?after=N; none means only what happens from
// now on), then every new one as it happens, until the client leaves.
// An id that is not a non-negative integer, or is past the last event,
// is refused invalid_argument. A conversation nothing has run on yet is
// watched the same way: its first run's events come when it runs.
func (h *Handler) watch(w http.ResponseWriter, r *http.Request, id string) {
	f := h.feed
	f.mu.Lock()
	after, last := f.last, f.last
	f.mu.Unlock()
	n, given, cerr := resumeFrom(r)
	if cerr != nil {
		writeError(w, cerr)
		return
	}
	if given {
		if n > last {
			writeError(w, core.NewError(core.CodeInvalidArgument, "Last-Event-ID (or after) "+strconv.FormatInt(n, 10)+
				" is past the conversation's last event ("+strconv.FormatInt(last, 10)+")"))
			return
		}
		after = n
	}
	f.mu.Lock()
	f.watchers++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.watchers--
		f.mu.Unlock()
	}()
	flusher := httpapi.StartEventStream(w)
	ctx := r.Context()
	gap := func(buf []byte, from, to int64) []byte { return appendSessionGap(buf, id, from, to) }
	var buf []byte
	for {
		f.mu.Lock()
		var more bool
		buf, after, more = appendAfter(buf[:0], f.events, after, gap)
		if !more && after < f.last {
			// The events up to the last were not kept (trimmed, too
			// large, or sent by an earlier instance).
			buf = gap(buf, after+1, f.last)
			after = f.last
		}
		wake := f.wake
		f.mu.Unlock()
		if !sendBatch(ctx, w, flusher, buf) {
			return
		}
		if !more && !waitWake(ctx, wake) {
			return
		}
	}
}

func waitWake(ctx context.Context, wake <-chan struct{}) bool {
	select {
	case <-wake:
		return true
	case <-ctx.Done():
		return false
	}
}

// EventSessionDeleted is the type of the event the conversation's
// watchers get when a DELETE of it succeeds: {type, sessionId}. The
// stream goes on: a run after it starts the conversation afresh, and a
// client that keeps a copy reloads it (an empty one).
const EventSessionDeleted = "session.deleted"

// publishDeleted adds the session.deleted event of the conversation id
// to the log.
func (f *feed) publishDeleted(id string) {
	data, _ := json.Marshal(map[string]string{"type": EventSessionDeleted, "sessionId": id})
	f.publish([]byte("event: " + EventSessionDeleted + "\ndata: " + string(data) + "\n\n"))
}

// appendSessionGap appends the run.gap event of the conversation's ids
// from..to, with id to: {type, sessionId, from, to}.
func appendSessionGap(buf []byte, session string, from, to int64) []byte {
	gap, _ := json.Marshal(map[string]any{"type": EventRunGap, "sessionId": session, "from": from, "to": to})
	return appendEvent(buf, to, []byte("event: "+EventRunGap+"\ndata: "+string(gap)+"\n\n"))
}
