package hostturn

import (
	"runtime"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/wire"
)

// The control operations of the wire that the turn's frames do not
// cover (docs/wire.md, "Control exports"): limits and checkHistory;
// those of the table of operations are in ops.go, whose handlers call
// RevertRun, Cancel and Delete. Each other operation is a typed call
// (Snapshot, SessionIDs, Counters, Check, Close), which the module's
// syscall/js Runtime object calls with the values it converted, and,
// where its input or answer is a frame, a frame method over it, which
// the wire's exports call: both edges run the same handler
// (docs/adr/0024-one-definition-per-operation.md).

// RevertRun takes the completed run's messages off the session
// (core.Runtime.RevertRun) and reports whether it did.
func (x *Driver) RevertRun(session, run string) bool { return x.rt.RevertRun(session, run) }

// Counters returns the store's counters and the module's heap in use
// (runtime.MemStats.HeapAlloc: live objects and garbage not yet
// collected). With gc set it collects garbage first, so that the heap
// counts live objects only; that stops the instance for as long as a
// collection takes, so it is for measurements, not polling.
func (x *Driver) Counters(gc bool) wire.Stats {
	if gc {
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return wire.Stats{Stats: x.rt.Stats(), HeapAlloc: ms.HeapAlloc}
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
// checkHistory reports a packed history it cannot read. hosts > 0 says
// that the history packs an Array of that many host messages (the glue's
// checkHistory of an Array): it is bounded as that API bounds an Array,
// by its host messages (hostmsg.CheckCount), so that one which packs to
// more messages than maxSeedMessages gets core's answer, as there.
func (x *Driver) CheckHistory(packed []byte, hosts int) []byte {
	var c core.HistoryCheck
	max := x.rt.Limits().MaxSeedMessages
	err := hostmsg.CheckCount(hosts, max)
	if hosts > 0 {
		max = maxPacked
	}
	var h []core.SeedMessage
	if err == nil {
		h, err = wire.DecodeHistoryBytes(packed, max)
	}
	if err != nil {
		c = core.UnreadableCheck(err)
	} else {
		c = x.Check(h)
	}
	x.out = wire.AppendCheck(x.out[:0], &c)
	return x.out
}

// Check returns what seeding h would meet under the runtime's limits
// (core.Runtime.CheckHistory), running nothing: the handler of
// checkHistory in both modules, which CheckHistory calls with the
// history it decoded, and the syscall/js object's checkHistory with the
// one it read from JavaScript values.
func (x *Driver) Check(h []core.SeedMessage) core.HistoryCheck { return x.rt.CheckHistory(h) }

// maxPacked bounds the packed messages of an Array's history (it is
// bounded by its host messages): the decoder refuses a count its bytes
// cannot hold, so this bounds nothing a frame can carry.
const maxPacked = 1<<31 - 1

// Close closes the runtime (core.Runtime.Close): its runs are
// cancelled, which each turn's next action reports, and later runs are
// refused.
func (x *Driver) Close() {
	x.closed = true
	x.rt.Close()
}

// Closed reports whether Close was called.
func (x *Driver) Closed() bool { return x.closed }
