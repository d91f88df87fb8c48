package core

// This file holds the turn as a state machine: seeding, the user input,
// and the model and tool loop, as steps that ask for I/O (call the model,
// call a tool) and take its answer, without goroutines or blocking. Two
// drivers run it: Run.execute (Start, Execute), which performs the calls
// itself, and Turn, which hands them to the host.

// phase is where a turn's machine is.
type phase int

const (
	phaseStart   phase = iota // nothing done yet
	phaseModel                // the next model call is due
	phaseModelIn              // a model call is out, its answer awaited
	phaseTool                 // the next tool call of the reply is due
	phaseToolIn               // a tool call is out, its answer awaited
	phaseDone                 // completed: res is set
	phaseFailed               // failed: err is set
)

// step is what the machine asks for next.
type step struct {
	phase phase // phaseModelIn, phaseToolIn, phaseDone or phaseFailed
	req   *ModelRequest
	call  *ToolCall
}

// turn is the state of one executing run.
type turn struct {
	run     *Run
	store   *store
	sess    *session
	created bool // this run created the session
	mark    int  // message count after seeding: the rollback point
	// keep is the message count a failure rolls back to instead of mark
	// once a resume has stored the result of an approved call (0: none);
	// kept are the messages of the run that leaves.
	keep    int
	kept    []Message
	started bool // seeding done: rollback applies

	phase phase
	res   *Result
	err   *Error
	step  int     // the model call due or out, from 1
	reply Message // the assistant message whose tool calls run
	call  int     // index in reply.ToolCalls of the tool call due or out
	req   *ModelRequest
	// appr is the approval state of reply's calls; nil when none needs
	// approval (see approval.go).
	appr *approvals
	// asking says the approval phase asks the host about a cold resume's
	// approved calls (reask), before seeding; reasked holds its answers,
	// by the call's index in the reply, for the seeding pass that
	// follows (a slice: no map type of its own in the module).
	asking  bool
	reasked []bool
	// closed ends the delta function of the model call out.
	closed *flag
	// inputAt is the index of the run's input in the session: the token
	// window always sends the messages from it on. inputTokens is the
	// input's count (-1: not counted), counted before seeding.
	inputAt     int
	inputTokens int64
	// cnt is the count phase's state (turn_count.go).
	cnt counting
}

// fail ends the machine with err.
func (t *turn) fail(err *Error) {
	t.phase, t.err, t.res = phaseFailed, err, nil
}

// withKept returns err with the messages the failed run keeps in its
// session as Error.Appended: a copy of both, as err may be shared and the
// messages are the run's, which a later run may reuse.
//
//go:noinline
func (t *turn) withKept(err *Error) *Error {
	if err == nil || t.kept == nil {
		return err
	}
	e := *err
	e.Appended = append([]Message(nil), t.kept...)
	return &e
}

// next advances the machine until it needs I/O or has ended, and says
// what it needs. Called again while a call is out, it asks for the same
// call.
func (t *turn) next() step {
	for {
		switch t.phase {
		case phaseStart:
			if err := t.begin(); err == errNeedCounts {
				t.askCounts(phaseStart)
				continue
			} else if err == errNeedAsk {
				t.phase = phaseAsk
				continue
			} else if err != nil {
				t.fail(err)
				continue
			}
			t.phase, t.step = phaseModel, 1
			if t.appr != nil {
				// A resume runs the approved calls first.
				t.phase, t.step = phaseTool, 0
			}
		case phaseModel:
			policy := &t.run.req.Policy
			if t.step > policy.maxSteps() {
				t.fail(tooManySteps(policy))
				continue
			}
			req, err := t.modelRequest()
			if err == errNeedCounts {
				t.askCounts(phaseModel)
				continue
			}
			if err != nil {
				t.fail(err)
				continue
			}
			t.req = req
			t.phase = phaseModelIn
		case phaseModelIn:
			return step{phase: phaseModelIn, req: t.req}
		case phaseTool:
			if t.call >= len(t.reply.ToolCalls) {
				if t.appr != nil && t.appr.pending != nil {
					t.pause()
					continue
				}
				t.appr = nil
				t.phase = phaseModel
				t.step++
				continue
			}
			if t.appr != nil && t.approvalStep() {
				continue
			}
			c := t.reply.ToolCalls[t.call]
			t.run.emit(Event{Type: EventToolStarted, ToolCall: &c})
			if terr := t.toolRefusal(&c); terr != nil {
				t.answerTool("", terr)
				continue
			}
			t.phase = phaseToolIn
		case phaseToolIn:
			return step{phase: phaseToolIn, call: &t.reply.ToolCalls[t.call]}
		case phaseCountIn:
			return step{phase: phaseCountIn}
		case phaseAsk:
			t.askNext()
		case phaseAskIn:
			return step{phase: phaseAskIn, call: &t.reply.ToolCalls[t.call]}
		case phaseDone, phaseFailed:
			return step{phase: t.phase}
		}
	}
}

