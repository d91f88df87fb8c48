//go:build js && wasm

package jsedge

import (
	"errors"
	"syscall/js"
	"unsafe"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/packed"
)

// History converts a host history to core seed messages. v is either an
// Array of message objects or a Uint8Array in the packed format
// (docs/packed-history.md), decoded with one copy and no per-message
// JavaScript call.
//
// JavaScript to Go, for each message of an Array:
//
//	| field                      | accepted                   | otherwise         |
//	| -------------------------- | -------------------------- | ----------------- |
//	| (the message)              | object                     | invalid_history   |
//	| role                       | string (core checks it)    | invalid_history   |
//	| content                    | string; null or undefined  | invalid_history   |
//	|                            | set ContentMissing         |                   |
//	| tool_call_id / toolCallId  | string, null, undefined    | invalid_history   |
//	| tool_calls / toolCalls     | Array, null, undefined     | invalid_history   |
//	| id                         | string, null, undefined    | invalid_history   |
//	| tool call                  | object                     | invalid_history   |
//	| tool call id, name         | string, null, undefined    | invalid_history   |
//	| tool call arguments        | string; object or Array is | invalid_history   |
//	|                            | JSON.stringify'd; null or  |                   |
//	|                            | undefined is ""            |                   |
//
// The snake_case spelling wins when a message carries both spellings.
// Each error names the message's index in v. An Array longer than
// maxMessages (zero: the default limit) is refused with limit_exceeded
// before any message is read. Anything but an Array or a Uint8Array is
// refused with invalid_argument.
func History(v js.Value, maxMessages int) (_ []core.SeedMessage, err error) {
	at := core.NoIndex
	defer catch(&err, core.CodeInvalidHistory, &at)
	if maxMessages <= 0 {
		maxMessages = core.DefaultLimits.MaxSeedMessages
	}
	if v.Type() == js.TypeObject && v.InstanceOf(jsUint8Array) {
		buf := make([]byte, length(v))
		js.CopyBytesToGo(buf, v)
		if len(buf) == 0 {
			return packed.Decode(buf, maxMessages)
		}
		// buf is this function's own copy and is never written again:
		// the decoded strings may share it without a second copy.
		return packed.DecodeString(unsafe.String(&buf[0], len(buf)), maxMessages)
	}
	if !isArray(v) {
		return nil, core.NewError(core.CodeInvalidArgument, "history must be an Array of messages or a packed Uint8Array")
	}
	n := length(v)
	if n > maxMessages {
		return nil, core.NewIndexError(core.CodeLimitExceeded, maxMessages,
			"history has "+itoa(n)+" messages, more than maxSeedMessages ("+itoa(maxMessages)+")")
	}
	out := make([]core.SeedMessage, n)
	for i := range out {
		at = i
		if err := seedMessage(get(v, i), i, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func isArray(v js.Value) bool {
	return v.Type() == js.TypeObject && jsArray.Call(MethodIsArray, v).Bool()
}

func seedMessage(v js.Value, i int, m *core.SeedMessage) error {
	if v.Type() != js.TypeObject {
		return core.NewIndexError(core.CodeInvalidHistory, i, "message must be an object")
	}
	role := get(v, FieldRole)
	if role.Type() != js.TypeString {
		return core.NewIndexError(core.CodeInvalidHistory, i, "role must be a string")
	}
	m.Role = core.Role(role.String())
	switch c := get(v, FieldContent); c.Type() {
	case js.TypeString:
		m.Content = c.String()
	case js.TypeNull, js.TypeUndefined:
		m.ContentMissing = true
	default:
		return core.NewIndexError(core.CodeInvalidHistory, i, "content must be a string or null")
	}
	var ok bool
	if m.ToolCallID, ok = optString(v, FieldToolCallID, FieldToolCallIDCamel); !ok {
		return core.NewIndexError(core.CodeInvalidHistory, i, "tool_call_id must be a string")
	}
	if m.ID, ok = optString(v, FieldID, ""); !ok {
		return core.NewIndexError(core.CodeInvalidHistory, i, "id must be a string")
	}
	calls := get(v, FieldToolCalls)
	if nullish(calls) {
		calls = get(v, FieldToolCallsCamel)
	}
	if nullish(calls) {
		return nil
	}
	if !isArray(calls) {
		return core.NewIndexError(core.CodeInvalidHistory, i, "tool_calls must be an Array")
	}
	m.ToolCalls = make([]core.ToolCall, length(calls))
	for j := range m.ToolCalls {
		if err := toolCall(get(calls, j), &m.ToolCalls[j]); err != "" {
			return core.NewIndexError(core.CodeInvalidHistory, i, "tool_calls["+itoa(j)+"]: "+err)
		}
	}
	return nil
}

// toolCall reads one tool call; it returns what is wrong, or "".
func toolCall(v js.Value, c *core.ToolCall) string {
	if v.Type() != js.TypeObject {
		return "tool call must be an object"
	}
	var ok bool
	if c.ID, ok = optString(v, FieldID, ""); !ok {
		return "id must be a string"
	}
	if c.Name, ok = optString(v, FieldName, ""); !ok {
		return "name must be a string"
	}
	switch a := get(v, FieldArguments); a.Type() {
	case js.TypeString:
		c.Arguments = a.String()
	case js.TypeNull, js.TypeUndefined:
	case js.TypeObject:
		s, err := stringify(a)
		if err != nil {
			return "arguments cannot be converted to JSON"
		}
		c.Arguments = s
	default:
		return "arguments must be a JSON string or an object"
	}
	return ""
}

// optString reads v[name] (or v[alt] when v[name] is null or undefined):
// a string, or "" for null and undefined; ok is false for any other type.
func optString(v js.Value, name, alt string) (string, bool) {
	f := get(v, name)
	if alt != "" && nullish(f) {
		f = get(v, alt)
	}
	switch f.Type() {
	case js.TypeString:
		return f.String(), true
	case js.TypeNull, js.TypeUndefined:
		return "", true
	}
	return "", false
}

func nullish(v js.Value) bool {
	t := v.Type()
	return t == js.TypeUndefined || t == js.TypeNull
}

// stringify returns JSON.stringify(v), or an error if it throws or gives
// undefined.
func stringify(v js.Value) (string, error) {
	r, err := try(func() js.Value { return jsJSON.Call(MethodStringify, v) })
	if err != nil {
		return "", err
	}
	if r.Type() != js.TypeString {
		return "", errors.New("value has no JSON form")
	}
	return r.String(), nil
}
