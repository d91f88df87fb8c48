// Package wire reads and writes agentrt's boundary wire: the byte frames
// a host and the module exchange through linear memory instead of
// JavaScript values (see docs/wire.md). A host fills a buffer the module
// allocated with a frame (a turn to begin, a model's reply, a tool's
// result), calls one export, and reads the module's answer (the next
// action of the turn, with the events it emitted) from another buffer.
//
//	f := wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "hi"})
//	b, err := wire.DecodeBegin(f, 0)          // in the module
//	out := wire.AppendAction(nil, events, &act) // the module's answer
//	a, err := wire.DecodeAction(out)           // in the host
//
// Every decoder checks the whole frame and returns a *core.Error with
// code invalid_argument (invalid_history inside a begin frame's history,
// with the message's index) for anything malformed: a wrong magic or
// version, an unknown kind, a truncated buffer, an overlong varint,
// invalid UTF-8 or bytes after the end. It never panics and allocates
// nothing in proportion to a length it has not checked against the
// bytes left.
//
// The package is pure Go, builds on every platform, and avoids fmt,
// strconv and reflect: it is linked into the module that phones
// download.
package wire

import (
	"unicode/utf8"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/internal/decimal"
)

// Magic opens every frame: "ARW".
const Magic = "ARW"

// Version is the wire version this package reads and writes.
const Version = 1

// Kind says what a frame carries: the byte after the version.
type Kind byte

// Frame kinds. Host-to-module kinds are below 0x10, module-to-host kinds
// from 0x10.
const (
	KindBegin      Kind = 0x01 // host: begin a turn
	KindModelReply Kind = 0x02 // host: the model's answer
	KindToolResult Kind = 0x03 // host: the tool's answer
	KindDelta      Kind = 0x04 // host: streamed model text
	KindCommit     Kind = 0x05 // host: a turn already run, to store

	KindAction    Kind = 0x10 // module: events, then the next action
	KindSession   Kind = 0x11 // module: a session's messages
	KindStats     Kind = 0x12 // module: counters
	KindRefused   Kind = 0x13 // module: a refused call (an error)
	KindSessions  Kind = 0x14 // module: session ids
	KindCommitted Kind = 0x15 // module: a commit's outcome
)

// Role bytes of a message, as in the packed history format.
const (
	RoleUser      = 0
	RoleAssistant = 1
	RoleTool      = 2
	RoleSystem    = 3
	RoleOther     = 255
)

// Message flag bits, as in the packed history format. FlagContinues is
// meaningful in histories only (core.SeedMessage.Continues); the module
// never sets it.
const (
	FlagContent    = 1 << 0
	FlagID         = 1 << 1
	FlagToolCallID = 1 << 2
	FlagToolCalls  = 1 << 3
	FlagContinues  = 1 << 4
	flagsReserved  = 0xE0
)

const maxVarintLen = 10

// header is the length of magic, version and kind.
const header = len(Magic) + 2

// itoa formats n in decimal without strconv.
var itoa = decimal.Itoa

// appendHeader starts a frame of kind k.
//
//go:noinline
func appendHeader(dst []byte, k Kind) []byte {
	return append(dst, Magic[0], Magic[1], Magic[2], Version, byte(k))
}

// AppendUvarint appends x as an unsigned LEB128 varint.
//
//go:noinline
func AppendUvarint(dst []byte, x uint64) []byte {
	for x >= 0x80 {
		dst = append(dst, byte(x)|0x80)
		x >>= 7
	}
	return append(dst, byte(x))
}

