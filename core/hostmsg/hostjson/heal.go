package hostjson

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
)

// AppendHealed appends to b, as JSON text, the host's history with a
// seed's repairs applied (core.SeedReport.Edits), in the host's own shape
// (docs/adr/0016-the-host-copy-heals.md): history is the array the host
// passed. Kept messages are written as they were (fields in their order);
// a dropped message is left out; a marker becomes a tool message,
// {"role":"tool","tool_call_id":...,"content":...} (toolCallId when the
// calling message writes its calls toolCalls), with the calling
// message's id when the marker has one, before the host message at its
// Index; when the calling message is a UIMessage (it has parts), the
// marker is instead the result of the call's tool part: its state becomes
// "output-error" and its errorText the marker's content.
func AppendHealed(b []byte, history Value, edits []core.HistoryEdit) []byte {
	n := history.Len()
	dropped := make(map[int]bool)
	patches := make(map[int][]*core.HistoryEdit) // calling UIMessage -> its markers
	inserts := make(map[int][]*core.HistoryEdit) // index -> markers before it
	for i := range edits {
		e := &edits[i]
		switch e.Op {
		case core.EditDrop:
			dropped[e.Index] = true
		case core.EditInsert:
			if e.Call >= 0 && e.Call < n && history.Index(e.Call).Get(hostmsg.FieldParts).Kind() == hostmsg.Array {
				patches[e.Call] = append(patches[e.Call], e)
			} else {
				inserts[e.Index] = append(inserts[e.Index], e)
			}
		}
	}
	b = append(b, '[')
	first := true
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	for i := 0; i <= n; i++ {
		for _, e := range inserts[i] {
			sep()
			b = appendMarker(b, history, e)
		}
		if i == n || dropped[i] {
			continue
		}
		sep()
		m := history.Index(i)
		if ps := patches[i]; len(ps) > 0 {
			b = appendPatched(b, m, ps)
		} else {
			b = m.appendJSON(b)
		}
	}
	return append(b, ']')
}

// appendMarker appends marker e as a tool message in the shape of its
// calling message.
func appendMarker(b []byte, history Value, e *core.HistoryEdit) []byte {
	key := hostmsg.FieldToolCallID
	if e.Call >= 0 && e.Call < history.Len() {
		if c := history.Index(e.Call); c.Get(hostmsg.FieldToolCalls).Kind() == hostmsg.Undefined &&
			c.Get(hostmsg.FieldToolCallsCamel).Kind() != hostmsg.Undefined {
			key = hostmsg.FieldToolCallIDCamel
		}
	}
	b = append(b, '{')
	if e.Message.ID != "" {
		b = AppendString(b, hostmsg.FieldID)
		b = append(b, ':')
		b = AppendString(b, e.Message.ID)
		b = append(b, ',')
	}
	b = append(b, `"role":"tool",`...)
	b = AppendString(b, key)
	b = append(b, ':')
	b = AppendString(b, e.Message.ToolCallID)
	b = append(b, `,"content":`...)
	b = AppendString(b, e.Message.Content)
	return append(b, '}')
}

// appendPatched appends UIMessage m with the tool parts of the markers ps
// given their result: state "output-error", errorText the marker's
// content; every other field and part as it was.
func appendPatched(b []byte, m Value, ps []*core.HistoryEdit) []byte {
	b = append(b, '{')
	for i, k := range m.n.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		v := m.n.vals[i]
		if k != hostmsg.FieldParts || v.Kind() != hostmsg.Array {
			b = v.appendJSON(b)
			continue
		}
		b = append(b, '[')
		for j, p := range v.n.elems {
			if j > 0 {
				b = append(b, ',')
			}
			var marker *core.HistoryEdit
			if id := p.Get(hostmsg.FieldToolCallIDCamel); id.Kind() == hostmsg.String {
				for _, e := range ps {
					if e.Message.ToolCallID == id.Text() {
						marker = e
					}
				}
			}
			if marker == nil || p.Kind() != hostmsg.Object {
				b = p.appendJSON(b)
				continue
			}
			b = appendResultPart(b, p, marker.Message.Content)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendResultPart appends tool part p with state "output-error" and
// errorText text, in place of its state and errorText, or after its
// other fields.
func appendResultPart(b []byte, p Value, text string) []byte {
	b = append(b, '{')
	state, errText := false, false
	for i, k := range p.n.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		switch k {
		case hostmsg.FieldState:
			b, state = AppendString(b, hostmsg.StateOutputError), true
		case hostmsg.FieldErrorText:
			b, errText = AppendString(b, text), true
		default:
			b = p.n.vals[i].appendJSON(b)
		}
	}
	if !state {
		b = append(b, `,"state":`...)
		b = AppendString(b, hostmsg.StateOutputError)
	}
	if !errText {
		b = append(b, `,"errorText":`...)
		b = AppendString(b, text)
	}
	return append(b, '}')
}
