package core

import "github.com/agentrt/agentrt/internal/onethread"

// oneThread: goroutines run on one thread, in a wasm module (see package
// onethread).
const oneThread = onethread.Is

// mutex is the lock of the runtime's shared state: a sync.Mutex natively,
// a field for one thread in a wasm module.
type mutex = onethread.Mutex

// flag is a bool read and set from several goroutines without a lock:
// an atomic.Bool natively, a field in a wasm module.
type flag = onethread.Flag
