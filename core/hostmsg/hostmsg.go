// Package hostmsg reads the messages a host passes to agentrt, in every
// shape the runtime accepts, into core.SeedMessage values, and reads a
// model's reply into a core.ModelReply. It holds the rules of
// docs/contract.md ("Messages and host messages") in one place: every
// edge (the module's JavaScript array path, the HTTP API, the CLI's
// history file) calls it, and the glue's js/history.js follows the same
// rules for the packed path.
//
//	v, err := hostjson.Parse(body)             // or a js.Value in jsedge
//	h, err := hostmsg.Messages(v, 0)           // []core.SeedMessage
//	if err != nil { ... }                      // *core.Error, invalid_history, Index
//
// The shapes, in short: the module's own ({role, content, id?,
// tool_call_id?, tool_calls?: [{id, name, arguments}]}, camelCase
// toolCallId and toolCalls accepted too), OpenAI Chat Completions
// (tool_calls: [{id, type: "function", function: {name, arguments}}],
// content as a string or an array of parts, the "developer" role) and the
// Vercel AI SDK's UIMessage ({id, role, parts}). One UIMessage may yield
// several seed messages; every one after the first has Continues set, so
// that errors name the host's message.
//
// Values are read through Value, a small accessor the edges implement
// over their own representation (js.Value, decoded JSON). The package
// uses no reflection, no encoding/json and no fmt: it is part of the
// module phones download.
//
// Refusals are *core.Error values with core.CodeInvalidHistory (history)
// or core.CodeModelError (replies), whose Message is the same text at
// every edge. Whether the history makes sense (known roles, tool-call
// linkage, limits) is decided later by core, as for every history.
package hostmsg

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/decimal"
)

// Kind is the type of a host value, as JavaScript and JSON see it.
type Kind uint8

// The kinds of host values. Undefined is an absent field.
const (
	Undefined Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
	// Other is anything JSON has no form for (functions, symbols,
	// bigints).
	Other
)

// Value is read-only access to one host value: a message, a field, a
// part. V is the implementing type itself, so that reading a field
// returns the edge's own value type without boxing it in an interface.
//
// Implementations are the edges' own: over js.Value in package jsedge and
// over decoded JSON in package hostjson.
type Value[V any] interface {
	// Kind returns the value's kind; an absent field is Undefined.
	Kind() Kind
	// Text returns the text of a String value.
	Text() string
	// Len returns the length of an Array value.
	Len() int
	// Index returns element i of an Array value.
	Index(i int) V
	// Get returns field key of an Object value; an absent field is a
	// value of kind Undefined.
	Get(key string) V
	// JSON returns the value's JSON text, or false when it has none (a
	// cycle, a function). Objects keep their fields' order.
	JSON() (string, bool)
	// Keys returns the own enumerable keys of an Object value, in order
	// (JavaScript's Object.keys); a key that JSON text holds twice is
	// listed twice, so that the readers of policy.go can refuse it.
	Keys() []string
	// Number returns the value of a Number value.
	Number() float64
	// Bool returns the value of a Bool value.
	Bool() bool
}

// Field names of the shapes hostmsg reads.
const (
	FieldRole            = "role"
	FieldContent         = "content"
	FieldID              = "id"
	FieldToolCallID      = "tool_call_id"
	FieldToolCallIDCamel = "toolCallId"
	FieldToolCalls       = "tool_calls"
	FieldToolCallsCamel  = "toolCalls"
	FieldName            = "name"
	FieldArguments       = "arguments"
	FieldType            = "type"
	FieldFunction        = "function"
	FieldParts           = "parts"
	FieldText            = "text"
	FieldRefusal         = "refusal"
	FieldToolName        = "toolName"
	FieldState           = "state"
	FieldInput           = "input"
	FieldOutput          = "output"
	FieldErrorText       = "errorText"
	FieldApproval        = "approval"
	FieldApproved        = "approved"
	FieldReason          = "reason"
)

