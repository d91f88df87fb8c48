// Go's idle time: the module's garbage collector finishes its cycles in
// the time the host's event loop is idle, as it does in a Go program
// that waits for events.

// A GOOS=js Go program runs only inside the calls JavaScript makes into
// it. Called through syscall/js, Go runs every goroutine that is ready
// before it returns, the collector's background workers among them;
// called through a wasmexport function, as the glue's driver is, it
// returns at once. A collection begun during a seed then stays in its
// mark phase over the next calls: everything allocated meanwhile is kept
// and linear memory grows, and a run of seeds of 10,000 messages after
// some of 1,000 took 2-3x as long (docs/BENCHMARKS.md, "Cold seeds: the
// Go collector's idle time").

/**
 * Gives the instance's Go runtime an idle moment once the host's event
 * loop is free: one resume of the Go program with no event to handle,
 * which runs the goroutines that are ready (the collector's workers
 * finish a cycle begun meanwhile) and returns. At most one is pending per
 * instance; it does nothing once the instance is dead or Go has exited.
 *
 * @param {{ go: any, dead: boolean, idle?: boolean }} inst
 */
export function idleLater(inst) {
  if (inst.idle) return;
  inst.idle = true;
  const t = setTimeout(() => {
    inst.idle = false;
    if (inst.dead || inst.go.exited) return;
    try {
      inst.go._resume();
    } catch {
      // The instance is failing: the next call reports it.
    }
  }, 0);
  // A pending idle moment does not keep a process alive.
  if (typeof t === "object" && t !== null && typeof t.unref === "function") t.unref();
}

/**
 * Gives the instance's Go runtime its idle moment now, inside the
 * caller's call, as every call of the module's syscall/js API does: it
 * runs the goroutines that are ready before it returns. The glue's
 * control calls (deleteSession, session, listSessions, stats,
 * checkHistory) do, as they did when they went through that API: a
 * collection begun in a seed then ends there, where it otherwise stays
 * in its mark phase over the turns that follow until the event loop
 * turns, each of them paying the collector's write barriers and assists
 * (docs/BENCHMARKS.md, "The hot paths against the previous round").
 *
 * @param {{ go: any, dead: boolean }} inst
 */
export function idleNow(inst) {
  if (inst.dead || inst.go.exited) return;
  try {
    inst.go._resume();
  } catch {
    // The instance is failing: the caller's check of go.exited reports it.
  }
}