// begin emits run.started, seeds, and appends the input.
func (t *turn) begin() *Error {
	r := t.run
	req := &r.req
	if r.ctx.stopped.Load() {
		return r.stopError()
	}
	if !t.cnt.announced {
		// Once: a pass that lacked token counts runs again.
		r.emit(Event{Type: EventRunStarted})
		t.cnt.announced = true
	}
	if err := t.checkInputTokens(); err != nil {
		return err
	}
	report, err := t.seed()
	if err != nil {
		return err
	}
	t.started = true
	if req.WithHistory {
		rep := report
		rep.Repaired = nil // events carry no content
		r.emit(Event{Type: EventSessionSeeded, Seed: &rep})
	}
	// The result, the first messages it appends and its first model call
	// are the run's (resultBox): a turn of one model call without tools
	// (the common one) allocates nothing more for them.
	box := &r.box
	*box = resultBox{res: Result{RunID: r.id, SessionID: req.SessionID, Status: "completed", Seed: report}}
	box.res.Appended = box.appended[:0]
	box.res.ModelCalls = box.calls[:0]
	t.res = &box.res
	msgs := t.store.messagesOf(t.sess)
	if len(req.Approvals) > 0 {
		// seed checked them and set the resume up; the token window
		// always sends the message whose calls resume, and what follows.
		for t.inputAt = len(msgs) - 1; t.inputAt > 0 && msgs[t.inputAt].Role != RoleAssistant; t.inputAt-- {
		}
		return nil
	}
	t.inputAt = len(msgs) - 1
	if n := len(msgs); !(n > 0 && msgs[n-1].Role == RoleUser && msgs[n-1].Content == req.Input) {
		if err := t.append(Message{Role: RoleUser, Content: req.Input}); err != nil {
			return err
		}
		t.inputAt = n
	}
	return nil
}

// resultBox holds a Result with room for what a turn without tools
// appends (the input and the reply) and for its one model call.
type resultBox struct {
	res      Result
	appended [2]Message
	calls    [1]ModelCall
}

// modelCall is one model call's request with what its Delta function
// needs, in one allocation.
type modelCall struct {
	req    ModelRequest
	run    *Run
	closed flag // the call is answered: Delta does nothing
}

func (c *modelCall) delta(text string) {
	if text == "" || c.closed.Load() {
		return
	}
	c.run.emit(Event{Type: EventModelDelta, Delta: text, Step: c.req.Step})
}

// modelRequest builds the request of the model call due, and records the
// call in the result. It fails when the context window cannot be built
// (tokens.go).
func (t *turn) modelRequest() (*ModelRequest, *Error) {
	r := t.run
	all, gen := t.store.messagesGen(t.sess)
	msgs, err := t.contextWindow(all, gen)
	if err != nil {
		return nil, err
	}
	call := ModelCall{Step: t.step, MessageCount: len(msgs)}
	if r.req.Inspect {
		call.Messages = append([]Message(nil), msgs...)
	}
	t.res.ModelCalls = append(t.res.ModelCalls, call)
	// The first call is the run's own; its Delta function survives the
	// run's reuse (see Turn.Recycle), bound to the same call.
	c := &r.call
	if t.step > 1 {
		c = new(modelCall)
	}
	delta := c.req.Delta
	*c = modelCall{run: r, req: ModelRequest{
		RunID:      r.id,
		SessionID:  r.req.SessionID,
		System:     r.rt.system,
		Messages:   msgs,
		Offset:     len(all) - len(msgs),
		Generation: gen,
		Tools:      t.allowedSpecs(),
		Step:       t.step,
	}}
	if delta == nil {
		delta = c.delta
	}
	c.req.Delta = delta
	t.closed = &c.closed
	return &c.req, nil
}

