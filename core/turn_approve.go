package core

// This file holds the approval phase of the turn machine: the calls of a
// reply whose tool's host decides whether they need approval
// (Tool.ApprovalByHost) are asked one by one, each an ActionApproval the
// host answers with Turn.FeedApproval, before any call of the reply runs
// (docs/adr/0019-tool-approvals.md, point 2).

// The phases of the approval phase (see phase in turn.go).
const (
	phaseAsk   phase = 100 + iota // the next call to ask about is due
	phaseAskIn                    // a call is out to its host, its answer awaited
)

// callAsk marks a call whose host is yet to say whether it needs
// approval (see callMode).
const callAsk = callDeny + 1

// ActionApproval: ask the host whether the call of Action.Call needs
// approval (the tool's predicate), then FeedApproval. It is the wire's
// action number.
const ActionApproval ActionKind = 7

// toolsDue is the phase after a reply with tool calls was appended: the
// approval phase when a call's host is to be asked, else the tools.
func (t *turn) toolsDue() phase {
	if t.appr != nil {
		for _, m := range t.appr.modes {
			if m == callAsk {
				return phaseAsk
			}
		}
	}
	return phaseTool
}

// askNext moves to the next call to ask its host about, from t.call on,
// or, once all are answered, to the reply's tool calls.
func (t *turn) askNext() {
	for ; t.call < len(t.appr.modes); t.call++ {
		if t.appr.modes[t.call] == callAsk {
			t.phase = phaseAskIn
			return
		}
	}
	if t.asking {
		// A cold resume's calls are asked: seeding runs again with the
		// answers (reask).
		t.reasked = make([]bool, len(t.appr.modes))
		for k, m := range t.appr.modes {
			t.reasked[k] = m == callWait
		}
		t.appr, t.asking, t.reply, t.call, t.phase = nil, false, Message{}, 0, phaseStart
		return
	}
	t.appr.collect(&t.reply)
	if t.appr.pending == nil {
		t.appr = nil
	}
	t.call, t.phase = 0, phaseTool
}

// answerAsk takes the host's answer for the call out: whether it needs
// approval, or the error that fails the run (a cancel or a timeout as it
// is, anything else CodeToolError). A run whose context is done fails
// with its stop error whatever the answer: no call of the reply runs.
func (t *turn) answerAsk(need bool, err *Error) {
	if t.phase != phaseAskIn {
		return
	}
	if t.run.ctx.stopped.Load() {
		err = t.run.stopError()
	}
	if err != nil {
		t.fail(err)
		return
	}
	t.appr.modes[t.call] = callRun
	if need {
		t.appr.modes[t.call] = callWait
	}
	t.call++
	t.phase = phaseAsk
}

// askHere answers an ActionApproval for a run that has no host to ask
// (Runtime.Start, Execute): the tool's NeedsApproval when it has one.
func (t *turn) askHere(c *ToolCall) (bool, *Error) {
	r := t.run
	tool := r.rt.tools[c.Name]
	if tool.NeedsApproval == nil {
		return false, NewError(CodeToolError, "tool "+quote(c.Name)+" asks its host for approval: run it with Runtime.Begin")
	}
	return askTool(tool, ToolInvocation{RunID: r.id, SessionID: r.req.SessionID, ToolCallID: c.ID, Name: c.Name, Arguments: c.Arguments})
}

// FeedApproval takes the answer to an ActionApproval: whether the call
// needs approval, or the error of the host's predicate, which fails the
// run with CodeToolError (a cancel or timeout *Error with its own code).
// It returns the next action; out of turn it only returns Next.
func (tn *Turn) FeedApproval(need bool, err error) Action {
	if !tn.ended && tn.t.phase == phaseAskIn {
		var e *Error
		if err != nil {
			if e = findError(err); e == nil || (e.Code != CodeCancelled && e.Code != CodeTimeout) {
				e = approvalFailed(tn.t.reply.ToolCalls[tn.t.call].Name, err)
			}
		}
		tn.t.answerAsk(need, e)
	}
	return tn.Next()
}

// awaits reports whether msgs end with calls awaiting approval: no
// input may follow them (a quick turn's commit is stale there, and the
// turn begun instead is refused; docs/adr/0019-tool-approvals.md, point
// 4). A session that ends with a plain message pays one look.
func awaits(msgs []Message) bool {
	n := len(msgs)
	if n == 0 || (msgs[n-1].Role != RoleTool && len(msgs[n-1].ToolCalls) == 0) {
		return false
	}
	_, calls := pendingCalls(msgs)
	return calls != nil
}
