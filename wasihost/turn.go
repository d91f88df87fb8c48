package wasihost

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// turn is one Run in progress. Its run method owns the turn's lifetime:
// whatever way the host leaves the turn, the turn has ended in the module
// (done, failed, or stopped by this host) when run returns.
type turn struct {
	rt  *Runtime
	ctx context.Context
	req *core.RunRequest
	// hist is the mirror built from the turn's history, until a model
	// action adopts it.
	hist   []core.Message
	handle uint64
	// msgs are the messages of the current model action.
	msgs []core.Message
	// deadline is when the policy's timeout expires (zero: none); armed
	// once the turn holds its session.
	deadline time.Time

	// evMu serialises OnEvent: a model may stream deltas from a goroutine
	// of its own. closed is set once run returns: later deltas are dropped.
	evMu   sync.Mutex
	closed bool
	// abandoned: the host gave up following the turn and only ends it;
	// its model actions no longer touch the mirrors.
	abandoned bool
	// context is the window of the last model.context event, for the
	// result (the done action's result does not carry it).
	context *core.ContextReport
}

// errStopped is what a model or tool call ends with when the turn is
// stopped (the run's context is done, or its timeout passed) before the
// call returned.
var errStopped = errors.New("wasihost: the turn was stopped")

// run begins the turn with begin and drives it to its end.
func (t *turn) run(b *wire.Begin) (res *core.Result, err error) {
	defer t.close()
	a, err := t.rt.begin(b, t)
	if err != nil {
		return nil, err // refused, or the instance is dead: no turn began
	}
	for {
		t.deliver(a)
		switch a.Kind {
		case wire.ActDone:
			t.rt.wake()
			return a.Result, nil
		case wire.ActFailed:
			t.rt.wake()
			return nil, a.Err
		}
		if a.Kind != wire.ActWait {
			t.arm()
		}
		if a, err = t.step(a); err != nil {
			return nil, t.abandon(err)
		}
	}
}

// step does what action a asks and returns the turn's next action.
func (t *turn) step(a *wire.Action) (*wire.Action, error) {
	switch a.Kind {
	case wire.ActWait:
		return t.wait()
	case wire.ActModel:
		reply, err := t.call(func(ctx context.Context) (any, error) { return t.model(ctx, a) })
		if err == errStopped {
			return t.stop()
		}
		r := wire.ModelReply{Handle: t.handle}
		switch m, _ := reply.(*core.ModelReply); {
		case err != nil:
			r.Failed, r.Error = true, errText(err)
		case m == nil:
			r.Failed, r.Error = true, "the model returned no reply"
		default:
			r.Reply = *m
		}
		return t.rt.feed(t, wire.AppendModelReply(nil, &r))
	case wire.ActTool:
		out, err := t.call(func(ctx context.Context) (any, error) { return t.tool(ctx, a) })
		if err == errStopped {
			return t.stop()
		}
		r := wire.ToolResult{Handle: t.handle}
		if err != nil {
			r.Failed, r.Text = true, errText(err)
		} else {
			r.Text, _ = out.(string)
		}
		return t.rt.feed(t, wire.AppendToolResult(nil, &r))
	case wire.ActApprove:
		return t.approve(a)
	case wire.ActPending:
		return t.rt.next(t, false)
	case wire.ActCount:
		return t.count(a)
	}
	return nil, errProtocol("unknown action " + strconv.Itoa(int(a.Kind)))
}

// wait waits for a run to end (its session may be free), for the run's
// context, or a moment (a run of another host path may have freed it),
// and asks again.
func (t *turn) wait() (*wire.Action, error) {
	wake := t.rt.endedChan()
	select {
	case <-wake:
	case <-t.ctx.Done():
		return t.stop()
	case <-time.After(50 * time.Millisecond):
	}
	return t.rt.next(t, false)
}

// arm starts the policy's timeout, once the turn holds its session.
func (t *turn) arm() {
	if t.deadline.IsZero() && t.req.Policy.TimeoutMs > 0 {
		t.deadline = time.Now().Add(time.Duration(t.req.Policy.TimeoutMs) * time.Millisecond)
	}
}

// stop ends the turn in the module because the host stops waiting for
// it: with a timeout when the policy's timeout passed, cancelled when the
// run's context is done. It returns the turn's next action, its end.
func (t *turn) stop() (*wire.Action, error) {
	if !t.deadline.IsZero() && !time.Now().Before(t.deadline) {
		return t.rt.next(t, true)
	}
	if _, err := t.rt.cancel(t.req.RunID); err != nil {
		return nil, err
	}
	return t.rt.next(t, false)
}

