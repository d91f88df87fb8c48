package core

// This file holds the head of a conversation: an opaque string that names
// its messages as core reads them, chained one message on the one before
// (docs/adr/0025-conversation-heads.md).

// headPrefix starts every head; it names the definition, so that a later
// one can be told apart.
const headPrefix = "h1-"

// headLen is the length of a head: the prefix and 22 base64url characters
// of 128 bits.
const headLen = len(headPrefix) + 22

// notAHead is the message of an ifHead that is not a head.
const notAHead = "ifHead is not a head (\"h1-\" and 22 base64url characters)"

// link is one link of a head chain: 128 bits in four 32-bit lanes.
type link [4]uint32

// headSeed is h0, the head of the empty conversation.
var headSeed = link{0x9e3779b9, 0x7f4a7c15, 0xc2b2ae3d, 0x27d4eb4f}

// The multipliers of the lanes: a word folded into lane j is multiplied
// by headMul[j], turned, and multiplied by headMul[j+1].
var headMul = [4]uint32{0x239b961b, 0xab0e9789, 0x38b34ae5, 0xa1e38b93}

// The hash works on 32-bit words alone, so that the glue computes the
// same links in JavaScript with Math.imul and no 64-bit arithmetic
// (js/head.js): a quick turn with ifHead gets its head there, without a
// call into the module.

// mixer folds 32-bit words into the four lanes of a link, the n-th word
// into lane n mod 4 (MurmurHash3's x86 128-bit body, word by word).
type mixer struct {
	h link
	n uint32
}

// word folds one word.
func (m *mixer) word(w uint32) {
	j := m.n & 3
	m.n++
	k := w * headMul[j]
	k = k<<15 | k>>17
	k *= headMul[(j+1)&3]
	h := m.h[j] ^ k
	h = h<<13 | h>>19
	h += m.h[(j+1)&3]
	m.h[j] = h*5 + 0xe6546b64
}

// str folds the length of s, then its bytes as little-endian words, the
// last one padded with zeros; the length keeps the fields of a message
// from running into each other.
func (m *mixer) str(s string) {
	m.word(uint32(len(s)))
	i := 0
	for ; i+4 <= len(s); i += 4 {
		m.word(uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24)
	}
	if i < len(s) {
		var w uint32
		for k := 0; i < len(s); i, k = i+1, k+8 {
			w |= uint32(s[i]) << k
		}
		m.word(w)
	}
}

// fmix is MurmurHash3's finaliser of a 32-bit lane.
func fmix(x uint32) uint32 {
	x ^= x >> 16
	x *= 0x85ebca6b
	x ^= x >> 13
	x *= 0xc2b2ae35
	return x ^ x>>16
}

// next returns the link of m following prev: the role, content, tool call
// id and each tool call's id, name and arguments, each with its length.
// The host's message id is left out: not every shape carries it.
func next(prev link, m *Message) link {
	x := mixer{h: prev}
	x.str(string(m.Role))
	x.str(m.Content)
	x.str(m.ToolCallID)
	x.word(uint32(len(m.ToolCalls)))
	for i := range m.ToolCalls {
		c := &m.ToolCalls[i]
		x.str(c.ID)
		x.str(c.Name)
		x.str(c.Arguments)
	}
	// The words' count, then each lane mixed into the others, finalised,
	// and mixed again (MurmurHash3's x86 128-bit tail).
	h0, h1, h2, h3 := x.h[0]^x.n, x.h[1], x.h[2], x.h[3]
	h0 += h1 + h2 + h3
	h1 += h0
	h2 += h0
	h3 += h0
	h0, h1, h2, h3 = fmix(h0), fmix(h1), fmix(h2), fmix(h3)
	h0 += h1 + h2 + h3
	return link{h0, h1 + h0, h2 + h0, h3 + h0}
}

// Head returns the head of the session after the run (see the function
// Head): the IfHead of the host's next turn. It is computed on the first
// ask, from the session's chain while the session still holds the run's
// messages, and from those messages otherwise.
func (r *Result) Head() string {
	if r.head != "" || r.headStore == nil {
		return r.head
	}
	msgs, n := r.headMsgs, len(r.headMsgs)
	if n == 0 {
		return headSeed.text()
	}
	s, ss := r.headStore, r.headSess
	s.mu.Lock()
	var l link
	if len(ss.msgs) >= n && &ss.msgs[0] == &msgs[0] {
		// The session holds the run's messages as a prefix: its chain
		// is theirs.
		if len(ss.chain) < n {
			ss.chain = extend(ss.chain, ss.msgs[:n:n])
		}
		l = ss.chain[n-1]
		s.mu.Unlock()
	} else {
		s.mu.Unlock()
		c := extend(nil, msgs)
		l = c[n-1]
	}
	return l.text()
}

// SetHead sets the head Head returns, for an edge that decodes a result
// whose head was computed where the run ran.
func (r *Result) SetHead(head string) { r.head = head }

// extend returns chain grown to one link per message of msgs; chain holds
// the links of a prefix of msgs.
func extend(chain []link, msgs []Message) []link {
	prev := headSeed
	if len(chain) > 0 {
		prev = chain[len(chain)-1]
	}
	if cap(chain) < len(msgs) {
		// The chain takes the room the messages have: a session that
		// grows turn by turn (append) then copies its chain as seldom as
		// its messages, where a fixed eighth more copied it every
		// len/16 turns.
		room := max(cap(msgs), len(msgs)+len(msgs)/8+2)
		grown := make([]link, len(chain), room)
		copy(grown, chain)
		chain = grown
	}
	for i := len(chain); i < len(msgs); i++ {
		prev = next(prev, &msgs[i])
		chain = append(chain, prev)
	}
	return chain
}

