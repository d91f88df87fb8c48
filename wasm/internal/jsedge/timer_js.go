package jsedge

import "syscall/js"

// AfterFunc is a core.AfterFunc on the host's setTimeout and clearTimeout.
// The module uses the host's timers rather than package time, whose
// start-up cost would grow the download (see RATIONALE.md).
//
// f runs in its own goroutine, never on the JavaScript callback, so it
// may take locks, and it may call stop.
func AfterFunc(ms int64, f func()) (stop func()) {
	// done: f is started or stopped. One goroutine runs at a time and
	// nothing between the test and the set yields: a plain bool.
	var done bool
	var cb js.Func
	cb = js.FuncOf(func(js.Value, []js.Value) any {
		if !done {
			done = true
			go func() {
				cb.Release()
				f()
			}()
		}
		return nil
	})
	id := js.Global().Call(GlobalSetTimeout, cb, float64(ms))
	return func() {
		if !done {
			done = true
			js.Global().Call(GlobalClearTimeout, id)
			cb.Release()
		}
	}
}
