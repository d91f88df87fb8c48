package core

// Role says who wrote a message.
type Role string

// The four roles. Any other role in host history is refused with
// CodeInvalidHistory; it is never coerced.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	RoleSystem    Role = "system"
)

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool {
	switch r {
	case RoleUser, RoleAssistant, RoleTool, RoleSystem:
		return true
	}
	return false
}

// ToolCall is one call an assistant message asks for. Arguments is JSON
// text, passed to the tool as it is.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Message is one turn held in a session. The runtime never stores system
// messages: the agent's system prompt is sent separately.
//
// ToolCalls is set only on assistant messages, ToolCallID only on tool
// messages. ID is the host's id for the message, or empty.
type Message struct {
	ID         string
	Role       Role
	Content    string
	ToolCallID string
	ToolCalls  []ToolCall
}

// Size is the number of bytes a message counts against the byte limits:
// the lengths of its text fields (id, content, tool_call_id and each tool
// call's id, name and arguments).
func (m *Message) Size() int64 {
	return textSize(m.ID, m.Content, m.ToolCallID, m.ToolCalls)
}

func textSize(id, content, toolCallID string, calls []ToolCall) int64 {
	n := len(id) + len(content) + len(toolCallID)
	for i := range calls {
		c := &calls[i]
		n += len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	return int64(n)
}

// Equal reports whether two messages are the same turn: role, content,
// tool_call_id and tool calls (id, name, arguments) are equal, and the host
// ids too when both messages have one.
func (m *Message) Equal(o *Message) bool {
	if m.Role != o.Role || m.Content != o.Content || m.ToolCallID != o.ToolCallID ||
		len(m.ToolCalls) != len(o.ToolCalls) {
		return false
	}
	if m.ID != "" && o.ID != "" && m.ID != o.ID {
		return false
	}
	for i := range m.ToolCalls {
		if m.ToolCalls[i] != o.ToolCalls[i] {
			return false
		}
	}
	return true
}

// Clone returns a copy of m that shares no memory with it that could be
// changed (the ToolCalls slice is copied).
func (m Message) Clone() Message {
	if m.ToolCalls != nil {
		m.ToolCalls = append([]ToolCall(nil), m.ToolCalls...)
	}
	return m
}

// SeedMessage is one prior turn the host passes with a run, as decoded
// from the host's representation. It is validated before anything is
// seeded; see Validate.
//
// ContentMissing is set by decoders when the host's content was null or
// absent: that is accepted only on an assistant message with tool calls
// (whose Content is then empty), and refused everywhere else.
//
// Continues is set by decoders on a message that comes from the same host
// message as the one before it (one Vercel AI SDK UIMessage may hold a
// tool call, its result and more text: see docs/contract.md). Errors then
// name the host message: their Index counts only the messages without
// Continues. The zero value means one host message per SeedMessage.
type SeedMessage struct {
	ID             string
	Role           Role
	Content        string
	ContentMissing bool
	ToolCallID     string
	ToolCalls      []ToolCall
	Continues      bool
}

// HostIndex returns the position, in the array the host passed, of the
// host message that history[i] comes from: i less the messages up to it
// that continue an earlier host message. An i outside history is
// returned as it is.
func HostIndex(history []SeedMessage, i int) int {
	if i < 0 || i >= len(history) {
		return i
	}
	n := i
	for j := 1; j <= i; j++ {
		if history[j].Continues {
			n--
		}
	}
	return n
}

// Message returns the session message m seeds.
func (m *SeedMessage) Message() Message {
	return Message{ID: m.ID, Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls}
}
