package jshost

import (
	"context"
	"crypto/rand"
	"errors"
	"math"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// ImportModule is the module name of every import a GOOS=js program makes
// (Go 1.21 and later; it was "go" before).
const ImportModule = "gojs"

// The imports of a GOOS=js program, each (func (param i32)) taking Go's
// stack pointer. Keep in sync with lib/wasm/wasm_exec.js of the Go
// toolchain (Go 1.26): the memory layout of each is noted on its
// implementation below.
const (
	impWasmExit             = "runtime.wasmExit"
	impWasmWrite            = "runtime.wasmWrite"
	impResetMemoryDataView  = "runtime.resetMemoryDataView"
	impNanotime1            = "runtime.nanotime1"
	impWalltime             = "runtime.walltime"
	impScheduleTimeoutEvent = "runtime.scheduleTimeoutEvent"
	impClearTimeoutEvent    = "runtime.clearTimeoutEvent"
	impGetRandomData        = "runtime.getRandomData"
	impFinalizeRef          = "syscall/js.finalizeRef"
	impStringVal            = "syscall/js.stringVal"
	impValueGet             = "syscall/js.valueGet"
	impValueSet             = "syscall/js.valueSet"
	impValueDelete          = "syscall/js.valueDelete"
	impValueIndex           = "syscall/js.valueIndex"
	impValueSetIndex        = "syscall/js.valueSetIndex"
	impValueCall            = "syscall/js.valueCall"
	impValueInvoke          = "syscall/js.valueInvoke"
	impValueNew             = "syscall/js.valueNew"
	impValueLength          = "syscall/js.valueLength"
	impValuePrepareString   = "syscall/js.valuePrepareString"
	impValueLoadString      = "syscall/js.valueLoadString"
	impValueInstanceOf      = "syscall/js.valueInstanceOf"
	impCopyBytesToGo        = "syscall/js.copyBytesToGo"
	impCopyBytesToJS        = "syscall/js.copyBytesToJS"
	impDebug                = "debug"
)

// The exports of a GOOS=js program the host calls.
const (
	expRun    = "run"
	expResume = "resume"
	expGetsp  = "getsp"
	expMem    = "mem"
)

// Memory layout constants of wasm_exec.js.
const (
	nanHead         = 0x7FF80000
	argvOffset      = 4096
	wasmMinDataAddr = 4096 + 8192 // cmd/link/internal/ld/data.go: wasmMinDataAddr
)

// Type flags in the high word of a reference (syscall/js.go).
const (
	flagNone     = 0
	flagObject   = 1
	flagString   = 2
	flagSymbol   = 3
	flagFunction = 4
)

// Imports lists every import this host provides, in module ImportModule.
func Imports() []string {
	names := make([]string, 0, len(hostFuncs))
	for n := range hostFuncs {
		names = append(names, n)
	}
	return names
}

// hostFuncs are the gojs imports. Each runs on the instance's event loop,
// inside a call into the guest.
var hostFuncs = map[string]func(in *Instance, sp uint32){
	// func wasmExit(code int32): sp+8 code
	impWasmExit: func(in *Instance, sp uint32) {
		code := int32(in.u32(sp + 8))
		in.exit(int(code))
		_ = in.mod.CloseWithExitCode(in.callCtx, uint32(code))
		panic(sys.NewExitError(uint32(code)))
	},
	// func wasmWrite(fd uintptr, p unsafe.Pointer, n int32): sp+8 fd, sp+16 p, sp+24 n
	impWasmWrite: func(in *Instance, sp uint32) {
		fd := in.i64(sp + 8)
		p := in.i64(sp + 16)
		n := int32(in.u32(sp + 24))
		b := in.bytes(p, int64(n))
		if fd == 2 {
			in.w.stderr.Write(b)
		} else {
			in.w.stdout.Write(b)
		}
	},
	// func resetMemoryDataView(): memory grew; nothing is cached here.
	impResetMemoryDataView: func(in *Instance, sp uint32) {},
	// func nanotime1() int64: sp+8
	impNanotime1: func(in *Instance, sp uint32) {
		in.setI64(sp+8, in.origin+int64(time.Since(in.started)))
	},
	// func walltime() (sec int64, nsec int32): sp+8 sec, sp+16 nsec
	impWalltime: func(in *Instance, sp uint32) {
		now := time.Now()
		in.setI64(sp+8, now.Unix())
		in.setU32(sp+16, uint32(now.Nanosecond()))
	},
	// func scheduleTimeoutEvent(delay int64) int32: sp+8 delay (ms), sp+16 id
	impScheduleTimeoutEvent: func(in *Instance, sp uint32) {
		ms := in.i64(sp + 8)
		if ms < 0 {
			ms = 0
		}
		id := in.addGoTimer(time.Duration(ms) * time.Millisecond)
		in.setU32(sp+16, uint32(id))
	},
	// func clearTimeoutEvent(id int32): sp+8 id
	impClearTimeoutEvent: func(in *Instance, sp uint32) {
		in.clearTimer(int64(int32(in.u32(sp + 8))))
	},
	// func getRandomData(r []byte): sp+8 ptr, sp+16 len
	impGetRandomData: func(in *Instance, sp uint32) {
		p, n := in.i64(sp+8), in.i64(sp+16)
		b := make([]byte, n)
		rand.Read(b)
		in.write(p, b)
	},
	// func finalizeRef(v ref): sp+8 id (low word)
	impFinalizeRef: func(in *Instance, sp uint32) {
		in.refs.release(in.u32(sp + 8))
	},
	// func stringVal(value string) ref: sp+8 string, sp+24 result
	impStringVal: func(in *Instance, sp uint32) {
		in.storeValue(sp+24, in.loadString(sp+8))
	},
	// func valueGet(v ref, p string) ref: sp+8 v, sp+16 p, sp+32 result
	impValueGet: func(in *Instance, sp uint32) {
		result := in.w.get(in.loadValue(sp+8), in.loadString(sp+16))
		sp = in.getsp()
		in.storeValue(sp+32, result)
	},
	// func valueSet(v ref, p string, x ref): sp+8 v, sp+16 p, sp+32 x
	impValueSet: func(in *Instance, sp uint32) {
		in.w.set(in.loadValue(sp+8), in.loadString(sp+16), in.loadValue(sp+32))
	},
	// func valueDelete(v ref, p string): sp+8 v, sp+16 p
	impValueDelete: func(in *Instance, sp uint32) {
		in.w.del(in.loadValue(sp+8), in.loadString(sp+16))
	},
	// func valueIndex(v ref, i int) ref: sp+8 v, sp+16 i, sp+24 result
	impValueIndex: func(in *Instance, sp uint32) {
		v, i := in.loadValue(sp+8), in.i64(sp+16)
		r := Value(Undefined)
		if i >= 0 && i <= math.MaxInt32 {
			r = in.w.get(v, formatNumber(float64(i)))
		}
		in.storeValue(sp+24, r)
	},
	// func valueSetIndex(v ref, i int, x ref): sp+8 v, sp+16 i, sp+24 x
	impValueSetIndex: func(in *Instance, sp uint32) {
		v, i, x := in.loadValue(sp+8), in.i64(sp+16), in.loadValue(sp+24)
		if i >= 0 && i <= math.MaxInt32 {
			in.w.set(v, formatNumber(float64(i)), x)
		}
	},
	// func valueCall(v ref, m string, args []ref) (ref, bool):
	// sp+8 v, sp+16 m, sp+32 args, sp+56 result, sp+64 ok
	impValueCall: func(in *Instance, sp uint32) {
		v := in.loadValue(sp + 8)
		m := in.w.get(v, in.loadString(sp+16))
		args := in.loadSliceOfValues(sp + 32)
		result, err := in.w.call(m, v, args)
		sp = in.getsp()
		in.storeResult(sp+56, sp+64, result, err)
	},
	// func valueInvoke(v ref, args []ref) (ref, bool): sp+8 v, sp+16 args, sp+40 result, sp+48 ok
	impValueInvoke: func(in *Instance, sp uint32) {
		v := in.loadValue(sp + 8)
		args := in.loadSliceOfValues(sp + 16)
		result, err := in.w.call(v, Undefined, args)
		sp = in.getsp()
		in.storeResult(sp+40, sp+48, result, err)
	},
	// func valueNew(v ref, args []ref) (ref, bool): sp+8 v, sp+16 args, sp+40 result, sp+48 ok
	impValueNew: func(in *Instance, sp uint32) {
		v := in.loadValue(sp + 8)
		args := in.loadSliceOfValues(sp + 16)
		result, err := in.w.construct(v, args)
		sp = in.getsp()
		in.storeResult(sp+40, sp+48, result, err)
	},
	// func valueLength(v ref) int: sp+8 v, sp+16 result (parseInt(v.length))
	impValueLength: func(in *Instance, sp uint32) {
		n := toNumber(in.w.get(in.loadValue(sp+8), "length"))
		if math.IsNaN(n) || math.IsInf(n, 0) {
			n = 0
		}
		in.setI64(sp+16, int64(n))
	},
	// func valuePrepareString(v ref) (ref, int): sp+8 v, sp+16 ref of the bytes, sp+24 length
	impValuePrepareString: func(in *Instance, sp uint32) {
		b := []byte(toString(in.loadValue(sp + 8)))
		in.storeValue(sp+16, &Uint8Array{Bytes: b})
		in.setI64(sp+24, int64(len(b)))
	},
	// func valueLoadString(v ref, b []byte): sp+8 v, sp+16 b
	impValueLoadString: func(in *Instance, sp uint32) {
		src, ok := in.loadValue(sp + 8).(*Uint8Array)
		p, n := in.i64(sp+16), in.i64(sp+24)
		if !ok {
			return
		}
		if int64(len(src.Bytes)) < n {
			n = int64(len(src.Bytes))
		}
		in.write(p, src.Bytes[:n])
	},
	// func valueInstanceOf(v ref, t ref) bool: sp+8 v, sp+16 t, sp+24 result
	impValueInstanceOf: func(in *Instance, sp uint32) {
		in.setU8(sp+24, in.w.instanceOf(in.loadValue(sp+8), in.loadValue(sp+16)))
	},
	// func copyBytesToGo(dst []byte, src ref) (int, bool):
	// sp+8 dst, sp+32 src, sp+40 n, sp+48 ok
	impCopyBytesToGo: func(in *Instance, sp uint32) {
		p, n := in.i64(sp+8), in.i64(sp+16)
		src, ok := in.loadValue(sp + 32).(*Uint8Array)
		if !ok {
			in.setU8(sp+48, false)
			return
		}
		if int64(len(src.Bytes)) < n {
			n = int64(len(src.Bytes))
		}
		in.write(p, src.Bytes[:n])
		in.setI64(sp+40, n)
		in.setU8(sp+48, true)
	},
	// func copyBytesToJS(dst ref, src []byte) (int, bool):
	// sp+8 dst, sp+16 src, sp+40 n, sp+48 ok
	impCopyBytesToJS: func(in *Instance, sp uint32) {
		dst, ok := in.loadValue(sp + 8).(*Uint8Array)
		p, n := in.i64(sp+16), in.i64(sp+24)
		if !ok {
			in.setU8(sp+48, false)
			return
		}
		if int64(len(dst.Bytes)) < n {
			n = int64(len(dst.Bytes))
		}
		copy(dst.Bytes, in.bytes(p, n))
		in.setI64(sp+40, n)
		in.setU8(sp+48, true)
	},
	// debug(value): the parameter is a value, not sp.
	impDebug: func(in *Instance, v uint32) {
		in.w.stderr.Write([]byte(formatNumber(float64(int32(v))) + "\n"))
	},
}

type instanceKey struct{}

var errNoInstance = errors.New("jshost: a gojs import was called outside of an Instance")

// instantiateHost registers the gojs module in rt. Its functions find
// their Instance in the context of the call into the guest.
func instantiateHost(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(ImportModule)
	for name, f := range hostFuncs {
		f := f
		b.NewFunctionBuilder().
			WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
				in, _ := ctx.Value(instanceKey{}).(*Instance)
				if in == nil {
					panic(errNoInstance)
				}
				f(in, uint32(stack[0]))
			}), []api.ValueType{api.ValueTypeI32}, nil).
			WithName(name).
			Export(name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

// --- memory access. Views are never kept: memory may grow during any call.

var errMemory = errors.New("jshost: guest memory access out of range")

func (in *Instance) u32(addr uint32) uint32 {
	v, ok := in.mem.ReadUint32Le(addr)
	if !ok {
		panic(errMemory)
	}
	return v
}

func (in *Instance) i64(addr uint32) int64 {
	v, ok := in.mem.ReadUint64Le(addr)
	if !ok {
		panic(errMemory)
	}
	return int64(v)
}

func (in *Instance) setU32(addr, v uint32) {
	if !in.mem.WriteUint32Le(addr, v) {
		panic(errMemory)
	}
}

func (in *Instance) setI64(addr uint32, v int64) {
	if !in.mem.WriteUint64Le(addr, uint64(v)) {
		panic(errMemory)
	}
}

func (in *Instance) setU8(addr uint32, b bool) {
	var v byte
	if b {
		v = 1
	}
	if !in.mem.WriteByte(addr, v) {
		panic(errMemory)
	}
}

// bytes copies n bytes at p out of guest memory.
func (in *Instance) bytes(p, n int64) []byte {
	if p < 0 || n < 0 || p > math.MaxUint32 || n > math.MaxUint32 {
		panic(errMemory)
	}
	b, ok := in.mem.Read(uint32(p), uint32(n))
	if !ok {
		panic(errMemory)
	}
	return append([]byte(nil), b...)
}

func (in *Instance) write(p int64, b []byte) {
	if p < 0 || p > math.MaxUint32 || !in.mem.Write(uint32(p), b) {
		panic(errMemory)
	}
}

func (in *Instance) loadString(addr uint32) string {
	return string(in.bytes(in.i64(addr), in.i64(addr+8)))
}

func (in *Instance) loadSliceOfValues(addr uint32) []Value {
	p, n := in.i64(addr), in.i64(addr+8)
	if p < 0 || n < 0 || n > math.MaxUint32/8 {
		panic(errMemory)
	}
	vs := make([]Value, n)
	for i := range vs {
		vs[i] = in.loadValue(uint32(p) + uint32(i)*8)
	}
	return vs
}

func (in *Instance) loadValue(addr uint32) Value {
	bits, ok := in.mem.ReadUint64Le(addr)
	if !ok {
		panic(errMemory)
	}
	f := math.Float64frombits(bits)
	if f == 0 {
		return Undefined
	}
	if !math.IsNaN(f) {
		return f
	}
	return in.refs.value(uint32(bits))
}

func (in *Instance) storeValue(addr uint32, v Value) {
	switch x := v.(type) {
	case float64:
		if x != 0 {
			if math.IsNaN(x) {
				in.setI64(addr, int64(nanHead)<<32)
				return
			}
			in.setI64(addr, int64(math.Float64bits(x)))
			return
		}
	case undefinedType, nil:
		in.setI64(addr, 0)
		return
	}
	id := in.refs.ref(v)
	flag := flagNone
	switch v.(type) {
	case string:
		flag = flagString
	case *Function:
		flag = flagFunction
	case *Object, *Array, *Uint8Array, *Promise:
		flag = flagObject
	}
	in.setI64(addr, int64(uint64(nanHead|flag)<<32|uint64(id)))
}

// storeResult writes the (ref, bool) result of a call.
func (in *Instance) storeResult(resAddr, okAddr uint32, result Value, err error) {
	if err != nil {
		in.storeValue(resAddr, asException(err).Value)
		in.setU8(okAddr, false)
		return
	}
	in.storeValue(resAddr, result)
	in.setU8(okAddr, true)
}

// refTable holds the values the guest has references to, as wasm_exec.js
// does: ids 0..6 are predefined and never freed; others are interned by
// identity (strings by value) and counted.
type refTable struct {
	values []Value
	counts []int64
	ids    map[any]uint32
	pool   []uint32
}

const predefinedRefs = 7

func newRefTable(global, goObj *Object) *refTable {
	t := &refTable{
		values: []Value{math.NaN(), float64(0), Null, true, false, global, goObj},
		ids:    map[any]uint32{float64(0): 1, Null: 2, true: 3, false: 4, global: 5, goObj: 6},
	}
	t.counts = make([]int64, len(t.values))
	for i := range t.counts {
		t.counts[i] = math.MaxInt64
	}
	return t
}

func (t *refTable) value(id uint32) Value {
	if int(id) >= len(t.values) || t.values[id] == nil {
		return Undefined
	}
	return t.values[id]
}

func (t *refTable) ref(v Value) uint32 {
	id, ok := t.ids[v]
	if !ok {
		if n := len(t.pool); n > 0 {
			id = t.pool[n-1]
			t.pool = t.pool[:n-1]
		} else {
			id = uint32(len(t.values))
			t.values = append(t.values, nil)
			t.counts = append(t.counts, 0)
		}
		t.values[id] = v
		t.counts[id] = 0
		t.ids[v] = id
	}
	if t.counts[id] != math.MaxInt64 {
		t.counts[id]++
	}
	return id
}

func (t *refTable) release(id uint32) {
	if id < predefinedRefs || int(id) >= len(t.values) || t.counts[id] <= 0 {
		return
	}
	t.counts[id]--
	if t.counts[id] == 0 {
		delete(t.ids, t.values[id])
		t.values[id] = nil
		t.pool = append(t.pool, id)
	}
}

// live is the number of values the guest holds references to, besides
// the predefined ones.
func (t *refTable) live() int { return len(t.values) - len(t.pool) - predefinedRefs }
