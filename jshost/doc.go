// Package jshost runs unmodified GOOS=js WebAssembly modules in Go, on
// github.com/tetratelabs/wazero, with no JavaScript engine: it is the host
// side of Go's lib/wasm/wasm_exec.js written in Go.
//
// It provides every gojs import with the memory layout of Go 1.26's
// wasm_exec.js, and a small JavaScript-like object world: objects, arrays,
// functions, Uint8Array, Promise with a microtask queue, Error (with name
// and message), Date, JSON, console, setTimeout, and the fs, process and
// path globals Go's standard library reads at start. References are
// counted as wasm_exec.js counts them and released by finalizeRef.
// js.FuncOf callbacks work, including JavaScript-to-Go calls nested inside
// Go-to-JavaScript calls. Timers and every call into the guest are driven
// from one goroutine per instance, its event loop.
//
// It is shaped like net/http/httptest: compile once, start an instance,
// use it, close it.
//
//	m, err := jshost.Compile(ctx, wasmBytes, nil) // cached across runs
//	defer m.Close(ctx)
//	in, err := jshost.NewInstance(ctx, m, jshost.Config{Env: map[string]string{"AGENTRT_GLOBAL": "agentrt"}})
//	defer in.Close(ctx)
//	rt, err := in.Call(ctx, in.Global("agentrt"), "createRuntime", map[string]any{"systemPrompt": "Be brief."})
//	res, err := in.CallAsync(ctx, rt, "startRun", "s1", "hello") // awaits the Promise
//	fmt.Println(in.Export(res).(map[string]any)["reply"])
//
// # Notes
//
//   - The object world is what Go programs and the agentrt module need,
//     not a JavaScript engine: there is no parser or eval, and the
//     built-ins are a subset (see the globals installed by NewInstance).
//   - Numbers are float64, as in JavaScript. Date.getTimezoneOffset uses
//     the host's local zone.
//   - The package follows wasm_exec.js of Go 1.24 to 1.27; Compile refuses
//     a module importing anything else, so an ABI change fails loudly.
package jshost
