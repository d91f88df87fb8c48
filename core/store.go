package core

// store is the in-process session store: sessions by id with LRU
// eviction, and the per-session lanes that serialise runs. One mutex
// guards everything; each operation under it is short.
type store struct {
	limits Limits

	mu       mutex
	sessions map[string]*session
	// front and back end the list of sessions by use, most recently
	// used at the front (through session.prev and next).
	front, back *session
	lanes       map[string]*lane
	messages    int
	bytes       int64
	evictions   int
	nCompleted  int
	failed      int
	cancelled   int
	// reserved is what admitted runs carry (input and history) and have
	// not yet stored or dropped; it counts against MaxTotalBytes.
	reserved int64
	// gens numbers session generations (see session.gen).
	gens uint64
	// spare is the last lane left, which no run holds or waits for: it
	// stays in lanes under its id, so that a session's turns one after
	// another find their lane without adding or removing it, and any
	// other join takes it over.
	spare *lane
	// dropLog, when set, collects the ids of the sessions drop removes
	// (evicted or deleted) for TakeDropped, up to maxDropLog ids; past
	// that, dropOverflow says ids were lost.
	dropLog      bool
	dropped      []string
	dropOverflow bool
	// last is the session lookup found last: a session's turns one after
	// another find it without hashing its id. It is in sessions: drop
	// clears it.
	last *session
}

type session struct {
	id    string
	msgs  []Message
	bytes int64
	// prev and next link the store's list of sessions by use.
	prev, next *session
	gone       bool // removed from the store (deleted or evicted)
	// tailRun is the run whose completed turn is the session's tail, from
	// message tailMark on, or "" once anything else changed the session.
	tailRun  string
	tailMark int
	// gen names the session's messages for hosts that mirror them: it
	// changes whenever they change other than by appending.
	gen uint64
	// tokens caches the token counts of the messages (tokens.go).
	tokens tokenCache
	// chain holds the head links of a prefix of msgs (head.go), extended
	// when a head is asked for; guarded by the store's lock.
	chain []link
}

// lane serialises the runs of one session id. It exists while a run holds
// or waits for it, whether or not the session exists yet, and while it is
// the store's spare. Its fields are guarded by the store's lock: taking
// and letting go of a lane is a flag under a lock the turn takes anyway,
// not a channel operation each way.
type lane struct {
	// The field of no size makes lane not comparable: no equality
	// function is compiled into the module for it (nothing compares
	// lanes). It is first, as a last field of no size would be padded.
	_    [0]func()
	id   string
	refs int
	held bool // a run holds the lane
	// wake, made when a run blocks for the lane (see hold), is closed
	// when its holder lets go.
	wake chan struct{}
}

func newStore(limits Limits) *store {
	return &store{
		limits:   limits,
		sessions: make(map[string]*session),
		lanes:    make(map[string]*lane),
	}
}

// join registers a run on the lane of id and reserves cost bytes for it
// (its input and history), making room as appendMessages does. With reject set it refuses (busy) when another run
// holds or waits for the lane; when the cost cannot fit it refuses with
// the error. A refused run changes nothing.
func (s *store) join(id string, reject bool, cost int64) (ln *lane, busy bool, err *Error) {
	s.mu.Lock()
	// The spare lane is in lanes under its id: most joins are of the
	// session whose lane was left last.
	if ln = s.spare; ln == nil || ln.id != id {
		ln = s.lanes[id]
	}
	if ln != nil && ln.refs > 0 && reject {
		s.mu.Unlock()
		return nil, true, nil
	}
	// The session of id is never evicted for its own run (keep), and
	// evicts nothing when it fails.
	if err := s.room(cost, id); err != nil {
		s.mu.Unlock()
		return nil, false, err
	}
	s.reserved += cost
	if ln == nil {
		if ln = s.spare; ln != nil {
			delete(s.lanes, ln.id)
			ln.id = id
		} else {
			ln = &lane{id: id}
		}
		s.lanes[id] = ln
	}
	if ln == s.spare {
		s.spare = nil
	}
	ln.refs++
	s.mu.Unlock()
	return ln, false, nil
}

