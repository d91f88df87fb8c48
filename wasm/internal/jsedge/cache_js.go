//go:build js && wasm

package jsedge

import (
	"syscall/js"
	"unsafe"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/onethread"
	"github.com/agentrt/agentrt/wasm/internal/jsutil"
)

// Cache keeps the JavaScript objects of session messages that were sent
// to a model, so that each message crosses into JavaScript once and not
// on every turn. Create one per core.Runtime with NewCache and pass it to
// Request and to the other conversions that take one (they need one: the
// module always has one, and a conversion without a cache is code it
// would carry for nobody).
//
// The objects a Cache hands out are frozen (Object.freeze, and so are
// their tool_calls arrays and the calls in them): they are shared by every
// later request of the session, so a model that changed one would change
// what the next turn sees.
//
// # Notes
//
//   - An entry keeps its core.Message, so the message's strings stay
//     alive and their addresses cannot be reused by other strings: two
//     messages whose fields point to the same bytes (with the same
//     lengths) and share their tool-call array are equal. That is the key.
//   - Each session keeps the entries of its latest model request plus
//     what was added since; others are dropped once they outnumber those
//     (a session holds at most twice the messages a model was last sent,
//     plus 64). Forget drops a session's entries; Reset drops all.
//   - Each session also keeps one Array of its messages' objects from
//     the window's start, which later requests of the same generation
//     extend and slice (see View): one reference per message, dropped
//     with the session's entries.
//   - Safe for concurrent use.
type Cache struct {
	mu       onethread.Mutex
	sessions map[string]*sessionCache
}

type sessionCache struct {
	entries map[msgKey]*cached
	// last holds the entries of the latest View in order, so that the
	// next View finds most messages by position, without hashing a key;
	// spare is the slice before it, reused.
	last, spare []*cached
	vals        []any // scratch for the arguments of Array.of
	gen         uint64
	// all is a JavaScript Array of the objects of the session's messages
	// from index base to end, as they were under generation allGen (see
	// core.ModelRequest.Generation): while the generation holds, the
	// session only grows, so the next View pushes what is new onto all
	// and hands out a slice of it. all itself is never handed out: a
	// model may change the Array it is given.
	all          js.Value
	allGen       uint64
	base, allEnd int
	// idJS is the session id as a JavaScript string, made once for the
	// requests of the session (see SessionID); undefined until then.
	idJS js.Value
}

type cached struct {
	key msgKey
	msg core.Message // keeps the key's pointers valid
	v   js.Value
	arg any    // v as an any, boxed once
	gen uint64 // the latest View that used it (or the one before an Add)
	pos int    // index in last, when gen is that View's
}

// msgKey identifies a message by the addresses and lengths of its
// fields' bytes, its role's too. See Cache. It holds only pointers and
// integers, so that the map hashes and compares it as memory, with no
// hash and equality functions of its own in the module.
type msgKey struct {
	content    *byte
	contentLen int
	role       *byte
	roleLen    int
	callID     *byte
	callIDLen  int
	calls      *core.ToolCall
	callsLen   int
	id         *byte
	idLen      int
}

//go:noinline
func keyOf(m *core.Message) msgKey {
	k := msgKey{
		content: unsafe.StringData(m.Content), contentLen: len(m.Content),
		role: unsafe.StringData(string(m.Role)), roleLen: len(m.Role),
		callID: unsafe.StringData(m.ToolCallID), callIDLen: len(m.ToolCallID),
		id: unsafe.StringData(m.ID), idLen: len(m.ID),
		callsLen: len(m.ToolCalls),
	}
	if len(m.ToolCalls) > 0 {
		k.calls = &m.ToolCalls[0]
	}
	return k
}

// NewCache returns an empty Cache.
func NewCache() *Cache { return &Cache{sessions: make(map[string]*sessionCache)} }

