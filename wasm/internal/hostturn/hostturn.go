// Package hostturn is the turn driver of the wire: it drives host-driven
// turns (core.Turn) over wire frames, and it is what the module's
// //go:wasmexport functions call. A host begins a turn with a begin
// frame and gets an action frame back (call the model, call a tool,
// wait, done, failed, with the events emitted meanwhile); it answers
// with a model-reply or tool-result frame and gets the next action
// frame; and so on until the turn ends. See docs/wire.md.
//
//	x := hostturn.New(rt, nil, wire.ReadPolicyJSON) // the host answers model calls
//	out := x.Begin(frame)         // an action or refused frame
//	out = x.FeedModel(replyFrame) // the next action frame
//
// The same turns have typed calls (Start, Model, Tool, Step, Hold; see
// typed.go) for a host in Go: the module's syscall/js API is an adapter
// over them, so the module has one driver of a turn.
//
// The package has no syscall/js and starts no goroutine: every call
// returns once the turn needs its host again, so it runs inside a wasm
// export. It keeps track of the host's mirror of each turn's session so
// that a model action carries only the messages the mirror lacks.
//
// # Notes
//
//   - The frame a method returns is valid until the next call on the
//     same Driver: the buffer is reused.
//   - Not safe for concurrent use: a wasm module's exports are called
//     one at a time.
package hostturn

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// Driver is the turn driver of the wire: it drives the turns of one
// core.Runtime for its host, through frames (Begin, Feed, Next, Commit)
// or typed calls (Start, Model, Tool, Step).
type Driver struct {
	rt *core.Runtime
	// native answers model calls in the module (the built-in echo model);
	// nil means the host answers them.
	native core.Model

	// turns holds the turns that have not ended, in slots that ended
	// turns leave for later ones.
	turns []*hostTurn
	live  int
	// closed: Close was called.
	closed bool
	// handles numbers turns: a handle names one turn, never a later one
	// that took its slot or its state, so that a late answer for a dead
	// turn is refused instead of driving another. A uint32, as the
	// exports take it: it wraps after 2^32 turns, with no turn left out
	// from so long before.
	handles uint32
	// spare is the hostTurn of the last turn that ended, for the next
	// one: a turn after a turn allocates none.
	spare *hostTurn
	out   []byte
	// dropped holds the ids of the sessions the store dropped, for the
	// frame being written: every action and committed frame reports them
	// (wire.Action.Dropped), so that the host drops its mirrors.
	dropped []string
	// hist is the last history decoded, for a host that passes the same
	// history again.
	hist wire.HistoryCache
	// readPolicy reads a begin frame's policy as JSON text (New).
	readPolicy wire.PolicyReader
}

// hostTurn is one turn and what its host knows.
type hostTurn struct {
	handle uint64
	slot   int
	turn   *core.Turn
	// events, when the host asked for them, are those emitted since the
	// last frame.
	wantEvents bool
	events     []core.Event
	// seed is the seeding outcome, once known.
	seed   core.SeedReport
	seeded bool
	// historyMirror: the host built a mirror from the turn's history.
	historyMirror bool
	// mirrorGen and mirrorLen are the host's mirror of the session.
	mirrorGen uint64
	mirrorLen int
	// emit is onEvent as a func value, made once per hostTurn.
	emit func(core.Event)
	// wantHead: the host asked for the session's head in the frame that
	// ends the turn.
	wantHead bool
}

func (ht *hostTurn) onEvent(ev core.Event) {
	if ev.Type == core.EventSessionSeeded && ev.Seed != nil {
		ht.seed, ht.seeded = *ev.Seed, true
	}
	if ht.wantEvents {
		ht.events = append(ht.events, ev)
	}
}

// New returns a Driver over rt. native, when not nil, answers every
// model call inside the module (pass core.Echo{} for the built-in echo
// model); nil hands model calls to the host. readPolicy reads a begin
// frame's policy as JSON text: wire.ReadPolicyJSON, or in the GOOS=js
// module its syscall/js API's reader (package wire calls no JavaScript);
// nil refuses such a policy.
func New(rt *core.Runtime, native core.Model, readPolicy wire.PolicyReader) *Driver {
	return &Driver{rt: rt, native: native, readPolicy: readPolicy}
}

