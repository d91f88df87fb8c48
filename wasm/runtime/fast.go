//go:build js && wasm

package main

import (
	"sync"
	"syscall/js"
	"unsafe"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/decimal"
	"github.com/agentrt/agentrt/internal/fastpath"
	"github.com/agentrt/agentrt/wasm/jsedge"
	"github.com/agentrt/agentrt/wire"
)

// The fast path: //go:wasmexport functions that drive host-driven turns
// over wire frames in linear memory (docs/wire.md, docs/module.md "Fast
// path"). A JavaScript host calls them through instance.exports; no
// js.Value is made per message. Each Runtime object the module returns
// carries its number in the property fieldFastPath; the exports take it
// as their first argument.
//
// Frames in: the host asks agentrt_in(n) for the address of a buffer of
// n bytes, writes the frame there, and calls an export with n. Frames
// out: an export returns the frame's length (0: none) and agentrt_out()
// its address, valid until the next export call. Memory may grow during
// any call: make views on mem.buffer after it.

// fieldFastPath names the property of a Runtime object that holds its
// number on the fast path. Keep in sync with js/glue.js.
const fieldFastPath = "fastPath"

var (
	fastMu  sync.Mutex
	fast    []*fastpath.Runtime // by number; nil once closed and idle
	closing []bool              // by number: closed, dropped once no turn is left
	in      []byte
	out     []byte
)

// registerFast gives rt a number on the fast path and sets it on o.
func registerFast(o js.Value, rt *core.Runtime, cfg *core.Config) {
	var native core.Model
	if _, hostModel := cfg.Model.(*jsedge.Model); !hostModel {
		native = cfg.Model
		if native == nil {
			native = core.Echo{}
		}
	}
	fastMu.Lock()
	fast = append(fast, fastpath.New(rt, native))
	closing = append(closing, false)
	n := len(fast) - 1
	fastMu.Unlock()
	o.Set(fieldFastPath, n)
}

// unregisterFast drops the runtime with number n (it was closed) once
// its hosts have driven its last turns to their end (cancelled).
func unregisterFast(n int) {
	fastMu.Lock()
	if n >= 0 && n < len(fast) {
		closing[n] = true
	}
	fastMu.Unlock()
	dropIdle(n)
}

// dropIdle drops runtime n when it is closed and has no turn left.
func dropIdle(n int) {
	fastMu.Lock()
	defer fastMu.Unlock()
	if n >= 0 && n < len(fast) && closing[n] && fast[n] != nil && fast[n].Turns() == 0 {
		fast[n] = nil
	}
}

func fastRuntime(n int32) *fastpath.Runtime {
	fastMu.Lock()
	defer fastMu.Unlock()
	if n < 0 || int(n) >= len(fast) {
		return nil
	}
	return fast[n]
}

// answer keeps frame as the output and returns its length.
func answer(frame []byte) int32 {
	out = frame
	return int32(len(frame))
}

// guard runs f for runtime n with the input frame of length size,
// answering a refused frame when the runtime is unknown, the size is
// wrong, or f panics: a panic must not reach the wasm instance.
func guard(n, size int32, f func(x *fastpath.Runtime, frame []byte) []byte) (length int32) {
	defer func() {
		if recover() != nil {
			length = answer(wire.AppendRefused(nil, core.NewError(core.CodeInternal, "the module failed on this call")))
		}
	}()
	x := fastRuntime(n)
	if x == nil {
		return answer(wire.AppendRefused(nil, core.NewError(core.CodeInvalidArgument, "no open runtime has number "+decimal.Itoa(int(n)))))
	}
	if size < 0 || int(size) > len(in) {
		return answer(wire.AppendRefused(nil, core.NewError(core.CodeInvalidArgument, "the frame is longer than the input buffer")))
	}
	length = answer(f(x, in[:size]))
	dropIdle(int(n))
	return length
}

//go:wasmexport agentrt_in
func exportIn(size int32) uint32 {
	if size < 0 {
		size = 0
	}
	if int(size) > cap(in) {
		in = make([]byte, max(int(size), 2*cap(in), 4096))
	}
	in = in[:cap(in)]
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(in))))
}

//go:wasmexport agentrt_out
func exportOut() uint32 {
	if len(out) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(out))))
}

//go:wasmexport agentrt_begin
func exportBegin(rt, size int32) int32 {
	return guard(rt, size, (*fastpath.Runtime).Begin)
}

// agentrt_feed(rt, n): a model-reply, tool-result or delta frame; the
// output is the turn's next action frame.
//
//go:wasmexport agentrt_feed
func exportFeed(rt, size int32) int32 {
	return guard(rt, size, (*fastpath.Runtime).Feed)
}

// agentrt_next(rt, handle, expire): the turn's next action frame, after a
// wait or a cancel; expire = 1 first stops it with a timeout.
//
//go:wasmexport agentrt_next
func exportNext(rt int32, handle uint32, expire int32) int32 {
	return guard(rt, 0, func(x *fastpath.Runtime, _ []byte) []byte { return x.Next(uint64(handle), expire == 1) })
}

// agentrt_cancel(rt, n): the input holds a run id as UTF-8; returns 1
// when this call cancelled the run.
//
//go:wasmexport agentrt_cancel
func exportCancel(rt, size int32) int32 {
	var ok bool
	guard(rt, size, func(x *fastpath.Runtime, b []byte) []byte {
		ok = x.Cancel(string(b))
		return nil
	})
	if ok {
		return 1
	}
	return 0
}

