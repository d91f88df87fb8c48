package hostturn

import "github.com/agentrt/agentrt/core"

// The typed calls: the same turns as the frame methods, for a host in
// Go that has its values as Go values already (the module's syscall/js
// API, which converts JavaScript values). Begin, Feed and Next are a
// frame's decoding, these calls' work and an action frame's encoding;
// the turns of both share the handles, the count of Turns and the
// native model. A typed turn's events go to its RunRequest.OnEvent as
// they are emitted, its actions carry the whole model window (no host
// mirror), and its run is never recycled: the Result of its ActionDone
// stays the caller's.
//
//	h, a, err := x.Start(req)
//	for a.Kind == core.ActionModel {
//		a = x.Model(h, reply, nil) // the reply to a.Request
//	}
//
// Like the frame methods, the typed calls must not be called
// concurrently with each other or with them; only Hold blocks.

// Start begins req's turn and returns its handle and its first action
// (native model calls answered), or the error that refused the run (then
// nothing changed).
func (x *Driver) Start(req core.RunRequest) (uint64, core.Action, error) {
	ht := x.hostTurn()
	*ht = hostTurn{events: ht.events[:0], emit: ht.emit}
	_, a, err := x.begin(ht, req)
	return ht.handle, a, err
}

// Model answers the model call of turn h, a.Request of its last action:
// the model's reply, or its error (a non-*core.Error fails the run with
// model_error). It returns the turn's next action; for an unknown handle
// an ActionFailed with code invalid_argument.
func (x *Driver) Model(h uint64, reply *core.ModelReply, err error) core.Action {
	return x.answer(h, opModel, reply, "", err)
}

// Tool answers the tool call of turn h, a.Call of its last action: the
// tool's output, or its error. It returns the turn's next action, as
// Model does.
func (x *Driver) Tool(h uint64, out string, err error) core.Action {
	return x.answer(h, opTool, nil, out, err)
}

// FailCount answers the count action of turn h (core.ActionCount) with
// err, the failure of the host's counter, which fails the run (see
// core.Turn.FeedCounts). The typed calls carry no counts: a host that
// counts answers with a counts frame (Feed). It returns the turn's next
// action, as Model does.
func (x *Driver) FailCount(h uint64, err error) core.Action {
	return x.answer(h, opCount, nil, "", err)
}

// Approval answers the approval action of turn h, a.Call of its last
// action: whether the call needs approval, or the error of its
// predicate (the run fails with tool_error). It returns the turn's next
// action, as Model does.
func (x *Driver) Approval(h uint64, need bool, err error) core.Action {
	if need {
		return x.answer(h, opNeed, nil, "", err)
	}
	return x.answer(h, opNoNeed, nil, "", err)
}

// Step returns the next action of turn h: after an ActionWait, or once
// its Context is done while a call is out (the call is abandoned). With
// expire set it first stops the run with a timeout, as Next does.
func (x *Driver) Step(h uint64, expire bool) core.Action {
	if expire {
		return x.answer(h, opExpire, nil, "", nil)
	}
	return x.answer(h, opNext, nil, "", nil)
}

// The operations of answer.
const (
	opModel = iota
	opTool
	opNext
	opExpire
	opCount
	opNeed
	opNoNeed
)

// answer is the typed calls' one body: Model, Tool and Step name their
// operation instead of repeating the lookup of the turn.
func (x *Driver) answer(h uint64, op int, reply *core.ModelReply, out string, err error) core.Action {
	ht := x.turn(h)
	if ht == nil {
		return core.Action{Kind: core.ActionFailed, Err: core.AsError(unknownTurn(h))}
	}
	var a core.Action
	switch op {
	case opModel:
		a = ht.turn.FeedModel(reply, err)
	case opTool:
		a = ht.turn.FeedTool(out, err)
	case opCount:
		a = ht.turn.FeedCounts(nil, err)
	case opNeed, opNoNeed:
		a = ht.turn.FeedApproval(op == opNeed, err)
	default:
		a = x.next(ht.turn, op == opExpire)
	}
	return x.step(ht, a)
}

// Hold blocks until turn h holds its session, or its run is stopped
// first (see core.Turn.Hold): the next Step answers no ActionWait. It is
// for a host that drives a turn from a goroutine that may block; a host
// that cannot block calls Step again once a turn on the session ended.
func (x *Driver) Hold(h uint64) {
	if ht := x.turn(h); ht != nil {
		ht.turn.Hold()
	}
}

// Context returns the context of turn h's run (see core.Turn.Context),
// or nil for an unknown handle. A host awaiting a model or tool answer
// stops waiting once it is done and calls Step.
func (x *Driver) Context(h uint64) core.Context {
	if ht := x.turn(h); ht != nil {
		return ht.turn.Context()
	}
	return nil
}

// Run returns the run of turn h (for its id and session), or nil for an
// unknown handle.
func (x *Driver) Run(h uint64) *core.Run {
	if ht := x.turn(h); ht != nil {
		return ht.turn.Run()
	}
	return nil
}
