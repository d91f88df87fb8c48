package wasihost

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// Export names of the control operations added with ADR 0017's step 4.
// Keep in sync with wasm/internal/wasmexport.
const (
	expLimits = "agentrt_limits"
	expCheck  = "agentrt_check"
)

// op runs the operation name of the module's table of operations
// (agentrt_op, docs/wire.md) with args, and returns its answer: one
// export for every operation of the table, so that a new one needs no
// code here beyond its typed method.
func (rt *Runtime) op(name string, args ...wire.Value) (wire.Value, error) {
	rt.in.mu.Lock()
	defer rt.in.mu.Unlock()
	return rt.opLocked(name, args...)
}

// opLocked is op for a caller that holds rt.in.mu.
func (rt *Runtime) opLocked(name string, args ...wire.Value) (wire.Value, error) {
	out, _, err := rt.in.exchange(expOp, rt.num, wire.AppendOp(nil, name, args...))
	if err != nil {
		return wire.Value{}, err
	}
	if e := refused(out); e != nil {
		return wire.Value{}, e
	}
	v, derr := wire.DecodeValue(out)
	if derr != nil {
		return wire.Value{}, errProtocol("unreadable value frame: " + derr.Error())
	}
	return v, nil
}

// RevertRun removes the messages of the completed run runID from the
// session (core.Runtime.RevertRun) and reports whether it did; when it
// did not, the module may have dropped the session, so that the host's
// history seeds it again. The session's mirror goes either way.
func (rt *Runtime) RevertRun(sessionID, runID string) (bool, error) {
	rt.in.mu.Lock()
	defer rt.in.mu.Unlock()
	v, err := rt.opLocked("revertRun", wire.Text(sessionID), wire.Text(runID))
	if err != nil {
		return false, err
	}
	delete(rt.mirrors, sessionID)
	return v.Kind == wire.ValueTrue, nil
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
