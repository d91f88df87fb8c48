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
// The package is pure Go and builds on every platform. The codec itself
// is the boundary wire's (package wire: DecodeHistory, AppendHistory),
// whose begin frames carry a packed history; this package keeps the
// history-only API.
package packed

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/decimal"
	"github.com/agentrt/agentrt/wire"
)

// Magic opens every packed history: "ARH".
const Magic = "ARH"

// Version is the format version this package reads and writes.
const Version = 1

// Role bytes. RoleOther is followed by the role's text, so that an unknown
// role reaches validation (and is refused there with its index) exactly
// as on the array path.
// They are the wire's (package wire reads and writes the messages of a
// packed history).
const (
	RoleUser      = wire.RoleUser
	RoleAssistant = wire.RoleAssistant
	RoleTool      = wire.RoleTool
	RoleSystem    = wire.RoleSystem
	RoleOther     = wire.RoleOther
)

// Flag bits of a message, the wire's. Bits 5-7 are reserved and must be 0.
const (
	FlagContent    = wire.FlagContent    // content present (absent: null or undefined)
	FlagID         = wire.FlagID         // id present
	FlagToolCallID = wire.FlagToolCallID // tool_call_id present
	FlagToolCalls  = wire.FlagToolCalls  // tool_calls present
	// FlagContinues marks a message that comes from the same host
	// message as the one before it (core.SeedMessage.Continues): errors
	// then count host messages, as on the array path.
	FlagContinues = wire.FlagContinues
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
		return nil, core.NewError(core.CodeInvalidHistory, "packed history: too short for its header")
	}
	return wire.DecodeHistory(string(buf), maxMessages)
}

// DecodeString is Decode on a string; the decoded fields are slices of s.
func DecodeString(s string, maxMessages int) ([]core.SeedMessage, error) {
	return wire.DecodeHistory(s, maxMessages)
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
	return wire.AppendHistory(dst, history)
}

// itoa formats n in decimal without strconv.
var itoa = decimal.Itoa
