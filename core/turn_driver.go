package core

// This file holds Turn, the driver of a turn's machine (turn.go) that
// hands the model and tool calls to its host, one step at a time.

// Turn is a run its host drives one step at a time, with no goroutine
// and no blocking call: Next says what the run needs (wait for the
// session, call the model with this request, call this tool, or nothing
// more: done or failed), and FeedModel and FeedTool take the answers. It
// is how an edge whose model and tools answer later (a JavaScript
// Promise, a host call across a wasm boundary) runs a turn without
// parking a goroutine per call. Create one with Runtime.Begin.
//
// The run is the same as one Start makes: it has an id, CancelRun and
// Run.Cancel stop it, its events reach RunRequest.OnEvent as Next and
// the Feed methods emit them, and a failed or cancelled turn rolls the
// session back. Its methods must not be called concurrently.
//
// # Notes
//
//   - Per-session order: Next answers ActionWait while another run holds
//     the session; ask again once a run on that session has ended.
//   - A cancel takes effect at the next call of Next or a Feed method:
//     the host need not wait for the model or tool answer it is owed.
//   - The policy's timeout is armed with Config.AfterFunc when the turn
//     gets its session; an edge without timers may pass an AfterFunc that
//     does nothing and call Expire itself.
type Turn struct {
	run   *Run
	t     turn
	holds bool // the turn holds its session's lane
	ended bool
}

// ActionKind says what a Turn needs next.
type ActionKind int

// The actions of a Turn.
const (
	// ActionWait: another run holds the session; call Next again later.
	ActionWait ActionKind = iota
	// ActionModel: call the model with Action.Request, then FeedModel.
	ActionModel
	// ActionTool: call the tool of Action.Call, then FeedTool.
	ActionTool
	// ActionDone: the run completed with Action.Result.
	ActionDone
	// ActionFailed: the run failed or was cancelled with Action.Err.
	ActionFailed
)

// Action is what a Turn needs next; only the fields of its Kind are set.
type Action struct {
	Kind ActionKind
	// Request is the model request (ActionModel). It shares the session's
	// messages, which stay unchanged until the answer is fed.
	Request *ModelRequest
	// Call is the tool call (ActionTool, ActionApproval).
	Call *ToolCall
	// Messages are the messages to count (ActionCount), valid until
	// FeedCounts.
	Messages []Message
	Result   *Result
	Err      *Error
}

// Begin validates req and registers its run as Start does, refusing it
// the same way, and returns the Turn that drives it. Nothing happens
// until Next is called.
func (rt *Runtime) Begin(ctx Context, req RunRequest) (*Turn, error) {
	r, err := rt.admit(ctx, req)
	if err != nil {
		return nil, err
	}
	return r.newTurn(), nil
}

// newTurn returns the run's Turn, made ready.
func (r *Run) newTurn() *Turn {
	r.turn = Turn{run: r, t: turn{run: r, store: r.rt.store}}
	return &r.turn
}

// Run returns the turn's run (for its id, Done, Wait and Events).
func (tn *Turn) Run() *Run { return tn.run }

// Next advances the turn until it needs its host, and says what for.
// After ActionDone or ActionFailed it keeps answering the same outcome.
func (tn *Turn) Next() Action {
	if tn.ended {
		return tn.outcome()
	}
	r := tn.run
	if !tn.holds {
		if r.ctx.stopped.Load() {
			r.rt.store.leave(r.lane, false)
			tn.end(false, nil, r.stopError())
			return tn.outcome()
		}
		if !r.rt.store.tryHold(r.lane) {
			return Action{Kind: ActionWait}
		}
		tn.holds = true
		r.startTimeout()
	}
	// A call that is out when the run stops is abandoned.
	if r.ctx.stopped.Load() {
		switch tn.t.phase {
		case phaseModelIn:
			tn.t.answerModel(nil, r.stopError())
		case phaseToolIn:
			tn.t.answerTool("", r.stopError())
		case phaseCountIn:
			tn.t.fail(r.stopError())
		case phaseAskIn:
			tn.t.answerAsk(false, r.stopError())
		}
	}
	s := tn.t.next()
	switch s.phase {
	case phaseModelIn:
		return Action{Kind: ActionModel, Request: s.req}
	case phaseToolIn:
		return Action{Kind: ActionTool, Call: s.call}
	case phaseCountIn:
		return Action{Kind: ActionCount, Messages: tn.t.cnt.msgs}
	case phaseAskIn:
		return Action{Kind: ActionApproval, Call: s.call}
	}
	if tn.t.err != nil {
		tn.t.rollback()
	}
	// A completed turn becomes the session's tail as it is counted (see
	// Run.finish).
	tn.end(true, tn.t.res, tn.t.err)
	return tn.outcome()
}