// tryHold makes the caller the holder of ln, which it joined, unless
// another run holds it.
func (s *store) tryHold(ln *lane) bool {
	s.mu.Lock()
	ok := !ln.held
	ln.held = true
	s.mu.Unlock()
	return ok
}

// hold waits until the caller holds ln, which it joined, or ctx stops
// (then it reports false). A stop wakes the lane's waiters, which try
// again: one wait, no select (see runContext.init).
func (s *store) hold(ln *lane, ctx *runContext) bool {
	for {
		s.mu.Lock()
		if !ln.held {
			ln.held = true
			s.mu.Unlock()
			return true
		}
		if ctx.Err() != nil {
			s.mu.Unlock()
			return false
		}
		if ln.wake == nil {
			ln.wake = make(chan struct{})
		}
		wake := ln.wake
		s.mu.Unlock()
		id := ctx.afterStop(func() { s.wake(ln, wake) })
		<-wake
		ctx.cancelStop(id)
	}
}

// wake wakes the runs waiting in hold for ln on wake, unless it woke
// them already.
func (s *store) wake(ln *lane, wake chan struct{}) {
	s.mu.Lock()
	if ln.wake == wake {
		close(wake)
		ln.wake = nil
	}
	s.mu.Unlock()
}

// leave unregisters a run from its lane, letting go of it first when
// the run holds it (held): the runs blocked in hold try again.
func (s *store) leave(ln *lane, held bool) {
	s.mu.Lock()
	if held {
		ln.held = false
		if ln.wake != nil {
			close(ln.wake)
			ln.wake = nil
		}
	}
	ln.refs--
	if ln.refs == 0 {
		// No run holds it or waits for it: it stays as the spare, the
		// previous one goes.
		if s.spare != nil {
			delete(s.lanes, s.spare.id)
		}
		s.spare = ln
	}
	s.mu.Unlock()
}

// pushFront puts ss, in no list, at the front of the list by use.
func (s *store) pushFront(ss *session) {
	ss.prev, ss.next = nil, s.front
	if s.front != nil {
		s.front.prev = ss
	} else {
		s.back = ss
	}
	s.front = ss
}

// unlink takes ss out of the list by use.
func (s *store) unlink(ss *session) {
	if ss.prev != nil {
		ss.prev.next = ss.next
	} else if s.front == ss {
		s.front = ss.next
	}
	if ss.next != nil {
		ss.next.prev = ss.prev
	} else if s.back == ss {
		s.back = ss.prev
	}
	ss.prev, ss.next = nil, nil
}

// toFront marks ss, unless it was removed, as the most recently used.
func (s *store) toFront(ss *session) {
	if !ss.gone && s.front != ss {
		s.unlink(ss)
		s.pushFront(ss)
	}
}

// lookup returns the session with id, or nil, and marks it used.
func (s *store) lookup(id string) *session {
	s.mu.Lock()
	ss := s.last
	if ss == nil || ss.id != id {
		ss = s.sessions[id]
	}
	if ss != nil {
		s.last = ss
		s.toFront(ss)
	}
	s.mu.Unlock()
	return ss
}

// create adds an empty session with id, evicting the least recently used
// idle sessions beyond MaxSessions. The caller holds the lane of id.
func (s *store) create(id string) *session {
	s.mu.Lock()
	ss := &session{id: id, gen: s.newGen()}
	s.pushFront(ss)
	s.sessions[id] = ss
	for victim := s.back; victim != nil && len(s.sessions) > s.limits.MaxSessions; {
		prev := victim.prev
		if s.idle(victim.id) {
			s.drop(victim)
			s.evictions++
		}
		victim = prev
	}
	s.mu.Unlock()
	return ss
}

// drop removes ss from the store; s.mu is held.
func (s *store) drop(ss *session) {
	delete(s.sessions, ss.id)
	s.unlink(ss)
	s.messages -= len(ss.msgs)
	s.bytes -= ss.bytes
	ss.gone = true
	ss.gen = s.newGen()
	if s.dropLog {
		s.logDrop(ss.id)
	}
	if s.last == ss {
		s.last = nil
	}
}

// newGen returns a generation no session had; s.mu is held.
func (s *store) newGen() uint64 {
	s.gens++
	return s.gens
}

