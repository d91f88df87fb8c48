package wire

import "github.com/agentrt/agentrt/core"

// HistoryMagic opens every packed history: "ARH".
const HistoryMagic = "ARH"

// HistoryVersion is the packed history format's version.
const HistoryVersion = 1

// DecodeHistory decodes a packed history (docs/packed-history.md): the
// history section of a begin frame, and what the syscall/js entry points
// accept as a Uint8Array. maxMessages bounds the message count (zero or
// negative: core.DefaultLimits.MaxSeedMessages); a larger count is
// refused with core.CodeLimitExceeded and the index of the first message
// over the limit. Every other problem is core.CodeInvalidHistory with the
// index of the message being decoded, or core.NoIndex for the header.
// The decoded strings are slices of s.
func DecodeHistory(s string, maxMessages int) ([]core.SeedMessage, error) {
	return decodeHistory(s, maxMessages, false)
}

// decodeHistory is DecodeHistory; valid skips the UTF-8 check of the
// strings (see beginHistoryValid).
func decodeHistory(s string, maxMessages int, valid bool) ([]core.SeedMessage, error) {
	if maxMessages <= 0 {
		maxMessages = core.DefaultLimits.MaxSeedMessages
	}
	r := &reader{s: s, index: core.NoIndex, code: core.CodeInvalidHistory, prefix: "packed history: ", valid: valid}
	if len(s) < len(HistoryMagic)+1 || s[:len(HistoryMagic)] != HistoryMagic {
		r.fail("wrong magic (want \"ARH\")")
		return nil, r.err
	}
	if s[len(HistoryMagic)] != HistoryVersion {
		r.fail("unknown version " + itoa(int(s[len(HistoryMagic)])))
		return nil, r.err
	}
	r.pos = len(HistoryMagic) + 1
	count := r.uvarint()
	if r.err != nil {
		return nil, r.err
	}
	if count > uint64(maxMessages) {
		return nil, core.NewIndexError(core.CodeLimitExceeded, maxMessages,
			"packed history has more than maxSeedMessages ("+itoa(maxMessages)+") messages")
	}
	// Every message takes at least two bytes (role and flags).
	if count > uint64(len(s)-r.pos)/2 {
		r.fail("message count " + itoa(int(count)) + " is more than the buffer can hold")
		return nil, r.err
	}
	out := make([]core.SeedMessage, count)
	for i := range out {
		r.index = i
		r.seedMessage(&out[i])
		if r.err != nil {
			return nil, r.err
		}
	}
	r.index = core.NoIndex
	if r.pos != len(s) {
		r.fail(itoa(len(s)-r.pos) + " bytes after the last message")
		return nil, r.err
	}
	return out, nil
}

// seedMessage decodes one history message; a clear content flag sets
// ContentMissing, and a present but empty tool-call list stays empty and
// not nil.
func (r *reader) seedMessage(m *core.SeedMessage) {
	var msg core.Message
	flags := r.messageInto(&msg)
	if r.err != nil {
		return
	}
	m.ID, m.Role, m.Content, m.ToolCallID, m.ToolCalls = msg.ID, msg.Role, msg.Content, msg.ToolCallID, msg.ToolCalls
	m.ContentMissing = flags&FlagContent == 0
	m.Continues = flags&FlagContinues != 0
	if flags&FlagToolCalls != 0 && m.ToolCalls == nil {
		m.ToolCalls = []core.ToolCall{}
	}
}

// AppendHistory appends history in the packed format. Decoding it gives
// history back for every history whose strings are valid UTF-8.
func AppendHistory(dst []byte, history []core.SeedMessage) []byte {
	dst = append(dst, HistoryMagic...)
	dst = append(dst, HistoryVersion)
	dst = AppendUvarint(dst, uint64(len(history)))
	for i := range history {
		m := &history[i]
		role := roleByte(m.Role)
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
			dst = AppendString(dst, string(m.Role))
		}
		if flags&FlagContent != 0 {
			dst = AppendString(dst, m.Content)
		}
		if flags&FlagID != 0 {
			dst = AppendString(dst, m.ID)
		}
		if flags&FlagToolCallID != 0 {
			dst = AppendString(dst, m.ToolCallID)
		}
		if flags&FlagToolCalls != 0 {
			dst = appendCalls(dst, m.ToolCalls)
		}
	}
	return dst
}
