//go:build wasm

package core

import "runtime"

// A wasm module runs its goroutines on one thread, and the Go scheduler
// switches goroutines there only inside a call into the runtime: never
// between two statements that call nothing. There, sync.Mutex and
// sync/atomic cost out-of-line calls on every use (a warm turn locks
// about twenty times), while a test and a store of a plain field are as
// atomic as a compare-and-swap. mutex and flag are those fields; native
// builds use sync.Mutex and atomic.Bool (see sync_native.go), which the
// race detector checks.

// oneThread: goroutines run on one thread, so that a goroutine that runs
// while another holds a lock either runs while the holder is switched
// out, or was called from the holder's call into the host (see Run.emit).
const oneThread = true

// mutex is a lock for one thread of goroutines. A goroutine may still be
// switched out while it holds one (an allocation can make it assist the
// garbage collector and yield): another that wants the lock then yields
// until it is free.
type mutex struct{ held bool }

// Lock locks m. It is not inlined: inlined, its call to wait would be
// repeated at each of the fifty places that lock.
//
//go:noinline
func (m *mutex) Lock() {
	if m.held {
		m.wait()
	}
	m.held = true
}

// wait yields until no goroutine holds m.
//
//go:noinline
func (m *mutex) wait() {
	for m.held {
		runtime.Gosched()
	}
}

// Unlock unlocks m.
func (m *mutex) Unlock() { m.held = false }

// flag is a bool that goroutines share on one thread.
type flag struct{ v bool }

// Load returns the flag.
func (f *flag) Load() bool { return f.v }

// Store sets the flag to v.
func (f *flag) Store(v bool) { f.v = v }
