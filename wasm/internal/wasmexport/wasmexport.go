//go:build wasm

// Package wasmexport holds the //go:wasmexport functions of the boundary
// wire (docs/wire.md) that do not depend on the host: buffers in linear
// memory, a turn's frames in and out, and the control exports (op, which
// runs the operations of hostturn's table by name; session, sessions,
// stats, limits, check, close; in the WASI module create) for the
// runtimes a main package has registered. A module links them by
// importing the package; it then
// creates its runtimes its own way (a JavaScript config, a config frame)
// and registers each with Register, which gives it the number every
// export takes first.
//
//	n := wasmexport.Register(hostturn.New(rt, nil, wire.ReadPolicyJSON))
//	// the host now calls agentrt_begin(n, size), agentrt_feed(n, size), ...
//
// Frames in: the host asks agentrt_in(size) for the address of a buffer
// of size bytes, writes the frame there, and calls an export with its
// length. Frames out: an export returns the frame's length (0: none) and
// agentrt_out() its address, valid until the next export call. Memory may
// grow during any call, so views on it are made after the call.
//
// # Notes
//
//   - A panic in an export becomes a refused frame with code internal: it
//     never reaches the wasm instance, which stays usable.
//   - The exports must not be called concurrently; wasm instances run one
//     call at a time. Register, Unregister and Lookup are for the module's
//     own goroutine: they take no lock.
package wasmexport

import (
	"unsafe"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/internal/hostturn"
	"github.com/agentrt/agentrt/wire"
)

// A wasm module runs one goroutine at a time, and nothing here yields to
// another, so these need no lock.
var (
	runtimes []*hostturn.Driver // by number; nil once unregistered
	in       []byte
	out      []byte
)

// Register gives x the next number and returns it.
func Register(x *hostturn.Driver) int32 {
	runtimes = append(runtimes, x)
	return int32(len(runtimes) - 1)
}

// Unregister drops the runtime with number n; later calls with n are
// refused. Unknown numbers are ignored.
func Unregister(n int32) {
	if n >= 0 && int(n) < len(runtimes) {
		runtimes[n] = nil
	}
}

// Lookup returns the runtime with number n, or nil.
func Lookup(n int32) *hostturn.Driver {
	if n < 0 || int(n) >= len(runtimes) {
		return nil
	}
	return runtimes[n]
}

// Input returns the first size bytes of the input buffer, or false when
// size is negative or larger than the buffer agentrt_in handed out.
func Input(size int32) ([]byte, bool) {
	if size < 0 || int(size) > len(in) {
		return nil, false
	}
	return in[:size], true
}

// Answer keeps frame as the output (read by agentrt_out) and returns its
// length.
func Answer(frame []byte) int32 {
	out = frame
	return int32(len(frame))
}

// Refuse answers a refused frame for err.
func Refuse(err *core.Error) int32 {
	return Answer(wire.AppendRefused(nil, err))
}

// The refusals of Call and call.
const (
	failed   = "the module failed on this call"
	tooLong  = "the frame is longer than the input buffer"
	noNumber = "no open runtime has this number"
)

// Call runs f for runtime n with the input frame of length size and
// returns the length of the frame f returns, kept as the output. It
// answers a refused frame instead when the runtime is unknown, the size
// is wrong, or f panics. Main packages define their own exports with it.
func Call(n, size int32, f func(x *hostturn.Driver, frame []byte) []byte) (length int32) {
	defer func() {
		if recover() != nil {
			length = Refuse(core.NewError(core.CodeInternal, failed))
		}
	}()
	x := Lookup(n)
	if x == nil {
		return Refuse(core.NewError(core.CodeInvalidArgument, noNumber))
	}
	frame, ok := Input(size)
	if !ok {
		return Refuse(core.NewError(core.CodeInvalidArgument, tooLong))
	}
	return Answer(f(x, frame))
}

// Operations of call.
const (
	opBegin = iota
	opFeed
	opNext
	opExpire
	opCommit
	// The control exports' (control.go).
	opSession
	opSessions
	opStats
	opLimits
	opCheck
	opOp
)

// call is Call for this package's own exports, with the operation named
// instead of passed as a function: no closure per call, and less code in
// every module that links the package.
func call(op int, n, size int32, handle uint32) (length int32) {
	var refusal string
	code := core.CodeInvalidArgument
	defer func() {
		if recover() != nil {
			refusal, code = failed, core.CodeInternal
		}
		if refusal != "" {
			out = wire.AppendRefused(nil, core.NewError(code, refusal))
		}
		length = int32(len(out))
	}()
	x := Lookup(n)
	switch {
	case x == nil:
		refusal = noNumber
	case size < 0 || int(size) > len(in):
		refusal = tooLong
	case op >= opSession:
		out = control(x, op, in[:size], handle)
	case op == opBegin:
		out = x.Begin(in[:size])
	case op == opFeed:
		out = x.Feed(in[:size])
	case op == opCommit:
		out = x.Commit(in[:size])
	default:
		out = x.Next(uint64(handle), op == opExpire)
	}
	if x != nil && x.Closed() && x.Turns() == 0 {
		// Closed with turns left (agentrt_close): the last one has ended.
		Unregister(n)
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

// agentrt_begin(rt, n): a begin frame; the output is the turn's first
// action frame, or a refused frame.
//
//go:wasmexport agentrt_begin
func exportBegin(rt, size int32) int32 { return call(opBegin, rt, size, 0) }

// agentrt_feed(rt, n): a model-reply, tool-result or delta frame; the
// output is the turn's next action frame.
//
//go:wasmexport agentrt_feed
func exportFeed(rt, size int32) int32 { return call(opFeed, rt, size, 0) }

// agentrt_commit(rt, n): a commit frame, a turn the host has run
// already; the output is a committed or refused frame.
//
//go:wasmexport agentrt_commit
func exportCommit(rt, size int32) int32 { return call(opCommit, rt, size, 0) }

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
