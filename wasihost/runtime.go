package wasihost

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/packed"
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
}

// Runtime is one runtime inside an Instance: live sessions, seeded from
// the host's history, driven turn by turn over the wire. It is safe for
// concurrent use; runs on one session are ordered as core orders them.
type Runtime struct {
	in    *Instance
	num   int32
	cfg   Config
	tools map[string]*core.Tool
	specs []core.ToolSpec

	mu         sync.Mutex
	mirrors    map[string]*mirror // the sessions' messages as sent to the model
	maxMirrors int
	// ended is closed, and replaced, whenever a turn ends: a turn told to
	// wait for its session asks again then.
	ended   chan struct{}
	nextRun atomic.Uint64
}

// mirror is the host's copy of a session's messages, of one generation.
type mirror struct {
	gen  uint64
	msgs []core.Message
}

// errProtocol is a frame the host cannot follow: a bug of the module or
// the host, never of the caller's input.
func errProtocol(msg string) *core.Error {
	return core.NewError(core.CodeInternal, "wasihost: "+msg)
}

// Run runs one turn to its end and returns its result, as
// core.Runtime.Execute does: req is validated, seeded and run by the
// module; model calls go to Config.Model and tool calls to Config.Tools
// in the calling goroutine. A refused request or a failed run returns a
// *core.Error with its stable code.
//
// ctx cancels the run (code cancelled) and bounds the model and tool
// calls; req.Policy.TimeoutMs is enforced here, with agentrt_next(expire).
//
// # Notes
//
//   - An empty req.RunID is replaced by an id of the form "wasi-N", so
//     that events, the model and the tools see the run's id.
//   - A model error reaches the module as text: the run fails with code
//     model_error whatever the error's code.
func (rt *Runtime) Run(ctx context.Context, req core.RunRequest) (*core.Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if req.RunID == "" {
		req.RunID = "wasi-" + strconv.FormatUint(rt.nextRun.Add(1), 10)
	}
	hostModel := rt.cfg.Model != nil
	b := wire.Begin{SessionID: req.SessionID, Input: req.Input, RunID: req.RunID, WithHistory: req.WithHistory,
		Inspect: req.Inspect, Events: req.OnEvent != nil, Policy: req.Policy}
	var hist []core.Message
	if req.WithHistory {
		b.Packed = packed.Encode(req.History)
		if hostModel {
			b.HistoryMirror = true
			hist = make([]core.Message, 0, len(req.History))
			for i := range req.History {
				if req.History[i].Role != core.RoleSystem {
					hist = append(hist, req.History[i].Message())
				}
			}
		}
	}
	if hostModel {
		rt.mu.Lock()
		if m := rt.mirrors[req.SessionID]; m != nil {
			b.MirrorGen, b.MirrorLen = m.gen, len(m.msgs)
		}
		rt.mu.Unlock()
	}
	t := &turn{rt: rt, ctx: ctx, req: &req, hist: hist}
	return t.run(wire.AppendBegin(nil, &b))
}

// turn is one Run in progress.
type turn struct {
	rt     *Runtime
	ctx    context.Context
	req    *core.RunRequest
	hist   []core.Message
	handle uint64
	// deadline is when the policy's timeout expires (zero: none); armed
	// once the turn holds its session.
	deadline time.Time
	timer    *time.Timer
}

func (t *turn) run(begin []byte) (*core.Result, error) {
	rt := t.rt
	defer func() {
		if t.timer != nil {
			t.timer.Stop()
		}
	}()
	wake := rt.endedChan()
	out, err := rt.exchange(expBegin, begin)
	for {
		if err != nil {
			return nil, err
		}
		if e := refused(out); e != nil {
			return nil, e
		}
		a, derr := wire.DecodeAction(out)
		if derr != nil {
			return nil, errProtocol("unreadable action frame: " + derr.Error())
		}
		t.handle = a.Handle
		t.deliver(a)
		if a.Kind != wire.ActWait && t.deadline.IsZero() && t.req.Policy.TimeoutMs > 0 {
			d := time.Duration(t.req.Policy.TimeoutMs) * time.Millisecond
			t.deadline = time.Now().Add(d)
			t.timer = time.NewTimer(d)
		}
		switch a.Kind {
		case wire.ActDone:
			rt.turnEnded()
			return a.Result, nil
		case wire.ActFailed:
			rt.turnEnded()
			return nil, a.Err
		case wire.ActWait:
			var expired <-chan time.Time
			if t.timer != nil {
				expired = t.timer.C
			}
			select {
			case <-wake:
			case <-t.ctx.Done():
			case <-expired:
			case <-time.After(50 * time.Millisecond): // a session freed by a run of another host path
			}
			wake = rt.endedChan()
			out, err = t.stopOr(func() ([]byte, error) { return rt.next(t.handle, false) })
		case wire.ActModel:
			frame, ferr := t.model(a)
			if ferr != nil {
				return nil, ferr
			}
			wake = rt.endedChan()
			out, err = t.stopOr(func() ([]byte, error) { return rt.exchange(expFeed, frame) })
		case wire.ActTool:
			frame := t.tool(a)
			wake = rt.endedChan()
			out, err = t.stopOr(func() ([]byte, error) { return rt.exchange(expFeed, frame) })
		default: // ActPending: nothing is out; ask again.
			out, err = rt.next(t.handle, false)
		}
	}
}

