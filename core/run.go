package core

import (
	"sync"
	"sync/atomic"
)

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
	// seedMsgs is the validated history as session messages.
	seedMsgs []Message
	id       string
	lane     *lane
	// reserved is the part of the run's budget reservation not yet
	// stored or released, and inputCost what its input will take; both
	// are changed under the store's lock.
	reserved  int64
	inputCost int64

	ctx *runContext

	mu              sync.Mutex // guards the fields below
	cancelRequested bool
	finished        bool
	result          *Result
	err             *Error

	emitMu sync.Mutex // serialises events
	seq    int
	events []Event

	done chan struct{}
}

var errCancelled = NewError(CodeCancelled, "run cancelled")

// ID returns the run's id.
func (r *Run) ID() string { return r.id }

// SessionID returns the id of the run's session.
func (r *Run) SessionID() string { return r.req.SessionID }

// Done is closed when the run has finished.
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait waits for the run to finish, or for ctx to be done, and returns its
// result or its *Error. Leaving Wait early does not cancel the run.
func (r *Run) Wait(ctx Context) (*Result, error) {
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	return r.result, nil
}

// Cancel cancels the run. It reports whether this call cancelled it:
// false when the run had finished or was already cancelled. A cancelled
// run ends with CodeCancelled and leaves the session as seeding left it
// (or untouched, if it was still waiting for its lane).
func (r *Run) Cancel() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished || r.cancelRequested {
		return false
	}
	r.cancelRequested = true
	r.ctx.stop(errCancelled)
	return true
}

// Events returns a copy of the events emitted so far.
func (r *Run) Events() []Event {
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	return append([]Event(nil), r.events...)
}

// emit numbers ev and hands it to the host. A panicking handler is
// ignored: the host's bug must not break the run.
func (r *Run) emit(ev Event) {
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	r.seq++
	ev.Seq = r.seq
	ev.RunID = r.id
	ev.SessionID = r.req.SessionID
	r.events = append(r.events, ev)
	if r.req.OnEvent != nil {
		func() {
			defer func() { _ = recover() }()
			r.req.OnEvent(ev)
		}()
	}
}

// execute is the run's goroutine.
func (r *Run) execute() {
	defer close(r.done)
	defer r.rt.finished(r)
	defer r.rt.store.release(&r.reserved, 0)
	// The run's end stops its context: an abandoned model or tool call
	// sees it done.
	defer r.ctx.stop(nil)

	// Wait for the lane.
	select {
	case r.lane.sem <- struct{}{}:
	case <-r.ctx.Done():
		r.rt.store.leave(r.lane)
		r.finish(nil, r.stopError())
		return
	}
	defer r.rt.store.leave(r.lane)
	defer func() { <-r.lane.sem }()

	if ms := r.req.Policy.TimeoutMs; ms > 0 {
		r.ctx.setTimeout(r.rt.afterFunc, ms, NewError(CodeTimeout, "run timed out after "+itoa(int(ms))+" ms"))
	}
	t := turn{run: r, store: r.rt.store}
	res, err := t.play()
	if err != nil {
		t.rollback()
	} else {
		t.store.markTail(t.sess, r.id, t.mark)
	}
	r.finish(res, err)
}

