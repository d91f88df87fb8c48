package core

// The count phase of the turn's machine: under Policy.MaxContextTokens,
// a runtime made with Config.CountByAction has its host count the
// messages whose counts the caches lack (ActionCount, FeedCounts),
// before the phase that needs them, instead of calling a counter. The
// counts go into the same caches Config.CountTokens fills (the
// runtime's for the system prompt and the tool specs, the turn's for
// its input, the session's for its messages), so the phase that follows
// finds every count it needs and counts nothing. See
// docs/adr/0018-context-window-by-tokens.md.

// ActionCount: count the tokens of each of Action.Messages, in order,
// then FeedCounts. Only a runtime made with Config.CountByAction asks,
// and only under Policy.MaxContextTokens.
const ActionCount ActionKind = ActionFailed + 1

// phaseCountIn: counts are out, their answer awaited; counting.resume is
// the phase that needs them.
const phaseCountIn phase = phaseFailed + 1

// counting is the count phase's state: what the counts out are for.
type counting struct {
	resume phase // the phase to go back to once the counts are in
	msgs   []Message
	// fixed: msgs starts with the system prompt (when there is one) and
	// the tool specs, for the runtime's cache.
	fixed bool
	// askInput: the run's input follows, for t.inputTokens; input: the
	// host has counted it.
	askInput, input bool
	// The session's messages [from, to) of generation gen follow, less
	// the run's input when its count is known (see knownInput).
	gen      uint64
	from, to int
	reset    bool // the session's cache starts over at gen
	// announced: run.started was emitted before the counts were asked
	// for, so begin does not emit it again.
	announced bool
}

// askCounts sets the count phase up when the phase p (phaseStart or
// phaseModel) needs counts the caches lack and the host counts them. It
// reports whether it did: the machine then yields ActionCount.
func (t *turn) askCounts(p phase) bool {
	r := t.run
	if !r.rt.countByAction || r.req.Policy.MaxContextTokens == 0 || r.ctx.stopped.Load() {
		return false
	}
	c := &t.cnt
	c.msgs, c.fixed, c.askInput, c.from, c.to, c.reset = c.msgs[:0], false, false, 0, 0, false
	rt := r.rt
	rt.mu.Lock()
	c.fixed = rt.specTokens == nil
	rt.mu.Unlock()
	if c.fixed {
		if rt.system != "" {
			c.msgs = append(c.msgs, Message{Role: RoleSystem, Content: rt.system})
		}
		for i := range rt.specs {
			s := &rt.specs[i]
			c.msgs = append(c.msgs, Message{Role: RoleSystem, Content: s.Name + "\n" + s.Description + "\n" + s.Parameters})
		}
	}
	if p == phaseStart && !c.input {
		c.askInput = true
		c.msgs = append(c.msgs, Message{Role: RoleUser, Content: r.req.Input})
		if !c.announced {
			// run.started precedes the host's work, as it precedes a
			// model call.
			r.emit(Event{Type: EventRunStarted})
			c.announced = true
		}
	} else if p == phaseModel {
		all, gen := t.store.messagesGen(t.sess)
		cache := &t.sess.tokens
		c.gen, c.to = gen, len(all)
		if cache.gen != gen || len(cache.sums) == 0 || len(cache.sums) > len(all)+1 {
			c.reset = true
		} else {
			c.from = len(cache.sums) - 1
		}
		for i := c.from; i < c.to; i++ {
			if !t.knownInput(i, &all[i]) {
				c.msgs = append(c.msgs, all[i])
			}
		}
	}
	if len(c.msgs) == 0 {
		// Nothing to count: the window's own code starts a cache over
		// and fills the fixed counts of a runtime with neither.
		return false
	}
	c.resume = p
	t.phase = phaseCountIn
	return true
}

// knownInput reports whether msgs[i], a session message, is the run's
// input whose count the turn has already (counted before seeding).
func (t *turn) knownInput(i int, m *Message) bool {
	return i == t.inputAt && t.inputTokens >= 0 && m.ID == "" && m.Role == RoleUser && m.Content == t.run.req.Input
}

// answerCounts takes the host's counts for the count phase's messages:
// checked whole first (a count, an error, a wrong number of counts fail
// the run with CodeInvalidArgument, or the code of a returned *Error,
// and change no cache), then stored in the caches.
func (t *turn) answerCounts(counts []int, err error) {
	if t.phase != phaseCountIn {
		return
	}
	r := t.run
	if r.ctx.stopped.Load() {
		t.fail(r.stopError())
		return
	}
	if e := checkCounts(counts, err, len(t.cnt.msgs)); e != nil {
		t.fail(e)
		return
	}
	c := &t.cnt
	k := 0
	rt := r.rt
	if c.fixed {
		var sys int64
		if rt.system != "" {
			sys = int64(counts[k])
			k++
		}
		specs := make([]int64, len(rt.specs))
		for i := range specs {
			specs[i] = int64(counts[k])
			k++
		}
		rt.mu.Lock()
		if rt.specTokens == nil {
			// Another run may have filled the cache meanwhile: the
			// first counts stay.
			rt.systemTokens, rt.specTokens = sys, specs
		}
		rt.mu.Unlock()
	}
	if c.askInput {
		c.input = true
		t.inputTokens = int64(counts[k])
		k++
	}
	if c.resume == phaseModel {
		all, _ := t.store.messagesGen(t.sess)
		cache := &t.sess.tokens
		if c.reset {
			cache.gen, cache.sums = c.gen, make([]int64, 1, len(all)+8)
		}
		for i := c.from; i < c.to; i++ {
			n := t.inputTokens
			if !t.knownInput(i, &all[i]) {
				n = int64(counts[k])
				k++
			}
			cache.sums = append(cache.sums, cache.sums[i]+n)
		}
	}
	t.phase = c.resume
}

// checkCounts checks the host's answer to an ActionCount of want
// messages, as countTokens checks a counter's.
func checkCounts(counts []int, err error, want int) *Error {
	if err != nil {
		if e := findError(err); e != nil {
			return e
		}
		return NewError(CodeInvalidArgument, "countTokens failed: "+err.Error())
	}
	if len(counts) != want {
		return NewError(CodeInvalidArgument, "the host fed "+itoa(len(counts))+" token counts for "+itoa(want)+" messages")
	}
	for _, n := range counts {
		if n < 0 || n > MaxTokenCount {
			return badCount(n)
		}
	}
	return nil
}

func badCount(n int) *Error {
	return NewError(CodeInvalidArgument, "countTokens returned "+itoa(n)+"; a count must be from 0 to "+itoa(MaxTokenCount))
}

// FeedCounts takes the answer to an ActionCount: the token count of each
// of Action.Messages, in order, or the error of the host's counter. An
// error (an *Error keeps its code), a count outside 0..MaxTokenCount or
// a wrong number of counts fails the run with CodeInvalidArgument and
// stores no count; the run rolls back as any failed run. Out of turn (no
// counts are out) it only returns Next.
func (tn *Turn) FeedCounts(counts []int, err error) Action {
	if !tn.ended && tn.t.phase == phaseCountIn {
		tn.t.answerCounts(counts, err)
	}
	return tn.Next()
}

// countByActionCounter is the runtime's counter under
// Config.CountByAction: the count phase fills the caches before any
// count is taken, so it is never called; if it were, the run fails typed
// rather than counting other than the host asked.
func countByActionCounter(Message) (int, error) {
	return 0, NewError(CodeInternal, "a token count was needed that the host was not asked for")
}
