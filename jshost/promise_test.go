package jshost_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/jshost"
)

// Ensure Promises settle both ways: the guest resolves or rejects and the
// host awaits; the host resolves or rejects and the guest awaits.
func TestInstance_Await_Promises(t *testing.T) {
	in, g := serving(t)
	ctx := context.Background()

	// Ensure a Promise resolved by a guest goroutine is awaited.
	v, err := in.CallAsync(ctx, g, "asyncDouble", 21)
	if err != nil || v != 42.0 {
		t.Errorf("asyncDouble(21) = %v, %v; want 42", v, err)
	}
	// Ensure a rejection is an *Exception with name, message and code.
	_, err = in.CallAsync(ctx, g, "asyncFail", "no luck")
	var ex *jshost.Exception
	if !errors.As(err, &ex) || ex.Name != "Error" || ex.Message != "no luck" || ex.Code != "guest_error" || ex.Index != -1 {
		t.Errorf("asyncFail = %#v, want Error no luck [guest_error]", err)
	}
	// Ensure a Promise the host resolves later is awaited by the guest.
	p, resolve, _ := in.NewPromise()
	pending, err := in.Call(ctx, g, "awaitValue", p)
	if err != nil {
		t.Fatal(err)
	}
	go resolve("from the host")
	if v, err := in.Await(ctx, pending); err != nil || v != "got: from the host" {
		t.Errorf("awaitValue(resolved) = %v, %v", v, err)
	}
	// Ensure a host rejection reaches the guest's catch handler.
	p, _, reject := in.NewPromise()
	pending, err = in.Call(ctx, g, "awaitValue", p)
	if err != nil {
		t.Fatal(err)
	}
	reject(errors.New("host rejects"))
	if v, err := in.Await(ctx, pending); err != nil || v != "caught: host rejects" {
		t.Errorf("awaitValue(rejected) = %v, %v", v, err)
	}
	// Ensure a Promise resolved with another Promise adopts it, and that
	// only the first settle counts.
	outer, resolveOuter, rejectOuter := in.NewPromise()
	inner, resolveInner, _ := in.NewPromise()
	resolveOuter(inner)
	rejectOuter("ignored")
	resolveInner(7)
	if v, err := in.Await(ctx, outer); err != nil || v != 7.0 {
		t.Errorf("adopted promise = %v, %v; want 7", v, err)
	}
	// Ensure then-chains run in the world itself (Promise.resolve().then).
	promise := in.Global("Promise")
	r, err := in.Call(ctx, promise, "resolve", 1)
	if err != nil {
		t.Fatal(err)
	}
	chained, err := in.Call(ctx, r, "then", jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		return args[0].(float64) + 1, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := in.Await(ctx, chained); err != nil || v != 2.0 {
		t.Errorf("then chain = %v, %v; want 2", v, err)
	}
}

// Ensure timers drive Promises that wait on time.Sleep in the guest, and
// concurrent callers each get their own answer.
func TestInstance_Await_Concurrent(t *testing.T) {
	in, g := serving(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			v, err := in.CallAsync(ctx, g, "asyncDouble", i)
			if err != nil || v != float64(2*i) {
				errs <- fmt.Errorf("asyncDouble(%d) = %v, %v", i, v, err)
			}
			if v, err := in.CallAsync(ctx, g, "sleepThen", 2); err != nil || v != "woke" {
				errs <- fmt.Errorf("sleepThen = %v, %v", v, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Ensure a panic inside a callback ends the guest with a clear error that
// carries the panic text, and later calls fail the same way.
func TestInstance_Call_ErrGuestPanics(t *testing.T) {
	in, g := serving(t)
	ctx := context.Background()
	pending, err := in.Call(ctx, g, "sleepThen", 10000)
	if err != nil {
		t.Fatal(err)
	}
	_, err = in.Call(ctx, g, "panicNow")
	var ee *jshost.ExitError
	if !errors.As(err, &ee) || ee.Code != 2 || !strings.Contains(err.Error(), "panic: boom in callback") {
		t.Fatalf("panicNow = %v, want *ExitError code 2 with the panic text", err)
	}
	select {
	case <-in.Done():
	default:
		t.Error("Done not closed after the guest panicked")
	}
	if _, err := in.Await(ctx, pending); !errors.As(err, &ee) {
		t.Errorf("Await(pending) after exit = %v, want *ExitError", err)
	}
	if _, err := in.Call(ctx, g, "echo", 1); !errors.As(err, &ee) {
		t.Errorf("echo after exit = %v, want *ExitError", err)
	}
}

// Ensure os.Exit inside a nested call ends the guest with its code.
func TestInstance_Call_ErrGuestExitsNested(t *testing.T) {
	in, g := serving(t)
	ctx := context.Background()
	// guest.callback -> host Func -> guest.exitNow(5): the exit unwinds
	// both calls into the guest.
	_, err := in.Call(ctx, g, "callback", jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		exit := jshost.Get(g, "exitNow").(*jshost.Function)
		return exit.Invoke(5)
	}), 0)
	var ee *jshost.ExitError
	if !errors.As(err, &ee) || ee.Code != 5 {
		t.Fatalf("nested exitNow(5) = %v, want *ExitError code 5", err)
	}
	if err := in.Wait(ctx); !errors.As(err, &ee) || ee.Code != 5 {
		t.Errorf("Wait = %v, want code 5", err)
	}
}

// Ensure live references do not grow over 10,000 calls once the guest's
// garbage collector has run its finalizers.
func TestInstance_LiveRefs_NoGrowth(t *testing.T) {
	in, g := serving(t)
	ctx := context.Background()
	echo := in.Get(g, "echo")
	obj, err := jshost.ToJS(map[string]any{"k": "v", "list": []any{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Call(ctx, g, "gc"); err != nil {
		t.Fatal(err)
	}
	before := in.LiveRefs()
	for i := 0; i < 10000; i++ {
		arg := any(obj)
		if i%2 == 1 {
			arg = fmt.Sprintf("string %d", i)
		}
		if _, err := in.Invoke(ctx, echo, arg); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if _, err := in.Call(ctx, g, "gc"); err != nil {
		t.Fatal(err)
	}
	after := in.LiveRefs()
	// A few values may be held by goroutines in flight; 10,000 calls must
	// not leave thousands behind.
	if after > before+16 {
		t.Errorf("live references grew from %d to %d over 10,000 calls", before, after)
	}
}

// Ensure Close is idempotent, and methods after it fail with ErrClosed.
func TestInstance_Close_ErrClosed(t *testing.T) {
	in, g := serving(t)
	ctx := context.Background()
	if err := in.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := in.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := in.Call(ctx, g, "echo", 1); !errors.Is(err, jshost.ErrClosed) {
		t.Errorf("Call after Close = %v, want ErrClosed", err)
	}
	if v := in.Global("guest"); v != jshost.Undefined {
		t.Errorf("Global after Close = %v, want Undefined", v)
	}
	if n := in.LiveRefs(); n != -1 {
		t.Errorf("LiveRefs after Close = %d, want -1", n)
	}
}

// BenchmarkInstance_Invoke measures one call from the host into the guest
// and back (a js.FuncOf callback answering at once).
func BenchmarkInstance_Invoke(b *testing.B) {
	needGuest(b)
	ctx := context.Background()
	in, err := jshost.NewInstance(ctx, guestModule, jshost.Config{Args: []string{"guest", "serve"}})
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close(ctx)
	add := in.Global("guest", "add")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := in.Invoke(ctx, add, 1, 2); err != nil {
			b.Fatal(err)
		}
	}
}
