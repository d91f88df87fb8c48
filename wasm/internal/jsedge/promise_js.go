//go:build js && wasm

package jsedge

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/onethread"
	"github.com/agentrt/agentrt/wasm/internal/jsutil"
)

// Async runs fn in a goroutine and returns a Promise that resolves with
// its value or rejects with Error(err). A panic in fn rejects the Promise
// with code "internal"; it never reaches the Go runtime.
//
// # Notes
//
//   - Go on GOOS=js is single-threaded: fn runs when the calling export
//     yields, and JavaScript regains control once every goroutine is
//     blocked. Work that waits for JavaScript (a Promise) parks its
//     goroutine and lets the event loop run.
//   - fn runs on a pooled goroutine (see spawn), whose stack has grown
//     already: a new goroutine per call spent a tenth of a warm turn
//     growing its stack.
func Async(fn func() (js.Value, error)) js.Value {
	p, resolve := newPromise()
	spawn(func() {
		v, err := protect(fn)
		if err != nil {
			// Resolving with a rejected Promise rejects p: the reject
			// function is not needed, and not read.
			resolve.Invoke(jsRefs().promise.Call(MethodReject, Error(err)))
			return
		}
		resolve.Invoke(v)
	})
	return p
}

// newPromise returns a new pending Promise and its resolve function.
//
// The executor is resolvers.push bound to resolvers, a JavaScript
// function: new Promise calls it at once, pushing resolve and reject onto
// the array, where Go reads resolve. (A Go executor, a js.Func, would
// make every Promise a nested call from JavaScript into Go, which
// measured about 12 µs, more than anything else a Promise costs.)
//
// The array and its bound push are made under the lock: an allocating
// goroutine can be parked by a garbage-collection assist, and a second
// first Promise would otherwise pair one array with the other's push.
func newPromise() (p, resolve js.Value) {
	resolversMu.Lock()
	defer resolversMu.Unlock()
	if resolvers.IsUndefined() {
		a := jsutil.Array.New()
		pushResolvers = a.Get(MethodPush).Call(MethodBind, a)
		resolvers = a
	}
	p = jsRefs().promise.New(pushResolvers)
	resolve = resolvers.Index(0)
	resolvers.Set(FieldLength, 0)
	return p, resolve
}

// The resolvers array and its push bound to it, made by the first
// Promise.
var (
	resolversMu   onethread.Mutex
	resolvers     js.Value
	pushResolvers js.Value
)

// spawn runs f on an idle pooled goroutine, or on a new one that joins
// the pool when f returns. At most maxIdleWorkers goroutines stay idle;
// others end.
func spawn(f func()) {
	workMu.Lock() // an allocating goroutine may yield: one first make
	if work == nil {
		work = make(chan func())
	}
	w := work
	workMu.Unlock()
	select {
	case w <- f:
	default:
		go worker(f)
	}
}

const maxIdleWorkers = 4

var (
	// work is unbuffered: a send finds an idle worker. It is made by the
	// first spawn, under workMu (the package does no work at init).
	work   chan func()
	workMu onethread.Mutex
	// idle counts the idle workers (one goroutine runs at a time: a
	// plain counter).
	idle int
)

func worker(f func()) {
	for {
		f()
		f = nil
		if idle++; idle > maxIdleWorkers {
			idle--
			return
		}
		f = <-work
		idle--
	}
}

// Rejected returns a Promise already rejected with Error(err).
func Rejected(err error) js.Value {
	return jsRefs().promise.Call(MethodReject, Error(err))
}

// protect calls fn, turning a panic into an internal error.
func protect(fn func() (js.Value, error)) (v js.Value, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = js.Undefined(), core.NewError(core.CodeInternal, "jsedge: internal error: "+panicText(p))
		}
	}()
	return fn()
}

// Await waits for v when it is a thenable (an object or function with a
// then method) and returns what it settles with; any other v is returned
// at once. A rejection returns the rejection value as a *core.Error with
// code: its text is the rejection's message. Await returns ctx's error
// when ctx is done first; the handlers are then released when the
// thenable settles, if ever.
//
// # Notes
//
//   - A thenable that is not a Promise is adopted by Promise.resolve
//     first, which calls its then method as the language does: the first
//     settlement wins, later ones and a throw after it are ignored, and
//     Go's handlers are called once (a second call to a released handler
//     would print "call to released function").
func Await(ctx core.Context, v js.Value, code core.Code) (js.Value, error) {
	if !isThenable(v) {
		return v, nil
	}
	if p, err := try(func() js.Value { return jsRefs().promise.Call(MethodResolve, v) }); err == nil {
		v = p
	}
	type settled struct {
		v       js.Value
		ok      bool
		stopped bool // ctx is done
	}
	ch := make(chan settled, 1)
	send := func(s settled) {
		select {
		case ch <- s:
		default:
		}
	}
	onOK := js.FuncOf(func(_ js.Value, args []js.Value) any {
		send(settled{v: jsutil.Arg(args, 0), ok: true})
		return nil
	})
	onErr := js.FuncOf(func(_ js.Value, args []js.Value) any {
		send(settled{v: jsutil.Arg(args, 0)})
		return nil
	})
	release := func() { onOK.Release(); onErr.Release() }
	var s settled
	if _, err := try(func() js.Value { return v.Call(MethodThen, onOK, onErr) }); err != nil {
		select {
		case s = <-ch:
			// It settled before it threw: the settlement counts.
		default:
			release()
			return js.Undefined(), core.NewError(code, err.Error())
		}
	} else {
		// ctx's stop sends on ch too: one wait, no select (whose runtime
		// code is 13 KB of the module).
		stop := core.AfterStop(ctx, func() { send(settled{stopped: true}) })
		s = <-ch
		stop()
		if s.stopped {
			go func() { <-ch; release() }()
			return js.Undefined(), ctx.Err()
		}
	}
	release()
	if !s.ok {
		return js.Undefined(), core.NewError(code, Text(s.v))
	}
	return s.v, nil
}

func isThenable(v js.Value) bool {
	t := v.Type()
	return (t == js.TypeObject || t == js.TypeFunction) && get(v, MethodThen).Type() == js.TypeFunction
}

// try calls fn and returns a JavaScript exception (or any panic) it
// raises as an error whose text describes the thrown value.
//
//go:noinline
func try(fn func() js.Value) (v js.Value, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = js.Undefined(), textError(panicText(p))
		}
	}()
	return fn(), nil
}

// textError is an error of a text alone, as errors.New makes: the module
// does without package errors, whose initialisation links a part of
// package reflect's (internal/reflectlite) into it.
type textError string

func (e textError) Error() string { return string(e) }

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
	return cut(jsRefs().string.Invoke(v).String())
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