// FeedModel takes the answer to an ActionModel: the model's reply, or
// its error (an error that is not an *Error fails the run with
// CodeModelError and its text), and returns the next action. Out of
// turn (no model call is out) it only returns Next.
func (tn *Turn) FeedModel(reply *ModelReply, err error) Action {
	if !tn.ended && tn.t.phase == phaseModelIn {
		tn.t.answerModel(reply, err)
	}
	return tn.Next()
}

// FeedTool takes the answer to an ActionTool: the tool's output, or its
// error (which fails the run with CodeToolError, or under
// ToolErrorsReport becomes the result), and returns the next action.
// Out of turn it only returns Next.
func (tn *Turn) FeedTool(out string, err error) Action {
	if !tn.ended && tn.t.phase == phaseToolIn {
		var terr *Error
		if err != nil {
			terr = toolError(tn.t.reply.ToolCalls[tn.t.call].Name, err)
		}
		tn.t.answerTool(out, terr)
	}
	return tn.Next()
}

// FeedToolOversize answers the tool call that is out with an output its
// host refused unsent as more than maxMessageBytes: the run fails
// CodeLimitExceeded exactly as it fails when such an output is fed
// (whatever the policy's toolErrors), without the output crossing.
func (tn *Turn) FeedToolOversize() Action {
	if !tn.ended && tn.t.phase == phaseToolIn {
		tn.t.fail(toolOversize(tn.t.reply.ToolCalls[tn.t.call].Name))
	}
	return tn.Next()
}

func toolOversize(name string) *Error {
	return NewError(CodeLimitExceeded, "the result of tool "+quote(name)+" is more than maxMessageBytes")
}

// Delta reports text the model streamed during the model call that is
// out, as a model.delta event; at any other time it is ignored.
func (tn *Turn) Delta(text string) {
	if !tn.ended && tn.t.phase == phaseModelIn && tn.t.req != nil {
		tn.t.req.Delta(text)
	}
}

// Expire stops the run with CodeTimeout, as the policy's timeout does.
// It reports whether the run was still going.
func (tn *Turn) Expire() bool {
	return tn.run.ctx.stop(timeoutError(tn.run.req.Policy.TimeoutMs))
}

func timeoutError(ms int64) *Error {
	return NewError(CodeTimeout, "run timed out after "+itoa(int(ms))+" ms")
}

// end finishes the run as Run.execute does: outcome, lane, context.
func (tn *Turn) end(holds bool, res *Result, err *Error) {
	tn.ended = true
	r := tn.run
	r.finish(res, err)
	tn.t.res, tn.t.err = r.result, r.err
	if holds {
		r.rt.store.leave(r.lane, true)
	}
	r.ctx.stop(nil)
	r.rt.store.release(&r.reserved, 0)
	r.rt.finished(r)
	r.closeDone()
}

// Recycle lets a later run of the runtime reuse the memory of this ended
// turn and its run, sparing it their allocations. Afterwards the caller
// must not use tn, its Run, nor anything its actions and events carried
// (requests, results, messages): a later run writes over them. A turn that has not ended, or
// whose run armed a timeout or has a context that can be done, is left
// alone: a timer or a goroutine may still reach it.
func (tn *Turn) Recycle() {
	r := tn.run
	// A parent whose Done is nil is never done: no goroutine watches it.
	if tn.ended && r.req.Policy.TimeoutMs == 0 && r.ctx.parent.Done() == nil {
		r.rt.mu.Lock()
		r.rt.spare = r
		r.rt.mu.Unlock()
	}
}

func (tn *Turn) outcome() Action {
	if tn.t.err != nil {
		return Action{Kind: ActionFailed, Err: tn.t.err}
	}
	return Action{Kind: ActionDone, Result: tn.t.res}
}