// RoleDeveloper is OpenAI's successor of the system role; it is read as
// core.RoleSystem.
const RoleDeveloper = "developer"

// Part types. Text parts are read; tool parts (TypeToolPrefix+name and
// TypeDynamicTool) are read on assistant UIMessages; the types Skipped
// reports carry nothing for the model and are left out.
const (
	TypeText        = "text"
	TypeRefusal     = "refusal"
	TypeToolPrefix  = "tool-"
	TypeDynamicTool = "dynamic-tool"
	TypeFunction    = "function"
	TypeDataPrefix  = "data-"
)

// Tool part states that carry a result. Any other state (a call still
// streaming, waiting for its result or for an approval, or denied) has
// no result: the part is read as a call without one, which core refuses
// or, with core.Policy.Repair, repairs.
const (
	StateOutputAvailable = "output-available"
	StateOutputError     = "output-error"
)

// Tool part states of approvals (docs/adr/0019-tool-approvals.md): a call
// awaiting approval, a call whose decision the host holds (read as a call
// without a result, and by Approvals as the decision), and a denied call,
// read with its core.DeniedContent result.
const (
	StateApprovalRequested = "approval-requested"
	StateApprovalResponded = "approval-responded"
	StateOutputDenied      = "output-denied"
)

// EmptyArguments is what absent or null tool-call arguments become.
const EmptyArguments = "{}"

// skippedTypes are the part types that carry no text for the model:
// OpenAI's image, audio and file parts and the AI SDK's reasoning, file,
// source and step parts; and the parts ai@7 added: "custom" (a
// provider's own content), "reasoning-file" (a file of the model's
// reasoning) and "steering-message" (a user message injected into a run
// in flight, which agentrt's runs never make: docs/adr/0022-ai-sdk-layer.md).
// Types starting with TypeDataPrefix are skipped too.
var skippedTypes = [...]string{
	"image_url", "input_audio", "file",
	"reasoning", "source-url", "source-document", "step-start",
	"custom", "reasoning-file", "steering-message",
}

// Skipped reports whether parts of type t are left out of a message.
func Skipped(t string) bool {
	if len(t) > len(TypeDataPrefix) && t[:len(TypeDataPrefix)] == TypeDataPrefix {
		return true
	}
	for _, s := range skippedTypes {
		if t == s {
			return true
		}
	}
	return false
}

// Messages reads history, an Array of host messages, into seed messages.
// maxMessages bounds the array's length (zero or negative: the default
// limit); a longer array is refused with core.CodeLimitExceeded and index
// maxMessages before any message is read.
//
// A value that is not an Array is refused with core.CodeInvalidArgument.
// A message of the wrong shape is refused with core.CodeInvalidHistory
// and its index in history. The result may hold more messages than
// history (see core.SeedMessage.Continues).
func Messages[V Value[V]](history V, maxMessages int) ([]core.SeedMessage, error) {
	if history.Kind() != Array {
		return nil, core.NewError(core.CodeInvalidArgument, "history must be an array")
	}
	n := history.Len()
	if err := CheckCount(n, maxMessages); err != nil {
		return nil, err
	}
	out := make([]core.SeedMessage, 0, n)
	for i := 0; i < n; i++ {
		var msg string
		if out, msg = Append(out, history.Index(i)); msg != "" {
			return nil, Refusal(i, msg)
		}
	}
	return out, nil
}

// CheckCount refuses a history of n host messages when n is over
// maxMessages (zero or negative: the default limit), with
// core.CodeLimitExceeded and index maxMessages, the first message over
// the limit. Edges that read messages one by one call it first.
func CheckCount(n, maxMessages int) error {
	if maxMessages <= 0 {
		maxMessages = core.DefaultLimits.MaxSeedMessages
	}
	if n > maxMessages {
		return core.NewIndexError(core.CodeLimitExceeded, maxMessages,
			"history has "+itoa(n)+" messages, more than maxSeedMessages ("+itoa(maxMessages)+")")
	}
	return nil
}

