//go:build js && wasm

package jsedge

import (
	"errors"
	"syscall/js"

	"github.com/agentrt/agentrt/core"
)

// Async runs fn in a new goroutine and returns a Promise that resolves
// with its value or rejects with Error(err). A panic in fn rejects the
// Promise with code "internal"; it never reaches the Go runtime.
//
// # Notes
//
//   - Go on GOOS=js is single-threaded: fn runs when the calling export
//     yields, and JavaScript regains control once every goroutine is
//     blocked. Work that waits for JavaScript (a Promise) parks its
//     goroutine and lets the event loop run.
func Async(fn func() (js.Value, error)) js.Value {
	p := jsPromise.New(executor)
	resolve, reject := executorResolve, executorReject
	executorResolve, executorReject = js.Undefined(), js.Undefined()
	go func() {
		v, err := protect(fn)
		if err != nil {
			reject.Invoke(Error(err))
			return
		}
		resolve.Invoke(v)
	}()
	return p
}

// executor is the Promise executor of every Async: new Promise calls it
// at once, before New returns, so one function serves all Promises and
// hands the resolving functions over in executorResolve and
// executorReject (Go on GOOS=js runs one goroutine at a time).
var (
	executorResolve, executorReject js.Value
	executor                        = js.FuncOf(func(_ js.Value, args []js.Value) any {
		executorResolve, executorReject = arg(args, 0), arg(args, 1)
		return nil
	})
)

// Rejected returns a Promise already rejected with Error(err).
func Rejected(err error) js.Value {
	return jsPromise.Call("reject", Error(err))
}

// protect calls fn, turning a panic into an internal error.
func protect(fn func() (js.Value, error)) (v js.Value, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = js.Undefined(), core.Errorf(core.CodeInternal, "jsedge: internal error: "+panicText(p))
		}
	}()
	return fn()
}

// Func wraps fn as a JavaScript function that never lets a panic reach
// the Go runtime: a panic makes the call return onPanic instead.
//
// # Notes
//
//   - fn runs on the event goroutine: it must not wait for JavaScript
//     (no Promise, no channel a JavaScript callback fills), or the
//     instance deadlocks. Start a goroutine and return a Promise (Async).
//   - The js.Func is never released; create a bounded number of them.
//
//go:noinline
func Func(onPanic any, fn func(this js.Value, args []js.Value) any) js.Func {
	return js.FuncOf(func(this js.Value, args []js.Value) (out any) {
		defer func() {
			if p := recover(); p != nil {
				out = onPanic
			}
		}()
		return fn(this, args)
	})
}

// Await waits for v when it is a thenable (an object or function with a
// then method) and returns what it settles with; any other v is returned
// at once. A rejection returns the rejection value as a *core.Error with
// code: its text is the rejection's message. Await returns ctx's error
// when ctx is done first; the handlers are then released when the
// thenable settles, if ever.
func Await(ctx core.Context, v js.Value, code core.Code) (js.Value, error) {
	if !isThenable(v) {
		return v, nil
	}
	type settled struct {
		v  js.Value
		ok bool
	}
	ch := make(chan settled, 1)
	send := func(s settled) {
		select {
		case ch <- s:
		default:
		}
	}
	onOK := js.FuncOf(func(_ js.Value, args []js.Value) any {
		send(settled{v: arg(args, 0), ok: true})
		return nil
	})
	onErr := js.FuncOf(func(_ js.Value, args []js.Value) any {
		send(settled{v: arg(args, 0)})
		return nil
	})
	release := func() { onOK.Release(); onErr.Release() }
	if _, err := try(func() js.Value { return v.Call(MethodThen, onOK, onErr) }); err != nil {
		release()
		return js.Undefined(), core.Errorf(code, err.Error())
	}
	select {
	case s := <-ch:
		release()
		if !s.ok {
			return js.Undefined(), core.Errorf(code, Text(s.v))
		}
		return s.v, nil
	case <-ctx.Done():
		go func() { <-ch; release() }()
		return js.Undefined(), ctx.Err()
	}
}

func isThenable(v js.Value) bool {
	t := v.Type()
	return (t == js.TypeObject || t == js.TypeFunction) && get(v, MethodThen).Type() == js.TypeFunction
}

func arg(args []js.Value, i int) js.Value {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined()
}

// try calls fn and returns a JavaScript exception (or any panic) it
// raises as an error whose text describes the thrown value.
//
//go:noinline
func try(fn func() js.Value) (v js.Value, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = js.Undefined(), errors.New(panicText(p))
		}
	}()
	return fn(), nil
}

// Text describes a thrown or rejected JavaScript value for an error
// message: an Error's message, a string as it is, anything else as
// String(v) would. It never throws.
func Text(v js.Value) (s string) {
	defer func() {
		if recover() != nil {
			s = "(a value that cannot be shown)"
		}
	}()
	switch v.Type() {
	case js.TypeString:
		return cut(v.String())
	case js.TypeObject:
		if m := get(v, FieldMessage); m.Type() == js.TypeString {
			return cut(m.String())
		}
	}
	return cut(jsString.Invoke(v).String())
}

// cut bounds an error text so that a huge thrown string does not travel
// through every error message.
func cut(s string) string {
	const max = 1024
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// panicText describes a recovered panic value without fmt.
func panicText(p any) string {
	switch x := p.(type) {
	case js.Error:
		return Text(x.Value)
	case error:
		return cut(x.Error())
	case string:
		return cut(x)
	}
	return "panic"
}
