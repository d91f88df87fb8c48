package wasihost

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// Config configures a Runtime. The zero Config is a runtime whose model
// is the module's built-in echo model, with no tools and the default
// limits.
type Config struct {
	SystemPrompt string
	// Model answers model calls in Go; nil means the module's built-in
	// echo model, which answers inside the module (no crossing).
	Model core.Model
	// Tools the model may call. Their specs go to the module; their Call
	// runs in Go when the module asks for it.
	Tools  []core.Tool
	Limits core.Limits
	// CountTokens counts a message's tokens for Policy.MaxContextTokens,
	// as core.Config.CountTokens does; nil means the module's
	// core.EstimateTokens. The module asks for the counts its caches lack
	// (a count action) and this host calls CountTokens for each (see
	// count.go).
	CountTokens core.TokenCounter
}

// Runtime is one runtime inside an Instance: live sessions, seeded from
// the host's history, driven turn by turn over the wire. It is safe for
// concurrent use; runs on one session are ordered as core orders them.
//
// The module owns every session, its runs and its rules; the Runtime
// keeps only what the wire asks a host to keep: a mirror of each
// session's messages, so that a model call sends only what is new.
type Runtime struct {
	in    *Instance
	num   int32
	cfg   Config
	tools map[string]*core.Tool
	specs []core.ToolSpec
	// maxSessions is the module's MaxSessions: more mirrors than that
	// means the module evicted sessions, whose mirrors then go.
	maxSessions int

	// mirrors are guarded by in.mu (see type mirrors).
	mirrors mirrors
	// closed is set by Close: the module forgets the runtime and refuses
	// the frames of its turns, which then end cancelled.
	closed atomic.Bool

	wakeMu sync.Mutex
	// ended is closed, and replaced, whenever a turn ends: a turn told to
	// wait for its session asks again then.
	ended   chan struct{}
	nextRun atomic.Uint64
}

// errClosed ends the turns that were in progress when their Runtime was
// closed, as core.Runtime.Close cancels its runs.
var errClosed = core.NewError(core.CodeCancelled, "wasihost: the runtime was closed")

// errProtocol is a frame the host cannot follow: a bug of the module or
// the host, never of the caller's input.
func errProtocol(msg string) *core.Error {
	return core.NewError(core.CodeInternal, "wasihost: "+msg)
}

// Run runs one turn to its end and returns its result, as
// core.Runtime.Execute does: req is validated, seeded and run by the
// module; model calls go to Config.Model and tool calls to Config.Tools.
// A refused request or a failed run returns a *core.Error with its stable
// code; whatever happens, the turn has ended in the module (rolled back
// when it failed) and its session is free when Run returns.
//
// ctx cancels the run (code cancelled) and bounds the model and tool
// calls; req.Policy.TimeoutMs is enforced here, with agentrt_next(expire).
//
// # Notes
//
//   - An empty req.RunID is replaced by an id of the form "wasi-N", so
//     that events, the model and the tools see the run's id.
//   - A model or tool error reaches the module as text: the run fails
//     with code model_error whatever the error's code, and a tool's
//     error is the tool's result, as in core. A panic is such an error.
//     A call that returns once ctx or the timeout has ended (with
//     ctx.Err(), say) ends the run cancelled or timed out, as in core.
//   - Under req.Policy.MaxContextTokens the module counts tokens with
//     Config.CountTokens, called here when the module asks, or with
//     core.EstimateTokens when there is none.
//   - When ctx or the timeout ends a model or tool call first, Run
//     returns at once; the call goes on in its goroutine and its result
//     is dropped. A call that ignores ctx thus outlives its run.
func (rt *Runtime) Run(ctx context.Context, req core.RunRequest) (*core.Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if req.RunID == "" {
		req.RunID = "wasi-" + strconv.FormatUint(rt.nextRun.Add(1), 10)
	}
	// Under a token budget the module's model.context events carry the
	// window, for Result.Context: the turn asks for events then.
	b := wire.Begin{SessionID: req.SessionID, Input: req.Input, RunID: req.RunID, WithHistory: req.WithHistory,
		Inspect: req.Inspect, Events: req.OnEvent != nil || req.Policy.MaxContextTokens != 0, Policy: req.Policy,
		Approvals: req.Approvals, IfHead: req.IfHead, WantHead: true}
	t := &turn{rt: rt, ctx: ctx, req: &req}
	if req.WithHistory {
		b.Packed = wire.EncodeHistory(req.History)
		if rt.cfg.Model != nil {
			b.HistoryMirror = true
			t.hist = make([]core.Message, 0, len(req.History))
			for i := range req.History {
				if req.History[i].Role != core.RoleSystem {
					t.hist = append(t.hist, req.History[i].Message())
				}
			}
		}
	}
	res, err := t.run(&b)
	rt.in.yield()
	if err == nil && res.Seed.Repairs != nil && req.WithHistory {
		// The host's copy heals (docs/adr/0016-the-host-copy-heals.md):
		// the repairs are deterministic, so the module's are the ones
		// core finds here.
		res.Seed.Repaired = core.RepairedHistory(req.History)
	}
	return res, err
}

