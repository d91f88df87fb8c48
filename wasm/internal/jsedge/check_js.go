//go:build js && wasm

package jsedge

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/internal/jsutil"
)

// CheckHistory returns the runtime object's checkHistory(history): it
// reads history as the run entry points do (an Array of host messages in
// any shape, or a packed Uint8Array) and returns core.CheckHistory's
// answer under rt's limits, { ok, problems: [{ code, index, message,
// repair }], head }, running nothing. A message of the wrong shape is the
// answer's one problem (repair null). Anything but an Array or a
// Uint8Array is not a history: the call returns (does not throw) an Error
// with code invalid_argument, as jsutil.Func does for a panic.
func CheckHistory(rt *core.Runtime) js.Func {
	return jsutil.Func("agentrt: checkHistory failed", func(_ js.Value, args []js.Value) any {
		h, err := History(jsutil.Arg(args, 0), rt.Limits().MaxSeedMessages, nil, nil)
		var check core.HistoryCheck
		switch {
		case err != nil && core.ErrorCode(err) == core.CodeInvalidArgument:
			return Error(err)
		case err != nil:
			check = core.UnreadableCheck(err)
		default:
			check = rt.CheckHistory(h)
		}
		return HistoryCheck(&check)
	})
}

// HistoryCheck returns c as { ok, problems: [{ code, index, message,
// repair }], head }, repair being the kind's name or null, head the
// history's (absent when it could not be read), and, when the
// history ends with calls awaiting approval, paused: true when they
// make it paused rather than broken, and awaiting: [{ index, toolCallId,
// name, arguments }] (as the HTTP API adds them).
func HistoryCheck(c *core.HistoryCheck) js.Value {
	o := newObject()
	o.Set(FieldOK, c.OK)
	problems := make([]any, len(c.Problems))
	for i := range c.Problems {
		p := &c.Problems[i]
		v := newObject()
		v.Set(FieldCode, str(string(p.Code)))
		v.Set(FieldIndex, p.Index)
		setString(v, FieldMessage, p.Message)
		if p.Repair != "" {
			v.Set(FieldRepair, str(string(p.Repair)))
		} else {
			v.Set(FieldRepair, js.Null())
		}
		problems[i] = v
	}
	setValue(o, FieldProblems, arrayOf(problems))
	if c.Head != "" {
		setString(o, FieldHead, c.Head)
	}
	if c.Paused {
		o.Set(FieldPaused, true)
	}
	if len(c.Awaiting) > 0 {
		awaiting := make([]any, len(c.Awaiting))
		for i := range c.Awaiting {
			a := &c.Awaiting[i]
			v := newObject()
			v.Set(FieldIndex, a.Index)
			setString(v, FieldCtxToolCallID, a.ToolCallID)
			setString(v, FieldName, a.Name)
			setString(v, FieldArguments, a.Arguments)
			awaiting[i] = v
		}
		setValue(o, FieldAwaiting, arrayOf(awaiting))
	}
	return o
}

// repairs returns rs as [{ kind, index, toolCallId? }].
func repairs(rs []core.Repair) js.Value {
	out := make([]any, len(rs))
	for i := range rs {
		r := &rs[i]
		v := newObject()
		v.Set(FieldKind, str(string(r.Kind)))
		v.Set(FieldIndex, r.Index)
		if r.ToolCallID != "" {
			setString(v, FieldRepairToolCallID, r.ToolCallID)
		}
		out[i] = v
	}
	return arrayOf(out)
}
