//go:build !wasm

package onethread

import (
	"sync"
	"sync/atomic"
)

// Is reports that goroutines run on one thread: false natively.
const Is = false

// Mutex is a sync.Mutex natively.
type Mutex = sync.Mutex

// Flag is an atomic.Bool natively.
type Flag = atomic.Bool