func (x *Driver) refuse(err error) []byte {
	x.out = wire.AppendRefused(x.out[:0], core.AsError(err))
	return x.out
}

func unknownTurn(h uint64) error {
	return core.NewError(core.CodeInvalidArgument, "no turn has handle "+itoa(h))
}

// Begin decodes a begin frame and begins its turn. It returns the turn's
// first action frame, or a refused frame when the frame or the run is
// refused (then nothing changed).
func (x *Driver) Begin(frame []byte) []byte {
	var b wire.Begin
	if err := wire.DecodeBeginInto(&b, frame, x.rt.Limits().MaxSeedMessages, &x.hist, x.readPolicy); err != nil {
		return x.refuse(err)
	}
	ht := x.hostTurn()
	*ht = hostTurn{wantEvents: b.Events, wantHead: b.WantHead, historyMirror: b.HistoryMirror, mirrorGen: b.MirrorGen, mirrorLen: b.MirrorLen,
		events: ht.events[:0], emit: ht.emit}
	req := core.RunRequest{
		SessionID: b.SessionID, Input: b.Input, Policy: b.Policy, RunID: b.RunID, Inspect: b.Inspect,
		WithHistory: b.WithHistory, History: b.History, Approvals: b.Approvals, IfHead: b.IfHead,
	}
	if b.Events || b.WithHistory {
		// Without them, no event need be handed over: the seed report
		// matters only for a turn with history.
		req.OnEvent = ht.emit
	}
	tn, a, err := x.begin(ht, req)
	if err != nil {
		return x.refuse(err)
	}
	return x.frame(ht, tn, a)
}

// hostTurn returns the spare hostTurn, or a new one.
func (x *Driver) hostTurn() *hostTurn {
	ht := x.spare
	if ht == nil {
		ht = &hostTurn{}
		ht.emit = ht.onEvent
	}
	return ht
}

// begin begins req's turn in ht, gives it a slot and a handle, and
// returns its core turn and first action (see step). A refused run
// leaves ht spare and changes nothing.
func (x *Driver) begin(ht *hostTurn, req core.RunRequest) (*core.Turn, core.Action, error) {
	tn, err := x.rt.Begin(core.Background(), req)
	if err != nil {
		// A refused run emits nothing: ht stays spare.
		x.spare = ht
		return nil, core.Action{}, err
	}
	x.spare = nil
	slot := 0
	for slot < len(x.turns) && x.turns[slot] != nil {
		slot++
	}
	if slot == len(x.turns) {
		x.turns = append(x.turns, nil)
	}
	x.turns[slot] = ht
	x.live++
	x.handles++
	ht.handle, ht.slot, ht.turn = uint64(x.handles), slot, tn
	return tn, x.step(ht, tn.Next()), nil
}

// Feed decodes a host frame that answers a turn (a model reply, a tool
// result, an approval, a delta or counts) and hands it to its turn. It
// returns the turn's next action frame (after a delta: a pending frame
// with the events it emitted), or a refused frame for a malformed frame
// or an unknown handle.
//
// A limits query frame (wire.KindLimits) is answered with the limits in
// force (wire.AppendLimits).
func (x *Driver) Feed(frame []byte) []byte {
	if wire.IsLimitsQuery(frame) {
		l := x.rt.Limits()
		x.out = wire.AppendLimits(x.out[:0], &l)
		return x.out
	}
	var a wire.Answer
	if err := wire.DecodeAnswerInto(&a, frame); err != nil {
		return x.refuse(err)
	}
	ht := x.turn(a.Handle)
	if ht == nil {
		return x.refuse(unknownTurn(a.Handle))
	}
	tn := ht.turn
	var act core.Action
	var fail error
	switch {
	case a.Oversize:
		// The host refused the answer before copying it here.
		fail = core.NewError(core.CodeLimitExceeded, a.Text)
	case a.Failed:
		fail = core.NewError(core.CodeModelError, a.Text)
	}
	switch a.Kind {
	case wire.KindDelta:
		tn.Delta(a.Text)
		act.Kind = actionPending
	case wire.KindCounts:
		if a.Failed {
			fail = core.NewError(a.Code, a.Text)
		}
		act = tn.FeedCounts(a.Counts, fail)
	case wire.KindApproval:
		act = feedApproval(tn, &a)
	case wire.KindToolResult:
		switch {
		case a.Oversize:
			act = tn.FeedToolOversize()
		case fail != nil:
			act = tn.FeedTool("", fail)
		default:
			act = tn.FeedTool(a.Text, nil)
		}
	default:
		if fail != nil {
			act = tn.FeedModel(nil, fail)
		} else {
			act = tn.FeedModel(&a.Reply, nil)
		}
	}
	return x.frame(ht, tn, x.step(ht, act))
}

