//go:build js && wasm

// Command wasmparts measures the building blocks of a turn through the
// agentrt module, one by one, in a GOOS=js module of its own: a call from
// JavaScript into Go, a goroutine handoff inside such a call, a Promise
// made and resolved from Go, js.Values made (each with a Go finalizer),
// and a turn of core with the built-in model, with and without the
// goroutines a run uses. bench/wasmparts.mjs builds and drives it.
//
// It publishes globalThis.wasmparts, an object of functions; every
// function takes a count n and does its work n times, so that the
// caller's timing loop is not what is measured, unless its name says it
// is called once per operation.
package main

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
)

func main() {
	o := js.Global().Get("Object").New()
	set := func(name string, fn func(this js.Value, args []js.Value) any) {
		o.Set(name, js.FuncOf(fn))
	}
	promise := js.Global().Get("Promise")
	var resolveFn, rejectFn js.Value
	executor := js.FuncOf(func(_ js.Value, args []js.Value) any {
		resolveFn, rejectFn = args[0], args[1]
		return nil
	})
	_ = rejectFn
	newPromise := func() (js.Value, js.Value) {
		p := promise.New(executor)
		return p, resolveFn
	}

	// noop: one JavaScript -> Go call that returns at once (called once
	// per operation by the driver).
	set("noop", func(js.Value, []js.Value) any { return nil })

	// handoff: one JavaScript -> Go call that starts a goroutine and
	// waits for it on a channel (once per operation).
	set("handoff", func(js.Value, []js.Value) any {
		ch := make(chan struct{})
		go func() { ch <- struct{}{} }()
		<-ch
		return nil
	})

	// handoff3: three nested goroutines, as a run through the module
	// uses (the Promise's, the run's, the model call's), inside one call.
	set("handoff3", func(js.Value, []js.Value) any {
		ch := make(chan struct{})
		go func() {
			c2 := make(chan struct{})
			go func() {
				c3 := make(chan struct{})
				go func() { c3 <- struct{}{} }()
				<-c3
				c2 <- struct{}{}
			}()
			<-c2
			ch <- struct{}{}
		}()
		<-ch
		return nil
	})

	// promiseGo: returns a Promise made with a Go executor and resolved
	// from a new goroutine, as jsedge.Async does (once per operation; the
	// driver awaits it).
	set("promiseGo", func(js.Value, []js.Value) any {
		p, resolve := newPromise()
		go func() { resolve.Invoke(js.Undefined()) }()
		return p
	})

	// promiseSync: the same Promise resolved before the call returns.
	set("promiseSync", func(js.Value, []js.Value) any {
		p, resolve := newPromise()
		resolve.Invoke(js.Undefined())
		return p
	})

	// promiseResolve: Promise.resolve(undefined) from Go, no executor.
	set("promiseResolve", func(js.Value, []js.Value) any {
		return promise.Call("resolve")
	})

	// strings(n): n JavaScript strings made from Go (a finalizer each).
	set("strings", func(_ js.Value, args []js.Value) any {
		n := args[0].Int()
		for i := 0; i < n; i++ {
			_ = js.ValueOf("x")
		}
		return nil
	})

	// objects(n): n empty objects made from Go (a finalizer each).
	objectCtor := js.Global().Get("Object")
	set("objects", func(_ js.Value, args []js.Value) any {
		n := args[0].Int()
		for i := 0; i < n; i++ {
			_ = objectCtor.New()
		}
		return nil
	})

	// numbers(n): n Go -> JavaScript calls that return a number (no
	// finalizer): Math.abs(1).
	abs := js.Global().Get("Math").Get("abs")
	set("numbers", func(_ js.Value, args []js.Value) any {
		n := args[0].Int()
		for i := 0; i < n; i++ {
			_ = abs.Invoke(1)
		}
		return nil
	})

	// keep(n): as strings(n), while n more js.Values stay alive, so that
	// the span lists of finalizers are long, as in the module, where
	// cached messages hold thousands of js.Values.
	var kept []js.Value
	set("keep", func(_ js.Value, args []js.Value) any {
		n := args[0].Int()
		for len(kept) < n {
			kept = append(kept, js.ValueOf("k"))
		}
		return nil
	})

	// callJS(f): one Go -> JavaScript call of f with no arguments.
	set("callJS", func(_ js.Value, args []js.Value) any {
		f, n := args[0], args[1].Int()
		for i := 0; i < n; i++ {
			f.Invoke()
		}
		return nil
	})

	// coreTurn(n): n warm turns of core on a 100-message session with
	// the built-in model, Start and Wait inside one call (no Promise, no
	// JavaScript): the core's own cost in wasm.
	rt, _ := core.New(core.Config{})
	hist := make([]core.SeedMessage, 98)
	for i := range hist {
		role := core.RoleUser
		if i%2 == 1 {
			role = core.RoleAssistant
		}
		hist[i] = core.SeedMessage{Role: role, Content: "message text"}
	}
	set("coreTurn", func(_ js.Value, args []js.Value) any {
		n := args[0].Int()
		for i := 0; i < n; i++ {
			if i%10 == 0 {
				rt.DeleteSession("warm")
				r, _ := rt.StartRunWithHistory(core.Background(), "warm", "seed", hist)
				r.Wait(core.Background())
			}
			r, err := rt.StartRun(core.Background(), "warm", "next")
			if err != nil {
				return err.Error()
			}
			if _, err := r.Wait(core.Background()); err != nil {
				return err.Error()
			}
		}
		return nil
	})

	// coreExecute(n): the same turns with Execute, in the calling
	// goroutine (no goroutine per run).
	set("coreExecute", func(_ js.Value, args []js.Value) any {
		n := args[0].Int()
		for i := 0; i < n; i++ {
			if i%10 == 0 {
				rt.DeleteSession("warm")
				rt.Execute(core.Background(), core.RunRequest{SessionID: "warm", Input: "seed", History: hist, WithHistory: true})
			}
			if _, err := rt.Execute(core.Background(), core.RunRequest{SessionID: "warm", Input: "next"}); err != nil {
				return err.Error()
			}
		}
		return nil
	})

	js.Global().Set("wasmparts", o)
	select {}
}
