//go:build js && wasm

// Command guest is the GOOS=js program jshost's tests run. The first
// argument picks a scenario; each test runs one and checks its output.
//
// The tests build it in TestMain with:
//
//	GOOS=js GOARCH=wasm go build -o guest.wasm ./jshost/testdata/guest
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall/js"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: guest SCENARIO")
		os.Exit(64)
	}
	switch os.Args[1] {
	case "hello":
		fmt.Println("hello, world")
		fmt.Fprintln(os.Stderr, "to stderr")
		fmt.Printf("args=%s greeting=%s\n", strings.Join(os.Args[2:], ","), os.Getenv("GUEST_GREETING"))
		_, off := time.Now().Zone()
		fmt.Printf("zone offset known=%v\n", off >= -14*3600 && off <= 14*3600)
	case "sleep":
		start := time.Now()
		time.Sleep(20 * time.Millisecond)
		fired := make(chan string)
		time.AfterFunc(5*time.Millisecond, func() { fired <- "afterfunc" })
		fmt.Println(<-fired)
		tk := time.NewTicker(2 * time.Millisecond)
		for i := 0; i < 3; i++ {
			<-tk.C
		}
		tk.Stop()
		fmt.Printf("slept at least 25ms: %v\n", time.Since(start) >= 25*time.Millisecond)
	case "exit":
		fmt.Println("exiting")
		os.Exit(3)
	case "panic":
		panic("boom at start")
	case "serve":
		serve()
	default:
		fmt.Fprintln(os.Stderr, "unknown scenario", os.Args[1])
		os.Exit(64)
	}
}

// serve publishes the object "guest" with functions the host calls, then
// waits for calls forever.
func serve() {
	g := js.Global().Get("Object").New()
	fn := func(name string, f func(this js.Value, args []js.Value) any) {
		g.Set(name, js.FuncOf(f))
	}
	fn("echo", func(_ js.Value, args []js.Value) any { return args[0] })
	fn("add", func(_ js.Value, args []js.Value) any { return args[0].Float() + args[1].Float() })
	fn("typeOf", func(_ js.Value, args []js.Value) any { return args[0].Type().String() })
	fn("print", func(_ js.Value, args []js.Value) any {
		// fmt writes through fs.write, whose callback re-enters Go while
		// this call is running.
		fmt.Println("print:", args[0].String())
		return nil
	})
	fn("callback", func(_ js.Value, args []js.Value) any {
		// Go -> JS (args[0]) -> maybe Go again, nested.
		r := args[0].Invoke(args[1])
		return r.Float() + 1
	})
	fn("catch", func(_ js.Value, args []js.Value) (res any) {
		defer func() {
			if r := recover(); r != nil {
				var e js.Error
				if errors.As(r.(error), &e) {
					res = "caught " + e.Value.Get("name").String() + ": " + e.Value.Get("message").String()
					return
				}
				panic(r)
			}
		}()
		return args[0].Invoke()
	})
	fn("makeObject", func(_ js.Value, args []js.Value) any {
		b := js.Global().Get("Uint8Array").New(3)
		js.CopyBytesToJS(b, []byte{1, 2, 255})
		return map[string]any{
			"name": "guest", "n": 42, "ok": true, "nothing": nil,
			"list":  []any{"a", 1.5, map[string]any{"deep": "yes"}},
			"bytes": b,
		}
	})
	fn("readBytes", func(_ js.Value, args []js.Value) any {
		b := make([]byte, args[0].Length())
		n := js.CopyBytesToGo(b, args[0])
		return fmt.Sprintf("%d %v", n, b)
	})
	fn("inspect", func(_ js.Value, args []js.Value) any {
		v := args[0]
		return fmt.Sprintf("array=%v len=%d first=%s keys=%d",
			v.InstanceOf(js.Global().Get("Array")), v.Length(), v.Index(0).String(),
			js.Global().Get("Object").Call("keys", v.Index(1)).Length())
	})
	fn("asyncDouble", func(_ js.Value, args []js.Value) any {
		n := args[0].Float()
		return newPromise(func() (any, error) {
			time.Sleep(time.Millisecond)
			return n * 2, nil
		})
	})
	fn("asyncFail", func(_ js.Value, args []js.Value) any {
		msg := args[0].String()
		return newPromise(func() (any, error) { return nil, errors.New(msg) })
	})
	fn("awaitValue", func(_ js.Value, args []js.Value) any {
		p := args[0]
		return newPromise(func() (any, error) {
			v, err := await(p)
			if err != nil {
				return "caught: " + err.Error(), nil
			}
			return "got: " + v.String(), nil
		})
	})
	fn("panicNow", func(_ js.Value, args []js.Value) any { panic("boom in callback") })
	fn("exitNow", func(_ js.Value, args []js.Value) any { os.Exit(args[0].Int()); return nil })
	fn("gc", func(_ js.Value, args []js.Value) any {
		runtime.GC()
		runtime.GC()
		return nil
	})
	fn("sleepThen", func(_ js.Value, args []js.Value) any {
		ms := args[0].Int()
		return newPromise(func() (any, error) {
			time.Sleep(time.Duration(ms) * time.Millisecond)
			return "woke", nil
		})
	})
	js.Global().Set("guest", g)
	fmt.Println("serving")
	select {}
}

// newPromise returns a Promise settled by f, run in its own goroutine.
func newPromise(f func() (any, error)) js.Value {
	var executor js.Func
	executor = js.FuncOf(func(_ js.Value, args []js.Value) any {
		resolve, reject := args[0], args[1]
		go func() {
			v, err := f()
			if err != nil {
				e := js.Global().Get("Error").New(err.Error())
				e.Set("code", "guest_error")
				reject.Invoke(e)
				return
			}
			resolve.Invoke(v)
		}()
		executor.Release()
		return nil
	})
	return js.Global().Get("Promise").New(executor)
}

// await waits for a JavaScript Promise.
func await(p js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	var onOK, onErr js.Func
	onOK = js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- result{v: args[0]}
		return nil
	})
	onErr = js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- result{err: errors.New(args[0].Get("message").String())}
		return nil
	})
	defer onOK.Release()
	defer onErr.Release()
	p.Call("then", onOK, onErr)
	r := <-ch
	return r.v, r.err
}
