package hostturn

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// The token count's step (docs/adr/0018-context-window-by-tokens.md): a
// runtime whose host counts tokens (core.Config.CountByAction) asks for
// counts with a count action, and the host answers with a counts frame
// (Feed) or, typed, with Count.

// feedCounts decodes a counts frame and hands it to its turn, returning
// the turn's next action frame, or a refused frame for a malformed frame
// or an unknown handle (then the turn still awaits its counts).
func (x *Driver) feedCounts(frame []byte) []byte {
	c, err := wire.DecodeCounts(frame)
	if err != nil {
		return x.refuse(err)
	}
	ht := x.turn(c.Handle)
	if ht == nil {
		return x.refuse(unknownTurn(c.Handle))
	}
	var cerr error
	if c.Err != nil {
		cerr = c.Err
	}
	tn := ht.turn // step forgets an ended turn's
	return x.frame(ht, tn, x.step(ht, tn.FeedCounts(c.Counts, cerr)))
}

// Count answers the count action of turn h, the messages of its last
// action: their token counts in order, or the counter's error (see
// core.Turn.FeedCounts). It returns the turn's next action, as Model
// does.
func (x *Driver) Count(h uint64, counts []int, err error) core.Action {
	ht := x.turn(h)
	if ht == nil {
		return core.Action{Kind: core.ActionFailed, Err: core.AsError(unknownTurn(h))}
	}
	return x.step(ht, ht.turn.FeedCounts(counts, err))
}
