package core

// The count phase of the turn's machine: under Policy.MaxContextTokens,
// a runtime made with Config.CountByAction has its host count the
// messages whose counts the caches lack (ActionCount, FeedCounts)
// instead of calling a counter. A phase that counts (seeding's input
// check, a model call's window) runs first collecting what it lacks
// (turn.count), and fails errNeedCounts; once the counts are fed it runs
// again, taking them in the same order, and fills the same caches
// Config.CountTokens fills. See docs/adr/0018-context-window-by-tokens.md.

// ActionCount: count the tokens of each of Action.Messages, in order,
// then FeedCounts. Only a runtime made with Config.CountByAction asks,
// and only under Policy.MaxContextTokens.
const ActionCount ActionKind = ActionFailed + 1

// phaseCountIn: counts are out, their answer awaited; counting.resume is
// the phase that needs them.
const phaseCountIn phase = phaseFailed + 1

// counting is the count phase's state.
type counting struct {
	resume phase // the phase to run again once the counts are in
	// msgs are the messages a pass lacked counts for, in the order it
	// meets them; need says there were some.
	msgs []Message
	need bool
	// fed are the host's counts for msgs, taken in order (k: the next).
	fed []int
	k   int
	// fixed is how many of msgs are the system prompt's and the tool
	// specs' (the runtime's cache), first in the order.
	fixed int
	// announced: run.started was emitted (begin runs again after the
	// count phase).
	announced bool
}

// errNeedCounts fails a pass that lacked counts: the machine asks the
// host for them (ActionCount) and runs the phase again.
var errNeedCounts = &Error{Code: CodeInternal, Message: "token counts are needed", Index: NoIndex}

// count counts m for a pass of the turn: with the runtime's counter, or
// under Config.CountByAction with the host's next fed count (checked as
// a counter's), or, when none is left, by noting m as lacking a count
// (the pass then fails errNeedCounts and caches none of its counts).
func (t *turn) count(m Message) (int64, *Error) {
	c := &t.cnt
	if !t.run.rt.countByAction {
		return t.run.rt.countTokens(m)
	}
	if c.k < len(c.fed) {
		c.k++
		return checkCount(c.fed[c.k-1], nil)
	}
	c.need = true
	c.msgs = append(c.msgs, m)
	return 0, nil
}

// askCounts turns a pass of phase p that failed errNeedCounts into the
// count phase.
func (t *turn) askCounts(p phase) {
	t.cnt.resume = p
	t.phase = phaseCountIn
}

// FeedCounts takes the answer to an ActionCount: the token count of each
// of Action.Messages, in order, or the error of the host's counter. An
// error (an *Error keeps its code), a count outside 0..MaxTokenCount or
// a wrong number of counts fails the run with CodeInvalidArgument; the
// run rolls back as any failed run. Out of turn (no counts are out) it
// only returns Next.
func (tn *Turn) FeedCounts(counts []int, err error) Action {
	t := &tn.t
	c := &t.cnt
	// A stopped run fails with its stop error (Next).
	if !tn.ended && t.phase == phaseCountIn && !tn.run.ctx.stopped.Load() {
		if _, e := checkCount(0, err); e != nil {
			t.fail(e)
		} else if len(counts) != len(c.msgs) {
			t.fail(NewError(CodeInvalidArgument, "the host fed a number of token counts other than the number of messages to count"))
		} else {
			// The pass runs again, taking the counts in order (count),
			// each checked as a counter's.
			c.fed, c.k, c.need, c.msgs = counts, 0, false, c.msgs[:0]
			t.phase = c.resume
		}
	}
	return tn.Next()
}
