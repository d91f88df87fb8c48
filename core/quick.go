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
// run holding or waiting for the session, or a last message that is the
// same user input (a turn would not append it again). The host then runs
// the turn the ordinary way. It changes nothing either when it refuses
// with an *Error: the same codes Start and a turn's append use.
func (rt *Runtime) Commit(c *Commit) (count int, stale bool, err error) {
	if c.SessionID == "" || len(c.SessionID) > MaxIDBytes || c.RunID == "" || len(c.RunID) > MaxIDBytes ||
		hasPrefix(c.RunID, GeneratedRunIDPrefix) {
		return 0, false, NewError(CodeInvalidArgument, "a commit needs a session id and a run id of the host's")
	}
	in := Message{Role: RoleUser, Content: c.Input}
	reply := Message{Role: RoleAssistant, Content: c.Reply}
	limits := &rt.limits
	if in.Size() > limits.MaxMessageBytes || reply.Size() > limits.MaxMessageBytes {
		return 0, false, NewError(CodeLimitExceeded, "the input or the reply is more than maxMessageBytes")
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return 0, false, NewError(CodeInvalidArgument, "runtime is closed")
	}
	if rt.runs.get(c.RunID) != nil {
		return 0, false, NewError(CodeInvalidArgument, "runId "+quote(c.RunID)+" is already running")
	}
	return rt.store.commit(c, in, reply)
}

// commit is Runtime.Commit under the store's lock.
func (s *store) commit(c *Commit, in, reply Message) (int, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[c.SessionID]
	if ss == nil || ss.gen != c.MirrorGen || len(ss.msgs) != c.MirrorLen || !s.idle(c.SessionID) {
		return 0, true, nil
	}
	if n := len(ss.msgs); n > 0 && ss.msgs[n-1].Role == RoleUser && ss.msgs[n-1].Content == c.Input {
		return 0, true, nil
	}
	size := in.Size() + reply.Size()
	if len(ss.msgs)+2 > s.limits.MaxMessagesPerSession {
		return 0, false, NewError(CodeLimitExceeded, "the session would hold more than maxMessagesPerSession ("+itoa(s.limits.MaxMessagesPerSession)+") messages")
	}
	if ss.bytes+size > s.limits.MaxSessionBytes {
		return 0, false, NewError(CodeLimitExceeded, "the session would hold more than maxSessionBytes ("+itoa(int(s.limits.MaxSessionBytes))+")")
	}
	if err := s.room(size+2*MessageOverhead, c.SessionID); err != nil {
		return 0, false, err
	}
	s.lru.MoveToFront(ss.elem)
	mark := len(ss.msgs)
	ss.msgs = append(ss.msgs, in, reply)
	ss.bytes += size
	s.messages += 2
	s.bytes += size
	ss.tailRun, ss.tailMark = c.RunID, mark
	s.completed++
	return len(ss.msgs), false, nil
}
