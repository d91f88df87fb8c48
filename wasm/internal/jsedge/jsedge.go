//go:build !(js && wasm)

package jsedge

import "errors"

// ErrNotJS explains why the conversion functions are missing on this
// platform: they need syscall/js, which exists only for GOOS=js
// GOARCH=wasm. Build the module with `go run ./cmd/agentrt build`, or
// drive core directly from Go.
var ErrNotJS = errors.New("jsedge: the JavaScript edge builds only for GOOS=js GOARCH=wasm; build the module with `go run ./cmd/agentrt build`, or use package core from Go")
