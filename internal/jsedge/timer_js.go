package jsedge

import (
	"sync/atomic"
	"syscall/js"
)

// maxTimerMs is the longest delay setTimeout keeps: browsers, Node and
// workerd fire a longer one at once (after 1 ms), so AfterFunc waits in
// steps of at most this.
const maxTimerMs = 1<<31 - 1

// AfterFunc is a core.AfterFunc on the host's setTimeout and clearTimeout.
// The module uses the host's timers rather than package time, whose
// start-up cost would grow the download (see RATIONALE.md). A delay over
// setTimeout's (about 24.8 days; core allows a year) is waited in steps.
//
// f runs in its own goroutine, never on the JavaScript callback, so it
// may take locks, and it may call stop.
func AfterFunc(ms int64, f func()) (stop func()) {
	var done atomic.Bool
	var cb js.Func
	var id js.Value
	left := ms
	arm := func() {
		step := min(left, maxTimerMs)
		left -= step
		id = js.Global().Call(GlobalSetTimeout, cb, float64(step))
	}
	cb = js.FuncOf(func(js.Value, []js.Value) any {
		if left > 0 && !done.Load() {
			arm()
			return nil
		}
		if done.CompareAndSwap(false, true) {
			go func() {
				cb.Release()
				f()
			}()
		}
		return nil
	})
	arm()
	return func() {
		if done.CompareAndSwap(false, true) {
			js.Global().Call(GlobalClearTimeout, id)
			cb.Release()
		}
	}
}
