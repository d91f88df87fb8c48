// Package packed reads and writes agentrt's packed history format: a host's
// prior turns as one byte buffer of varint lengths and UTF-8 bytes (see
// docs/packed-history.md). The JavaScript edge copies such a buffer into Go
// with one call and decodes it here, instead of reading every field of
// every message across the JavaScript boundary.
//
//	buf := packed.Encode(history)              // []core.SeedMessage -> bytes
//	h, err := packed.Decode(buf, 0)            // bytes -> []core.SeedMessage
//	if err != nil { ... }                      // *core.Error, invalid_history
//
// Decode converts the buffer to a string once and slices every decoded
// field out of that string, so decoding allocates one copy of the text
// plus the message slice, whatever the number of messages.
//
// A packed history holds messages already read from the host's shapes
// (js/history.js packs what core/hostmsg would read), so decoding checks
// only the format. Whether the history makes sense (known roles, tool-call
// linkage, limits) is decided by core when the history is seeded, exactly
// as for histories that arrive as arrays.
//
// The package is pure Go and builds on every platform.
package packed

import (
	"unicode/utf8"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"

	"github.com/agentrt/agentrt/internal/decimal"
)

// Magic opens every packed history: "ARH".
const Magic = "ARH"

// Version is the format version this package reads and writes.
const Version = 1

// Role bytes. RoleOther is followed by the role's text, so that an unknown
// role reaches validation (and is refused there with its index) exactly
// as on the array path.
const (
	RoleUser      = 0
	RoleAssistant = 1
	RoleTool      = 2
	RoleSystem    = 3
	RoleOther     = 255
)

// Flag bits of a message. Bits 5-7 are reserved and must be 0.
const (
	FlagContent    = 1 << 0 // content present (absent: null or undefined)
	FlagID         = 1 << 1 // id present
	FlagToolCallID = 1 << 2 // tool_call_id present
	FlagToolCalls  = 1 << 3 // tool_calls present
	// FlagContinues marks a message that comes from the same host
	// message as the one before it (core.SeedMessage.Continues): errors
	// then count host messages, as on the array path.
	FlagContinues = 1 << 4
	flagsReserved = 0xE0
)

// maxVarintLen is the longest valid uvarint (a uint64 in 7-bit groups).
const maxVarintLen = 10

// Decode decodes a packed history. maxMessages bounds the message count
// (zero or negative means core.DefaultLimits.MaxSeedMessages); a larger
// count is refused with core.CodeLimitExceeded before anything is
// allocated, with the index of the first message over the limit, as core
// does for arrays.
//
// Every other problem is a *core.Error with core.CodeInvalidHistory: a
// wrong magic or version, a truncated buffer, an overlong varint, a length
// past the end, reserved flag bits, invalid UTF-8 or bytes after the last
// message. Its Index is the message being decoded, or core.NoIndex for
// the header.
//
// A nil or empty buffer is refused (it has no header); the empty history
// is the 5 bytes Encode(nil) returns.
//
// # Notes
//
//   - The returned strings share one copy of buf; buf itself is not kept
//     and may be reused by the caller.
//   - ContentMissing is set on messages whose content flag is clear.
func Decode(buf []byte, maxMessages int) ([]core.SeedMessage, error) {
	if len(buf) < len(Magic)+1 {
		return nil, headerError("packed history: too short for its header")
	}
	return DecodeString(string(buf), maxMessages)
}

// DecodeString is Decode on a string; the decoded fields are slices of s.
func DecodeString(s string, maxMessages int) ([]core.SeedMessage, error) {
	if maxMessages <= 0 {
		maxMessages = core.DefaultLimits.MaxSeedMessages
	}
	d := decoder{s: s, index: core.NoIndex}
	if len(s) < len(Magic)+1 || s[:len(Magic)] != Magic {
		return nil, headerError("packed history: wrong magic (want \"ARH\")")
	}
	if s[len(Magic)] != Version {
		return nil, headerError("packed history: unknown version " + itoa(int(s[len(Magic)])))
	}
	d.pos = len(Magic) + 1
	count, ok := d.uvarint()
	if !ok {
		return nil, d.err
	}
	if count > uint64(maxMessages) {
		return nil, core.NewIndexError(core.CodeLimitExceeded, maxMessages,
			"packed history has more than maxSeedMessages ("+itoa(maxMessages)+") messages")
	}
	// Every message takes at least two bytes (role and flags).
	if count > uint64(len(s)-d.pos)/2 {
		return nil, headerError("packed history: message count " + itoa(int(count)) + " is more than the buffer can hold")
	}
	out := make([]core.SeedMessage, count)
	for i := range out {
		d.index = i
		if !d.message(&out[i]) {
			return nil, d.err
		}
	}
	if d.pos != len(s) {
		return nil, headerError("packed history: " + itoa(len(s)-d.pos) + " bytes after the last message")
	}
	return out, nil
}

type decoder struct {
	s     string
	pos   int
	index int // message being decoded, or core.NoIndex
	err   *core.Error
}

func headerError(msg string) *core.Error {
	return core.NewError(core.CodeInvalidHistory, msg)
}

func (d *decoder) fail(msg string) bool {
	d.err = core.NewIndexError(core.CodeInvalidHistory, d.index, "packed history: "+msg)
	return false
}

