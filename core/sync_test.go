package core

import (
	"runtime"
	"testing"
)

// TestMutex_Contended has goroutines yield while they hold a mutex, as
// one that assists the garbage collector does: the others must wait. In
// a wasm module this checks the one-thread mutex of sync_wasm.go.
func TestMutex_Contended(t *testing.T) {
	var mu mutex
	var in flag
	n := 0
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 200; i++ {
				mu.Lock()
				if in.Load() {
					t.Error("two goroutines hold the mutex")
				}
				in.Store(true)
				runtime.Gosched()
				n++
				in.Store(false)
				mu.Unlock()
			}
			done <- struct{}{}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	if n != 800 {
		t.Fatalf("n = %d, want 800", n)
	}
}