// AppendString appends s as a varint length and its bytes.
//
//go:noinline
func AppendString(dst []byte, s string) []byte {
	dst = AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

//go:noinline
func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func roleByte(r core.Role) byte {
	switch r {
	case core.RoleUser:
		return RoleUser
	case core.RoleAssistant:
		return RoleAssistant
	case core.RoleTool:
		return RoleTool
	case core.RoleSystem:
		return RoleSystem
	}
	return RoleOther
}

// AppendMessage appends one session message in the packed history
// format's message encoding: content is always present, id and
// tool_call_id when not empty, tool_calls when there are any.
func AppendMessage(dst []byte, m *core.Message) []byte {
	role := roleByte(m.Role)
	flags := byte(FlagContent)
	if m.ID != "" {
		flags |= FlagID
	}
	if m.ToolCallID != "" {
		flags |= FlagToolCallID
	}
	if len(m.ToolCalls) > 0 {
		flags |= FlagToolCalls
	}
	dst = append(dst, role, flags)
	if role == RoleOther {
		dst = AppendString(dst, string(m.Role))
	}
	dst = AppendString(dst, m.Content)
	if m.ID != "" {
		dst = AppendString(dst, m.ID)
	}
	if m.ToolCallID != "" {
		dst = AppendString(dst, m.ToolCallID)
	}
	if len(m.ToolCalls) > 0 {
		dst = appendCalls(dst, m.ToolCalls)
	}
	return dst
}

func appendCalls(dst []byte, calls []core.ToolCall) []byte {
	dst = AppendUvarint(dst, uint64(len(calls)))
	for i := range calls {
		dst = appendCall(dst, &calls[i])
	}
	return dst
}

func appendCall(dst []byte, c *core.ToolCall) []byte {
	dst = AppendString(dst, c.ID)
	dst = AppendString(dst, c.Name)
	return AppendString(dst, c.Arguments)
}

// AppendMessages appends a count and the messages.
func AppendMessages(dst []byte, msgs []core.Message) []byte {
	dst = AppendUvarint(dst, uint64(len(msgs)))
	for i := range msgs {
		dst = AppendMessage(dst, &msgs[i])
	}
	return dst
}

// AppendError appends an error: code, index + 1 (0: none), message.
func AppendError(dst []byte, e *core.Error) []byte {
	dst = AppendString(dst, string(e.Code))
	idx := uint64(0)
	if e.Index >= 0 {
		idx = uint64(e.Index) + 1
	}
	dst = AppendUvarint(dst, idx)
	return AppendString(dst, e.Message)
}

// AppendRefused appends a frame that refuses a call with e.
func AppendRefused(dst []byte, e *core.Error) []byte {
	return AppendError(appendHeader(dst, KindRefused), e)
}

// reader decodes a frame. Its methods record the first problem in err
// and return zero values after it, so a decoder checks err once at the
// end of a section.
type reader struct {
	// The field of no size makes reader not comparable: no equality
	// function is compiled into the module for it (nothing compares
	// readers). It is first, as a last field of no size would be padded.
	_   [0]func()
	s   string
	pos int
	err *core.Error
	// index is the message being decoded, for errors, or core.NoIndex.
	index int
	code  core.Code
	// prefix opens error messages.
	prefix string
	// valid: the host vouches that every string is valid UTF-8 (a begin
	// frame's history with beginHistoryValid), so str does not check.
	valid bool
}

// newReader starts reading frame b of kind k. It is inlined: the reader
// then stays on the caller's stack, where out of line it was one more
// allocation per frame, on every warm turn (the module is 1.3 KB smaller
// with it inlined, as no heap allocation is compiled at each site).
func newReader(b []byte, k Kind) *reader {
	r := &reader{s: string(b), index: core.NoIndex, code: core.CodeInvalidArgument, prefix: "wire: "}
	r.header(k)
	return r
}

//go:noinline
func (r *reader) fail(msg string) {
	if r.err == nil {
		r.err = core.NewIndexError(r.code, r.index, r.prefix+msg)
	}
	r.pos = len(r.s)
}

func (r *reader) header(k Kind) {
	if len(r.s) < header || r.s[:len(Magic)] != Magic || r.s[len(Magic)] != Version || Kind(r.s[len(Magic)+1]) != k {
		r.fail("not a version 1 frame of kind " + itoa(int(k)))
		return
	}
	r.pos = header
}

//go:noinline
func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.pos >= len(r.s) {
		r.fail("truncated")
		return 0
	}
	b := r.s[r.pos]
	r.pos++
	return b
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	var x uint64
	var shift uint
	for i := 0; i < maxVarintLen; i++ {
		if r.pos >= len(r.s) {
			r.fail("truncated")
			return 0
		}
		b := r.s[r.pos]
		r.pos++
		if b < 0x80 {
			if i == maxVarintLen-1 && b > 1 {
				r.fail("varint overflows 64 bits")
				return 0
			}
			return x | uint64(b)<<shift
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	r.fail("varint longer than 10 bytes")
	return 0
}

// int reads a uvarint that must fit max.
func (r *reader) int(what string, max uint64) int {
	v := r.uvarint()
	if v > max {
		r.fail(what + " is too large")
		return 0
	}
	return int(v)
}

// count reads a count of items that take at least min bytes each.
func (r *reader) count(what string, min int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.s)-r.pos)/uint64(min) {
		r.fail(what + " is more than the buffer can hold")
		return 0
	}
	return int(n)
}