// messagesGen is messagesOf with the session's generation.
func (s *store) messagesGen(ss *session) ([]Message, uint64) {
	s.mu.Lock()
	gen := ss.gen
	s.mu.Unlock()
	return s.messagesOf(ss), gen
}

func (s *store) remove(id string) bool {
	s.mu.Lock()
	ss := s.sessions[id]
	if ss != nil {
		s.drop(ss)
	}
	s.mu.Unlock()
	return ss != nil
}

// removeIfEmpty removes ss when it holds no message (a run created it and
// then rolled back).
func (s *store) removeIfEmpty(ss *session) {
	s.mu.Lock()
	if !ss.gone && len(ss.msgs) == 0 && s.sessions[ss.id] == ss {
		s.drop(ss)
	}
	s.mu.Unlock()
}

// messagesOf returns the session's messages for the lane holder to read
// without the lock: only the lane holder changes them (and revert, when
// no run holds or waits for the lane), so it takes no lock either.
func (s *store) messagesOf(ss *session) []Message {
	return ss.msgs[:len(ss.msgs):len(ss.msgs)]
}

// appendMessages adds msgs to ss, taking their cost from the run's
// reservation res first and making room in the budget for the rest; it
// refuses with CodeLimitExceeded, changing nothing, when the rest cannot
// fit. The caller holds the lane.
func (s *store) appendMessages(ss *session, msgs []Message, size int64, res *int64) *Error {
	s.mu.Lock()
	cost := size + int64(len(msgs))*MessageOverhead
	if !ss.gone {
		if err := s.take(cost, res, ss.id); err != nil {
			s.mu.Unlock()
			return err
		}
		s.messages += len(msgs)
		s.bytes += size
	}
	ss.msgs = append(ss.msgs, msgs...)
	ss.bytes += size
	ss.tailRun = ""
	s.mu.Unlock()
	return nil
}

// replace sets the session's messages, as appendMessages does for the
// difference in cost. The caller holds the lane.
func (s *store) replace(ss *session, msgs []Message, size int64, res *int64) *Error {
	s.mu.Lock()
	if !ss.gone {
		delta := size - ss.bytes + int64(len(msgs)-len(ss.msgs))*MessageOverhead
		if delta > 0 {
			if err := s.take(delta, res, ss.id); err != nil {
				s.mu.Unlock()
				return err
			}
		}
		s.messages += len(msgs) - len(ss.msgs)
		s.bytes += size - ss.bytes
	}
	ss.msgs, ss.bytes = msgs, size
	ss.tailRun = ""
	ss.gen = s.newGen()
	ss.chain = ss.chain[:0]
	s.mu.Unlock()
	return nil
}

// used is what the budget counts now; s.mu is held.
func (s *store) used() int64 {
	return s.bytes + int64(s.messages)*MessageOverhead + s.reserved
}

// take accounts for cost bytes about to be stored: what the reservation
// res covers moves out of s.reserved, the rest must fit (see room). s.mu
// is held.
func (s *store) take(cost int64, res *int64, keep string) *Error {
	var covered int64
	if res != nil {
		covered = min(cost, *res)
	}
	if err := s.room(cost-covered, keep); err != nil {
		return err
	}
	if res != nil {
		*res -= covered
	}
	s.reserved -= covered
	return nil
}

// room makes need more bytes fit in the budget by evicting the least
// recently used idle sessions other than keep. When even evicting all of
// them would not be enough it evicts nothing and refuses. s.mu is held.
func (s *store) room(need int64, keep string) *Error {
	budget := s.limits.MaxTotalBytes
	over := s.used() + need - budget
	if need <= 0 || over <= 0 {
		return nil
	}
	var free int64
	for ss := s.back; ss != nil && free < over; ss = ss.prev {
		if s.evictable(ss, keep) {
			free += ss.cost()
		}
	}
	if free < over {
		return NewError(CodeLimitExceeded, "the runtime's memory budget (maxTotalBytes, "+itoa(int(budget))+
			") cannot fit "+itoa(int(need))+" more bytes, even after evicting every idle session")
	}
	for ss := s.back; ss != nil && over > 0; {
		prev := ss.prev
		if s.evictable(ss, keep) {
			over -= ss.cost()
			s.drop(ss)
			s.evictions++
		}
		ss = prev
	}
	return nil
}

