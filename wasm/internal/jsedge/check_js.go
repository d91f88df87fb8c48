//go:build js && wasm

package jsedge

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
)

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