func (d *decoder) uvarint() (uint64, bool) {
	var x uint64
	var shift uint
	for i := 0; i < maxVarintLen; i++ {
		if d.pos >= len(d.s) {
			return 0, d.fail("truncated")
		}
		b := d.s[d.pos]
		d.pos++
		if b < 0x80 {
			if i == maxVarintLen-1 && b > 1 {
				return 0, d.fail("varint overflows 64 bits")
			}
			return x | uint64(b)<<shift, true
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	return 0, d.fail("varint longer than 10 bytes")
}

// str reads a length-prefixed UTF-8 string as a slice of d.s.
func (d *decoder) str(what string) (string, bool) {
	n, ok := d.uvarint()
	if !ok {
		return "", false
	}
	if n > uint64(len(d.s)-d.pos) {
		return "", d.fail(what + " runs past the end")
	}
	v := d.s[d.pos : d.pos+int(n)]
	d.pos += int(n)
	if !utf8.ValidString(v) {
		return "", d.fail(what + " is not valid UTF-8")
	}
	return v, true
}

func (d *decoder) message(m *core.SeedMessage) bool {
	if len(d.s)-d.pos < 2 {
		return d.fail("truncated")
	}
	role, flags := d.s[d.pos], d.s[d.pos+1]
	d.pos += 2
	if flags&flagsReserved != 0 {
		return d.fail("reserved flag bits are set")
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
		name, ok := d.str("role")
		if !ok {
			return false
		}
		m.Role = hostmsg.Role(name) // "developer" is system, as in arrays
	default:
		return d.fail("unknown role byte " + itoa(int(role)))
	}
	m.Continues = flags&FlagContinues != 0
	var ok bool
	if flags&FlagContent != 0 {
		if m.Content, ok = d.str("content"); !ok {
			return false
		}
	} else {
		m.ContentMissing = true
	}
	if flags&FlagID != 0 {
		if m.ID, ok = d.str("id"); !ok {
			return false
		}
	}
	if flags&FlagToolCallID != 0 {
		if m.ToolCallID, ok = d.str("tool_call_id"); !ok {
			return false
		}
	}
	if flags&FlagToolCalls != 0 {
		n, ok := d.uvarint()
		if !ok {
			return false
		}
		// Every call takes at least three bytes (three empty strings).
		if n > uint64(len(d.s)-d.pos)/3 {
			return d.fail("tool call count " + itoa(int(min(n, 1<<40))) + " is more than the buffer can hold")
		}
		m.ToolCalls = make([]core.ToolCall, n)
		for j := range m.ToolCalls {
			c := &m.ToolCalls[j]
			if c.ID, ok = d.str("tool call id"); !ok {
				return false
			}
			if c.Name, ok = d.str("tool call name"); !ok {
				return false
			}
			if c.Arguments, ok = d.str("tool call arguments"); !ok {
				return false
			}
		}
	}
	return true
}

// Encode returns history in the packed format. It is the inverse of
// Decode: Decode(Encode(h)) equals h for every h whose strings are valid
// UTF-8 (a message's ToolCalls that is empty but not nil stays so). It
// never fails; the strings are written as they are.
func Encode(history []core.SeedMessage) []byte {
	size := len(Magic) + 1 + maxVarintLen
	for i := range history {
		m := &history[i]
		size += 2 + 4*maxVarintLen + len(m.Role) + len(m.Content) + len(m.ID) + len(m.ToolCallID)
		for j := range m.ToolCalls {
			c := &m.ToolCalls[j]
			size += 3*maxVarintLen + len(c.ID) + len(c.Name) + len(c.Arguments)
		}
	}
	return Append(make([]byte, 0, size), history)
}

// Append appends the packed form of history to dst and returns it.
func Append(dst []byte, history []core.SeedMessage) []byte {
	dst = append(dst, Magic...)
	dst = append(dst, Version)
	dst = appendUvarint(dst, uint64(len(history)))
	for i := range history {
		m := &history[i]
		var role byte
		switch m.Role {
		case core.RoleUser:
			role = RoleUser
		case core.RoleAssistant:
			role = RoleAssistant
		case core.RoleTool:
			role = RoleTool
		case core.RoleSystem:
			role = RoleSystem
		default:
			role = RoleOther
		}
		var flags byte
		if !m.ContentMissing {
			flags |= FlagContent
		}
		if m.ID != "" {
			flags |= FlagID
		}
		if m.ToolCallID != "" {
			flags |= FlagToolCallID
		}
		if m.ToolCalls != nil {
			flags |= FlagToolCalls
		}
		if m.Continues {
			flags |= FlagContinues
		}
		dst = append(dst, role, flags)
		if role == RoleOther {
			dst = appendString(dst, string(m.Role))
		}
		if flags&FlagContent != 0 {
			dst = appendString(dst, m.Content)
		}
		if flags&FlagID != 0 {
			dst = appendString(dst, m.ID)
		}
		if flags&FlagToolCallID != 0 {
			dst = appendString(dst, m.ToolCallID)
		}
		if flags&FlagToolCalls != 0 {
			dst = appendUvarint(dst, uint64(len(m.ToolCalls)))
			for j := range m.ToolCalls {
				c := &m.ToolCalls[j]
				dst = appendString(dst, c.ID)
				dst = appendString(dst, c.Name)
				dst = appendString(dst, c.Arguments)
			}
		}
	}
	return dst
}

func appendUvarint(dst []byte, x uint64) []byte {
	for x >= 0x80 {
		dst = append(dst, byte(x)|0x80)
		x >>= 7
	}
	return append(dst, byte(x))
}

func appendString(dst []byte, s string) []byte {
	dst = appendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// itoa formats n in decimal without strconv.
var itoa = decimal.Itoa