// stopOr makes the module stop the turn when the policy's timeout has
// passed (agentrt_next with expire) or ctx is done (agentrt_cancel), and otherwise
// calls feed.
func (t *turn) stopOr(feed func() ([]byte, error)) ([]byte, error) {
	rt := t.rt
	if !t.deadline.IsZero() && !time.Now().Before(t.deadline) {
		return rt.next(t.handle, true)
	}
	if t.ctx.Err() != nil {
		if _, err := rt.cancel(t.req.RunID); err != nil {
			return nil, err
		}
		return rt.next(t.handle, false)
	}
	return feed()
}

// callCtx is the context of a model or tool call: ctx, bounded by the
// policy's timeout.
func (t *turn) callCtx() (context.Context, context.CancelFunc) {
	if t.deadline.IsZero() {
		return t.ctx, func() {}
	}
	return context.WithDeadline(t.ctx, t.deadline)
}

// deliver hands the action's events to OnEvent with the run's ids.
func (t *turn) deliver(a *wire.Action) {
	if t.req.OnEvent == nil {
		return
	}
	for i := range a.Events {
		ev := a.Events[i]
		ev.RunID, ev.SessionID = t.req.RunID, t.req.SessionID
		if ev.Type == core.EventRunCompleted {
			ev.Result = a.Result
		}
		t.req.OnEvent(ev)
	}
}

// model calls the model for a model action and returns the model-reply
// frame.
func (t *turn) model(a *wire.Action) ([]byte, error) {
	rt := t.rt
	if rt.cfg.Model == nil {
		return nil, errProtocol("the module asked the host for a model call, but the host has no model")
	}
	msgs, err := rt.window(t.req.SessionID, a, t.hist)
	if err != nil {
		return nil, err
	}
	t.hist = nil
	var closed atomic.Bool
	handle := a.Handle
	req := &core.ModelRequest{
		RunID: t.req.RunID, SessionID: t.req.SessionID, System: rt.cfg.SystemPrompt, Messages: msgs,
		Offset: a.Start, Generation: a.Generation, Tools: rt.allowed(&t.req.Policy), Step: a.Step,
		Delta: func(text string) {
			if text == "" || closed.Load() {
				return
			}
			out, err := rt.exchange(expFeed, wire.AppendDelta(nil, &wire.Delta{Handle: handle, Text: text}))
			if err != nil || refused(out) != nil {
				return
			}
			if p, err := wire.DecodeAction(out); err == nil {
				t.deliver(p)
			}
		},
	}
	ctx, cancel := t.callCtx()
	reply, merr := complete(ctx, rt.cfg.Model, req)
	cancel()
	closed.Store(true)
	r := wire.ModelReply{Handle: handle}
	switch {
	case merr != nil:
		r.Failed, r.Error = true, merr.Error()
		if e := asCoreError(merr); e != nil {
			r.Error = e.Message
		}
	case reply == nil:
		r.Failed, r.Error = true, "the model returned no reply"
	default:
		r.Reply = *reply
	}
	return wire.AppendModelReply(nil, &r), nil
}

// tool runs the tool of a tool action and returns the tool-result frame.
func (t *turn) tool(a *wire.Action) []byte {
	r := wire.ToolResult{Handle: a.Handle}
	tool := t.rt.tools[a.Call.Name]
	if tool == nil {
		r.Failed, r.Text = true, "the host has no tool "+strconv.Quote(a.Call.Name)
		return wire.AppendToolResult(nil, &r)
	}
	ctx, cancel := t.callCtx()
	out, err := callTool(ctx, tool, core.ToolInvocation{RunID: t.req.RunID, SessionID: t.req.SessionID,
		ToolCallID: a.Call.ID, Name: a.Call.Name, Arguments: a.Call.Arguments})
	cancel()
	if err != nil {
		r.Failed, r.Text = true, err.Error()
		if e := asCoreError(err); e != nil {
			r.Text = e.Message
		}
	} else {
		r.Text = out
	}
	return wire.AppendToolResult(nil, &r)
}

