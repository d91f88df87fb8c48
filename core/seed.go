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
			case isPrefix(h, current):
				// The session already holds the history (and maybe more).
			case isPrefix(current, h):
				report.Mode, add = SeedAppended, h[len(current):]
			default:
				report.Mode, add, replace = SeedReplaced, h, true
			}
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
				return report, Errorf(CodeLimitExceeded, "seeding would make the session hold more than maxMessagesPerSession ("+itoa(limits.MaxMessagesPerSession)+") messages")
			}
			if bytes > limits.MaxSessionBytes {
				return report, Errorf(CodeLimitExceeded, "seeding would make the session hold more than maxSessionBytes ("+itoa(int(limits.MaxSessionBytes))+")")
			}
			if t.sess == nil {
				t.sess, t.created = t.store.create(req.SessionID), true
			}
			if replace {
				t.store.replace(t.sess, add, size)
			} else {
				t.store.appendMessages(t.sess, add, size)
			}
			report.Seeded = len(add)
		}
	}
	if t.sess == nil {
		t.sess, t.created = t.store.create(req.SessionID), true
	}
	t.mark = len(t.store.messagesOf(t.sess))
	return report, nil
}

// nonSystem converts a validated history to session messages, leaving out
// the system messages. The result shares no slice with history.
func nonSystem(history []SeedMessage, system int) []Message {
	out := make([]Message, 0, len(history)-system)
	for i := range history {
		if history[i].Role != RoleSystem {
			out = append(out, history[i].Message().Clone())
		}
	}
	return out
}

// isPrefix reports whether p is a prefix of s (equal messages in order).
func isPrefix(p, s []Message) bool {
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