// stopError is the error of a run whose context is done.
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
	r.mu.Lock()
	if err != nil && r.cancelRequested {
		err = errCancelled
	}
	r.finished = true
	r.result, r.err = res, err
	r.mu.Unlock()
	switch {
	case err == nil:
		r.rt.store.count(EventRunCompleted)
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

// turn is the state of one executing run.
type turn struct {
	run     *Run
	store   *store
	sess    *session
	created bool // this run created the session
	mark    int  // message count after seeding: the rollback point
	started bool // seeding done: rollback applies
}

// play runs the turn: seed, append the input, model and tool loop.
func (t *turn) play() (*Result, *Error) {
	r := t.run
	req := &r.req
	if err := r.ctx.Err(); err != nil {
		return nil, r.stopError()
	}
	r.emit(Event{Type: EventRunStarted})

	report, err := t.seed()
	if err != nil {
		return nil, err
	}
	t.started = true
	if req.WithHistory {
		rep := report
		r.emit(Event{Type: EventSessionSeeded, Seed: &rep})
	}

	res := &Result{RunID: r.id, SessionID: req.SessionID, Status: "completed", Seed: report}
	msgs := t.store.messagesOf(t.sess)
	if n := len(msgs); !(n > 0 && msgs[n-1].Role == RoleUser && msgs[n-1].Content == req.Input) {
		if err := t.append(res, Message{Role: RoleUser, Content: req.Input}); err != nil {
			return nil, err
		}
	}

	limits := &r.rt.limits
	policy := &req.Policy
	for step := 1; ; step++ {
		if step > policy.maxSteps() {
			return nil, NewError(CodeLimitExceeded, "the run needs more than maxSteps ("+itoa(policy.maxSteps())+") model calls")
		}
		reply, err := t.callModel(res, step)
		if err != nil {
			return nil, err
		}
		msg := Message{Role: RoleAssistant, Content: reply.Content, ToolCalls: reply.ToolCalls}
		if msg.Size() > limits.MaxMessageBytes {
			return nil, NewError(CodeLimitExceeded, "the model's reply is more than maxMessageBytes")
		}
		if len(msg.ToolCalls) > 0 && step == policy.maxSteps() {
			return nil, NewError(CodeLimitExceeded, "the run needs more than maxSteps ("+itoa(policy.maxSteps())+") model calls")
		}
		if err := t.append(res, msg); err != nil {
			return nil, err
		}
		if len(msg.ToolCalls) == 0 {
			res.Reply = msg
			break
		}
		for i := range msg.ToolCalls {
			if err := t.callTool(res, &msg.ToolCalls[i]); err != nil {
				return nil, err
			}
		}
	}
	res.MessageCount = len(t.store.messagesOf(t.sess))
	if !r.commit(res) {
		return nil, errCancelled
	}
	return res, nil
}

// append adds one message of this turn, enforcing the per-session caps.
func (t *turn) append(res *Result, m Message) *Error {
	limits := &t.run.rt.limits
	size := m.Size()
	t.store.mu.Lock()
	count, bytes := len(t.sess.msgs), t.sess.bytes
	t.store.mu.Unlock()
	if count+1 > limits.MaxMessagesPerSession {
		return NewError(CodeLimitExceeded, "the session would hold more than maxMessagesPerSession ("+itoa(limits.MaxMessagesPerSession)+") messages")
	}
	if bytes+size > limits.MaxSessionBytes {
		return NewError(CodeLimitExceeded, "the session would hold more than maxSessionBytes ("+itoa(int(limits.MaxSessionBytes))+")")
	}
	if err := t.store.appendMessages(t.sess, []Message{m}, size, &t.run.reserved); err != nil {
		return err
	}
	res.Appended = append(res.Appended, m)
	mm := m
	t.run.emit(Event{Type: EventMessageAppended, Message: &mm})
	return nil
}

// rollback restores the session as seeding left it, and removes a session
// this run created if it is left empty.
func (t *turn) rollback() {
	if t.sess == nil {
		return
	}
	if t.started {
		t.store.truncate(t.sess, t.mark)
	}
	if t.created {
		t.store.removeIfEmpty(t.sess)
	}
}

// callModel asks the model once, stopping early when the run's context
// is done. A panicking model fails the run with CodeModelError.
func (t *turn) callModel(res *Result, step int) (*ModelReply, *Error) {
	r := t.run
	msgs := t.store.messagesOf(t.sess)
	msgs = window(msgs, r.req.Policy.MaxContextMessages, r.req.Policy.MaxContextBytes)
	call := ModelCall{Step: step, MessageCount: len(msgs)}
	if r.req.Inspect {
		call.Messages = append([]Message(nil), msgs...)
	}
	res.ModelCalls = append(res.ModelCalls, call)

	var closed atomic.Bool
	req := &ModelRequest{
		RunID:     r.id,
		SessionID: r.req.SessionID,
		System:    r.rt.system,
		Messages:  msgs,
		Tools:     t.allowedSpecs(),
		Step:      step,
	}
	req.Delta = func(text string) {
		if text == "" || closed.Load() {
			return
		}
		r.emit(Event{Type: EventModelDelta, Delta: text, Step: step})
	}
	var a modelAnswer
	if r.rt.directModel {
		a = complete(r.rt.model, r.ctx, req)
	} else {
		ch := make(chan modelAnswer, 1)
		go func() { ch <- complete(r.rt.model, r.ctx, req) }()
		select {
		case a = <-ch:
		case <-r.ctx.Done():
			closed.Store(true)
			return nil, r.stopError()
		}
	}
	closed.Store(true)
	if r.ctx.Err() != nil {
		return nil, r.stopError()
	}
	if a.err != nil {
		if e := findError(a.err); e != nil {
			return nil, e
		}
		return nil, NewError(CodeModelError, a.err.Error())
	}
	if a.reply == nil {
		return nil, NewError(CodeModelError, "the model returned no reply")
	}
	reply := *a.reply
	if len(reply.ToolCalls) > 0 {
		reply.ToolCalls = append([]ToolCall(nil), reply.ToolCalls...)
		for i := range reply.ToolCalls {
			c := &reply.ToolCalls[i]
			if c.ID == "" {
				c.ID = "call_" + itoa(step) + "_" + itoa(i)
			}
			if c.Name == "" {
				return nil, NewError(CodeModelError, "the model asked for a tool call with no name")
			}
			for j := 0; j < i; j++ {
				if reply.ToolCalls[j].ID == c.ID {
					return nil, NewError(CodeModelError, "the model used tool call id "+quote(c.ID)+" twice")
				}
			}
		}
	}
	return &reply, nil
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

func (t *turn) allowedSpecs() []ToolSpec {
	p := &t.run.req.Policy
	if p.AllowedTools == nil {
		return t.run.rt.specs
	}
	var specs []ToolSpec
	for _, s := range t.run.rt.specs {
		if p.toolAllowed(s.Name) {
			specs = append(specs, s)
		}
	}
	return specs
}

// callTool runs one tool call and appends its result.
func (t *turn) callTool(res *Result, call *ToolCall) *Error {
	r := t.run
	c := *call
	r.emit(Event{Type: EventToolStarted, ToolCall: &c})
	out, terr := t.invoke(call)
	if terr != nil && (terr.Code == CodeCancelled || terr.Code == CodeTimeout) {
		return terr
	}
	msg := Message{Role: RoleTool, Content: out, ToolCallID: call.ID}
	if terr != nil {
		if r.req.Policy.ToolErrors != ToolErrorsReport {
			r.emit(Event{Type: EventToolFinished, ToolCall: &c, Err: terr})
			return terr
		}
		msg.Content = "error: " + terr.Message
	}
	if msg.Size() > r.rt.limits.MaxMessageBytes {
		return NewError(CodeLimitExceeded, "the result of tool "+quote(call.Name)+" is more than maxMessageBytes")
	}
	fin := msg
	r.emit(Event{Type: EventToolFinished, ToolCall: &c, Message: &fin, Err: terr})
	return t.append(res, msg)
}

// invoke runs the tool, stopping early when the run's context is done.
func (t *turn) invoke(call *ToolCall) (string, *Error) {
	r := t.run
	tool := r.rt.tools[call.Name]
	if tool == nil {
		return "", NewError(CodeToolError, "unknown tool "+quote(call.Name))
	}
	if !r.req.Policy.toolAllowed(call.Name) {
		return "", NewError(CodeToolError, "tool "+quote(call.Name)+" is not allowed by the policy")
	}
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
		text := a.err.Error()
		if e := findError(a.err); e != nil {
			text = e.Message
		}
		return "", NewError(CodeToolError, "tool "+quote(call.Name)+" failed: "+text)
	}
	return a.out, nil
}
