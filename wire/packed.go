package wire

import "github.com/agentrt/agentrt/core"

// The packed history format (docs/packed-history.md) is a host's prior
// turns as one byte buffer: HistoryMagic, HistoryVersion, a message
// count, then each message as a role byte, a flags byte and its fields
// as varint lengths and UTF-8 bytes. A begin frame carries its history
// in this format, and the module's JavaScript entry points accept it as
// a Uint8Array instead of an array of objects.
//
// A packed history holds messages already read from the host's shapes
// (js/history.js packs what core/hostmsg would read), so decoding checks
// only the format. Whether the history makes sense (known roles, tool-call
// linkage, limits) is decided by core when the history is seeded, exactly
// as for histories that arrive as arrays.

// DecodeHistoryBytes is DecodeHistory on a byte buffer: it converts buf
// to a string once, and every decoded field is a slice of that copy, so
// that buf may be reused by the caller. A nil or empty buffer is refused
// (it has no header); the empty history is the 5 bytes
// EncodeHistory(nil) returns.
//
//	buf := wire.EncodeHistory(history)         // []core.SeedMessage -> bytes
//	h, err := wire.DecodeHistoryBytes(buf, 0)  // bytes -> []core.SeedMessage
//
// # Notes
//
//   - ContentMissing is set on messages whose content flag is clear.
func DecodeHistoryBytes(buf []byte, maxMessages int) ([]core.SeedMessage, error) {
	if len(buf) < len(HistoryMagic)+1 {
		return nil, core.NewError(core.CodeInvalidHistory, "packed history: too short for its header")
	}
	return DecodeHistory(string(buf), maxMessages)
}

// EncodeHistory returns history in the packed format, in a buffer sized
// once. It is the inverse of DecodeHistoryBytes: decoding it gives
// history back for every history whose strings are valid UTF-8 (a
// message's ToolCalls that is empty but not nil stays so). It never
// fails; the strings are written as they are.
func EncodeHistory(history []core.SeedMessage) []byte {
	size := len(HistoryMagic) + 1 + maxVarintLen
	for i := range history {
		m := &history[i]
		size += 2 + 4*maxVarintLen + len(m.Role) + len(m.Content) + len(m.ID) + len(m.ToolCallID)
		for j := range m.ToolCalls {
			c := &m.ToolCalls[j]
			size += 3*maxVarintLen + len(c.ID) + len(c.Name) + len(c.Arguments)
		}
	}
	return AppendHistory(make([]byte, 0, size), history)
}