func (r *reader) str(what string) string {
	// The lengths of one and two bytes, nearly every string's, are read
	// here without a call (fail leaves pos at the end, so no error is
	// pending when a byte is left).
	var n uint64
	if i := r.pos; i+1 < len(r.s) && r.s[i+1] < 0x80 && r.s[i] >= 0x80 {
		n = uint64(r.s[i]&0x7f) | uint64(r.s[i+1])<<7
		r.pos = i + 2
	} else if i < len(r.s) && r.s[i] < 0x80 {
		n = uint64(r.s[i])
		r.pos = i + 1
	} else if n = r.uvarint(); r.err != nil {
		return ""
	}
	if n > uint64(len(r.s)-r.pos) {
		r.fail(what + " runs past the end")
		return ""
	}
	v := r.s[r.pos : r.pos+int(n)]
	r.pos += int(n)
	if !r.valid && !utf8.ValidString(v) {
		r.fail(what + " is not valid UTF-8")
		return ""
	}
	return v
}

//go:noinline
func (r *reader) bool(what string) bool {
	b := r.byte()
	if b > 1 {
		r.fail(what + " must be 0 or 1")
	}
	return b == 1
}

// end checks that the frame was read to its last byte.
func (r *reader) end() error {
	if r.err == nil && r.pos != len(r.s) {
		r.index = core.NoIndex
		r.fail(itoa(len(r.s)-r.pos) + " bytes after the end of the frame")
	}
	if r.err != nil {
		return r.err
	}
	return nil
}

func (r *reader) message(m *core.Message) { r.messageInto(m) }

// messageInto decodes one message into m and returns its flags.
func (r *reader) messageInto(m *core.Message) byte {
	if len(r.s)-r.pos < 2 {
		r.fail("truncated")
		return 0
	}
	// Two bytes are left, so no error is pending (fail leaves pos at the
	// end): read them here rather than by two calls to byte.
	role, flags := r.s[r.pos], r.s[r.pos+1]
	r.pos += 2
	if flags&flagsReserved != 0 {
		r.fail("reserved flag bits are set")
		return 0
	}
	switch role {
	case RoleUser:
		m.Role = core.RoleUser
	case RoleAssistant:
		m.Role = core.RoleAssistant
	case RoleTool:
		m.Role = core.RoleTool
	case RoleSystem:
		m.Role = core.RoleSystem
	case RoleOther:
		m.Role = hostmsg.Role(r.str("role")) // "developer" is system, as in arrays
	default:
		r.fail("unknown role byte " + itoa(int(role)))
		return 0
	}
	if flags&FlagContent != 0 {
		m.Content = r.str("content")
	}
	if flags&FlagID != 0 {
		m.ID = r.str("id")
	}
	if flags&FlagToolCallID != 0 {
		m.ToolCallID = r.str("tool_call_id")
	}
	if flags&FlagToolCalls != 0 {
		m.ToolCalls = r.calls()
	}
	return flags
}

func (r *reader) calls() []core.ToolCall {
	n := r.count("tool call count", 3)
	if r.err != nil || n == 0 {
		return nil
	}
	calls := make([]core.ToolCall, n)
	for i := range calls {
		r.call(&calls[i])
	}
	return calls
}

func (r *reader) call(c *core.ToolCall) {
	c.ID = r.str("tool call id")
	c.Name = r.str("tool call name")
	c.Arguments = r.str("tool call arguments")
}

func (r *reader) messages() []core.Message {
	n := r.count("message count", 2)
	if r.err != nil {
		return nil
	}
	msgs := make([]core.Message, n)
	for i := range msgs {
		r.index = i
		r.message(&msgs[i])
	}
	r.index = core.NoIndex
	return msgs
}

func (r *reader) error() *core.Error {
	code := r.str("error code")
	idx := r.uvarint()
	msg := r.str("error message")
	if r.err != nil {
		return nil
	}
	e := core.NewError(core.Code(code), msg)
	if idx > 0 {
		if idx > 1<<31 {
			r.fail("error index is too large")
			return nil
		}
		e.Index = int(idx - 1)
	}
	return e
}

// DecodeRefused decodes a refused-call frame.
func DecodeRefused(b []byte) (*core.Error, error) {
	r := newReader(b, KindRefused)
	e := r.error()
	if err := r.end(); err != nil {
		return nil, err
	}
	return e, nil
}

// FrameKind returns the kind of frame b, or an error when b has no valid
// header.
func FrameKind(b []byte) (Kind, error) {
	r := &reader{s: string(b[:min(len(b), header)]), index: core.NoIndex, code: core.CodeInvalidArgument, prefix: "wire: "}
	if len(r.s) < header {
		r.fail("truncated header")
		return 0, r.err
	}
	r.header(Kind(r.s[header-1]))
	if r.err != nil {
		return 0, r.err
	}
	return Kind(b[header-1]), nil
}