// Commit decodes a commit frame, a turn the host has run already on its
// mirror of the session, and stores it (core.Runtime.Commit). It returns
// a committed frame (stale when the session is not the host's mirror:
// then nothing changed), or a refused frame when the frame or the turn
// is refused (nothing changed either).
func (x *Driver) Commit(frame []byte) []byte {
	var c core.Commit
	if err := wire.DecodeCommitInto(&c, frame); err != nil {
		return x.refuse(err)
	}
	n, stale, err := x.rt.Commit(&c)
	if err != nil {
		return x.refuse(err)
	}
	var all bool
	x.dropped, all = x.rt.TakeDropped(x.dropped)
	x.out = wire.AppendCommitted(x.out[:0], &wire.Committed{Count: n, Stale: stale, Dropped: x.dropped, DroppedAll: all})
	return x.out
}

// actionPending is the core.Action kind frame encodes as wire.ActPending.
const actionPending core.ActionKind = -1

// Next returns the action frame of the turn with handle: after a wait,
// a cancel or an expiry. A call that is out is asked for again. With
// expire set, it first stops the turn with a timeout, as the policy's
// timeout does (the host keeps the timers).
func (x *Driver) Next(handle uint64, expire bool) []byte {
	ht := x.turn(handle)
	if ht == nil {
		return x.refuse(unknownTurn(handle))
	}
	tn := ht.turn
	return x.frame(ht, tn, x.step(ht, x.next(tn, expire)))
}

// next is the action of tn after a wait, a cancel or, with expire, a
// timeout it is stopped with first.
func (x *Driver) next(tn *core.Turn, expire bool) core.Action {
	if expire {
		tn.Expire()
	}
	return tn.Next()
}

// Cancel cancels the active run with runID (of this path or any other)
// and reports whether this call did. The turn's host learns it from its
// next frame.
func (x *Driver) Cancel(runID string) bool { return x.rt.CancelRun(runID) }

// Session returns a session frame of Snapshot(id), or a refused frame
// when there is no such session (code invalid_argument).
func (x *Driver) Session(id string) []byte {
	s, ok := x.Snapshot(id)
	if !ok {
		return x.refuse(core.NewError(core.CodeInvalidArgument, "no session "+id))
	}
	x.out = wire.AppendSession(x.out[:0], s.Generation, s.Messages, s.Head)
	return x.out
}

// Snapshot returns a copy of the session with id (core.Runtime.Session),
// and whether there is one.
func (x *Driver) Snapshot(id string) (core.Session, bool) { return x.rt.Session(id) }

// Delete removes the session with id and reports whether there was one.
func (x *Driver) Delete(id string) bool { return x.rt.DeleteSession(id) }

// Stats returns a stats frame of Counters(gc).
func (x *Driver) Stats(gc bool) []byte {
	s := x.Counters(gc)
	x.out = wire.AppendStats(x.out[:0], &s)
	return x.out
}

// SessionIDs returns the ids of the sessions, sorted
// (core.Runtime.ListSessions).
func (x *Driver) SessionIDs() []string { return x.rt.ListSessions() }

// Sessions returns a session-ids frame of SessionIDs.
func (x *Driver) Sessions() []byte {
	x.out = wire.AppendSessions(x.out[:0], x.SessionIDs())
	return x.out
}

// Turns returns the number of turns that have not ended.
func (x *Driver) Turns() int { return x.live }

// turn returns the turn with handle, or nil. Few turns are out at once:
// a scan is cheaper than a map.
func (x *Driver) turn(handle uint64) *hostTurn {
	for _, ht := range x.turns {
		if ht != nil && ht.handle == handle {
			return ht
		}
	}
	return nil
}

