//go:build wasm

package wasmexport

import "github.com/agentrt/agentrt/wasm/internal/hostturn"

// The control exports (docs/wire.md, "Control exports"): every operation
// on a runtime that is not a turn, linked by both modules. A host creates
// a runtime with agentrt_create and a config frame (create.go, the WASI
// module's), or, in the GOOS=js module, with createRuntime, whose runtime
// object carries its number.

// agentrt_close(rt): closes the runtime with number rt, dropping its
// sessions and cancelling its runs. Returns 1 when rt was open. The
// number goes at once when no turn is left, or else with the end of the
// last turn: each turn's next action is its cancellation (as the
// syscall/js Runtime object's close leaves its turns), and later calls
// with the number are refused.
//
//go:wasmexport agentrt_close
func exportClose(n int32) int32 {
	x := Lookup(n)
	if x == nil || x.Closed() {
		return 0
	}
	x.Close()
	if x.Turns() == 0 {
		Unregister(n)
	}
	return 1
}

// control runs a control operation for call on x with the input frame b
// (for opStats, handle 1 collects garbage first). It returns the output
// frame, or nil with the answer in yes.
func control(x *hostturn.Driver, op int, b []byte, handle uint32) (out []byte) {
	switch op {
	case opCancel:
		yes = x.Cancel(string(b))
	case opRevert:
		out, yes = x.Revert(b)
	case opSession:
		out = x.Session(string(b))
	case opDelete:
		yes = x.Delete(string(b))
	case opSessions:
		out = x.Sessions()
	case opStats:
		out = x.Stats(handle == 1)
	case opLimits:
		out = x.Limits()
	default:
		out = x.CheckHistory(b, int(handle))
	}
	return out
}

// agentrt_cancel(rt, n): the input holds a run id as UTF-8; returns 1
// when this call cancelled the run. The turn's host learns it from the
// turn's next action frame (agentrt_next).
//
//go:wasmexport agentrt_cancel
func exportCancel(rt, size int32) int32 {
	call(opCancel, rt, size, 0)
	return boolInt(yes)
}

// agentrt_revert(rt, n): the input holds a session id and a run id
// (wire.AppendRevert); returns 1 when the run's messages were removed
// from the session, 0 when not, or minus the length of a refused frame
// (agentrt_out) for a malformed input or an unknown runtime.
//
//go:wasmexport agentrt_revert
func exportRevert(rt, size int32) int32 {
	if n := call(opRevert, rt, size, 0); n != 0 {
		return -n
	}
	return boolInt(yes)
}

// agentrt_session(rt, n): the input holds a session id; the output is a
// session frame, or a refused frame (invalid_argument) when there is no
// such session.
//
//go:wasmexport agentrt_session
func exportSession(rt, size int32) int32 { return call(opSession, rt, size, 0) }

// agentrt_delete(rt, n): the input holds a session id; returns 1 when
// there was such a session.
//
//go:wasmexport agentrt_delete
func exportDelete(rt, size int32) int32 {
	call(opDelete, rt, size, 0)
	return boolInt(yes)
}

// agentrt_sessions(rt): a session-ids frame, sorted.
//
//go:wasmexport agentrt_sessions
func exportSessions(rt int32) int32 { return call(opSessions, rt, 0, 0) }

// agentrt_stats(rt, gc): a stats frame; gc = 1 collects garbage first,
// so that heapAlloc counts live objects only.
//
//go:wasmexport agentrt_stats
func exportStats(rt, gc int32) int32 { return call(opStats, rt, 0, uint32(gc)) }

// agentrt_limits(rt): a limits frame, the limits the runtime enforces,
// for a host that checks byte sizes before it copies into the module.
//
//go:wasmexport agentrt_limits
func exportLimits(rt int32) int32 { return call(opLimits, rt, 0, 0) }

// agentrt_check(rt, n, hosts): the input holds a packed history
// (docs/packed-history.md); the output is a check-report frame of what
// seeding it would meet (core.CheckHistory under the runtime's limits).
// hosts is 0 for a history a host packed, or the number of host messages
// of the Array the glue packed (bounded by that count, as the syscall/js
// checkHistory bounds an Array). Nothing is seeded or changed.
//
//go:wasmexport agentrt_check
func exportCheck(rt, size, hosts int32) int32 { return call(opCheck, rt, size, uint32(max(hosts, 0))) }

func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
