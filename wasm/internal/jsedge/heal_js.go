//go:build js && wasm

package jsedge

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/internal/jsutil"
)

// SetRepaired sets result.seed.repaired to the host's history with the
// seed's edits applied (docs/adr/0016-the-host-copy-heals.md), by the
// rules of hostjson.AppendHealed: kept messages are the host's own
// objects; a dropped one is left out; a marker is a new tool message
// ({role: "tool", tool_call_id, content}, toolCallId when the calling
// message writes its calls toolCalls, with id when the marker has one)
// before the host message at its index, or, when the calling message is
// a UIMessage (it has parts), a copy of that message whose tool part for
// the call has state "output-error" and errorText the marker's content.
// Reading a host object that throws leaves repaired unset.
func SetRepaired(result js.Value, history []js.Value, edits []core.HistoryEdit) {
	defer func() { _ = recover() }()
	n := len(history)
	// A marker of a UIMessage (its calling message has parts) patches it;
	// the others are inserted. Edits are few: they are scanned, not
	// indexed.
	patch := func(e *core.HistoryEdit) bool {
		return e.Call >= 0 && e.Call < n && isObject(history[e.Call]) && isArray(history[e.Call].Get(fieldParts))
	}
	out := jsutil.Array.New()
	k := 0
	for i := 0; i <= n; i++ {
		keep := i < n
		var m js.Value
		if keep {
			m = history[i]
		}
		for j := range edits {
			e := &edits[j]
			switch {
			case e.Op == core.EditDrop:
				if e.Index == i {
					keep = false
				}
			case patch(e):
				if e.Call == i && keep {
					m = patchedObject(m, e)
				}
			case e.Index == i:
				var calling js.Value
				if e.Call >= 0 && e.Call < n {
					calling = history[e.Call]
				}
				out.SetIndex(k, markerObject(calling, e))
				k++
			}
		}
		if keep {
			out.SetIndex(k, m)
			k++
		}
	}
	result.Get(FieldSeed).Set(fieldRepaired, out)
}

// Field names of the healed copy.
const (
	fieldParts      = "parts"
	fieldRepaired   = "repaired"
	fieldToolCalls  = "tool_calls"
	fieldCamelCalls = "toolCalls"
	fieldCamelID    = "toolCallId"
	fieldState      = "state"
	fieldErrorText  = "errorText"
	stateOutputErr  = "output-error"
)

//go:noinline
func isObject(v js.Value) bool { return v.Type() == js.TypeObject }

// markerObject returns marker e as a tool message in calling's key style.
func markerObject(calling js.Value, e *core.HistoryEdit) js.Value {
	key := FieldToolCallID
	if isObject(calling) && calling.Get(fieldToolCalls).IsUndefined() && !calling.Get(fieldCamelCalls).IsUndefined() {
		key = fieldCamelID
	}
	o := newObject()
	if e.Message.ID != "" {
		setString(o, FieldID, e.Message.ID)
	}
	o.Set(FieldRole, str(string(core.RoleTool)))
	setString(o, key, e.Message.ToolCallID)
	setString(o, FieldContent, e.Message.Content)
	return o
}

// patchedObject returns a copy of UIMessage m whose tool part for the
// marker e carries it as its result.
func patchedObject(m js.Value, e *core.HistoryEdit) js.Value {
	parts := m.Get(fieldParts)
	np := jsutil.Array.New()
	for j, n := 0, length(parts); j < n; j++ {
		p := parts.Index(j)
		if isObject(p) {
			if id := p.Get(fieldCamelID); id.Type() == js.TypeString && id.String() == e.Message.ToolCallID {
				p = jsutil.Object.Call("assign", newObject(), p)
				p.Set(fieldState, stateOutputErr)
				setString(p, fieldErrorText, e.Message.Content)
			}
		}
		np.SetIndex(j, p)
	}
	c := jsutil.Object.Call("assign", newObject(), m)
	c.Set(fieldParts, np)
	return c
}
