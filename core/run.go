package core

// Run is a handle on one turn. Its methods are safe for concurrent use.
//
// A run waits for its session's lane (runs on one session go one at a
// time, in order), then seeds, appends the input, and runs the model and
// tool loop. A run that fails or is cancelled leaves the session as
// seeding left it.
type Run struct {
	rt   *Runtime
	req  RunRequest
	info historyInfo
	// seedMsgs is the validated history as session messages, and
	// repairs what Policy.Repair changed in it.
	seedMsgs []Message
	repairs  []Repair
	// healed and edits are the host's history with the repairs applied,
	// and the repairs as edits in host indexes (SeedReport).
	healed []SeedMessage
	edits  []HistoryEdit
	id     string
	lane   *lane
	// reserved is the part of the run's budget reservation not yet
	// stored or released, and inputCost what its input will take; both
	// are changed under the store's lock.
	reserved  int64
	inputCost int64

	ctx *runContext
	// ctxVal is what ctx points to: one allocation with the run.
	ctxVal runContext

	mu              mutex // guards the fields below
	cancelRequested bool
	finished        bool
	result          *Result
	err             *Error

	emitMu mutex // serialises events
	seq    int
	events []Event
	// handling: the host's event handler is running, under emitMu. In a
	// wasm module (oneThread) the events emitted meanwhile wait in
	// queued for the emit that runs it (see emit).
	handling bool
	queued   []Event

	// done is made when first asked for, under mu; closedChan when the
	// run finished before.
	done chan struct{}

	// turn is the run's Turn (Begin hands it out, execute drives it), box
	// its result and call its first model call: one allocation with the
	// run, reused with it (see Turn.Recycle).
	turn Turn
	box  resultBox
	call modelCall
}

var errCancelled = NewError(CodeCancelled, "run cancelled")

// ID returns the run's id.
func (r *Run) ID() string { return r.id }

// SessionID returns the id of the run's session.
func (r *Run) SessionID() string { return r.req.SessionID }

// Done is closed when the run has finished.
func (r *Run) Done() <-chan struct{} {
	r.mu.Lock()
	if r.done == nil {
		r.done = make(chan struct{})
	}
	d := r.done
	r.mu.Unlock()
	return d
}

// closeDone closes the channel Done returns, made or not yet.
func (r *Run) closeDone() {
	r.mu.Lock()
	if r.done == nil {
		r.done = closedChan
	} else {
		close(r.done)
	}
	r.mu.Unlock()
}

