package core

import (
	"container/list"
	"sync"
)

// store is the in-process session store: sessions by id with LRU
// eviction, and the per-session lanes that serialise runs. One mutex
// guards everything; each operation under it is short.
type store struct {
	limits Limits

	mu        sync.Mutex
	sessions  map[string]*session
	lru       *list.List // of *session, most recently used at the front
	lanes     map[string]*lane
	messages  int
	bytes     int64
	evictions int
	completed int
	failed    int
	cancelled int
	// gens numbers session generations (see session.gen).
	gens uint64
}

type session struct {
	id    string
	msgs  []Message
	bytes int64
	elem  *list.Element
	gone  bool // removed from the store (deleted or evicted)
	// gen names the session's messages for hosts that mirror them: it
	// changes whenever they change other than by appending.
	gen uint64
}

// lane serialises the runs of one session id. It exists while a run holds
// or waits for it, whether or not the session exists yet.
type lane struct {
	id   string
	sem  chan struct{}
	refs int
}

func newStore(limits Limits) *store {
	return &store{
		limits:   limits,
		sessions: make(map[string]*session),
		lru:      list.New(),
		lanes:    make(map[string]*lane),
	}
}

// join registers a run on the lane of id. With reject set it refuses
// (busy) when another run holds or waits for the lane.
func (s *store) join(id string, reject bool) (ln *lane, busy bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ln = s.lanes[id]
	if ln != nil && reject {
		return nil, true
	}
	if ln == nil {
		ln = &lane{id: id, sem: make(chan struct{}, 1)}
		s.lanes[id] = ln
	}
	ln.refs++
	return ln, false
}

// leave unregisters a run from its lane; the lane must not be held by it.
func (s *store) leave(ln *lane) {
	s.mu.Lock()
	ln.refs--
	if ln.refs == 0 && s.lanes[ln.id] == ln {
		delete(s.lanes, ln.id)
	}
	s.mu.Unlock()
}

// lookup returns the session with id, or nil, and marks it used.
func (s *store) lookup(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[id]
	if ss != nil {
		s.lru.MoveToFront(ss.elem)
	}
	return ss
}

// create adds an empty session with id, evicting the least recently used
// idle sessions beyond MaxSessions. The caller holds the lane of id.
func (s *store) create(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := &session{id: id, gen: s.newGen()}
	ss.elem = s.lru.PushFront(ss)
	s.sessions[id] = ss
	for e := s.lru.Back(); e != nil && len(s.sessions) > s.limits.MaxSessions; {
		prev := e.Prev()
		victim := e.Value.(*session)
		if s.lanes[victim.id] == nil { // idle: no run holds or waits for it
			s.drop(victim)
			s.evictions++
		}
		e = prev
	}
	return ss
}

// drop removes ss from the store; s.mu is held.
func (s *store) drop(ss *session) {
	delete(s.sessions, ss.id)
	s.lru.Remove(ss.elem)
	s.messages -= len(ss.msgs)
	s.bytes -= ss.bytes
	ss.gone = true
	ss.gen = s.newGen()
}

// newGen returns a generation no session had; s.mu is held.
func (s *store) newGen() uint64 {
	s.gens++
	return s.gens
}

// messagesGen is messagesOf with the session's generation.
func (s *store) messagesGen(ss *session) ([]Message, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ss.msgs[:len(ss.msgs):len(ss.msgs)], ss.gen
}

func (s *store) remove(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[id]
	if ss == nil {
		return false
	}
	s.drop(ss)
	return true
}

// removeIfEmpty removes ss when it holds no message (a run created it and
// then rolled back).
func (s *store) removeIfEmpty(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ss.gone && len(ss.msgs) == 0 && s.sessions[ss.id] == ss {
		s.drop(ss)
	}
}

// messagesOf returns the session's messages for the lane holder to read
// without the lock: only the lane holder changes them.
func (s *store) messagesOf(ss *session) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ss.msgs[:len(ss.msgs):len(ss.msgs)]
}

// appendMessages adds msgs to ss. The caller holds the lane.
func (s *store) appendMessages(ss *session, msgs []Message, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss.msgs = append(ss.msgs, msgs...)
	ss.bytes += size
	if !ss.gone {
		s.messages += len(msgs)
		s.bytes += size
	}
}

// replace sets the session's messages. The caller holds the lane.
func (s *store) replace(ss *session, msgs []Message, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ss.gone {
		s.messages += len(msgs) - len(ss.msgs)
		s.bytes += size - ss.bytes
	}
	ss.msgs, ss.bytes = msgs, size
	ss.gen = s.newGen()
}

// truncate cuts the session back to n messages. The capacity is cut too,
// so later appends never write over memory an abandoned model call may
// still be reading.
func (s *store) truncate(ss *session, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
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
	ss.gen = s.newGen()
}

func (s *store) snapshot(id string) ([]Message, uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[id]
	if ss == nil {
		return nil, 0, false
	}
	return append([]Message(nil), ss.msgs...), ss.gen, true
}

func (s *store) ids() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.sessions))
	for id := range s.sessions {
		ids = append(ids, id)
	}
	return ids
}

func (s *store) stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{
		Sessions:      len(s.sessions),
		Messages:      s.messages,
		Bytes:         s.bytes,
		Evictions:     s.evictions,
		RunsCompleted: s.completed,
		RunsFailed:    s.failed,
		RunsCancelled: s.cancelled,
	}
}

func (s *store) count(outcome EventType) {
	s.mu.Lock()
	switch outcome {
	case EventRunCompleted:
		s.completed++
	case EventRunFailed:
		s.failed++
	case EventRunCancelled:
		s.cancelled++
	}
	s.mu.Unlock()
}
