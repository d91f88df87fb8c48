package wasihost

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// mirror is the host's copy of a session's messages, of one generation
// (docs/wire.md, "Mirrors"). Its messages are always a prefix of the
// session's messages of that generation: the module only ever sends a
// generation's messages, and a generation's messages only grow.
type mirror struct {
	gen  uint64
	msgs []core.Message
}

// mirrors are the Runtime's mirrors by session id. They are read and
// changed only while the instance's lock is held, by the call that
// exchanges the frame they follow: so they change in the order the
// module answered, whatever the order the goroutines run in.
type mirrors map[string]*mirror

// claim returns the mirror the host holds for sid, for a begin frame.
func (ms mirrors) claim(sid string) (gen uint64, n int) {
	if m := ms[sid]; m != nil {
		return m.gen, len(m.msgs)
	}
	return 0, 0
}

// apply applies a model action to the session's mirror and returns the
// messages the model is sent, of a capacity that ends with them. hist is
// the mirror the host built from the turn's history, for an adopt.
//
// A mirror is replaced only by one of a newer generation (the session's
// generation changed for good), never cut below what a begin frame may
// have claimed: a window sent alone (generation 0) leaves it as it is.
func (ms mirrors) apply(sid string, a *wire.Action, hist []core.Message) ([]core.Message, error) {
	// wire.DecodeAction checked Start <= End and From + len(Tail) == End.
	if a.Generation == 0 {
		if a.From != a.Start {
			return nil, errProtocol("a window sent alone does not start at its tail")
		}
		return a.Tail[:len(a.Tail):len(a.Tail)], nil
	}
	m := ms[sid]
	if a.Adopt {
		if hist == nil {
			hist = []core.Message{}
		}
		m = &mirror{gen: a.Generation, msgs: hist}
	}
	switch {
	case m != nil && m.gen == a.Generation && len(m.msgs) >= a.From:
		if a.From < len(m.msgs) {
			m.msgs = append(m.msgs[:a.From:a.From], a.Tail...)
		} else {
			m.msgs = append(m.msgs, a.Tail...)
		}
	case a.From == 0:
		m = &mirror{gen: a.Generation, msgs: append([]core.Message(nil), a.Tail...)}
	default:
		return nil, errProtocol("a model action extends a mirror the host does not hold")
	}
	ms[sid] = m
	return m.msgs[a.Start:a.End:a.End], nil
}

// keep drops the mirrors of the sessions not in live.
func (ms mirrors) keep(live []string) {
	set := make(map[string]struct{}, len(live))
	for _, id := range live {
		set[id] = struct{}{}
	}
	for id := range ms {
		if _, ok := set[id]; !ok {
			delete(ms, id)
		}
	}
}