// evictable reports whether ss may be evicted: no run holds or waits for
// its lane, and it is not keep. s.mu is held.
func (s *store) evictable(ss *session, keep string) bool {
	return ss.id != keep && s.idle(ss.id)
}

// idle reports whether no run holds or waits for the lane of id; s.mu is
// held.
func (s *store) idle(id string) bool {
	ln := s.lanes[id]
	return ln == nil || ln.refs == 0
}

// cost is what ss counts against the budget; s.mu is held.
func (ss *session) cost() int64 {
	return ss.bytes + int64(len(ss.msgs))*MessageOverhead
}

// release gives back what the reservation res holds beyond keep.
func (s *store) release(res *int64, keep int64) {
	if *res <= keep {
		// Nothing to give back: *res is the run's, changed only under
		// s.mu by its own calls.
		return
	}
	s.mu.Lock()
	s.reserved -= *res - keep
	*res = keep
	s.mu.Unlock()
}

// completed counts a completed run, runID, and records that the turn it
// appended to ss from message mark on is the session's tail. The caller
// holds the lane.
func (s *store) completed(ss *session, runID string, mark int) {
	s.mu.Lock()
	s.nCompleted++
	ss.tailRun, ss.tailMark = runID, mark
	s.mu.Unlock()
}

// revert removes the turn of run runID from session id (see
// Runtime.RevertRun).
func (s *store) revert(id, runID string) bool {
	s.mu.Lock()
	ss := s.sessions[id]
	ok := ss != nil && ss.tailRun == runID && s.idle(id)
	if ok {
		s.cut(ss, ss.tailMark)
	}
	if ss != nil && (!ok || len(ss.msgs) == 0) {
		// Something newer was built on the turn, or is being built:
		// drop the session instead, so that the host's history seeds it.
		s.drop(ss)
	}
	s.mu.Unlock()
	return ok
}

// truncate cuts the session back to n messages. The capacity is cut too,
// so later appends never write over memory an abandoned model call may
// still be reading.
func (s *store) truncate(ss *session, n int) {
	s.mu.Lock()
	s.cut(ss, n)
	s.mu.Unlock()
}

// cut is truncate with s.mu held.
func (s *store) cut(ss *session, n int) {
	if n >= len(ss.msgs) {
		return
	}
	var cut int64
	for i := n; i < len(ss.msgs); i++ {
		cut += ss.msgs[i].Size()
	}
	if !ss.gone {
		s.messages -= len(ss.msgs) - n
		s.bytes -= cut
	}
	ss.bytes -= cut
	ss.msgs = ss.msgs[:n:n]
	ss.tailRun = ""
	ss.gen = s.newGen()
	if len(ss.chain) > n {
		ss.chain = ss.chain[:n]
	}
}

func (s *store) snapshot(id string) ([]Message, uint64, string, bool) {
	s.mu.Lock()
	ss := s.sessions[id]
	var msgs []Message
	var gen uint64
	var head string
	if ss != nil {
		msgs, gen = append([]Message(nil), ss.msgs...), ss.gen
		head = ss.lastLink().text()
	}
	s.mu.Unlock()
	return msgs, gen, head, ss != nil
}

func (s *store) ids() []string {
	s.mu.Lock()
	ids := make([]string, 0, len(s.sessions))
	for id := range s.sessions {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	return ids
}

func (s *store) stats() Stats {
	s.mu.Lock()
	st := Stats{
		Sessions:      len(s.sessions),
		Messages:      s.messages,
		Bytes:         s.bytes,
		Evictions:     s.evictions,
		BudgetUsed:    s.used(),
		BudgetBytes:   s.limits.MaxTotalBytes,
		RunsCompleted: s.nCompleted,
		RunsFailed:    s.failed,
		RunsCancelled: s.cancelled,
	}
	s.mu.Unlock()
	return st
}

// count counts a run that failed or was cancelled (completed counts the
// others).
func (s *store) count(outcome EventType) {
	s.mu.Lock()
	switch outcome {
	case EventRunFailed:
		s.failed++
	case EventRunCancelled:
		s.cancelled++
	}
	s.mu.Unlock()
}