const b64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// text returns the head string of a link.
func (l link) text() string {
	b := l.bytes()
	return string(b[:])
}

// is reports whether head is l's head string, without building it on
// the heap.
func (l link) is(head string) bool {
	b := l.bytes()
	return string(b[:]) == head
}

// bytes returns the head string of a link as an array.
func (l link) bytes() [headLen]byte {
	var buf [headLen]byte
	copy(buf[:], headPrefix)
	var raw [16]byte
	for i, lane := range l {
		raw[4*i], raw[4*i+1], raw[4*i+2], raw[4*i+3] = byte(lane), byte(lane>>8), byte(lane>>16), byte(lane>>24)
	}
	k := len(headPrefix)
	// 16 bytes: five groups of three and one byte left (two characters).
	for i := 0; i+3 <= 15; i += 3 {
		v := uint(raw[i])<<16 | uint(raw[i+1])<<8 | uint(raw[i+2])
		buf[k], buf[k+1], buf[k+2], buf[k+3] = b64url[v>>18&63], b64url[v>>12&63], b64url[v>>6&63], b64url[v&63]
		k += 4
	}
	v := uint(raw[15])
	buf[k], buf[k+1] = b64url[v>>2], b64url[v<<4&63]
	return buf
}

// lastLink extends the session's chain to all its messages and returns
// its last link (h0 for no messages); s.mu is held.
func (ss *session) lastLink() link {
	ss.chain = extend(ss.chain, ss.msgs)
	if len(ss.chain) == 0 {
		return headSeed
	}
	return ss.chain[len(ss.chain)-1]
}

// headOf returns the head of the chain (h0 for an empty one).
func headOf(chain []link) string {
	if len(chain) == 0 {
		return headSeed.text()
	}
	return chain[len(chain)-1].text()
}

// ValidHead reports whether s has the form of a head: the prefix and 22
// base64url characters. It says nothing of whether any conversation has
// that head.
func ValidHead(s string) bool {
	if len(s) != headLen || s[:len(headPrefix)] != headPrefix {
		return false
	}
	for i := len(headPrefix); i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	// The last character carries two bits and four zero bits.
	return indexB64(s[len(s)-1])&15 == 0
}

func indexB64(c byte) int {
	for i := 0; i < len(b64url); i++ {
		if b64url[i] == c {
			return i
		}
	}
	return -1
}

// Head returns the head of msgs: the same messages (their ids aside) have
// the same head at every edge, whatever shape the host passed them in.
func Head(msgs []Message) string {
	return headOf(extend(nil, msgs))
}

// HistoryHead returns the head of a history as a run seeds it: its
// system messages left out. It reads the history as it is; CheckHistory
// says whether it seeds without repairs.
func HistoryHead(history []SeedMessage) string {
	prev := headSeed
	for i := range history {
		h := &history[i]
		if h.Role == RoleSystem {
			continue
		}
		m := Message{Role: h.Role, Content: h.Content, ToolCallID: h.ToolCallID, ToolCalls: h.ToolCalls}
		prev = next(prev, &m)
	}
	return prev.text()
}

// find returns the number of messages whose head is head in chain (0 for
// h0), or -1 when no prefix has it.
func find(chain []link, head string) int {
	if head == headSeed.text() {
		return 0
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i].text() == head {
			return i + 1
		}
	}
	return -1
}

// divergedError is the refusal of a run whose IfHead is not the head of
// the conversation it would run on: it carries that head and, when the
// caller's head is the one of an earlier state, the messages it lacks.
func divergedError(msgs []Message, chain []link, ifHead string) *Error {
	e := NewError(CodeHistoryDiverged, "the conversation's head is not ifHead: it changed since the caller read it")
	e.Head = headOf(chain)
	if k := find(chain, ifHead); k >= 0 {
		e.Missing = make([]Message, 0, len(msgs)-k)
		for i := k; i < len(msgs); i++ {
			e.Missing = append(e.Missing, msgs[i].Clone())
		}
	}
	return e
}

// chainOf returns the session's chain, extended to all its messages. The
// caller holds the lane; s.mu is taken for the cache.
func (s *store) chainOf(ss *session) []link {
	s.mu.Lock()
	ss.chain = extend(ss.chain, ss.msgs)
	c := ss.chain[:len(ss.chain):len(ss.chain)]
	s.mu.Unlock()
	return c
}

// headChain returns the chain of the conversation a run would run on,
// all, which the session holding current becomes: the session's own
// chain when all is its messages or grows them, a new one otherwise.
func (t *turn) headChain(current, all []Message) []link {
	if t.sess == nil || len(current) == 0 {
		return extend(nil, all)
	}
	base := t.store.chainOf(t.sess)
	if len(all) >= len(current) && len(current) > 0 && &all[0] == &current[0] {
		return extend(base, all)
	}
	if len(all) >= len(current) && IsPrefix(current, all) {
		return extend(base[:len(base):len(base)], all)
	}
	return extend(nil, all)
}
