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
//
//go:noinline
func (r Role) Valid() bool {
	switch r {
	case RoleUser, RoleAssistant, RoleTool, RoleSystem:
		return true
	}
	return false
}

// ToolCall is one call an assistant message asks for. Arguments is JSON
// text, passed to the tool as it is.
//
// Its JSON tags give the shape every edge uses (the glue, the HTTP API,
// the chat command's history file): {"id","name","arguments"}.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message is one turn held in a session. The runtime never stores system
// messages: the agent's system prompt is sent separately.
//
// ToolCalls is set only on assistant messages, ToolCallID only on tool
// messages. ID is the host's id for the message, or empty.
//
// Its JSON tags give the wire shape of every edge: "role" and "content"
// always, "tool_call_id", "tool_calls" and "id" only when set. A Go host
// can store a result's messages with encoding/json and read them back as
// history (see SeedMessages).
type Message struct {
	ID         string     `json:"id,omitempty"`
	Role       Role       `json:"role"`
	Content    string     `json:"content"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
}

// Size is the number of bytes a message counts against the byte limits:
// the lengths of its text fields (id, content, tool_call_id and each tool
// call's id, name and arguments).
//
//go:noinline
func (m *Message) Size() int64 {
	return textSize(m.ID, m.Content, m.ToolCallID, m.ToolCalls)
}

//go:noinline
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
// Its JSON tags are Message's; ContentMissing has none (encoding/json
// decodes a null content as "" and leaves ContentMissing false, which
// Validate accepts wherever an empty content is valid).
type SeedMessage struct {
	ID             string     `json:"id,omitempty"`
	Role           Role       `json:"role"`
	Content        string     `json:"content"`
	ContentMissing bool       `json:"-"`
	ToolCallID     string     `json:"tool_call_id,omitempty"`
	ToolCalls      []ToolCall `json:"tool_calls,omitempty"`
	// Continues is set by decoders on a message that comes from the same host
	// message as the one before it (one Vercel AI SDK UIMessage may hold a
	// tool call, its result and more text: see docs/contract.md). Errors then
	// name the host message: their Index counts only the messages without
	// Continues. The zero value means one host message per SeedMessage.
	Continues bool `json:"-"`
}

// HostIndex returns the position, in the array the host passed, of the
// host message that history[i] comes from: i less the messages up to it
// that continue an earlier host message. An i outside history is
// returned as it is.
//
//go:noinline
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

// SeedMessages converts messages a host stored (a Result's Appended, a
// Session's Messages, or history decoded from JSON) to the history a run
// takes. It returns nil for no messages; the tool calls are shared with
// msgs, not copied (runs never change them).
func SeedMessages(msgs []Message) []SeedMessage {
	if len(msgs) == 0 {
		return nil
	}
	out := make([]SeedMessage, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		out[i] = SeedMessage{ID: m.ID, Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls}
	}
	return out
}
