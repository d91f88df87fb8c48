package core

// The logic of tool approvals (docs/adr/0019-tool-approvals.md): seeding
// a paused history, checking a resume's approvals, asking the tools'
// predicates and pausing. A predicate its host answers is the turn's
// approval phase (turn_approve.go).

// pendingCalls returns the index of the assistant message whose calls
// are pending at the end of msgs, and those calls; -1 when none is.
func pendingCalls(msgs []Message) (int, []ToolCall) {
	i := len(msgs) - 1
	for i >= 0 && msgs[i].Role == RoleTool {
		i--
	}
	if i < 0 || msgs[i].Role != RoleAssistant || len(msgs[i].ToolCalls) == 0 {
		return -1, nil
	}
	var calls []ToolCall
	for _, c := range msgs[i].ToolCalls {
		if !answeredIn(msgs[i+1:], c.ID) {
			calls = append(calls, c)
		}
	}
	if calls == nil {
		return -1, nil
	}
	return i, calls
}

func answeredIn(results []Message, id string) bool {
	for k := range results {
		if results[k].ToolCallID == id {
			return true
		}
	}
	return false
}

// pendingSeed returns the index of the assistant message whose calls are
// pending at the end of a host history (system messages aside), and
// those calls; -1 when none is.
func pendingSeed(history []SeedMessage) (int, []ToolCall) {
	i := len(history) - 1
	for i >= 0 && (history[i].Role == RoleTool || history[i].Role == RoleSystem) {
		i--
	}
	if i < 0 || history[i].Role != RoleAssistant || len(history[i].ToolCalls) == 0 {
		return -1, nil
	}
	var calls []ToolCall
	for _, c := range history[i].ToolCalls {
		answered := false
		for k := i + 1; k < len(history) && !answered; k++ {
			answered = history[k].Role == RoleTool && history[k].ToolCallID == c.ID
		}
		if !answered {
			calls = append(calls, c)
		}
	}
	if calls == nil {
		return -1, nil
	}
	return i, calls
}

// pendingAnswer marks the results answerPending adds; they never reach a
// session.
const pendingAnswer = "\x00pending"

// answerPending returns history with a result added for each call
// pending at its end, the number added and the bytes they count.
func answerPending(history []SeedMessage) ([]SeedMessage, []ToolCall, int64) {
	_, calls := pendingSeed(history)
	if calls == nil {
		return history, nil, 0
	}
	ext := make([]SeedMessage, len(history), len(history)+len(calls))
	copy(ext, history)
	var size int64
	for _, c := range calls {
		m := SeedMessage{Role: RoleTool, Content: pendingAnswer, ToolCallID: c.ID}
		size += textSize(m.ID, m.Content, m.ToolCallID, nil)
		ext = append(ext, m)
	}
	return ext, calls, size
}

// seedAwaiting is seedHistory for a run that carries approvals: the
// calls pending at the end of the history count as answered, as the
// approvals will answer them (they are checked when the run gets its
// session), and the history seeds without them answered.
func seedAwaiting(history []SeedMessage, limits Limits, repair bool) ([]SeedMessage, historyInfo, []Repair, []HistoryEdit, *Error) {
	ext, calls, size := answerPending(history)
	if calls == nil {
		return seedHistory(history, limits, repair)
	}
	n := len(calls)
	lim := limits
	if len(history) <= lim.MaxSeedMessages {
		lim.MaxSeedMessages += n
	}
	lim.MaxSeedBytes += size
	out, info, reps, eds, err := seedHistory(ext, lim, repair)
	if err != nil {
		return seedHistory(history, limits, repair)
	}
	// Repair keeps the added results (they answer calls still open at
	// the end) unless it dropped their calls' message: then the history
	// seeds as it would without approvals.
	if len(out) < n {
		return seedHistory(history, limits, repair)
	}
	for k := range n {
		if m := &out[len(out)-n+k]; m.Content != pendingAnswer || m.ToolCallID != calls[k].ID {
			return seedHistory(history, limits, repair)
		}
	}
	info.bytes -= size
	return out[: len(out)-n : len(out)-n], info, reps, eds, nil
}

