package jshost_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentrt/agentrt/jshost"
)

// Start a GOOS=js program, call one of its js.FuncOf functions with Go
// values and await the Promise another returns.
func Example() {
	ctx := context.Background()
	in, err := jshost.NewInstance(ctx, guestModule, jshost.Config{Args: []string{"guest", "serve"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer in.Close(ctx)

	guest := in.Global("guest")
	sum, _ := in.Call(ctx, guest, "add", 2, 3.5)
	doubled, _ := in.CallAsync(ctx, guest, "asyncDouble", 21)
	_, err = in.CallAsync(ctx, guest, "asyncFail", "nope")
	fmt.Print(in.Stdout())
	fmt.Println(sum, doubled)
	fmt.Println(err)
	// Output:
	// serving
	// 5.5 42
	// Error: nope [guest_error]
}

// Ensure wrong types given to the Instance's methods are errors, not panics.
func TestInstance_ErrWrongTypes(t *testing.T) {
	in, g := serving(t)
	ctx := context.Background()
	var ex *jshost.Exception
	if _, err := in.Invoke(ctx, "not a function"); !errors.As(err, &ex) || ex.Name != "TypeError" {
		t.Errorf("Invoke(string) = %v, want a TypeError", err)
	}
	if _, err := in.Call(ctx, jshost.Undefined, "x"); !errors.As(err, &ex) || ex.Name != "TypeError" {
		t.Errorf("Call on undefined = %v, want a TypeError", err)
	}
	if err := in.Set("a string", "k", 1); err == nil {
		t.Error("Set on a string = nil error, want an error")
	}
	if err := in.Set(g, "k", struct{}{}); err == nil {
		t.Error("Set(struct{}) = nil error, want an error")
	}
	if v, err := in.Await(ctx, 7.0); err != nil || v != 7.0 {
		t.Errorf("Await(non-promise) = %v, %v; want it back", v, err)
	}
	if got := in.Get(nil, "x"); got != jshost.Undefined {
		t.Errorf("Get(nil) = %v, want Undefined", got)
	}
	// The guest still serves.
	if v, err := in.Call(ctx, g, "add", 1, 1); err != nil || v != 2.0 {
		t.Errorf("add after bad calls = %v, %v", v, err)
	}
}

// Ensure an unstarted instance takes globals before its program runs, and
// Start runs once.
func TestNewUnstartedInstance_SetThenStart(t *testing.T) {
	needGuest(t)
	ctx := context.Background()
	in, err := jshost.NewUnstartedInstance(ctx, guestModule, jshost.Config{Args: []string{"guest", "serve"}})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close(ctx)
	if err := in.Set(in.Global(), "hostConfig", map[string]any{"mode": "test"}); err != nil {
		t.Fatal(err)
	}
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := in.Start(ctx); err == nil {
		t.Error("second Start = nil error, want an error")
	}
	if got := in.Global("hostConfig", "mode"); got != "test" {
		t.Errorf("hostConfig.mode = %v, want test", got)
	}
	// Ensure Await gives up when ctx is done, and the instance still serves.
	p, _, _ := in.NewPromise()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := in.Await(cctx, p); !errors.Is(err, context.Canceled) {
		t.Errorf("Await(cancelled ctx) = %v, want context.Canceled", err)
	}
	if v, err := in.Call(ctx, in.Global("guest"), "add", 2, 2); err != nil || v != 4.0 {
		t.Errorf("add = %v, %v", v, err)
	}
}
