//go:build js && wasm

package main

import (
	"syscall/js"
	"unsafe"

	"github.com/agentrt/agentrt/core"
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

// The module runs one goroutine at a time and exports run to their end
// without yielding, so these need no lock.
var (
	fast []*fastpath.Runtime // by number; nil once closed
	in   []byte
	out  []byte
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
	fast = append(fast, fastpath.New(rt, native))
	o.Set(fieldFastPath, len(fast)-1)
}

// unregisterFast drops the runtime with number n (it was closed), unless
// turns are still to be driven to their end (cancelled): a host that
// closes a runtime with active runs leaves its entry in place.
func unregisterFast(n int) {
	if n >= 0 && n < len(fast) && fast[n] != nil && fast[n].Turns() == 0 {
		fast[n] = nil
	}
}

// Operations of call.
const (
	opBegin = iota
	opFeed
	opNext
	opExpire
)

// call runs op on runtime n, with the input frame of length size or the
// turn handle, and returns the output frame's length: a refused frame
// when the runtime is unknown, the size is wrong, or the call panics (a
// panic must not reach the wasm instance).
func call(op int, n, size int32, handle uint32) (length int32) {
	var refusal string
	code := core.CodeInvalidArgument
	defer func() {
		if recover() != nil {
			refusal, code = "the module failed on this call", core.CodeInternal
		}
		if refusal != "" {
			out = wire.AppendRefused(nil, core.NewError(code, refusal))
		}
		length = int32(len(out))
	}()
	var x *fastpath.Runtime
	if n >= 0 && int(n) < len(fast) {
		x = fast[n]
	}
	switch {
	case x == nil:
		refusal = "no open runtime has this number"
	case size < 0 || int(size) > len(in):
		refusal = "the frame is longer than the input buffer"
	case op == opBegin:
		out = x.Begin(in[:size])
	case op == opFeed:
		out = x.Feed(in[:size])
	default:
		out = x.Next(uint64(handle), op == opExpire)
	}
	return 0
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
func exportBegin(rt, size int32) int32 { return call(opBegin, rt, size, 0) }

// agentrt_feed(rt, n): a model-reply, tool-result or delta frame; the
// output is the turn's next action frame.
//
//go:wasmexport agentrt_feed
func exportFeed(rt, size int32) int32 { return call(opFeed, rt, size, 0) }

// agentrt_next(rt, handle, expire): the turn's next action frame, after a
// wait or a cancel; expire = 1 first stops it with a timeout.
//
//go:wasmexport agentrt_next
func exportNext(rt int32, handle uint32, expire int32) int32 {
	if expire == 1 {
		return call(opExpire, rt, 0, handle)
	}
	return call(opNext, rt, 0, handle)
}
