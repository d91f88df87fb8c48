package wire

import "github.com/agentrt/agentrt/core"

// The frames of the control exports (docs/wire.md, "Control exports")
// that the turn's frames do not cover: the check-report frame
// agentrt_check answers (the op export's are in op.go).

// KindCheck is the module's check-report frame: what core.CheckHistory
// found in a packed history (agentrt_check).
const KindCheck Kind = 0x17

// AppendCheck appends a check-report frame for c: ok (a byte), the
// problem count and each problem (code, index as a zigzag integer,
// message, repair kind or ""), then the count of calls awaiting approval
// and each call (index, tool call id, name, arguments), then paused (a
// byte) and the history's head (core.HistoryCheck.Head).
func AppendCheck(dst []byte, c *core.HistoryCheck) []byte {
	dst = appendBool(appendHeader(dst, KindCheck), c.OK)
	dst = AppendUvarint(dst, uint64(len(c.Problems)))
	for i := range c.Problems {
		p := &c.Problems[i]
		dst = AppendString(dst, string(p.Code))
		dst = AppendUvarint(dst, zigzag(int64(p.Index)))
		dst = AppendString(dst, p.Message)
		dst = AppendString(dst, string(p.Repair))
	}
	dst = AppendUvarint(dst, uint64(len(c.Awaiting)))
	for i := range c.Awaiting {
		a := &c.Awaiting[i]
		dst = AppendUvarint(dst, uint64(max(a.Index, 0)))
		dst = AppendString(dst, a.ToolCallID)
		dst = AppendString(dst, a.Name)
		dst = AppendString(dst, a.Arguments)
	}
	return AppendString(appendBool(dst, c.Paused), c.Head)
}

// DecodeCheck decodes a check-report frame.
func DecodeCheck(b []byte) (*core.HistoryCheck, error) {
	r := newReader(b, KindCheck)
	var c core.HistoryCheck
	c.OK = r.bool("ok")
	if n := r.count("problem count", 4); r.err == nil && n > 0 {
		c.Problems = make([]core.Problem, n)
		for i := range c.Problems {
			p := &c.Problems[i]
			p.Code = core.Code(r.str("problem code"))
			p.Index = int(r.sint("problem index"))
			p.Message = r.str("problem message")
			p.Repair = core.RepairKind(r.str("problem repair"))
		}
	}
	if n := r.count("awaiting count", 4); r.err == nil && n > 0 {
		c.Awaiting = make([]core.AwaitingCall, n)
		for i := range c.Awaiting {
			a := &c.Awaiting[i]
			a.Index = r.int("awaiting index", maxInt32)
			a.ToolCallID = r.str("awaiting tool call id")
			a.Name = r.str("awaiting name")
			a.Arguments = r.str("awaiting arguments")
		}
	}
	c.Paused = r.bool("paused")
	c.Head = r.str("head")
	if err := r.end(); err != nil {
		return nil, err
	}
	return &c, nil
}
