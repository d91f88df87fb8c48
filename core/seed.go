package core

// seed resolves the session and applies the run's history to it as the
// policy's seed mode says. It runs with the lane held, before anything
// else in the run, and changes nothing when it fails.
func (t *turn) seed() (SeedReport, *Error) {
	r := t.run
	req := &r.req
	report := SeedReport{Mode: SeedNone, SkippedSystem: r.info.skippedSystem}
	t.sess = t.store.lookup(req.SessionID)
	var current []Message
	if t.sess != nil {
		current = t.store.messagesOf(t.sess)
	}
	if !req.WithHistory {
		if req.IfHead != "" {
			if err := t.checkHead(current, current); err != nil {
				return report, err
			}
		}
		if len(req.Approvals) > 0 {
			if err := t.prepareResume(current, false); err != nil {
				return report, err
			}
		} else if err := t.awaitingError(current); err != nil {
			return report, err
		}
	}
	if req.WithHistory {
		report.Mode = SeedNoop
		h := r.seedMsgs
		var add []Message
		replace := false
		switch {
		case len(current) == 0:
			if len(h) > 0 {
				report.Mode, add = SeedCold, h
			}
		case req.Policy.SeedMode == SeedReconcile:
			switch {
			case IsPrefix(h, current):
				// The session already holds the history (and maybe more).
			case IsPrefix(current, h):
				report.Mode, add = SeedAppended, h[len(current):]
			default:
				report.Mode, add, replace = SeedReplaced, h, true
			}
		}
		// The calls pending after seeding came with the history (cold)
		// when the message that made them is one seeding adds.
		all := seeded(current, add, replace)
		if req.IfHead != "" {
			if err := t.checkHead(current, all); err != nil {
				return report, err
			}
		}
		if len(req.Approvals) > 0 {
			at, _ := pendingCalls(all)
			cold := at >= 0 && at >= len(all)-len(add)
			if err := t.prepareResume(all, cold); err != nil {
				return report, err
			}
		} else if err := t.awaitingError(all); err != nil {
			// An input on a paused history is refused as on the paused
			// session it seeds, before anything changes.
			return report, err
		}
		if len(add) > 0 {
			var size int64
			for i := range add {
				size += add[i].Size()
			}
			count, bytes := len(add), size
			if !replace && t.sess != nil {
				t.store.mu.Lock()
				count, bytes = count+len(t.sess.msgs), bytes+t.sess.bytes
				t.store.mu.Unlock()
			}
			limits := &r.rt.limits
			if count > limits.MaxMessagesPerSession {
				return report, NewError(CodeLimitExceeded, "seeding would make the session hold more than maxMessagesPerSession ("+itoa(limits.MaxMessagesPerSession)+") messages")
			}
			if bytes > limits.MaxSessionBytes {
				return report, NewError(CodeLimitExceeded, "seeding would make the session hold more than maxSessionBytes ("+itoa(int(limits.MaxSessionBytes))+")")
			}
			if t.sess == nil {
				t.sess, t.created = t.store.create(req.SessionID), true
			}
			var err *Error
			if replace || len(current) == 0 {
				// add is the run's own slice (see nonSystem): an empty
				// session takes it as it is instead of a copy.
				err = t.store.replace(t.sess, add, size, &r.reserved)
			} else {
				err = t.store.appendMessages(t.sess, add, size, &r.reserved)
			}
			if err != nil {
				if t.created {
					t.store.removeIfEmpty(t.sess)
				}
				return report, err
			}
			report.Seeded = len(add)
		}
		if len(add) > 0 || len(current) == 0 {
			// The session holds the repaired history now; a warm session
			// that took nothing was repaired by an earlier run.
			report.Repairs, report.Repaired, report.Edits = r.repairs, r.healed, r.edits
		}
	}
	if t.sess == nil {
		t.sess, t.created = t.store.create(req.SessionID), true
	}
	t.mark = len(t.store.messagesOf(t.sess))
	// The history is stored or dropped now: only the input stays reserved.
	r.seedMsgs = nil
	t.store.release(&r.reserved, r.inputCost)
	return report, nil
}

// nonSystem converts a validated history to session messages, leaving out
// the system messages. The result shares no slice with history: the tool
// calls of all its messages are copied into one new array. It has room
// for an eighth more messages and seedHeadroom, so that neither the turn
// that seeds it nor the turns that follow soon copy the whole history
// again: with room for the seeding turn alone, the first warm turn copied
// it (550 KB and a Go GC at 5,000 messages, 24-30 µs of a 1.5 µs call),
// for about 11 bytes of heap per message.
func nonSystem(history []SeedMessage, system int) []Message {
	calls := 0
	for i := range history {
		calls += len(history[i].ToolCalls)
	}
	var pool []ToolCall
	if calls > 0 {
		pool = make([]ToolCall, 0, calls)
	}
	n := len(history) - system
	out := make([]Message, n, n+n/8+seedHeadroom)
	// The fields are set one by one in the new array's zero messages: no
	// message is built aside and copied in whole, which costs a bulk write
	// barrier per message while the collector runs.
	k := 0
	for i := range history {
		h := &history[i]
		if h.Role == RoleSystem {
			continue
		}
		m := &out[k]
		k++
		m.ID, m.Role, m.Content, m.ToolCallID = h.ID, h.Role, h.Content, h.ToolCallID
		if h.ToolCalls != nil {
			start := len(pool)
			pool = append(pool, h.ToolCalls...)
			m.ToolCalls = pool[start:len(pool):len(pool)]
		}
	}
	return out[:k]
}

// seedHeadroom is the spare capacity of a seeded history: the input and
// the reply of the turn that seeds it.
const seedHeadroom = 2

// IsPrefix reports whether p is a prefix of s: equal messages
// (Message.Equal) in order. Seeding decides with it whether a history
// extends a session or the session extends it.
func IsPrefix(p, s []Message) bool {
	if len(p) > len(s) {
		return false
	}
	for i := range p {
		if !p[i].Equal(&s[i]) {
			return false
		}
	}
	return true
}

// seeded returns the messages a session holding current holds once add
// is seeded (replacing them when replace is set, or when it is empty).
func seeded(current, add []Message, replace bool) []Message {
	switch {
	case len(add) == 0:
		return current
	case replace || len(current) == 0:
		return add
	}
	return append(current[:len(current):len(current)], add...)
}

// checkHead refuses the run CodeHistoryDiverged when the conversation it
// would run on, all, has another head than the run's IfHead.
func (t *turn) checkHead(current, all []Message) *Error {
	chain := t.headChain(current, all)
	last := headSeed
	if len(chain) > 0 {
		last = chain[len(chain)-1]
	}
	if last.is(t.run.req.IfHead) {
		return nil
	}
	return divergedError(all, chain, t.run.req.IfHead)
}
