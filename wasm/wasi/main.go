//go:build wasip1

// Command wasi is the agentrt WebAssembly module for WASI hosts with no
// JavaScript (wazero, wasmtime, wasmer, Node's and Bun's node:wasi):
// GOOS=wasip1, built as a reactor (-buildmode=c-shared). The host calls
// _initialize once, creates a runtime with agentrt_create and a config
// frame, and then drives turns with the boundary wire's exports
// (package wasmexport). docs/wasi.md is the host's contract.
//
// Build it with `go run ./cmd/agentrt build`, which writes
// dist/agentrt-wasi.wasm, or:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o agentrt-wasi.wasm ./wasm/wasi
package main

import "github.com/agentrt/agentrt/wasm/internal/wasmexport"

// main runs at _initialize and returns at once: the module is a reactor.
// The control exports (agentrt_create with a config frame, close, cancel,
// revert, session, delete, sessions, stats, limits, check) and the
// turn's exports are package wasmexport's; the GOOS=js module links all
// of them but agentrt_create.
func main() {}

// init makes the runtimes that agentrt_create returns arm no timer:
// goroutines of a reactor run only during export calls, so a timer of the
// module could fire late or never. The host arms its own timer for a
// policy's timeoutMs and calls agentrt_next(rt, handle, 1).
func init() { wasmexport.AfterFunc = noTimers }

func noTimers(int64, func()) func() { return func() {} }