// View returns req.Messages, the messages of one model request, as a
// new JavaScript Array of frozen message objects, converting only those
// the session's cache does not hold. The session's cache then holds
// those messages (and what Add puts there later).
//
// A request of the session's generation as the previous View's, whose
// window starts no earlier, costs the messages appended since: they are
// pushed onto the session's Array of all the messages, and the request
// gets a copy of its window (Array.prototype.slice), not an Array built
// from every message again.
func (c *Cache) View(req *core.ModelRequest) js.Value {
	msgs := req.Messages
	c.mu.Lock()
	defer c.mu.Unlock()
	sc := c.sessions[req.SessionID]
	if sc == nil {
		sc = &sessionCache{entries: make(map[msgKey]*cached, len(msgs))}
		c.sessions[req.SessionID] = sc
	}
	end := req.Offset + len(msgs)
	if sc.all.Type() == js.TypeObject && sc.allGen == req.Generation && req.Generation != 0 &&
		sc.base <= req.Offset && req.Offset <= sc.allEnd && sc.allEnd <= end {
		vals := sc.vals[:0]
		for i := sc.allEnd - req.Offset; i < len(msgs); i++ {
			e := sc.get(&msgs[i], keyOf(&msgs[i]))
			e.gen, e.pos = sc.gen, len(sc.last)
			sc.last = append(sc.last, e)
			vals = append(vals, e.arg)
		}
		push(sc.all, vals)
		clear(vals)
		sc.vals, sc.allEnd = vals[:0], end
		return sc.all.Call(MethodSlice, req.Offset-sc.base)
	}
	prevGen := sc.gen
	sc.gen++
	next := sc.spare[:0]
	vals := sc.vals[:0]
	at := -1 // index in sc.last of the previous message's entry, or -2
	for i := range msgs {
		k := keyOf(&msgs[i])
		var e *cached
		if at >= -1 && at+1 < len(sc.last) && sc.last[at+1].key == k {
			e = sc.last[at+1]
		} else {
			e = sc.get(&msgs[i], k)
		}
		// Keys decide; positions are only a hint for the next message.
		if e.gen == prevGen && e.pos >= 0 && e.pos < len(sc.last) && sc.last[e.pos] == e {
			at = e.pos
		} else {
			at = -2
		}
		next = append(next, e)
		vals = append(vals, e.arg)
	}
	for i, e := range next {
		e.gen, e.pos = sc.gen, i
	}
	// Drop what no request uses any more, once there is enough of it.
	if len(sc.entries) > 2*len(msgs)+64 {
		for k, e := range sc.entries {
			if e.gen != sc.gen {
				delete(sc.entries, k)
			}
		}
	}
	sc.spare, sc.last = sc.last, next
	sc.all = arrayOf(vals)
	sc.allGen, sc.base, sc.allEnd = req.Generation, req.Offset, end
	clear(vals)
	sc.vals = vals[:0]
	return sc.all.Call(MethodSlice)
}

// SessionID returns session as a JavaScript string, made once per
// session that a View has used (saving a js.Value, and its finalizer, on
// every later model request), or as a Go string otherwise, for Value.Set.
func (c *Cache) SessionID(session string) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	sc := c.sessions[session]
	if sc == nil {
		return session
	}
	if sc.idJS.Type() != js.TypeString {
		sc.idJS = js.ValueOf(session)
	}
	return sc.idJS
}

// Add returns msgs as a JavaScript Array of frozen message objects, and
// keeps them in session's cache for the next View (they are the messages
// a turn appended), as Message does.
func (c *Cache) Add(session string, msgs []core.Message) js.Value {
	vals := make([]any, len(msgs))
	for i := range msgs {
		vals[i] = c.Message(session, &msgs[i])
	}
	return arrayOf(vals)
}

// Message returns m as a frozen JavaScript object, from session's cache
// when it holds m, or converted and added to it. Only a session that a
// View has used gets entries this way (a runtime whose model is not a
// JavaScript function never calls View, and must not fill the cache).
func (c *Cache) Message(session string, m *core.Message) js.Value {
	c.mu.Lock()
	defer c.mu.Unlock()
	sc := c.sessions[session]
	if sc == nil {
		return frozenMessage(m)
	}
	return sc.get(m, keyOf(m)).v
}

// Lookup returns msgs as a JavaScript Array of frozen message objects,
// taking those session's cache holds from it and converting the others
// without adding them (a getSession of a long session must not fill the
// cache).
func (c *Cache) Lookup(session string, msgs []core.Message) js.Value {
	vals := make([]any, len(msgs))
	c.mu.Lock()
	sc := c.sessions[session]
	for i := range msgs {
		if sc != nil {
			if e, ok := sc.entries[keyOf(&msgs[i])]; ok {
				vals[i] = e.v
				continue
			}
		}
		vals[i] = frozenMessage(&msgs[i])
	}
	c.mu.Unlock()
	return arrayOf(vals)
}

// Forget drops session's entries (the session was deleted).
func (c *Cache) Forget(session string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.sessions, session)
	c.mu.Unlock()
}

