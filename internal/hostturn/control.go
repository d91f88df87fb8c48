package hostturn

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// The control operations of the wire that the turn's frames do not
// cover (docs/wire.md, "Control exports"): revert, limits and
// checkHistory.

// Revert decodes the input of agentrt_revert (wire.DecodeRevert) and
// reverts the run's messages in the session (core.Runtime.RevertRun). It
// returns nil and whether the run was reverted, or a refused frame and
// false for a malformed input.
func (x *Driver) Revert(frame []byte) ([]byte, bool) {
	session, run, err := wire.DecodeRevert(frame)
	if err != nil {
		return x.refuse(err), false
	}
	return nil, x.rt.RevertRun(session, run)
}

// Limits returns a limits frame: the limits in force, for a host that
// checks sizes against them before it copies anything into the module.
func (x *Driver) Limits() []byte {
	l := x.rt.Limits()
	x.out = wire.AppendLimits(x.out[:0], &l)
	return x.out
}

// CheckHistory decodes a packed history and returns a check-report frame
// of what core.CheckHistory finds in it under the runtime's limits. A
// history the format does not hold, or one that packs more messages than
// maxSeedMessages, is reported as its one problem (core.UnreadableCheck)
// with the refusal a begin frame carrying it gets, as the syscall/js
// checkHistory reports a packed history it cannot read.
func (x *Driver) CheckHistory(packed []byte) []byte {
	var c core.HistoryCheck
	if h, err := wire.DecodeHistoryBytes(packed, x.rt.Limits().MaxSeedMessages); err != nil {
		c = core.UnreadableCheck(err)
	} else {
		c = x.rt.CheckHistory(h)
	}
	x.out = wire.AppendCheck(x.out[:0], &c)
	return x.out
}

// Close closes the runtime (core.Runtime.Close): its sessions are
// dropped and its turns fail at their next call.
func (x *Driver) Close() { x.rt.Close() }
