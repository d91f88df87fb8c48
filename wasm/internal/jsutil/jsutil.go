// Package jsutil is the JavaScript plumbing that agentrt's GOOS=js
// modules share: the globals they read once, argument access, function
// wrappers that never let a panic reach the Go runtime, and byte copies.
// It builds only for GOOS=js GOARCH=wasm; this file carries the package
// doc so that the package is visible on every platform.
//
//	api.Set("next", jsutil.Func("agentrt: bad call", func(_ js.Value, args []js.Value) any {
//		id := jsutil.Arg(args, 0)
//		...
//	}))
//
// The package is internal: its API changes with its callers.
package jsutil
