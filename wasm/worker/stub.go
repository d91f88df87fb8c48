//go:build !js

package main

import (
	"fmt"
	"os"
)

// main explains what to do instead: this package is the GOOS=js worker
// module, run under workerd or deployed with wrangler.
func main() {
	fmt.Fprintln(os.Stderr, "agentrt worker: this package builds for GOOS=js GOARCH=wasm only; run `go run ./cmd/agentrt worker` to build it and serve it under workerd")
	os.Exit(2)
}
