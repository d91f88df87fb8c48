//go:build js && wasm

package jsedge

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
)

// Tool converts a JavaScript tool { name, description?, parameters?,
// needsApproval?, call(args, ctx) } into t: its core.ToolSpec, and
// ApprovalByHost when its calls may need approval (its needsApproval is
// true or a function: its runtime's turns ask their host about each
// call, and the host answers with NeedsApproval). what names it in errors
// (for example "config.tools[2]"). parameters is a JSON Schema as an
// object (it is stringified) or as JSON text. Wrong types are refused
// with invalid_argument (Config refuses a call that is not a function,
// after them); core refuses an empty or duplicate name. t.Call is left
// for the caller.
//
// The tool's call is made as a method of the tool object (see Method):
//
//	tool.call(args, { runId, sessionId, toolCallId })
//
// with args and the context object from ToolArgs; it returns a string,
// any other JSON-able value or a Promise of one (see ToolOutput).
func Tool(v js.Value, what string, t *core.Tool) (err error) {
	if v.Type() != js.TypeObject {
		return argError(what + " must be an object")
	}
	if t.Name, err = optStr(v, what, FieldName); err != nil {
		return err
	}
	if t.Description, err = optStr(v, what, FieldDescription); err != nil {
		return err
	}
	switch p := get(v, FieldParameters); p.Type() {
	case js.TypeUndefined, js.TypeNull:
	case js.TypeString:
		t.Parameters = p.String()
	case js.TypeObject:
		if t.Parameters, err = stringify(p); err != nil {
			return argError(what + ".parameters cannot be converted to JSON")
		}
	default:
		return argError(what + ".parameters must be an object or a JSON string")
	}
	switch n := get(v, FieldNeedsApproval); n.Type() {
	case js.TypeUndefined, js.TypeNull:
	case js.TypeBoolean:
		t.ApprovalByHost = n.Bool()
	case js.TypeFunction:
		t.ApprovalByHost = true
	default:
		return argError(what + ".needsApproval must be a boolean or a function")
	}
	return nil
}

// NeedsApproval returns a JavaScript tool's needsApproval as the turn's
// approval action asks it (core.ActionApproval): a function is called as
// the tool's method needsApproval with the call's args and ctx (see
// ToolArgs and Method); true or false is the answer for every call. A
// getter that throws panics, as get does, for the caller to recover.
func NeedsApproval(tool js.Value) js.Value { return get(tool, FieldNeedsApproval) }

func toolError(msg string) error { return core.NewError(core.CodeToolError, msg) }

// ToolArgs converts tool call c of run r to the arguments of the tool's
// call: JSON.parse of its arguments (an empty text is {}), and the
// context object { runId, sessionId, toolCallId }. Arguments that are not
// JSON are refused with tool_error.
func ToolArgs(r *core.Run, c *core.ToolCall) (args, ctx js.Value, err error) {
	args = newObject()
	if c.Arguments != "" {
		if args, err = parse(c.Arguments); err != nil {
			return js.Undefined(), js.Undefined(), toolError("arguments are not valid JSON: " + err.Error())
		}
	}
	ctx = newObject()
	setString(ctx, FieldRunID, r.ID())
	setString(ctx, FieldSessionID, r.SessionID())
	setString(ctx, FieldCtxToolCallID, c.ID)
	return args, ctx, nil
}

// ToolOutput converts what a tool's call answered (settled, see Await)
// to the tool's result: a string as it is, undefined as "", any other
// value as its JSON text. A value JSON.stringify refuses is refused with
// tool_error.
func ToolOutput(v js.Value) (string, error) {
	switch v.Type() {
	case js.TypeString:
		return v.String(), nil
	case js.TypeUndefined:
		return "", nil
	}
	s, err := stringify(v)
	if err != nil {
		return "", toolError("the result cannot be converted to JSON")
	}
	return s, nil
}

// Method calls obj[name](...args) and returns what it returned, or what
// it threw (or a throwing getter) as an error whose text describes the
// thrown value.
func Method(obj js.Value, name string, args ...any) (js.Value, error) {
	return try(func() js.Value { return obj.Call(name, args...) })
}