func asCoreError(err error) *core.Error {
	var e *core.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// complete calls the model, turning a panic into an error.
func complete(ctx context.Context, m core.Model, req *core.ModelRequest) (reply *core.ModelReply, err error) {
	defer func() {
		if recover() != nil {
			reply, err = nil, errors.New("the model panicked")
		}
	}()
	return m.Complete(ctx, req)
}

// callTool calls a tool, turning a panic into an error.
func callTool(ctx context.Context, t *core.Tool, inv core.ToolInvocation) (out string, err error) {
	defer func() {
		if recover() != nil {
			out, err = "", errors.New("the tool panicked")
		}
	}()
	return t.Call(ctx, inv)
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

// window applies a model action to the session's mirror (docs/wire.md,
// "Mirrors") and returns the messages the model is sent.
func (rt *Runtime) window(sid string, a *wire.Action, hist []core.Message) ([]core.Message, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	m := rt.mirrors[sid]
	if a.Adopt {
		if hist == nil {
			hist = []core.Message{}
		}
		m = &mirror{gen: a.Generation, msgs: hist}
	}
	if m == nil || m.gen != a.Generation || len(m.msgs) < a.From {
		if a.From > a.Start {
			return nil, errProtocol("a model action extends a mirror the host does not hold")
		}
		if a.From > 0 {
			// The window alone: the session is gone from the module.
			delete(rt.mirrors, sid)
			return a.Tail[a.Start-a.From:], nil
		}
		m = &mirror{gen: a.Generation}
	}
	if a.From < len(m.msgs) {
		m.msgs = append(m.msgs[:a.From:a.From], a.Tail...)
	} else {
		m.msgs = append(m.msgs, a.Tail...)
	}
	rt.mirrors[sid] = m
	return m.msgs[a.Start:a.End], nil
}

// endedChan returns the channel closed when a turn next ends.
func (rt *Runtime) endedChan() <-chan struct{} {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.ended
}

// turnEnded wakes the turns waiting for their session, and drops the
// mirrors of sessions the module evicted once there are more mirrors
// than the module keeps sessions.
func (rt *Runtime) turnEnded() {
	rt.mu.Lock()
	close(rt.ended)
	rt.ended = make(chan struct{})
	prune := len(rt.mirrors) > rt.maxMirrors
	rt.mu.Unlock()
	if !prune {
		return
	}
	ids, err := rt.ListSessions()
	if err != nil {
		return
	}
	live := make(map[string]bool, len(ids))
	for _, id := range ids {
		live[id] = true
	}
	rt.mu.Lock()
	for id := range rt.mirrors {
		if !live[id] {
			delete(rt.mirrors, id)
		}
	}
	rt.mu.Unlock()
}

// exchange sends frame to export name of this runtime and returns the
// output frame.
func (rt *Runtime) exchange(name string, frame []byte) ([]byte, error) {
	rt.in.mu.Lock()
	defer rt.in.mu.Unlock()
	out, _, err := rt.in.exchange(name, rt.num, frame)
	return out, err
}

// next calls agentrt_next for handle; expire first stops the turn with
// a timeout.
func (rt *Runtime) next(handle uint64, expire bool) ([]byte, error) {
	var e uint64
	if expire {
		e = 1
	}
	return rt.query(expNext, uint64(uint32(handle)), e)
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

// cancel calls agentrt_cancel for runID.
func (rt *Runtime) cancel(runID string) (bool, error) {
	_, n, err := func() ([]byte, int32, error) {
		rt.in.mu.Lock()
		defer rt.in.mu.Unlock()
		return rt.in.exchange(expCancel, rt.num, []byte(runID))
	}()
	return n == 1, err
}

// CancelRun cancels the active run with runID and reports whether this
// call did. Its Run returns a *core.Error with code cancelled.
func (rt *Runtime) CancelRun(runID string) (bool, error) {
	ok, err := rt.cancel(runID)
	if ok {
		rt.turnEnded()
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
	gen, msgs, derr := wire.DecodeSession(out)
	if derr != nil {
		return core.Session{}, false, errProtocol("unreadable session frame: " + derr.Error())
	}
	return core.Session{ID: id, Messages: msgs, Generation: gen}, true, nil
}

// DeleteSession removes the session with id and reports whether there
// was one.
func (rt *Runtime) DeleteSession(id string) (bool, error) {
	rt.mu.Lock()
	delete(rt.mirrors, id)
	rt.mu.Unlock()
	_, n, err := func() ([]byte, int32, error) {
		rt.in.mu.Lock()
		defer rt.in.mu.Unlock()
		return rt.in.exchange(expDelete, rt.num, []byte(id))
	}()
	return n == 1, err
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

// Close closes the runtime in the module: its sessions are gone. The
// instance stays open.
func (rt *Runtime) Close() error {
	rt.in.mu.Lock()
	defer rt.in.mu.Unlock()
	_, err := rt.in.call(expClose, uint64(uint32(rt.num)))
	return err
}