// begin sends t's begin frame, with the mirror the host holds for its
// session, and returns the turn's first action.
func (rt *Runtime) begin(b *wire.Begin, t *turn) (*wire.Action, error) {
	rt.in.mu.Lock()
	defer rt.in.mu.Unlock()
	if rt.cfg.Model != nil {
		b.MirrorGen, b.MirrorLen = rt.mirrors.claim(b.SessionID)
	}
	out, _, err := rt.in.exchange(expBegin, rt.num, wire.AppendBegin(nil, b))
	if err != nil {
		return nil, err
	}
	if e := refused(out); e != nil {
		return nil, e
	}
	return rt.action(t, out)
}

// feed sends an answer of t's (a model reply, a tool result) and
// returns the turn's next action.
func (rt *Runtime) feed(t *turn, frame []byte) (*wire.Action, error) {
	rt.in.mu.Lock()
	defer rt.in.mu.Unlock()
	out, _, err := rt.in.exchange(expFeed, rt.num, frame)
	if err != nil {
		return nil, err
	}
	return rt.action(t, out)
}

// next asks for t's next action (agentrt_next); expire first stops the
// turn with a timeout.
func (rt *Runtime) next(t *turn, expire bool) (*wire.Action, error) {
	var e uint64
	if expire {
		e = 1
	}
	rt.in.mu.Lock()
	defer rt.in.mu.Unlock()
	n, err := rt.in.call(expNext, uint64(uint32(rt.num)), uint64(uint32(t.handle)), e)
	if err != nil {
		return nil, err
	}
	out, err := rt.in.output(n)
	if err != nil {
		return nil, err
	}
	return rt.action(t, out)
}

// action decodes an action frame of t and, for a model action, applies
// it to the session's mirror. A turn of a closed runtime ends cancelled
// here, whatever the frame (Close cleared the mirrors a model action
// would extend). The caller holds in.mu.
func (rt *Runtime) action(t *turn, out []byte) (*wire.Action, error) {
	if rt.closed.Load() {
		return nil, errClosed
	}
	if e := refused(out); e != nil {
		return nil, errProtocol("the module refused a frame of a live turn: " + e.Error())
	}
	a, err := wire.DecodeAction(out)
	if err != nil {
		return nil, errProtocol("unreadable action frame: " + err.Error())
	}
	t.handle = a.Handle
	rt.droppedLocked(a)
	if a.Kind == wire.ActModel && !t.abandoned {
		if t.msgs, err = rt.mirrors.apply(t.req.SessionID, a, t.hist); err != nil {
			return nil, err
		}
		t.hist = nil
	}
	if a.Kind == wire.ActDone || a.Kind == wire.ActFailed {
		rt.pruneLocked()
	}
	return a, nil
}

// delta streams a model's delta for t; its events go to OnEvent.
func (rt *Runtime) delta(t *turn, text string) {
	rt.in.mu.Lock()
	out, _, err := rt.in.exchange(expFeed, rt.num, wire.AppendDelta(nil, &wire.Delta{Handle: t.handle, Text: text}))
	rt.in.mu.Unlock()
	if err != nil || refused(out) != nil {
		return
	}
	if a, err := wire.DecodeAction(out); err == nil {
		t.deliver(a)
	}
}

// droppedLocked drops the mirrors of the sessions an action frame
// reports dropped (evicted by MaxSessions or the MaxTotalBytes budget, or
// deleted), before the frame's model action touches a mirror: so the
// mirrors follow the module's store and the host holds no more than its
// budget. When the module dropped more sessions than it logged, the
// mirrors of every session it no longer holds go. The caller holds in.mu.
func (rt *Runtime) droppedLocked(a *wire.Action) {
	if a.DroppedAll {
		rt.keepLiveLocked()
		return
	}
	for _, id := range a.Dropped {
		delete(rt.mirrors, id)
	}
}

// pruneLocked drops the mirrors of the sessions the module evicted, once
// there are more mirrors than it keeps sessions. The caller holds in.mu.
func (rt *Runtime) pruneLocked() {
	if len(rt.mirrors) <= rt.maxSessions {
		return
	}
	rt.keepLiveLocked()
}

// keepLiveLocked drops the mirrors of the sessions the module does not
// hold. The caller holds in.mu.
func (rt *Runtime) keepLiveLocked() {
	n, err := rt.in.call(expSessions, uint64(uint32(rt.num)))
	if err != nil {
		return
	}
	out, err := rt.in.output(n)
	if err != nil || refused(out) != nil {
		return
	}
	if ids, err := wire.DecodeSessions(out); err == nil {
		rt.mirrors.keep(ids)
	}
}

