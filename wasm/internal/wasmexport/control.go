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
// (for opStats, handle 1 collects garbage first; for opCheck, handle is
// the count of host messages). It returns the output frame.
func control(x *hostturn.Driver, op int, b []byte, handle uint32) (out []byte) {
	switch op {
	case opSession:
		out = x.Session(string(b))
	case opSessions:
		out = x.Sessions()
	case opStats:
		out = x.Stats(handle == 1)
	case opLimits:
		out = x.Limits()
	case opOp:
		out = x.Op(b)
	default:
		out = x.CheckHistory(b, int(handle))
	}
	return out
}

// agentrt_session(rt, n): the input holds a session id; the output is a
// session frame, or a refused frame (invalid_argument) when there is no
// such session.
//
//go:wasmexport agentrt_session
func exportSession(rt, size int32) int32 { return call(opSession, rt, size, 0) }

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

// agentrt_op(rt, n): the input holds an op frame (wire.AppendOp): the
// name of an operation of the module's table (hostturn.Ops) and its
// arguments; the output is a value frame of its answer, or a refused
// frame (invalid_argument) for an operation the table does not have or
// bad arguments. Every operation of the table is reached through this
// one export.
//
//go:wasmexport agentrt_op
func exportOp(rt, size int32) int32 { return call(opOp, rt, size, 0) }
