//go:build !(js && wasm)

// Command wasmparts is a GOOS=js benchmark module; bench/wasmparts.mjs
// builds and runs it. On any other platform it says so.
package main

import "os"

func main() {
	os.Stderr.WriteString("wasmparts: a GOOS=js module; run `node bench/wasmparts.mjs`\n")
	os.Exit(2)
}