// checkApprovals checks a run's approvals among themselves, before it
// is admitted.
func checkApprovals(req *RunRequest, limits *Limits) *Error {
	if len(req.Approvals) == 0 {
		return nil
	}
	if req.Input != "" {
		return NewError(CodeInvalidArgument, "a run with approvals takes no input: it resumes the pending tool calls")
	}
	for i := range req.Approvals {
		a := &req.Approvals[i]
		if a.ToolCallID == "" {
			return NewError(CodeInvalidArgument, "approval "+itoa(i)+" has no toolCallId")
		}
		for j := range i {
			if req.Approvals[j].ToolCallID == a.ToolCallID {
				return NewError(CodeInvalidArgument, "tool call "+quote(a.ToolCallID)+" is answered twice in approvals")
			}
		}
		// The whole result message counts, its tool_call_id too: a
		// reason that passes here never fails the resume after a tool ran.
		if textSize("", deniedText(a.Reason), a.ToolCallID, nil) > limits.MaxMessageBytes {
			return NewError(CodeLimitExceeded, "the reason of approval "+itoa(i)+" is more than maxMessageBytes")
		}
	}
	return nil
}

// prepareResume checks the run's approvals against msgs, the session's
// messages as seeding leaves them: they must answer every pending call,
// and only those, each a call of a tool that asks approval under the
// run's policy. cold says the pending calls came with this run's
// history, not from a run of this runtime: each approved call's tool is
// then asked again whether the call needs approval, and one it does not
// flag is refused (docs/adr/0023-approval-trust.md). A tool whose host
// decides is asked through the turn's approval phase: prepareResume then
// fails errNeedAsk, and seeding runs again with the answers. On success
// the turn resumes the pending calls' reply.
func (t *turn) prepareResume(msgs []Message, cold bool) *Error {
	r := t.run
	list := r.req.Approvals
	at, calls := pendingCalls(msgs)
	for i := range list {
		k := 0
		for k < len(calls) && calls[k].ID != list[i].ToolCallID {
			k++
		}
		if k == len(calls) {
			return notAwaiting(list[i].ToolCallID, r.req.SessionID, "")
		}
		if !r.rt.asksApproval(calls[k].Name, &r.req.Policy) {
			return notAwaiting(list[i].ToolCallID, r.req.SessionID, "tool "+quote(calls[k].Name)+" asks no approval")
		}
	}
	for k := range calls {
		found := false
		for i := range list {
			found = found || list[i].ToolCallID == calls[k].ID
		}
		if !found {
			return NewError(CodeInvalidArgument, "tool call "+quote(calls[k].ID)+" awaits approval: approvals must answer it too")
		}
	}
	reply := msgs[at]
	if cold {
		if err := t.checkSignatures(calls); err != nil {
			return err
		}
		if err := t.reask(&reply); err != nil {
			return err
		}
	}
	a := &approvals{modes: make([]callMode, len(reply.ToolCalls)), reasons: make([]string, len(reply.ToolCalls))}
	for k := range reply.ToolCalls {
		a.modes[k] = callWait
		for i := range list {
			if list[i].ToolCallID == reply.ToolCalls[k].ID {
				a.modes[k], a.reasons[k] = callDeny, list[i].Reason
				if list[i].Approved {
					a.modes[k] = callRun
				}
			}
		}
	}
	t.reply, t.call, t.appr = reply, 0, a
	return nil
}

// checkSignatures refuses a cold resume, on a runtime that signs its
// pending calls (Config.SignApproval), whose approvals do not each carry
// the signature of their call: a call this runtime did not make.
func (t *turn) checkSignatures(calls []ToolCall) *Error {
	r := t.run
	sign := r.rt.signApproval
	if sign == nil || r.req.HistoryTrusted {
		return nil
	}
	for i := range r.req.Approvals {
		a := &r.req.Approvals[i]
		for k := range calls {
			if calls[k].ID == a.ToolCallID && !sameText(a.Signature, sign(r.req.SessionID, calls[k])) {
				return notAwaiting(a.ToolCallID, r.req.SessionID, "its approval carries no signature of this runtime")
			}
		}
	}
	return nil
}

