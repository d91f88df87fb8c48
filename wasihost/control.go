package wasihost

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// Export names of the control operations added with ADR 0017's step 4.
// Keep in sync with wasm/internal/wasmexport.
const (
	expRevert = "agentrt_revert"
	expLimits = "agentrt_limits"
	expCheck  = "agentrt_check"
)

// RevertRun removes the messages of the completed run runID from the
// session (core.Runtime.RevertRun) and reports whether it did; when it
// did not, the module may have dropped the session, so that the host's
// history seeds it again. The session's mirror goes either way.
func (rt *Runtime) RevertRun(sessionID, runID string) (bool, error) {
	rt.in.mu.Lock()
	defer rt.in.mu.Unlock()
	frame := wire.AppendRevert(nil, sessionID, runID)
	if err := rt.in.write(frame); err != nil {
		return false, err
	}
	n, err := rt.in.call(expRevert, uint64(uint32(rt.num)), uint64(len(frame)))
	if err != nil {
		return false, err
	}
	if n < 0 {
		out, err := rt.in.output(-n)
		if err != nil {
			return false, err
		}
		if e := refused(out); e != nil {
			return false, e
		}
		return false, errProtocol("agentrt_revert failed without a refused frame")
	}
	delete(rt.mirrors, sessionID)
	return n == 1, nil
}

// Limits returns the limits the runtime enforces, defaults filled in.
func (rt *Runtime) Limits() (*core.Limits, error) {
	out, err := rt.query(expLimits)
	if err != nil {
		return nil, err
	}
	if e := refused(out); e != nil {
		return nil, e
	}
	return wire.DecodeLimits(out)
}

// CheckHistory returns what seeding history would meet under the
// runtime's limits (core.CheckHistory), checked in the module: the
// history crosses in the packed format. Nothing is seeded or changed.
func (rt *Runtime) CheckHistory(history []core.SeedMessage) (*core.HistoryCheck, error) {
	// hosts 0: the history is bounded by its packed messages, as packed.
	out, err := rt.exchange(expCheck, wire.EncodeHistory(history), 0)
	if err != nil {
		return nil, err
	}
	if e := refused(out); e != nil {
		return nil, e
	}
	c, derr := wire.DecodeCheck(out)
	if derr != nil {
		return nil, errProtocol("unreadable check-report frame: " + derr.Error())
	}
	return c, nil
}