// answerModel takes the answer of the model call out: the reply, or the
// error the model returned (a non-*Error fails the run with
// CodeModelError). A run whose context is done fails with its stop error
// whatever the answer.
func (t *turn) answerModel(reply *ModelReply, err error) {
	if t.phase != phaseModelIn {
		return
	}
	t.closed.Store(true)
	t.req = nil
	r := t.run
	if r.ctx.stopped.Load() {
		t.fail(r.stopError())
		return
	}
	msg, e := t.checkReply(reply, err)
	if e != nil {
		t.fail(e)
		return
	}
	limits := &r.rt.limits
	policy := &r.req.Policy
	if msg.Size() > limits.MaxMessageBytes {
		t.fail(NewError(CodeLimitExceeded, "the model's reply is more than maxMessageBytes"))
		return
	}
	if len(msg.ToolCalls) > 0 && t.step == policy.maxSteps() {
		t.fail(tooManySteps(policy))
		return
	}
	if len(msg.ToolCalls) > 0 {
		if e := t.askApprovals(&msg); e != nil {
			t.fail(e)
			return
		}
	}
	if e := t.append(msg); e != nil {
		t.fail(e)
		return
	}
	if len(msg.ToolCalls) == 0 {
		t.res.Reply = msg
		t.complete()
		return
	}
	t.reply, t.call, t.phase = msg, 0, t.toolsDue()
}

func tooManySteps(p *Policy) *Error {
	return NewError(CodeLimitExceeded, "the run needs more than maxSteps ("+itoa(p.maxSteps())+") model calls")
}

// checkReply turns the model's answer into the assistant message to
// append, or the error that fails the run.
func (t *turn) checkReply(a *ModelReply, err error) (Message, *Error) {
	if err != nil {
		if e := findError(err); e != nil {
			return Message{}, e
		}
		return Message{}, NewError(CodeModelError, err.Error())
	}
	if a == nil {
		return Message{}, NewError(CodeModelError, "the model returned no reply")
	}
	reply := *a
	if len(reply.ToolCalls) > 0 {
		reply.ToolCalls = append([]ToolCall(nil), reply.ToolCalls...)
		seen := make(map[string]bool, len(reply.ToolCalls))
		for i := range reply.ToolCalls {
			c := &reply.ToolCalls[i]
			if c.ID == "" {
				c.ID = "call_" + itoa(t.step) + "_" + itoa(i)
			}
			if c.Name == "" {
				return Message{}, NewError(CodeModelError, "the model asked for a tool call with no name")
			}
			if seen[c.ID] {
				return Message{}, NewError(CodeModelError, "the model used tool call id "+quote(c.ID)+" twice")
			}
			seen[c.ID] = true
		}
	}
	return Message{Role: RoleAssistant, Content: reply.Content, ToolCalls: reply.ToolCalls}, nil
}

// complete ends a turn whose last reply had no tool calls: the result is
// final unless a cancel came first.
func (t *turn) complete() {
	t.res.MessageCount = len(t.store.messagesOf(t.sess))
	// The head is computed when asked: a cold seed's first head hashes
	// the whole history, which most hosts never ask for.
	t.res.headSess, t.res.headMsgs, t.res.headStore = t.sess, t.store.messagesOf(t.sess), t.store
	if !t.run.commit(t.res) {
		t.fail(errCancelled)
		return
	}
	t.phase = phaseDone
}