// sameText reports whether a and b are equal, in a time that depends on
// their lengths only.
func sameText(a, b string) bool {
	if len(a) != len(b) || b == "" {
		return false
	}
	var d byte
	for i := 0; i < len(a); i++ {
		d |= a[i] ^ b[i]
	}
	return d == 0
}

// notAwaiting refuses an approval of a call that is not awaiting
// approval; why, when set, says more.
func notAwaiting(id, session, why string) *Error {
	msg := "tool call " + quote(id) + " is not awaiting approval in session " + quote(session)
	if why != "" {
		msg += ": " + why
	}
	return NewError(CodeInvalidArgument, msg)
}

// errNeedAsk fails a seeding pass of a cold resume whose approved calls'
// host is yet to say whether they need approval: the machine asks it
// (ActionApproval, the approval phase) and seeds again.
var errNeedAsk = &Error{Code: CodeInternal, Message: "approval checks are needed", Index: NoIndex}

// reask asks again, for each approved call of reply, whether it needs
// approval, and refuses the first that does not. A Go predicate is asked
// here; a tool whose host decides is asked once through the approval
// phase (errNeedAsk), whose answers t.reasked holds on the next pass.
func (t *turn) reask(reply *Message) *Error {
	r := t.run
	var ask []callMode
	for k := range reply.ToolCalls {
		c := &reply.ToolCalls[k]
		if !approvedIn(r.req.Approvals, c.ID) {
			continue
		}
		tool := r.rt.tools[c.Name]
		var need bool
		switch {
		case tool.ApprovalByHost && t.reasked == nil:
			if ask == nil {
				ask = make([]callMode, len(reply.ToolCalls))
				for j := range ask {
					ask[j] = callRun
				}
			}
			ask[k] = callAsk
			continue
		case tool.ApprovalByHost:
			need = t.reasked[k]
		default:
			var err *Error
			if need, err = askTool(tool, ToolInvocation{RunID: r.id, SessionID: r.req.SessionID, ToolCallID: c.ID, Name: c.Name, Arguments: c.Arguments}); err != nil {
				return err
			}
		}
		if !need {
			return notAwaiting(c.ID, r.req.SessionID, "tool "+quote(c.Name)+" does not ask approval of it")
		}
	}
	if ask != nil {
		t.reply, t.call, t.appr, t.asking = *reply, 0, &approvals{modes: ask}, true
		return errNeedAsk
	}
	return nil
}

func approvedIn(list []Approval, id string) bool {
	for i := range list {
		if list[i].ToolCallID == id {
			return list[i].Approved
		}
	}
	return false
}

// asksApproval reports whether a call of tool name may await approval
// under p (nil: any policy): the tool exists, declares approval
// (NeedsApproval or ApprovalByHost) and p allows it. Only such a call
// is pending rather than unanswered.
func (rt *Runtime) asksApproval(name string, p *Policy) bool {
	tool := rt.tools[name]
	return tool != nil && (tool.NeedsApproval != nil || tool.ApprovalByHost) && (p == nil || p.toolAllowed(name))
}

// pausedTail reports whether calls, the calls pending at the end of a
// history, await approval: there are some, and each is a call of a tool
// that asks approval under p. Calls of other tools were cut off (a
// crash), and a history ending with them is damaged, not paused.
func (rt *Runtime) pausedTail(calls []ToolCall, p *Policy) bool {
	for k := range calls {
		if !rt.asksApproval(calls[k].Name, p) {
			return false
		}
	}
	return len(calls) > 0
}

// awaitingError refuses a run with an input on a session whose calls
// await approval.
func (t *turn) awaitingError(msgs []Message) *Error {
	n := len(msgs)
	if n == 0 || msgs[n-1].Role == RoleUser || (msgs[n-1].Role == RoleAssistant && len(msgs[n-1].ToolCalls) == 0) {
		return nil
	}
	if _, calls := pendingCalls(msgs); calls != nil {
		return NewError(CodeInvalidArgument, "session "+quote(t.run.req.SessionID)+" awaits approval of tool call "+quote(calls[0].ID)+": answer it with approvals")
	}
	return nil
}

