package core

// This file holds the quick turn: a whole turn of one model call without
// tools, committed at once by a host that has already called its model
// on a mirror of the session (docs/adr/0012-quick-turn.md).

// Commit is a turn its host has run already: the input appended to a
// session the host mirrors as generation MirrorGen with MirrorLen
// messages, and the model's reply, with no tool calls, to it.
type Commit struct {
	SessionID string
	RunID     string
	Input     string
	MirrorGen uint64
	MirrorLen int
	Reply     string
}

// Commit appends c's input and reply to its session as one completed
// turn of run c.RunID would, with the default Policy and no history: the
// same checks (message size, the session's caps, the memory budget, which
// evicts other idle sessions as a turn's append does), the same counters,
// and the turn marked as the session's tail (see RevertRun). It returns
// the session's message count afterwards.
//
// It changes nothing and reports stale (with a nil error) when the
// session is not exactly what the host mirrors: no session with id, a
// generation other than c.MirrorGen, other than c.MirrorLen messages, a
// run holding or waiting for the session, a last message that is the
// same user input (a turn would not append it again), calls awaiting
// approval at its end (a turn with an input is refused there). The host
// then runs the turn the ordinary way. It changes nothing either when it
// refuses with an *Error: the same codes Start and a turn's append use.
//
// A commit carries no head: the generation and length name the session's
// messages (the generation changes whenever they change other than by
// appending), so a host that knows the head of its mirror knows the
// session's, and the head after the commit is that one followed by the
// two messages (Head's definition; the glue computes it in js/head.js).
func (rt *Runtime) Commit(c *Commit) (count int, stale bool, err error) {
	// No session has an id too long or empty: those commits are stale.
	if c.RunID == "" || len(c.RunID) > MaxIDBytes || hasPrefix(c.RunID, GeneratedRunIDPrefix) {
		return 0, false, NewError(CodeInvalidArgument, "a commit needs a run id of the host's")
	}
	if int64(len(c.Input)) > rt.limits.MaxMessageBytes || int64(len(c.Reply)) > rt.limits.MaxMessageBytes {
		return 0, false, NewError(CodeLimitExceeded, "the input or the reply is more than maxMessageBytes")
	}
	var e *Error
	rt.mu.Lock()
	switch {
	case rt.closed:
		e = NewError(CodeInvalidArgument, "runtime is closed")
	case rt.runs.get(c.RunID) != nil:
		e = NewError(CodeInvalidArgument, "runId "+quote(c.RunID)+" is already running")
	default:
		count, stale, e = rt.store.commit(c)
	}
	rt.mu.Unlock()
	if e != nil {
		return 0, false, e
	}
	return count, stale, nil
}

// commit is Runtime.Commit under the store's lock.
func (s *store) commit(c *Commit) (int, bool, *Error) {
	s.mu.Lock()
	ss := s.sessions[c.SessionID]
	n := c.MirrorLen
	if ss == nil || ss.gen != c.MirrorGen || len(ss.msgs) != n || !s.idle(c.SessionID) ||
		n > 0 && ss.msgs[n-1].Role == RoleUser && ss.msgs[n-1].Content == c.Input || awaits(ss.msgs) {
		s.mu.Unlock()
		return 0, true, nil
	}
	size := int64(len(c.Input) + len(c.Reply))
	var e *Error
	if n+2 > s.limits.MaxMessagesPerSession || ss.bytes+size > s.limits.MaxSessionBytes {
		e = NewError(CodeLimitExceeded, "the session would hold more than maxMessagesPerSession or maxSessionBytes")
	} else {
		e = s.room(size+2*MessageOverhead, c.SessionID)
	}
	if e != nil {
		s.mu.Unlock()
		return 0, false, e
	}
	s.toFront(ss)
	mark := len(ss.msgs)
	ss.msgs = append(ss.msgs, Message{Role: RoleUser, Content: c.Input}, Message{Role: RoleAssistant, Content: c.Reply})
	ss.bytes += size
	s.messages += 2
	s.bytes += size
	ss.tailRun, ss.tailMark = c.RunID, mark
	s.nCompleted++
	s.mu.Unlock()
	return n + 2, false, nil
}

// maxDropLog bounds the ids of dropped sessions kept for TakeDropped.
const maxDropLog = 1024

// TakeDropped returns the ids of the sessions removed from the store
// (evicted, deleted) since the last call, and all set when more were
// removed than the log keeps (maxDropLog): a host that mirrors sessions
// then drops every mirror. The log takes over spare, the slice the
// previous call returned, for the next ids. The first call starts the
// log: a runtime whose host never asks keeps none.
func (rt *Runtime) TakeDropped(spare []string) (ids []string, all bool) {
	s := rt.store
	s.mu.Lock()
	ids, all = s.dropped, s.dropOverflow
	s.dropped, s.dropOverflow, s.dropLog = spare[:0], false, true
	s.mu.Unlock()
	return ids, all
}

// logDrop adds id to the log of dropped sessions; s.mu is held.
func (s *store) logDrop(id string) {
	if len(s.dropped) == maxDropLog {
		s.dropOverflow = true
		return
	}
	s.dropped = append(s.dropped, id)
}