// forget drops an ended turn; its hostTurn serves the next one (an
// ended run emits no more events).
func (x *Driver) forget(ht *hostTurn) {
	x.turns[ht.slot] = nil
	x.live--
	ht.turn = nil
	x.spare = ht
}

// step answers the native model's calls of ht's turn, from its action
// a on, and returns the first action for the host; a turn that has ended
// is forgotten (its core turn is the caller's, to recycle or not). Every
// route of a turn through this Driver, frames and typed calls, takes
// its actions through step: the bookkeeping of turns is here alone.
func (x *Driver) step(ht *hostTurn, a core.Action) core.Action {
	for a.Kind == core.ActionModel && x.native != nil {
		reply, err := complete(x.native, a.Request)
		a = ht.turn.FeedModel(reply, err)
	}
	if a.Kind == core.ActionDone || a.Kind == core.ActionFailed {
		x.forget(ht)
	}
	return a
}

// frame encodes a, the action of ht's core turn tn (see step): events,
// and the model window against the host's mirror. An ended turn is
// recycled once its frame is written.
func (x *Driver) frame(ht *hostTurn, tn *core.Turn, a core.Action) []byte {
	wa := wire.Action{Handle: ht.handle, Events: ht.events}
	x.dropped, wa.DroppedAll = x.rt.TakeDropped(x.dropped)
	wa.Dropped = x.dropped
	ended := false
	switch a.Kind {
	case actionPending:
		wa.Kind = wire.ActPending
	case core.ActionWait:
		wa.Kind = wire.ActWait
	case core.ActionModel:
		wa.Kind = wire.ActModel
		x.window(ht, a.Request, &wa)
	case core.ActionTool:
		wa.Kind, wa.Call = wire.ActTool, *a.Call
	case core.ActionCount:
		wa.Kind, wa.Count = wire.ActCount, a.Messages
	case core.ActionApproval:
		wa.Kind, wa.Call = wire.ActApprove, *a.Call
	case core.ActionDone:
		wa.Kind, wa.Result, ended = wire.ActDone, a.Result, true
		if ht.wantHead {
			wa.Head = a.Result.Head()
		}
	case core.ActionFailed:
		wa.Kind, wa.Err, ended = wire.ActFailed, a.Err, true
	}
	x.out = wire.AppendAction(x.out[:0], &wa)
	clear(ht.events)
	ht.events = ht.events[:0]
	if ended {
		// The frame holds all the host learns of the turn: its run may
		// serve the next one.
		tn.Recycle()
	}
	return x.out
}

// window sets the model action's window and the tail the host's mirror
// lacks, and counts the mirror as holding the whole window afterwards.
func (x *Driver) window(ht *hostTurn, req *core.ModelRequest, wa *wire.Action) {
	end := req.Offset + len(req.Messages)
	wa.Step, wa.Generation, wa.Start, wa.End = req.Step, req.Generation, req.Offset, end
	if ht.historyMirror && ht.seeded && (ht.seed.Mode == core.SeedCold || ht.seed.Mode == core.SeedReplaced) &&
		ht.seed.Seeded <= end && len(ht.seed.Repairs) == 0 {
		// Seeding made the session the history the host mirrored: its
		// non-system messages, as many as were seeded. A repaired
		// history is not the one the host mirrored.
		wa.Adopt = true
		ht.mirrorGen, ht.mirrorLen = req.Generation, ht.seed.Seeded
	}
	ht.historyMirror = false
	from := 0
	if ht.mirrorGen == req.Generation && ht.mirrorLen <= end {
		from = ht.mirrorLen
	}
	if from < req.Offset {
		// The mirror lacks messages before the window: send the window
		// alone, under generation 0 (no mirror), and start over.
		wa.Generation, wa.Adopt, from = 0, false, req.Offset
	}
	wa.From = from
	wa.Tail = req.Messages[from-req.Offset:]
	ht.mirrorGen, ht.mirrorLen = wa.Generation, end
}

// complete calls the native model, turning a panic into a model error.
func complete(m core.Model, req *core.ModelRequest) (reply *core.ModelReply, err error) {
	defer func() {
		if recover() != nil {
			reply, err = nil, core.NewError(core.CodeModelError, "the model panicked")
		}
	}()
	return m.Complete(core.Background(), req)
}

func itoa(n uint64) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