// allowed returns the specs of the tools p allows.
func (rt *Runtime) allowed(p *core.Policy) []core.ToolSpec {
	if p.AllowedTools == nil {
		return rt.specs
	}
	var specs []core.ToolSpec
	for _, s := range rt.specs {
		for _, name := range p.AllowedTools {
			if s.Name == name {
				specs = append(specs, s)
				break
			}
		}
	}
	return specs
}

// endedChan returns the channel closed when a turn next ends.
func (rt *Runtime) endedChan() <-chan struct{} {
	rt.wakeMu.Lock()
	defer rt.wakeMu.Unlock()
	return rt.ended
}

// wake wakes the turns waiting for their session: a turn ended.
func (rt *Runtime) wake() {
	rt.wakeMu.Lock()
	close(rt.ended)
	rt.ended = make(chan struct{})
	rt.wakeMu.Unlock()
}

// exchange sends frame to export name of this runtime and returns the
// output frame.
func (rt *Runtime) exchange(name string, frame []byte, args ...uint64) ([]byte, error) {
	rt.in.mu.Lock()
	defer rt.in.mu.Unlock()
	out, _, err := rt.in.exchange(name, rt.num, frame, args...)
	return out, err
}

// query calls export name of this runtime with args and returns its
// output frame.
func (rt *Runtime) query(name string, args ...uint64) ([]byte, error) {
	rt.in.mu.Lock()
	defer rt.in.mu.Unlock()
	n, err := rt.in.call(name, append([]uint64{uint64(uint32(rt.num))}, args...)...)
	if err != nil {
		return nil, err
	}
	return rt.in.output(n)
}

// cancel runs the module's cancelRun for runID.
func (rt *Runtime) cancel(runID string) (bool, error) {
	v, err := rt.op("cancelRun", wire.Text(runID))
	return v.Kind == wire.ValueTrue, err
}

// CancelRun cancels the active run with runID and reports whether this
// call did. Its Run returns a *core.Error with code cancelled.
func (rt *Runtime) CancelRun(runID string) (bool, error) {
	ok, err := rt.cancel(runID)
	if ok {
		rt.wake()
	}
	return ok, err
}

// Session returns a snapshot of the session with id, or false when there
// is none.
func (rt *Runtime) Session(id string) (core.Session, bool, error) {
	out, err := rt.exchange(expSession, []byte(id))
	if err != nil {
		return core.Session{}, false, err
	}
	if e := refused(out); e != nil {
		if core.ErrorCode(e) == core.CodeInvalidArgument {
			return core.Session{}, false, nil
		}
		return core.Session{}, false, e
	}
	gen, msgs, head, derr := wire.DecodeSessionHead(out)
	if derr != nil {
		return core.Session{}, false, errProtocol("unreadable session frame: " + derr.Error())
	}
	return core.Session{ID: id, Messages: msgs, Generation: gen, Head: head}, true, nil
}

// DeleteSession removes the session with id and reports whether there
// was one. Its mirror goes with it.
func (rt *Runtime) DeleteSession(id string) (bool, error) {
	rt.in.mu.Lock()
	defer rt.in.mu.Unlock()
	v, err := rt.opLocked("deleteSession", wire.Text(id))
	if v.Kind == wire.ValueTrue {
		delete(rt.mirrors, id)
	}
	return v.Kind == wire.ValueTrue, err
}

// ListSessions returns the ids of the live sessions, sorted.
func (rt *Runtime) ListSessions() ([]string, error) {
	out, err := rt.query(expSessions)
	if err != nil {
		return nil, err
	}
	if e := refused(out); e != nil {
		return nil, e
	}
	return wire.DecodeSessions(out)
}

// Stats returns the runtime's counters and the module's heap in use;
// gc collects garbage first, so that HeapAlloc counts live objects only.
func (rt *Runtime) Stats(gc bool) (*wire.Stats, error) {
	var g uint64
	if gc {
		g = 1
	}
	out, err := rt.query(expStats, g)
	if err != nil {
		return nil, err
	}
	if e := refused(out); e != nil {
		return nil, e
	}
	return wire.DecodeStats(out)
}

// Close closes the runtime in the module: its sessions are gone, and
// their mirrors. The instance stays open. A Run in progress returns a
// *core.Error with code cancelled at its next exchange with the module
// (a model or tool call that is out is not interrupted); later Runs are
// refused.
func (rt *Runtime) Close() error {
	rt.in.mu.Lock()
	defer rt.in.mu.Unlock()
	rt.closed.Store(true)
	clear(rt.mirrors)
	_, err := rt.in.call(expClose, uint64(uint32(rt.num)))
	return err
}
