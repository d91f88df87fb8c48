//go:build js && wasm

// Command minimal is the size reference of `make bench`: about the
// smallest useful GOOS=js module. It publishes one function on a global
// with syscall/js and stays alive, which is what every module a host
// loads must do; agentrt.wasm's size is reported relative to it. The
// bench script builds it with the flags of internal/build.Module.
package main

import "syscall/js"

func main() {
	js.Global().Set("minimal", js.FuncOf(func(js.Value, []js.Value) any { return "ok" }))
	select {}
}
