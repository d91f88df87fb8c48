//go:build js && wasm

package jsutil

import "syscall/js"

// Names of the JavaScript globals read here.
const (
	GlobalObject     = "Object"
	GlobalArray      = "Array"
	GlobalUint8Array = "Uint8Array"
	GlobalError      = "Error"
)

// Globals, read once at start-up.
var (
	Object     = js.Global().Get(GlobalObject)
	Array      = js.Global().Get(GlobalArray)
	Uint8Array = js.Global().Get(GlobalUint8Array)
	Error      = js.Global().Get(GlobalError)
)

// Arg returns args[i], or undefined when the caller passed fewer
// arguments.
func Arg(args []js.Value, i int) js.Value {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined()
}

// Func wraps fn as a JavaScript function that never lets a panic reach
// the Go runtime: a panic makes the call return a new Error with message
// instead (returned, not thrown: the caller checks instanceof Error).
//
// # Notes
//
//   - fn runs on the event goroutine: it must not wait for JavaScript,
//     or the instance deadlocks.
//   - The js.Func is never released; create a bounded number of them.
func Func(message string, fn func(this js.Value, args []js.Value) any) js.Func {
	return js.FuncOf(func(this js.Value, args []js.Value) (out any) {
		defer func() {
			if p := recover(); p != nil {
				out = Error.New(message)
			}
		}()
		return fn(this, args)
	})
}

// FuncOr wraps fn like Func, but a panic makes the call return onPanic
// (nil: undefined) instead of an Error: for methods whose callers expect
// a value of one type, such as false or null.
//
// # Notes
//
//   - fn runs on the event goroutine: it must not wait for JavaScript
//     (no Promise, no channel a JavaScript callback fills), or the
//     instance deadlocks. Start a goroutine and return a Promise instead.
//   - The js.Func is never released; create a bounded number of them.
//
//go:noinline
func FuncOr(onPanic any, fn func(this js.Value, args []js.Value) any) js.Func {
	return js.FuncOf(func(this js.Value, args []js.Value) (out any) {
		defer func() {
			if p := recover(); p != nil {
				out = onPanic
			}
		}()
		return fn(this, args)
	})
}

// BytesToJS returns a new Uint8Array holding a copy of b.
func BytesToJS(b []byte) js.Value {
	a := Uint8Array.New(len(b))
	if len(b) > 0 {
		js.CopyBytesToJS(a, b)
	}
	return a
}

// BytesFromJS returns a copy of the Uint8Array v, or nil when v is not
// one.
func BytesFromJS(v js.Value) []byte {
	if v.Type() != js.TypeObject || !v.InstanceOf(Uint8Array) {
		return nil
	}
	b := make([]byte, v.Length())
	js.CopyBytesToGo(b, v)
	return b
}