// askApprovals asks each call of the reply whether it needs approval,
// and sets the turn's approval state: nil when none does. A predicate
// that fails or panics fails the run with CodeToolError. The calls of a
// tool whose host decides (Tool.ApprovalByHost) are left to ask in the
// turn's approval phase (turn_approve.go).
func (t *turn) askApprovals(reply *Message) *Error {
	t.appr = nil
	r := t.run
	for k := range reply.ToolCalls {
		c := &reply.ToolCalls[k]
		tool := r.rt.tools[c.Name]
		if tool == nil || (tool.NeedsApproval == nil && !tool.ApprovalByHost) || !r.req.Policy.toolAllowed(c.Name) {
			continue
		}
		mode := callAsk
		if !tool.ApprovalByHost {
			need, err := askTool(tool, ToolInvocation{RunID: r.id, SessionID: r.req.SessionID, ToolCallID: c.ID, Name: c.Name, Arguments: c.Arguments})
			if err != nil {
				return err
			}
			if !need {
				continue
			}
			mode = callWait
		}
		if t.appr == nil {
			t.appr = &approvals{modes: make([]callMode, len(reply.ToolCalls))}
		}
		t.appr.modes[k] = mode
	}
	if t.appr != nil {
		t.appr.collect(reply)
	}
	return nil
}

// collect lists the calls of reply left waiting as pending, in order.
func (a *approvals) collect(reply *Message) {
	a.pending = nil
	for k, m := range a.modes {
		if m == callWait {
			c := &reply.ToolCalls[k]
			a.pending = append(a.pending, PendingApproval{ToolCallID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
	}
}

// askTool calls a tool's NeedsApproval, turning its error or panic into
// a CodeToolError.
func askTool(tool *Tool, inv ToolInvocation) (need bool, e *Error) {
	defer func() {
		if p := recover(); p != nil {
			need, e = false, NewError(CodeToolError, "the approval check of tool "+quote(inv.Name)+" panicked")
		}
	}()
	need, err := tool.NeedsApproval(inv)
	if err != nil {
		return false, approvalFailed(inv.Name, err)
	}
	return need, nil
}

// approvalFailed is the CodeToolError of a tool's approval check that
// returned err.
func approvalFailed(name string, err error) *Error {
	text := err.Error()
	if fe := findError(err); fe != nil {
		text = fe.Message
	}
	return NewError(CodeToolError, "the approval check of tool "+quote(name)+" failed: "+text)
}

// approvalStep handles the call due when the turn has approval state:
// it reports true when the call is not to run now (left pending, already
// answered, or answered as denied here).
func (t *turn) approvalStep() bool {
	a := t.appr
	switch a.modes[t.call] {
	case callWait:
		t.call++
		return true
	case callDeny:
		t.answerTool(deniedText(a.reasons[t.call]), nil)
		return true
	}
	return false
}

// pause ends the turn awaiting approval of the pending calls.
func (t *turn) pause() {
	t.res.Status = StatusAwaitingApproval
	if sign := t.run.rt.signApproval; sign != nil {
		for i := range t.appr.pending {
			p := &t.appr.pending[i]
			p.Signature = sign(t.run.req.SessionID, ToolCall{ID: p.ToolCallID, Name: p.Name, Arguments: p.Arguments})
		}
	}
	t.res.PendingApprovals = t.appr.pending
	t.res.Reply = t.reply
	t.appr = nil
	t.complete()
}

// awaiting lists the calls pending at the end of history, as
// CheckHistory reports them: each call id once, at its first part, even
// where a malformed message carries it twice (that history is refused,
// and Problems says why).
func awaiting(history []SeedMessage) []AwaitingCall {
	at, calls := pendingSeed(history)
	if calls == nil {
		return nil
	}
	at = HostIndex(history, at)
	out := make([]AwaitingCall, 0, len(calls))
	for k, c := range calls {
		if callIndex(calls[:k], nil, c.ID) < 0 {
			out = append(out, AwaitingCall{Index: at, ToolCallID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
	}
	return out
}