// Refusal returns the error for host message i, refused by Append with
// msg: core.CodeInvalidHistory, Index i, Message msg.
func Refusal(i int, msg string) error {
	return core.NewIndexError(core.CodeInvalidHistory, i, msg)
}

// Append reads one host message v and appends the seed messages it
// yields to out: one, or several for a UIMessage with tool parts. It
// returns "" when v was read, or what is wrong with v (a message of
// docs/contract.md's table), and then out unchanged in length.
func Append[V Value[V]](out []core.SeedMessage, v V) ([]core.SeedMessage, string) {
	if v.Kind() != Object {
		return out, "message must be an object"
	}
	role := v.Get(FieldRole)
	if role.Kind() != String {
		return out, "role must be a string"
	}
	var m core.SeedMessage
	m.Role = Role(role.Text())
	var ok bool
	if m.ID, ok = optString(v.Get(FieldID)); !ok {
		return out, "id must be a string"
	}
	switch c := v.Get(FieldContent); c.Kind() {
	case String:
		m.Content = c.Text()
	case Null, Undefined:
		if p := v.Get(FieldParts); !nullish(p.Kind()) {
			return uiMessage(out, &m, p)
		}
		m.ContentMissing = true
	case Array:
		var msg string
		if m.Content, msg = contentParts(c); msg != "" {
			return out, msg
		}
	default:
		return out, "content must be a string, an array of parts, or null"
	}
	if m.ToolCallID, ok = optString(either(v, FieldToolCallID, FieldToolCallIDCamel)); !ok {
		return out, "tool_call_id must be a string"
	}
	calls := either(v, FieldToolCalls, FieldToolCallsCamel)
	switch calls.Kind() {
	case Null, Undefined:
	case Array:
		var msg string
		if m.ToolCalls, msg = toolCalls(calls); msg != "" {
			return out, msg
		}
	default:
		return out, "tool_calls must be an array"
	}
	return append(out, m), ""
}

// Role returns the core role for a host's role text: "developer" is
// core.RoleSystem, anything else is kept as it is (and refused later by
// core if it is not a role).
func Role(s string) core.Role {
	if s == RoleDeveloper {
		return core.RoleSystem
	}
	return core.Role(s)
}

// either returns v[name], or v[alt] when v[name] is null or undefined.
func either[V Value[V]](v V, name, alt string) V {
	f := v.Get(name)
	if nullish(f.Kind()) {
		return v.Get(alt)
	}
	return f
}

func nullish(k Kind) bool { return k == Undefined || k == Null }

// stringOf reads a string field that must be present.
func stringOf[V Value[V]](f V) (string, bool) {
	if f.Kind() != String {
		return "", false
	}
	return f.Text(), true
}

// optString reads a string field that may be null or absent ("").
func optString[V Value[V]](f V) (string, bool) {
	switch f.Kind() {
	case String:
		return f.Text(), true
	case Null, Undefined:
		return "", true
	}
	return "", false
}

// contentParts joins the text of OpenAI content parts
// ([{type: "text", text}]). Text parts are joined with nothing between
// them; refusal parts count as text; the types Skipped reports are left
// out; any other part is refused.
func contentParts[V Value[V]](parts V) (string, string) {
	var text []byte
	for k, n := 0, parts.Len(); k < n; k++ {
		p := parts.Index(k)
		at := "content[" + itoa(k) + "]"
		t, msg := partType(p, at)
		if msg != "" {
			return "", msg
		}
		switch {
		case t == TypeText:
			s, ok := stringOf(p.Get(FieldText))
			if !ok {
				return "", at + ".text must be a string"
			}
			text = append(text, s...)
		case t == TypeRefusal:
			s, ok := stringOf(p.Get(FieldRefusal))
			if !ok {
				return "", at + ".refusal must be a string"
			}
			text = append(text, s...)
		case Skipped(t):
		default:
			return "", at + ": unknown part type " + quote(t)
		}
	}
	return string(text), ""
}

