// Command minimal is the smallest useful GOOS=js module: it publishes one
// global and waits. size_test.go builds it beside the real module, with
// the same flags, as the baseline of the module's size budget.
package main

import "syscall/js"

func main() {
	js.Global().Set("agentrtMinimal", "ok")
	select {}
}