// toolRefusal is the error of a tool call that cannot be made: an
// unknown tool or one the policy does not allow.
func (t *turn) toolRefusal(call *ToolCall) *Error {
	r := t.run
	if r.rt.tools[call.Name] == nil {
		return NewError(CodeToolError, "unknown tool "+quote(call.Name))
	}
	if !r.req.Policy.toolAllowed(call.Name) {
		return NewError(CodeToolError, "tool "+quote(call.Name)+" is not allowed by the policy")
	}
	return nil
}

// answerTool takes the outcome of the tool call due or out: its output,
// or its error (a cancel or timeout fails the run; other errors fail it
// or, under ToolErrorsReport, become the result).
func (t *turn) answerTool(out string, terr *Error) {
	if t.phase != phaseTool && t.phase != phaseToolIn {
		return
	}
	r := t.run
	// ran: the tool was called (not a denial, nor a refused call).
	ran := t.phase == phaseToolIn
	call := &t.reply.ToolCalls[t.call]
	c := *call
	if terr != nil && (terr.Code == CodeCancelled || terr.Code == CodeTimeout) {
		t.fail(terr)
		return
	}
	msg := Message{Role: RoleTool, Content: out, ToolCallID: call.ID}
	if terr != nil {
		if r.req.Policy.ToolErrors != ToolErrorsReport {
			r.emit(Event{Type: EventToolFinished, ToolCall: &c, Err: terr})
			t.fail(terr)
			return
		}
		msg.Content = "error: " + terr.Message
	}
	if msg.Size() > r.rt.limits.MaxMessageBytes {
		t.fail(toolOversize(call.Name))
		return
	}
	fin := msg
	r.emit(Event{Type: EventToolFinished, ToolCall: &c, Message: &fin, Err: terr})
	if e := t.append(msg); e != nil {
		t.fail(e)
		return
	}
	if t.step == 0 && (ran || t.keep > 0) {
		// A resume ran a call a person approved: its result, what came
		// before it and the answers after it outlive any later failure
		// of the run, so that no retry runs the tool again (ADR 0019,
		// "nothing paid twice").
		n := len(t.res.Appended)
		t.keep, t.kept = len(t.store.messagesOf(t.sess)), t.res.Appended[:n:n]
	}
	t.call++
	t.phase = phaseTool
}

// toolError converts what a tool returned as an error.
func toolError(name string, err error) *Error {
	text := err.Error()
	if e := findError(err); e != nil {
		text = e.Message
	}
	return NewError(CodeToolError, "tool "+quote(name)+" failed: "+text)
}

// append adds one message of this turn, enforcing the per-session caps.
func (t *turn) append(m Message) *Error {
	limits := &t.run.rt.limits
	size := m.Size()
	// Only the lane holder, this run, changes the session's messages and
	// their size (see messagesOf): no lock to read them.
	count, bytes := len(t.sess.msgs), t.sess.bytes
	if count+1 > limits.MaxMessagesPerSession {
		return NewError(CodeLimitExceeded, "the session would hold more than maxMessagesPerSession ("+itoa(limits.MaxMessagesPerSession)+") messages")
	}
	if bytes+size > limits.MaxSessionBytes {
		return NewError(CodeLimitExceeded, "the session would hold more than maxSessionBytes ("+itoa(int(limits.MaxSessionBytes))+")")
	}
	if err := t.store.appendMessages(t.sess, []Message{m}, size, &t.run.reserved); err != nil {
		return err
	}
	t.res.Appended = append(t.res.Appended, m)
	// The event points at the result's copy, which only grows: no
	// allocation per message.
	t.run.emit(Event{Type: EventMessageAppended, Message: &t.res.Appended[len(t.res.Appended)-1]})
	return nil
}

// rollback restores the session as seeding left it, and removes a session
// this run created if it is left empty.
func (t *turn) rollback() {
	if t.sess == nil {
		return
	}
	if t.started {
		t.store.truncate(t.sess, max(t.mark, t.keep))
	}
	if t.created {
		t.store.removeIfEmpty(t.sess)
	}
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