// Wait waits for the run to finish, or for ctx to be done, and returns its
// result or its *Error. Leaving Wait early does not cancel the run.
func (r *Run) Wait(ctx Context) (*Result, error) {
	select {
	case <-r.Done():
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return r.outcome()
}

// outcome returns the finished run's result or its *Error.
func (r *Run) outcome() (*Result, error) {
	r.mu.Lock()
	res, err := r.result, r.err
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Cancel cancels the run. It reports whether this call cancelled it:
// false when the run had finished or was already cancelled. A cancelled
// run ends with CodeCancelled and leaves the session as seeding left it
// (or untouched, if it was still waiting for its lane).
func (r *Run) Cancel() bool {
	r.mu.Lock()
	ok := !r.finished && !r.cancelRequested
	if ok {
		r.cancelRequested = true
		r.ctx.stop(errCancelled)
	}
	r.mu.Unlock()
	return ok
}

// Events returns a copy of the events emitted so far.
func (r *Run) Events() []Event {
	r.emitMu.Lock()
	evs := append([]Event(nil), r.events...)
	r.emitMu.Unlock()
	return evs
}

// emit numbers ev and hands it to the host. A panicking handler is
// ignored: the host's bug must not break the run.
func (r *Run) emit(ev Event) {
	if oneThread && r.handling {
		// On one thread, the run's handler is running: this is a call
		// from inside it (a JavaScript onEvent that calls the model's
		// delta), or a goroutine that ran while it was switched out.
		// Waiting for the lock would never end for the first: the emit
		// running the handler hands ev over once it returns.
		r.queued = append(r.queued, ev)
		return
	}
	r.emitMu.Lock()
	for {
		r.seq++
		ev.Seq = r.seq
		ev.RunID = r.id
		ev.SessionID = r.req.SessionID
		if r.events == nil {
			// Room for the events of a turn without tools, history
			// included.
			r.events = make([]Event, 0, 6)
		}
		r.events = append(r.events, ev)
		if r.req.OnEvent != nil {
			r.handling = true
			handle(r.req.OnEvent, &ev)
			r.handling = false
		}
		if !oneThread || len(r.queued) == 0 {
			break
		}
		ev = r.queued[0]
		r.queued = r.queued[1:]
	}
	r.emitMu.Unlock()
}

// handle hands ev to a host's event handler, ignoring its panic.
func handle(f func(Event), ev *Event) {
	defer func() { _ = recover() }()
	f(*ev)
}

// execute runs the turn in the calling goroutine: it waits for the
// session's lane, then drives the turn's machine as a Turn whose model
// and tool calls it makes itself (see callModel and callTool).
func (r *Run) execute() {
	tn := r.newTurn()
	if r.rt.store.hold(r.lane, r.ctx) {
		tn.holds = true
		r.startTimeout()
	}
	a := tn.Next()
	for {
		switch a.Kind {
		case ActionModel:
			tn.t.answerModel(tn.t.callModel(a.Request))
		case ActionTool:
			tn.t.answerTool(tn.t.callTool(a.Call))
		case ActionCount:
			tn.t.fail(NewError(CodeInvalidArgument, "the runtime counts tokens by action (Config.CountByAction): drive the run with Begin"))
		case ActionApproval:
			tn.t.answerAsk(tn.t.askHere(a.Call))
		default:
			return
		}
		a = tn.Next()
	}
}

// startTimeout arms the policy's timeout, counted from now.
func (r *Run) startTimeout() {
	if ms := r.req.Policy.TimeoutMs; ms > 0 {
		r.ctx.setTimeout(r.rt.afterFunc, ms, timeoutError(ms))
	}
}

// stopError is the error of a run whose context is done.
//
//go:noinline
func (r *Run) stopError() *Error {
	if e := r.ctx.stopCause(); e != nil {
		return e
	}
	return errCancelled
}

// finish records the outcome and emits the last event. A cancel that
// arrives before the outcome is recorded wins, so that Cancel returning
// true always means the run ends cancelled.
func (r *Run) finish(res *Result, err *Error) {
	// A committed turn is finished with res already (see commit). Only
	// the run's driver sets finished, so it reads it without the lock.
	if !r.finished {
		r.mu.Lock()
		if err != nil && r.cancelRequested {
			err = errCancelled
		}
		err = r.turn.t.withKept(err)
		r.finished = true
		r.result, r.err = res, err
		r.mu.Unlock()
	}
	switch {
	case err == nil:
		// Only a turn whose machine completed ends without an error.
		t := &r.turn.t
		r.rt.store.completed(t.sess, r.id, t.mark)
		if res.Status == StatusAwaitingApproval {
			r.emit(Event{Type: EventRunAwaitingApproval, Result: res})
			break
		}
		r.emit(Event{Type: EventRunCompleted, Result: res})
	case err.Code == CodeCancelled:
		r.rt.store.count(EventRunCancelled)
		r.emit(Event{Type: EventRunCancelled, Err: err})
	default:
		r.rt.store.count(EventRunFailed)
		r.emit(Event{Type: EventRunFailed, Err: err})
	}
}

// commit marks a completed turn finished unless a cancel came first. It
// returns false when the turn must be rolled back as cancelled.
func (r *Run) commit(res *Result) bool {
	r.mu.Lock()
	if r.cancelRequested {
		r.mu.Unlock()
		return false
	}
	r.finished = true
	r.result = res
	r.mu.Unlock()
	return true
}

// callModel asks the model once, stopping early when the run's context
// is done (then the machine fails the run with its stop error). A
// panicking model fails the run with CodeModelError.
func (t *turn) callModel(req *ModelRequest) (*ModelReply, error) {
	r := t.run
	if r.rt.directModel {
		a := complete(r.rt.model, r.ctx, req)
		return a.reply, a.err
	}
	ch := make(chan modelAnswer, 1)
	go func() { ch <- complete(r.rt.model, r.ctx, req) }()
	select {
	case a := <-ch:
		return a.reply, a.err
	case <-r.ctx.Done():
		t.closed.Store(true)
		return nil, r.stopError()
	}
}

// modelAnswer is what one model call returned.
type modelAnswer struct {
	reply *ModelReply
	err   error
}

// complete calls m, turning a panic into a CodeModelError.
func complete(m Model, ctx Context, req *ModelRequest) (a modelAnswer) {
	defer func() {
		if p := recover(); p != nil {
			a = modelAnswer{err: NewError(CodeModelError, "the model panicked")}
		}
	}()
	a.reply, a.err = m.Complete(ctx, req)
	return a
}

// callTool runs one tool call, stopping early when the run's context is
// done. A panicking tool fails with CodeToolError.
func (t *turn) callTool(call *ToolCall) (string, *Error) {
	r := t.run
	tool := r.rt.tools[call.Name]
	type answer struct {
		out string
		err error
	}
	ch := make(chan answer, 1)
	inv := ToolInvocation{RunID: r.id, SessionID: r.req.SessionID, ToolCallID: call.ID, Name: call.Name, Arguments: call.Arguments}
	go func() {
		var a answer
		defer func() {
			if p := recover(); p != nil {
				a = answer{err: NewError(CodeToolError, "the tool panicked")}
			}
			ch <- a
		}()
		a.out, a.err = tool.Call(r.ctx, inv)
	}()
	var a answer
	select {
	case a = <-ch:
	case <-r.ctx.Done():
		return "", r.stopError()
	}
	if r.ctx.Err() != nil {
		return "", r.stopError()
	}
	if a.err != nil {
		return "", toolError(call.Name, a.err)
	}
	return a.out, nil
}
