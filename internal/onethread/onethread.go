// Package onethread has the lock and the shared flag of code that runs
// both natively and in a wasm module. A wasm module runs its goroutines
// on one thread, and the Go scheduler switches goroutines there only
// inside a call into the runtime: never between two statements that call
// nothing. There sync.Mutex and sync/atomic cost out-of-line calls on
// every use and link package sync into the module, while a test and a
// store of a plain field are as atomic as a compare-and-swap. In a wasm
// module Mutex and Flag are those fields; native builds get sync.Mutex
// and atomic.Bool, which the race detector checks.
package onethread