// partType checks that p is an object with a string type.
func partType[V Value[V]](p V, at string) (string, string) {
	if p.Kind() != Object {
		return "", at + " must be an object"
	}
	t := p.Get(FieldType)
	if t.Kind() != String {
		return "", at + ".type must be a string"
	}
	return t.Text(), ""
}

// uiMessage reads a Vercel AI SDK UIMessage ({id, role, parts}) whose
// role and id m holds. Parts are read in order: text parts are joined
// into the current message; a tool part adds its call to the current
// (assistant) message and queues its result, if it has one; text after
// tool parts starts a new assistant message. The results follow the
// message with their calls. A call without a result is left for core to
// refuse or repair (core.RepairMissingToolResult).
func uiMessage[V Value[V]](out []core.SeedMessage, m *core.SeedMessage, parts V) ([]core.SeedMessage, string) {
	if parts.Kind() != Array {
		return out, "parts must be an array"
	}
	start := len(out)
	var results []core.SeedMessage
	var text []byte
	tools := 0 // tool parts since the last flush
	for k, n := 0, parts.Len(); k < n; k++ {
		p := parts.Index(k)
		at := "parts[" + itoa(k) + "]"
		t, msg := partType(p, at)
		if msg != "" {
			return out[:start], msg
		}
		switch {
		case t == TypeText:
			s, ok := stringOf(p.Get(FieldText))
			if !ok {
				return out[:start], at + ".text must be a string"
			}
			if tools > 0 {
				out = flush(out, m, text, results)
				text, results, tools = text[:0], results[:0], 0
			}
			text = append(text, s...)
		case t == TypeDynamicTool || len(t) > len(TypeToolPrefix) && t[:len(TypeToolPrefix)] == TypeToolPrefix:
			if m.Role != core.RoleAssistant {
				return out[:start], at + ": only assistant messages may carry tool parts"
			}
			call, result, done, msg := toolPart(p, t, at)
			if msg != "" {
				return out[:start], msg
			}
			m.ToolCalls = append(m.ToolCalls, call)
			tools++
			if done {
				result.ID = m.ID
				results = append(results, result)
			}
		case Skipped(t):
		default:
			return out[:start], at + ": unknown part type " + quote(t)
		}
	}
	out = flush(out, m, text, results)
	for i := start + 1; i < len(out); i++ {
		out[i].Continues = true
	}
	return out, ""
}

// flush ends the message m of a UIMessage read by uiMessage: its
// content is text, and it is appended to out with the results of its
// tool calls. m is then a new message with m's id and role. It is a
// function of its own, not generic, so that the module holds its code
// once.
//
//go:noinline
func flush(out []core.SeedMessage, m *core.SeedMessage, text []byte, results []core.SeedMessage) []core.SeedMessage {
	m.Content = string(text)
	out = append(out, *m)
	out = append(out, results...)
	*m = core.SeedMessage{ID: m.ID, Role: m.Role}
	return out
}

// Approvals reads the decisions a UIMessage history carries: the tool
// parts in state StateApprovalResponded of its last message, when that is
// an assistant UIMessage, each with its approval ({id, approved,
// reason?}) as a core.Approval for the part's toolCallId. Decisions in
// earlier messages are not pending any more and are not read. A part
// whose approval is malformed is refused with core.CodeInvalidHistory and
// the message's index; a history of another shape yields none.
func Approvals[V Value[V]](history V) ([]core.Approval, error) {
	if history.Kind() != Array || history.Len() == 0 {
		return nil, nil
	}
	i := history.Len() - 1
	v := history.Index(i)
	if v.Kind() != Object || v.Get(FieldRole).Kind() != String || v.Get(FieldRole).Text() != string(core.RoleAssistant) {
		return nil, nil
	}
	parts := v.Get(FieldParts)
	if parts.Kind() != Array {
		return nil, nil
	}
	out, msg := decisions(parts, "parts", true, false)
	if msg != "" {
		return nil, Refusal(i, msg)
	}
	return out, nil
}

