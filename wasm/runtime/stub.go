//go:build !(js && wasm)

// Command runtime is the agentrt WebAssembly module. It builds only for
// GOOS=js GOARCH=wasm; on any other platform it says how to build it.
package main

import (
	"os"
)

func main() {
	os.Stderr.WriteString("runtime: this is the agentrt WebAssembly module; build it with\n" +
		"  go run ./cmd/agentrt build      (writes dist/agentrt.wasm and wasm_exec.js)\n" +
		"or: GOOS=js GOARCH=wasm go build -o agentrt.wasm ./wasm/runtime\n")
	os.Exit(2)
}
