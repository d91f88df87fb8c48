//go:build wasm

package onethread

import "runtime"

// Is reports that goroutines run on one thread: a goroutine that runs
// while another holds a lock either runs while the holder is switched
// out, or was called from the holder's call into the host.
const Is = true

// Mutex is a lock for one thread of goroutines. A goroutine may still be
// switched out while it holds one (an allocation can make it assist the
// garbage collector and yield): another that wants the lock then yields
// until it is free. The zero Mutex is unlocked.
type Mutex struct{ held bool }

// Lock locks m. It is not inlined: inlined, its call to wait would be
// repeated at each of the many places that lock.
//
//go:noinline
func (m *Mutex) Lock() {
	if m.held {
		m.wait()
	}
	m.held = true
}

// wait yields until no goroutine holds m.
//
//go:noinline
func (m *Mutex) wait() {
	for m.held {
		runtime.Gosched()
	}
}

// Unlock unlocks m.
func (m *Mutex) Unlock() { m.held = false }

// Flag is a bool that goroutines share on one thread.
type Flag struct{ v bool }

// Load returns the flag.
func (f *Flag) Load() bool { return f.v }

// Store sets the flag to v.
func (f *Flag) Store(v bool) { f.v = v }