// approval reads the approval of tool part p: approved (a boolean) and
// reason (an optional string). It returns what is wrong, or "".
func approval[V Value[V]](p V, at string) (core.Approval, string) {
	return decision(p.Get(FieldApproval), at+"."+FieldApproval)
}

// decision reads a decision d named at: an object with approved (a
// boolean) and reason (a string, null or absent). It returns what is
// wrong, or "".
func decision[V Value[V]](d V, at string) (core.Approval, string) {
	var a core.Approval
	if d.Kind() != Object {
		return a, at + " must be an object"
	}
	b := d.Get(FieldApproved)
	if b.Kind() != Bool {
		return a, at + ".approved must be a boolean"
	}
	a.Approved = b.Bool()
	var ok bool
	if a.Reason, ok = optString(d.Get(FieldReason)); !ok {
		return a, at + ".reason must be a string"
	}
	return a, ""
}

// toolPart reads a UIMessage tool part: the call it made and the tool
// message holding its result, and whether it has one (its state is
// StateOutputAvailable or StateOutputError; any other state, such as
// "input-available" or "approval-requested", is a call still waiting).
func toolPart[V Value[V]](p V, t, at string) (core.ToolCall, core.SeedMessage, bool, string) {
	var c core.ToolCall
	res := core.SeedMessage{Role: core.RoleTool}
	if t == TypeDynamicTool {
		n := p.Get(FieldToolName)
		if n.Kind() != String {
			return c, res, false, at + ".toolName must be a string"
		}
		c.Name = n.Text()
	} else {
		c.Name = t[len(TypeToolPrefix):]
	}
	var ok bool
	if c.ID, ok = optString(p.Get(FieldToolCallIDCamel)); !ok {
		return c, res, false, at + ".toolCallId must be a string"
	}
	res.ToolCallID = c.ID
	var msg string
	if c.Arguments, msg = Arguments(p.Get(FieldInput)); msg != "" {
		return c, res, false, at + ".input" + msg
	}
	state := p.Get(FieldState)
	if state.Kind() != String {
		return c, res, false, at + ".state must be a string"
	}
	switch state.Text() {
	case StateOutputAvailable:
		switch o := p.Get(FieldOutput); o.Kind() {
		case String:
			res.Content = o.Text()
		case Undefined, Null:
		default:
			if res.Content, ok = o.JSON(); !ok {
				return c, res, false, at + ".output cannot be converted to JSON"
			}
		}
	case StateOutputError:
		if res.Content, ok = optString(p.Get(FieldErrorText)); !ok {
			return c, res, false, at + ".errorText must be a string"
		}
	case StateOutputDenied:
		var a core.Approval
		if !nullish(p.Get(FieldApproval).Kind()) {
			if a, msg = approval(p, at); msg != "" {
				return c, res, false, msg
			}
		}
		res.Content = core.DeniedContent(a.Reason)
	default:
		return c, res, false, ""
	}
	return c, res, true, ""
}

