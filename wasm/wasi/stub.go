//go:build !wasip1

// Command wasi is the agentrt WebAssembly module for WASI hosts. It
// builds only for GOOS=wasip1 as a reactor; on any other platform it says
// how to build it.
package main

import "os"

func main() {
	os.Stderr.WriteString("wasi: this is the agentrt module for WASI hosts; build it with\n" +
		"  go run ./cmd/agentrt build      (writes dist/agentrt-wasi.wasm)\n" +
		"or: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o agentrt-wasi.wasm ./wasm/wasi\n")
	os.Exit(2)
}
