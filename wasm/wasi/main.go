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

import (
	"runtime"
	"sync"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/fastpath"
	"github.com/agentrt/agentrt/internal/wasmexport"
	"github.com/agentrt/agentrt/wire"
)

// main runs at _initialize and returns at once: the module is a reactor.
func main() {}

var (
	mu       sync.Mutex
	runtimes = map[int32]*core.Runtime{} // open runtimes by number
)

// noTimers is the runtimes' AfterFunc: goroutines of a reactor run only
// during export calls, so a timer of the module could fire late or never.
// The host arms its own timer for a policy's timeoutMs and calls
// agentrt_next(rt, handle, 1).
func noTimers(int64, func()) func() { return func() {} }

// hostTool is the Call of every tool a config frame names: the module
// hands tool calls to the host in tool actions, so it is never called.
func hostTool(core.Context, core.ToolInvocation) (string, error) {
	return "", core.NewError(core.CodeToolError, "tools run in the host")
}

// agentrt_create(n): the input holds a config frame. Returns the new
// runtime's number (0 or more), or minus the length of a refused frame
// that agentrt_out then points at.
//
//go:wasmexport agentrt_create
func exportCreate(size int32) (n int32) {
	defer func() {
		if recover() != nil {
			n = -wasmexport.Refuse(core.NewError(core.CodeInternal, "the module failed on this call"))
		}
	}()
	frame, ok := wasmexport.Input(size)
	if !ok {
		return -wasmexport.Refuse(core.NewError(core.CodeInvalidArgument, "the frame is longer than the input buffer"))
	}
	c, err := wire.DecodeConfig(frame)
	if err != nil {
		return -wasmexport.Refuse(core.AsError(err))
	}
	cfg := core.Config{SystemPrompt: c.SystemPrompt, Limits: c.Limits, AfterFunc: noTimers}
	for _, s := range c.Tools {
		cfg.Tools = append(cfg.Tools, core.Tool{ToolSpec: s, Call: hostTool})
	}
	rt, err := core.New(cfg)
	if err != nil {
		return -wasmexport.Refuse(core.AsError(err))
	}
	var native core.Model
	if c.Echo {
		native = core.Echo{}
	}
	n = wasmexport.Register(fastpath.New(rt, native))
	mu.Lock()
	runtimes[n] = rt
	mu.Unlock()
	wasmexport.Answer(nil)
	return n
}

// agentrt_close(rt): closes the runtime with number rt, dropping its
// sessions and failing its turns' next calls. Returns 1 when rt was
// open.
//
//go:wasmexport agentrt_close
func exportClose(n int32) int32 {
	mu.Lock()
	rt := runtimes[n]
	delete(runtimes, n)
	mu.Unlock()
	if rt == nil {
		return 0
	}
	wasmexport.Unregister(n)
	rt.Close()
	return 1
}

// agentrt_cancel(rt, n): the input holds a run id as UTF-8; returns 1
// when this call cancelled the run. The turn's host learns it from the
// turn's next action frame (agentrt_next).
//
//go:wasmexport agentrt_cancel
func exportCancel(rt, size int32) int32 {
	var ok bool
	wasmexport.Call(rt, size, func(x *fastpath.Runtime, b []byte) []byte {
		ok = x.Cancel(string(b))
		return nil
	})
	return boolInt(ok)
}

// agentrt_session(rt, n): the input holds a session id; the output is a
// session frame, or a refused frame (invalid_argument) when there is no
// such session.
//
//go:wasmexport agentrt_session
func exportSession(rt, size int32) int32 {
	return wasmexport.Call(rt, size, func(x *fastpath.Runtime, b []byte) []byte { return x.Session(string(b)) })
}

// agentrt_delete(rt, n): the input holds a session id; returns 1 when
// there was such a session.
//
//go:wasmexport agentrt_delete
func exportDelete(rt, size int32) int32 {
	var ok bool
	wasmexport.Call(rt, size, func(x *fastpath.Runtime, b []byte) []byte {
		ok = x.Delete(string(b))
		return nil
	})
	return boolInt(ok)
}

// agentrt_sessions(rt): a session-ids frame, sorted.
//
//go:wasmexport agentrt_sessions
func exportSessions(rt int32) int32 {
	return wasmexport.Call(rt, 0, func(x *fastpath.Runtime, _ []byte) []byte { return x.Sessions() })
}

// agentrt_stats(rt, gc): a stats frame; gc = 1 collects garbage first,
// so that heapAlloc counts live objects only.
//
//go:wasmexport agentrt_stats
func exportStats(rt, gc int32) int32 {
	return wasmexport.Call(rt, 0, func(x *fastpath.Runtime, _ []byte) []byte {
		if gc == 1 {
			runtime.GC()
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return x.Stats(ms.HeapAlloc)
	})
}

func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
