package core

// The count's checks and the chunked, pair-safe window itself; see
// tokens.go and docs/adr/0018-context-window-by-tokens.md.

// countTokens counts m with the runtime's counter and checks the count.
func (rt *Runtime) countTokens(m Message) (int64, *Error) {
	count := rt.countTokensFn
	if count == nil {
		count = EstimateTokens
	}
	return checkCount(callCounter(count, m))
}

// checkCount checks a counter's answer: an error (an *Error keeps its
// code) or a count outside 0..MaxTokenCount is CodeInvalidArgument.
func checkCount(n int, err error) (int64, *Error) {
	if err != nil {
		if e := findError(err); e != nil {
			return 0, e
		}
		return 0, NewError(CodeInvalidArgument, "countTokens failed: "+err.Error())
	}
	if n < 0 || n > MaxTokenCount {
		return 0, NewError(CodeInvalidArgument, "countTokens returned "+itoa(n)+"; a count must be from 0 to "+itoa(MaxTokenCount))
	}
	return int64(n), nil
}

// callCounter calls count, turning a panic into an error.
func callCounter(count TokenCounter, m Message) (n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			n, err = 0, NewError(CodeInvalidArgument, "countTokens panicked")
		}
	}()
	return count(m)
}

// fixedTokens returns the count of the system prompt and of the tool
// specs p allows, each counted once per runtime. A pass that lacks
// counts (turn_count.go) caches none.
func (t *turn) fixedTokens(p *Policy) (int64, *Error) {
	rt := t.run.rt
	rt.mu.Lock()
	have := rt.specTokens != nil
	sys, specs := rt.systemTokens, rt.specTokens
	rt.mu.Unlock()
	if have {
		// Another run cached them while the host counted them for this
		// one: the host's counts of them go unused.
		t.cnt.k += t.cnt.fixed
	}
	t.cnt.fixed = 0
	if !have {
		specs = make([]int64, len(rt.specs))
		sys = 0
		if rt.system != "" {
			n, err := t.count(Message{Role: RoleSystem, Content: rt.system})
			if err != nil {
				return 0, err
			}
			sys = n
		}
		for i := range rt.specs {
			s := &rt.specs[i]
			n, err := t.count(Message{Role: RoleSystem, Content: s.Name + "\n" + s.Description + "\n" + s.Parameters})
			if err != nil {
				return 0, err
			}
			specs[i] = n
		}
		if t.cnt.need {
			t.cnt.fixed = len(t.cnt.msgs)
			return 0, nil
		}
		rt.mu.Lock()
		rt.systemTokens, rt.specTokens = sys, specs
		rt.mu.Unlock()
	}
	total := sys
	for i := range rt.specs {
		if p.toolAllowed(rt.specs[i].Name) {
			total += specs[i]
		}
	}
	return total, nil
}

// checkInputTokens refuses a run whose input, system prompt and tool specs
// alone exceed the policy's MaxContextTokens, before seeding: nothing
// changes. It keeps the input's count for the cache (tokenSums).
func (t *turn) checkInputTokens() *Error {
	p := &t.run.req.Policy
	if p.MaxContextTokens == 0 {
		t.inputTokens = -1
		return nil
	}
	fixed, err := t.fixedTokens(p)
	if err != nil {
		return err
	}
	n, err := t.count(Message{Role: RoleUser, Content: t.run.req.Input})
	if err != nil {
		return err
	}
	if t.cnt.need {
		return errNeedCounts
	}
	t.inputTokens = n
	if fixed+n > p.MaxContextTokens {
		return tooManyTokens(fixed+n, p)
	}
	return nil
}

func tooManyTokens(n int64, p *Policy) *Error {
	return NewError(CodeLimitExceeded, "the system prompt, the tool specs and the run's own messages (its input on) come to "+
		itoa(int(n))+" tokens, more than policy.maxContextTokens ("+itoa(int(p.MaxContextTokens))+")")
}