// ToolCall reads one tool call, in the module's shape ({id, name,
// arguments}) or OpenAI's ({id, type: "function", function: {name,
// arguments}}), into c. It returns what is wrong, as a suffix of the
// call's path (".name must be a string"), or "".
func ToolCall[V Value[V]](v V, c *core.ToolCall) string {
	if v.Kind() != Object {
		return " must be an object"
	}
	var ok bool
	if c.ID, ok = optString(v.Get(FieldID)); !ok {
		return ".id must be a string"
	}
	src, at := v, ""
	if f := v.Get(FieldFunction); !nullish(f.Kind()) {
		if t := v.Get(FieldType); !nullish(t.Kind()) && (t.Kind() != String || t.Text() != TypeFunction) {
			return ".type must be \"function\""
		}
		if f.Kind() != Object {
			return ".function must be an object"
		}
		src, at = f, ".function"
	}
	if c.Name, ok = optString(src.Get(FieldName)); !ok {
		return at + ".name must be a string"
	}
	var msg string
	if c.Arguments, msg = Arguments(src.Get(FieldArguments)); msg != "" {
		return at + ".arguments" + msg
	}
	return ""
}

// Arguments applies the one rule for tool-call arguments (and a
// UIMessage tool part's input): a string is JSON text and kept as it is;
// null or absent is "{}"; an object becomes its JSON text; anything else
// (an array, a number, a boolean) is refused. It returns what is wrong,
// as a suffix (" must be JSON text or an object"), or "".
func Arguments[V Value[V]](a V) (string, string) {
	switch a.Kind() {
	case String:
		return a.Text(), ""
	case Null, Undefined:
		return EmptyArguments, ""
	case Object:
		s, ok := a.JSON()
		if !ok {
			return "", " cannot be converted to JSON"
		}
		return s, ""
	}
	return "", " must be JSON text or an object"
}

// Reply reads what a model answered: a string (the content) or an
// object {content, tool_calls?} (toolCalls accepted too), content being a
// string, an array of parts or null, and each call read by ToolCall.
// Refusals are *core.Error values with core.CodeModelError.
func Reply[V Value[V]](v V) (*core.ModelReply, error) {
	switch v.Kind() {
	case String:
		return &core.ModelReply{Content: v.Text()}, nil
	case Object:
	default:
		return nil, modelError("the model must answer an object { content, toolCalls? } or a string")
	}
	var r core.ModelReply
	switch c := v.Get(FieldContent); c.Kind() {
	case String:
		r.Content = c.Text()
	case Undefined, Null:
	case Array:
		var msg string
		if r.Content, msg = contentParts(c); msg != "" {
			return nil, modelError("reply." + msg)
		}
	default:
		return nil, modelError("reply.content must be a string, an array of parts, or null")
	}
	calls := either(v, FieldToolCalls, FieldToolCallsCamel)
	switch calls.Kind() {
	case Undefined, Null:
		return &r, nil
	case Array:
	default:
		return nil, modelError("reply.tool_calls must be an array")
	}
	var msg string
	if r.ToolCalls, msg = toolCalls(calls); msg != "" {
		return nil, modelError("reply." + msg)
	}
	return &r, nil
}

// toolCalls reads the Array calls with ToolCall. The slice grows as
// calls are read, not from calls.Len() up front: a sparse JavaScript
// array (new Array(1e8)) claims a length it does not hold, and is
// refused at its first element instead of growing the instance's memory.
func toolCalls[V Value[V]](calls V) ([]core.ToolCall, string) {
	n := calls.Len()
	out := make([]core.ToolCall, 0, min(n, 8))
	for j := 0; j < n; j++ {
		var c core.ToolCall
		if msg := ToolCall(calls.Index(j), &c); msg != "" {
			return nil, "tool_calls[" + itoa(j) + "]" + msg
		}
		out = append(out, c)
	}
	return out, ""
}

//go:noinline
func modelError(msg string) error { return core.NewError(core.CodeModelError, msg) }

// quote returns s in double quotes, cut to at most 64 bytes of UTF-8 at
// a character boundary (and "..." appended) so that an error message
// never carries a huge string from the host. js/history.js cuts the same
// way.
//
//go:noinline
func quote(s string) string {
	const max = 64
	if len(s) > max {
		n := max
		for n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		s = s[:n] + "..."
	}
	return "\"" + s + "\""
}

var itoa = decimal.Itoa
