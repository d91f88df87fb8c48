//go:build !wasm

package core

import (
	"sync"
	"sync/atomic"
)

// oneThread: goroutines run on one thread (see sync_wasm.go).
const oneThread = false

// mutex is the lock of the runtime's shared state: a sync.Mutex, except
// in a wasm module (see sync_wasm.go).
type mutex = sync.Mutex

// flag is a bool read and set from several goroutines without a lock:
// an atomic.Bool, except in a wasm module (see sync_wasm.go).
type flag = atomic.Bool