// Reset drops every entry (the runtime was closed).
func (c *Cache) Reset() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.sessions = make(map[string]*sessionCache)
	c.mu.Unlock()
}

// Prune drops the entries of every session keep reports false for (for
// example sessions the store evicted).
func (c *Cache) Prune(keep func(session string) bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.sessions {
		if !keep(id) {
			delete(c.sessions, id)
		}
	}
}

// Sessions returns the number of sessions with entries.
func (c *Cache) Sessions() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sessions)
}

// Len returns the number of entries of session.
func (c *Cache) Len(session string) int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if sc := c.sessions[session]; sc != nil {
		return len(sc.entries)
	}
	return 0
}

// get returns the entry of m, whose key is k, converting and adding it
// when missing. The caller holds the lock.
func (sc *sessionCache) get(m *core.Message, k msgKey) *cached {
	// The comma-ok form, as everywhere with msgKey: the module then
	// needs only the runtime's mapaccess2 for a key of that type, not
	// mapaccess1 too.
	e, ok := sc.entries[k]
	if !ok {
		v := frozenMessage(m)
		e = &cached{key: k, msg: *m, v: v, arg: v, gen: sc.gen, pos: -1}
		sc.entries[k] = e
	}
	return e
}

// frozenMessage returns m as a JavaScript object in the session shape
// (see the table in values_js.go), frozen with its tool calls.
//
//go:noinline
func frozenMessage(m *core.Message) js.Value {
	o := newObject()
	o.Set(FieldRole, str(string(m.Role)))
	setString(o, FieldContent, m.Content)
	if m.ToolCallID != "" {
		setString(o, FieldToolCallID, m.ToolCallID)
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]any, len(m.ToolCalls))
		for i := range m.ToolCalls {
			c := ToolCall(&m.ToolCalls[i])
			freeze(c)
			calls[i] = c
		}
		a := arrayOf(calls)
		freeze(a)
		setValue(o, FieldToolCalls, a)
	}
	if m.ID != "" {
		setString(o, FieldID, m.ID)
	}
	freeze(o)
	return o
}

// freeze calls Object.freeze(v).
//
// Object.freeze returns v, and every object a call returns becomes a new
// js.Value with a Go finalizer (about 1 µs each in the module): where the
// host has Array.prototype.forEach, freeze puts v in a scratch array and
// calls scratch.forEach(Object.freeze), which returns undefined. jshost's
// object world has no forEach: there freeze calls Object.freeze itself.
//
// The scratch array is made under the lock too: an allocating goroutine
// can be parked by a garbage-collection assist, and another freeze would
// then run between the test and the set.
func freeze(v js.Value) {
	freezeMu.Lock()
	if freezeScratch.IsUndefined() {
		a := jsutil.Array.New()
		if fe := a.Get(MethodForEach); fe.Type() == js.TypeFunction {
			freezeForEach = fe.Call(MethodBind, a, jsRefs().freeze)
		}
		freezeScratch = a
	}
	if freezeForEach.Type() == js.TypeFunction {
		freezeScratch.SetIndex(0, v)
		freezeForEach.Invoke()
		freezeScratch.Set(FieldLength, 0)
		freezeMu.Unlock()
		return
	}
	freezeMu.Unlock()
	jsRefs().freeze.Invoke(v)
}

// The scratch array of freeze and freezeForEach, its forEach bound to
// (freezeScratch, Object.freeze) or undefined where arrays have no
// forEach: made by the first freeze.
var (
	freezeMu      onethread.Mutex
	freezeScratch js.Value
	freezeForEach js.Value
)

// arrayChunk bounds the arguments of one Array.prototype.push call:
// engines limit a call's argument count (JavaScriptCore to 64 Ki).
const arrayChunk = 8192

// arrayOf returns vals as a JavaScript Array, built with one call per
// arrayChunk values instead of one SetIndex per value: Array.of, or
// Array.prototype.push, chunk by chunk, for more values than one call
// may take.
func arrayOf(vals []any) js.Value {
	if len(vals) <= arrayChunk {
		return jsRefs().arrayOf.Invoke(vals...)
	}
	a := jsutil.Array.New()
	push(a, vals)
	return a
}

// push appends vals to the JavaScript Array a, one
// Array.prototype.push call per arrayChunk values.
func push(a js.Value, vals []any) {
	for len(vals) > 0 {
		n := min(len(vals), arrayChunk)
		a.Call(MethodPush, vals[:n]...)
		vals = vals[n:]
	}
}