// tokenSums returns the running sums of the token counts of msgs, the
// session's messages of generation gen (sums[i] counts msgs[:i]),
// counting only the messages not counted yet for gen; the run's input
// (at t.inputAt) has its count already. The caller holds the session's
// lane.
func (t *turn) tokenSums(ss *session, msgs []Message, gen uint64) ([]int64, *Error) {
	c := &ss.tokens
	if c.gen != gen || len(c.sums) == 0 || len(c.sums) > len(msgs)+1 {
		// A new slice: a model call of the old generation that was
		// abandoned may still hold the old one.
		c.gen, c.sums = gen, make([]int64, 1, len(msgs)+8)
	}
	for i := len(c.sums) - 1; i < len(msgs); i++ {
		n := t.inputTokens
		if m := &msgs[i]; i != t.inputAt || n < 0 || m.ID != "" || m.Role != RoleUser || m.Content != t.run.req.Input {
			var err *Error
			if n, err = t.count(*m); err != nil {
				return nil, err
			}
		}
		if !t.cnt.need {
			c.sums = append(c.sums, c.sums[i]+n)
		}
	}
	if t.cnt.need {
		return nil, errNeedCounts
	}
	return c.sums[:len(msgs)+1], nil
}

// tokenStart returns the index of the first message of msgs the model is
// sent under budget, given sums (sums[i] counts msgs[:i]), fixed (the
// system prompt's and the tool specs' tokens), chunk and pinned (the
// index of the run's input: msgs[pinned:] are always sent). ok is false
// when fixed and msgs[pinned:] alone exceed budget.
//
// The window moves in chunks: the tokens dropped are the excess rounded
// up to a multiple of chunk, then up to the start of a block (a message
// with the tool results that follow it), so a tool call and its results
// are dropped or kept together. The start depends only on the counts,
// not on earlier windows: as the session grows it stays put until the
// excess passes the next multiple of chunk, and the same session, warm
// or seeded cold from the same history, gets the same window.
func tokenStart(msgs []Message, sums []int64, fixed, budget, chunk int64, pinned int) (start int, ok bool) {
	n := len(msgs)
	over := sums[n] + fixed - budget
	if over <= 0 {
		return 0, true
	}
	target := (over + chunk - 1) / chunk * chunk
	// The first i with sums[i] >= target: sums only grow.
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if sums[mid] < target {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	for lo < n && msgs[lo].Role == RoleTool {
		lo++
	}
	start = min(lo, pinned)
	return start, sums[n]-sums[start]+fixed <= budget
}

// contextWindow returns the messages of all (the session's, of generation
// gen) the model call due is sent: the newest that fit the policy's
// MaxContextMessages, MaxContextBytes and MaxContextTokens, the
// tightest winning. Under MaxContextTokens it reports the window in the
// result and in a model.context event, and fails with CodeLimitExceeded
// when the system prompt, the tool specs and the run's own messages (its
// input on) alone exceed the budget.
func (t *turn) contextWindow(all []Message, gen uint64) ([]Message, *Error) {
	r := t.run
	p := &r.req.Policy
	msgs := window(all, p.MaxContextMessages, p.MaxContextBytes)
	if p.MaxContextTokens == 0 {
		return msgs, nil
	}
	fixed, err := t.fixedTokens(p)
	if err != nil {
		return nil, err
	}
	sums, err := t.tokenSums(t.sess, all, gen)
	if err != nil {
		return nil, err
	}
	chunk := p.ContextChunkTokens
	if chunk == 0 {
		chunk = max(p.MaxContextTokens/DefaultContextChunk, 1)
	}
	pinned := min(max(t.inputAt, 0), len(all))
	start, ok := tokenStart(all, sums, fixed, p.MaxContextTokens, chunk, pinned)
	if !ok {
		return nil, tooManyTokens(sums[len(all)]-sums[pinned]+fixed, p)
	}
	start = max(start, len(all)-len(msgs))
	rep := ContextReport{Messages: len(all) - start, Tokens: sums[len(all)] - sums[start] + fixed, Dropped: start}
	t.res.Context = &rep
	ev := rep
	r.emit(Event{Type: EventModelContext, Step: t.step, Context: &ev})
	return all[start:], nil
}
