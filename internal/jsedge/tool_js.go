//go:build js && wasm

package jsedge

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
)

// NewTool converts a JavaScript tool { name, description?, parameters?,
// call(args, ctx) } to a core.Tool; what names it in errors (for example
// "config.tools[2]"). parameters is a JSON Schema as an object (it is
// stringified) or as JSON text. Wrong types are refused with
// invalid_argument; core refuses an empty or duplicate name.
//
// The tool's call is made as a method of the tool object:
//
//	tool.call(args, { runId, sessionId, toolCallId })
//
// args is JSON.parse of the call's arguments (an empty text is {}). call
// returns a string (the result as it is), any other JSON-able value
// (stringified; undefined is ""), or a Promise of one.
//
// # Notes
//
//   - Arguments that are not JSON, a throw, a rejection, or a result that
//     JSON.stringify refuses fail the run with tool_error (or, with policy
//     toolErrors "report", hand the error text to the model).
func NewTool(v js.Value, what string) (core.Tool, error) {
	var t core.Tool
	if v.Type() != js.TypeObject {
		return t, argError(what + " must be an object")
	}
	var err error
	if t.Name, err = optStr(v, what, FieldName); err != nil {
		return t, err
	}
	if t.Description, err = optStr(v, what, FieldDescription); err != nil {
		return t, err
	}
	switch p := get(v, FieldParameters); p.Type() {
	case js.TypeUndefined, js.TypeNull:
	case js.TypeString:
		t.Parameters = p.String()
	case js.TypeObject:
		if t.Parameters, err = stringify(p); err != nil {
			return t, argError(what + ".parameters cannot be converted to JSON")
		}
	default:
		return t, argError(what + ".parameters must be an object or a JSON string")
	}
	if get(v, FieldCall).Type() != js.TypeFunction {
		return t, argError(what + ".call must be a function")
	}
	obj := v
	t.Call = func(ctx core.Context, inv core.ToolInvocation) (string, error) {
		return callTool(ctx, obj, inv)
	}
	return t, nil
}

func toolError(msg string) error { return core.NewError(core.CodeToolError, msg) }

func callTool(ctx core.Context, obj js.Value, inv core.ToolInvocation) (string, error) {
	args := newObject()
	if inv.Arguments != "" {
		var err error
		if args, err = parse(inv.Arguments); err != nil {
			return "", toolError("arguments are not valid JSON: " + err.Error())
		}
	}
	c := newObject()
	c.Set(FieldRunID, inv.RunID)
	c.Set(FieldSessionID, inv.SessionID)
	c.Set(FieldCtxToolCallID, inv.ToolCallID)
	v, err := try(func() js.Value { return obj.Call(FieldCall, args, c) })
	if err != nil {
		return "", toolError("threw: " + err.Error())
	}
	if v, err = Await(ctx, v, core.CodeToolError); err != nil {
		if e, ok := err.(*core.Error); ok {
			e.Message = "rejected: " + e.Message
		}
		return "", err
	}
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