// abandon ends the turn in the module after the host failed to follow
// it (err): it cancels the run, then answers whatever the module still
// asks with a failure, or expires the turn, until the turn ends. It
// returns err.
func (t *turn) abandon(err error) error {
	if errors.Is(err, ErrDead) || t.rt.closed.Load() {
		t.rt.wake()
		return err // the module holds the turn no more
	}
	t.abandoned = true
	cancelled, _ := t.rt.cancel(t.req.RunID)
	a, ferr := t.rt.next(t, !cancelled)
	for i := 0; ferr == nil && a.Kind != wire.ActDone && a.Kind != wire.ActFailed && i < 8; i++ {
		switch a.Kind {
		case wire.ActModel:
			a, ferr = t.rt.feed(t, wire.AppendModelReply(nil, &wire.ModelReply{Handle: t.handle, Failed: true, Error: err.Error()}))
		case wire.ActTool:
			a, ferr = t.rt.feed(t, wire.AppendToolResult(nil, &wire.ToolResult{Handle: t.handle, Failed: true, Text: err.Error()}))
		default:
			a, ferr = t.rt.next(t, true)
		}
	}
	t.rt.wake()
	return err
}

// call runs f, the turn's model or tool call, bounded by the run's
// context and the policy's timeout: when either ends first, call returns
// errStopped at once and f's result, whenever it comes, is dropped. A
// call that returns once either has ended (as one that returns ctx.Err()
// does) is stopped too, whatever it returned, as in core: the run ends
// cancelled or timed out, not with the call's error. A panic in f is an
// error.
func (t *turn) call(f func(ctx context.Context) (any, error)) (any, error) {
	ctx, cancel := t.ctx, context.CancelFunc(func() {})
	if !t.deadline.IsZero() {
		ctx, cancel = context.WithDeadline(t.ctx, t.deadline)
	}
	defer cancel()
	if ctx.Done() == nil {
		return protect(ctx, f) // nothing can stop it: no goroutine
	}
	type outcome struct {
		v   any
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		v, err := protect(ctx, f)
		done <- outcome{v, err}
	}()
	select {
	case o := <-done:
		if ctx.Err() != nil {
			return nil, errStopped
		}
		return o.v, o.err
	case <-ctx.Done():
		return nil, errStopped
	}
}

// protect calls f, turning a panic into an error.
func protect(ctx context.Context, f func(ctx context.Context) (any, error)) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, errors.New("panic: "+panicText(p))
		}
	}()
	return f(ctx)
}

func panicText(p any) string {
	switch p := p.(type) {
	case error:
		return p.Error()
	case string:
		return p
	}
	return "a value that is not an error"
}

// errText is the text a failure reaches the module as: a *core.Error's
// message, or the error's text (a typed nil *core.Error has one too).
func errText(err error) string {
	var e *core.Error
	if errors.As(err, &e) && e != nil {
		return e.Message
	}
	return err.Error()
}

// model calls the model for a model action.
func (t *turn) model(ctx context.Context, a *wire.Action) (*core.ModelReply, error) {
	rt := t.rt
	if rt.cfg.Model == nil {
		return nil, errors.New("the module asked the host for a model call, but the host has no model")
	}
	req := &core.ModelRequest{
		RunID: t.req.RunID, SessionID: t.req.SessionID, System: rt.cfg.SystemPrompt, Messages: t.msgs,
		Offset: a.Start, Generation: a.Generation, Tools: rt.allowed(&t.req.Policy), Step: a.Step,
		Delta: func(text string) {
			if text != "" && ctx.Err() == nil {
				t.rt.delta(t, text)
			}
		},
	}
	return rt.cfg.Model.Complete(ctx, req)
}

// tool runs the tool of a tool action.
func (t *turn) tool(ctx context.Context, a *wire.Action) (string, error) {
	tool := t.rt.tools[a.Call.Name]
	if tool == nil {
		return "", errors.New("the host has no tool " + strconv.Quote(a.Call.Name))
	}
	return tool.Call(ctx, core.ToolInvocation{RunID: t.req.RunID, SessionID: t.req.SessionID,
		ToolCallID: a.Call.ID, Name: a.Call.Name, Arguments: a.Call.Arguments})
}

// deliver hands the action's events to OnEvent with the run's ids,
// unless the run has returned. It keeps the window of model.context
// events for the done action's result.
func (t *turn) deliver(a *wire.Action) {
	for i := range a.Events {
		if ev := &a.Events[i]; ev.Type == core.EventModelContext && ev.Context != nil {
			c := *ev.Context
			t.context = &c
		}
	}
	if a.Kind == wire.ActDone && a.Result != nil && t.context != nil {
		a.Result.Context = t.context
	}
	if t.req.OnEvent == nil || len(a.Events) == 0 {
		return
	}
	t.evMu.Lock()
	defer t.evMu.Unlock()
	if t.closed {
		return
	}
	for i := range a.Events {
		ev := a.Events[i]
		ev.RunID, ev.SessionID = t.req.RunID, t.req.SessionID
		if ev.Type == core.EventRunCompleted || ev.Type == core.EventRunAwaitingApproval {
			ev.Result = a.Result
		}
		t.req.OnEvent(ev)
	}
}

// close marks the run returned.
func (t *turn) close() {
	t.evMu.Lock()
	t.closed = true
	t.evMu.Unlock()
}
