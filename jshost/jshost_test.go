package jshost_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/internal/build"
	"github.com/agentrt/agentrt/jshost"
)

// guestModule is testdata/guest compiled once for the whole test binary.
var guestModule *jshost.Module

// guestSkip is why the guest could not be built (no Go toolchain).
var guestSkip string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	ctx := context.Background()
	if _, err := exec.LookPath("go"); err != nil {
		guestSkip = "go toolchain not found: cannot build the guest"
		return m.Run()
	}
	root, err := build.Root()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "jshost-guest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "guest.wasm")
	if err := build.Module(ctx, root, "./jshost/testdata/guest", out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	guestModule, err = jshost.CompileFile(ctx, out, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer guestModule.Close(ctx)
	return m.Run()
}

// needGuest skips t when the guest could not be built (no Go toolchain),
// or fails it under CI.
func needGuest(t testing.TB) {
	t.Helper()
	if guestModule != nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal(guestSkip)
	}
	t.Skip(guestSkip)
}

// mustStart runs the guest with args and closes it when the test ends.
func mustStart(t *testing.T, cfg jshost.Config) *jshost.Instance {
	t.Helper()
	needGuest(t)
	in, err := jshost.NewInstance(context.Background(), guestModule, cfg)
	if err != nil {
		t.Fatalf("NewInstance(%v): %v", cfg.Args, err)
	}
	t.Cleanup(func() { in.Close(context.Background()) })
	return in
}

func serving(t *testing.T) (*jshost.Instance, jshost.Value) {
	t.Helper()
	in := mustStart(t, jshost.Config{Args: []string{"guest", "serve"}})
	if got := in.Stdout(); got != "serving\n" {
		t.Fatalf("stdout after start = %q, want %q", got, "serving\n")
	}
	return in, in.Global("guest")
}

// Ensure the guest imports only module gojs and only functions this host
// provides, so that a Go upgrade changing the ABI fails here.
func TestModule_ImportedFunctions_AllGojsAndKnown(t *testing.T) {
	needGuest(t)
	known := map[string]bool{}
	for _, n := range jshost.Imports() {
		known[jshost.ImportModule+"."+n] = true
	}
	imports := guestModule.ImportedFunctions()
	if len(imports) < 20 {
		t.Fatalf("guest imports %d functions, want the syscall/js set (>= 20): %v", len(imports), imports)
	}
	for _, imp := range imports {
		if !strings.HasPrefix(imp, "gojs.") {
			t.Errorf("import %q is not in module gojs", imp)
		}
		if !known[imp] {
			t.Errorf("import %q is not provided by jshost", imp)
		}
	}
	if jshost.ImportModule != "gojs" {
		t.Errorf("ImportModule = %q, want gojs", jshost.ImportModule)
	}
}

// Ensure a module with an import the host does not know is refused.
func TestCompile_ErrUnknownImport(t *testing.T) {
	// (module (import "go" "debug" (func (param i32))) (memory (export "mem") 1))
	wasm := []byte{0, 'a', 's', 'm', 1, 0, 0, 0,
		1, 5, 1, 0x60, 1, 0x7f, 0, // type: (i32) -> ()
		2, 12, 1, 2, 'g', 'o', 5, 'd', 'e', 'b', 'u', 'g', 0, 0, // import go.debug
		5, 3, 1, 0, 1, // memory 1
		7, 7, 1, 3, 'm', 'e', 'm', 2, 0, // export mem
	}
	_, err := jshost.Compile(context.Background(), wasm, &jshost.CompileOptions{CacheDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "go.debug") {
		t.Fatalf("Compile = %v, want an error naming go.debug", err)
	}
	if _, err := jshost.Compile(context.Background(), []byte("not wasm"), nil); err == nil {
		t.Fatal("Compile(garbage) = nil error")
	}
}

// Ensure fmt output reaches stdout and stderr through fs.write, with
// argv and env as wasm_exec.js lays them out.
func TestInstance_Start_FmtOutput(t *testing.T) {
	in := mustStart(t, jshost.Config{
		Args: []string{"guest", "hello", "a", "b"},
		Env:  map[string]string{"GUEST_GREETING": "hi there"},
	})
	if err := in.Wait(context.Background()); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	want := "hello, world\nargs=a,b greeting=hi there\nzone offset known=true\n"
	if got := in.Stdout(); got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if got := in.Stderr(); got != "to stderr\n" {
		t.Errorf("stderr = %q, want %q", got, "to stderr\n")
	}
}

// Ensure time.Sleep, time.AfterFunc and tickers work on the host's timers.
func TestInstance_Timers_Sleep(t *testing.T) {
	in := mustStart(t, jshost.Config{Args: []string{"guest", "sleep"}})
	if err := in.Wait(context.Background()); err != nil {
		t.Fatalf("Wait: %v (stderr %q)", err, in.Stderr())
	}
	want := "afterfunc\nslept at least 25ms: true\n"
	if got := in.Stdout(); got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

// Ensure exit codes and panics are reported as *ExitError with the panic text.
func TestInstance_Start_ExitAndPanic(t *testing.T) {
	tests := []struct {
		name     string
		scenario string
		code     int
		stderr   string
	}{
		{name: "ErrExit", scenario: "exit", code: 3},
		{name: "ErrPanic", scenario: "panic", code: 2, stderr: "panic: boom at start"},
		{name: "ErrUnknownScenario", scenario: "nope", code: 64, stderr: "unknown scenario nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			needGuest(t)
			_, err := jshost.NewInstance(context.Background(), guestModule, jshost.Config{Args: []string{"guest", tt.scenario}})
			var ee *jshost.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("NewInstance = %v, want *ExitError", err)
			}
			if ee.Code != tt.code {
				t.Errorf("Code = %d, want %d", ee.Code, tt.code)
			}
			if !strings.Contains(ee.Stderr, tt.stderr) || !strings.Contains(err.Error(), tt.stderr) {
				t.Errorf("error %q / stderr %q, want it to contain %q", err, ee.Stderr, tt.stderr)
			}
		})
	}
}

// Ensure Go values convert to JS and back through the guest.
func TestInstance_Call_Conversions(t *testing.T) {
	in, g := serving(t)
	ctx := context.Background()
	tests := []struct {
		name string
		arg  any
		want any
		typ  string
	}{
		{name: "OKString", arg: "héllo 😀", want: "héllo 😀", typ: "string"},
		{name: "OKInt", arg: 42, want: 42.0, typ: "number"},
		{name: "OKFloat", arg: -1.5, want: -1.5, typ: "number"},
		{name: "OKZero", arg: 0, want: 0.0, typ: "number"},
		{name: "OKBool", arg: true, want: true, typ: "boolean"},
		{name: "OKNil", arg: nil, want: nil, typ: "null"},
		{name: "OKUndefined", arg: jshost.Undefined, want: nil, typ: "undefined"},
		{name: "OKMap", arg: map[string]any{"a": 1, "b": []string{"x"}}, want: map[string]any{"a": 1.0, "b": []any{"x"}}, typ: "object"},
		{name: "OKBytes", arg: []byte{1, 2}, want: []byte{1, 2}, typ: "object"},
		{name: "OKFunc", arg: jshost.Func(func(jshost.Value, []jshost.Value) (any, error) { return nil, nil }), typ: "function"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, err := in.Call(ctx, g, "typeOf", tt.arg)
			if err != nil || typ != tt.typ {
				t.Errorf("typeOf = %v, %v; want %q", typ, err, tt.typ)
			}
			if tt.typ == "function" {
				return
			}
			got, err := in.Call(ctx, g, "echo", tt.arg)
			if err != nil {
				t.Fatalf("echo: %v", err)
			}
			if fmt.Sprint(in.Export(got)) != fmt.Sprint(tt.want) {
				t.Errorf("echo(%v) = %v, want %v", tt.arg, in.Export(got), tt.want)
			}
		})
	}

	// Ensure unsupported Go values are an error, not a panic.
	if _, err := in.Call(ctx, g, "echo", struct{}{}); err == nil {
		t.Error("echo(struct{}{}) = nil error, want an error")
	}
	if _, err := in.Call(ctx, g, "echo", make(chan int)); err == nil {
		t.Error("echo(chan) = nil error, want an error")
	}
	// Ensure calling a missing method throws a TypeError.
	var ex *jshost.Exception
	if _, err := in.Call(ctx, g, "nope"); !errors.As(err, &ex) || ex.Name != "TypeError" {
		t.Errorf("Call(nope) = %v, want a TypeError", err)
	}
	// Ensure objects made by the guest read back, with bytes and nesting.
	obj, err := in.Call(ctx, g, "makeObject")
	if err != nil {
		t.Fatal(err)
	}
	want := "map[bytes:[1 2 255] list:[a 1.5 map[deep:yes]] n:42 name:guest nothing:<nil> ok:true]"
	if got := fmt.Sprint(in.Export(obj)); got != want {
		t.Errorf("makeObject = %s, want %s", got, want)
	}
	if got := in.Get(obj, "list", "2", "deep"); got != "yes" {
		t.Errorf("Get(list.2.deep) = %v, want yes", got)
	}
	if got := in.Get(obj, "list", "length"); got != 3.0 {
		t.Errorf("Get(list.length) = %v, want 3", got)
	}
	s, err := in.Call(ctx, g, "readBytes", []byte("hey"))
	if err != nil || s != "3 [104 101 121]" {
		t.Errorf("readBytes = %v, %v", s, err)
	}
	s, err = in.Call(ctx, g, "inspect", []any{"first", map[string]any{"k": 1, "l": 2}})
	if err != nil || s != "array=true len=2 first=first keys=2" {
		t.Errorf("inspect = %v, %v", s, err)
	}
	// A huge string crosses intact.
	big := strings.Repeat("x", 4<<20)
	got, err := in.Call(ctx, g, "echo", big)
	if err != nil || got != big {
		t.Errorf("echo(4 MiB) failed: %v", err)
	}
}

// Ensure JS->Go calls nested inside Go->JS calls work: the guest calls a
// Go function of the host, which calls the guest again, which prints
// (fs.write's callback re-enters the guest a third time).
func TestInstance_Call_NestedCallbacks(t *testing.T) {
	in, g := serving(t)
	ctx := context.Background()
	var inner jshost.Func = func(_ jshost.Value, args []jshost.Value) (any, error) {
		// Runs on the event loop, in the middle of guest.callback.
		return args[0].(float64) * 10, nil
	}
	r, err := in.Call(ctx, g, "callback", inner, 4)
	if err != nil || r != 41.0 {
		t.Fatalf("callback(inner, 4) = %v, %v; want 41", r, err)
	}
	// Deeper: guest.callback -> host Func -> guest.callback -> host Func
	// -> guest.print, which writes through fs.write and its callback.
	var leaf jshost.Func = func(_ jshost.Value, args []jshost.Value) (any, error) {
		print := jshost.Get(g, "print").(*jshost.Function)
		if _, err := print.Invoke("deep"); err != nil {
			return nil, err
		}
		return args[0].(float64) + 1, nil
	}
	var middle jshost.Func = func(_ jshost.Value, args []jshost.Value) (any, error) {
		cb := jshost.Get(g, "callback").(*jshost.Function)
		return cb.Invoke(leaf, args[0].(float64)*2)
	}
	r, err = in.Call(ctx, g, "callback", middle, 5)
	if err != nil || r != 13.0 { // leaf(10)=11, inner callback 12, outer callback 13
		t.Fatalf("nested callback = %v, %v; want 13", r, err)
	}
	if !strings.Contains(in.Stdout(), "print: deep\n") {
		t.Errorf("stdout = %q, want print: deep", in.Stdout())
	}
	if _, err := in.Call(ctx, g, "print", "from a callback"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(in.Stdout(), "print: from a callback\n") {
		t.Errorf("stdout = %q, want the printed line", in.Stdout())
	}
	// A Go function that throws: the guest catches it as js.Error.
	r, err = in.Call(ctx, g, "catch", jshost.Func(func(jshost.Value, []jshost.Value) (any, error) {
		return nil, errors.New("host says no")
	}))
	if err != nil || r != "caught Error: host says no" {
		t.Errorf("catch = %v, %v", r, err)
	}
	// A Go function that panics is thrown too, and the guest survives.
	r, err = in.Call(ctx, g, "catch", jshost.Func(func(jshost.Value, []jshost.Value) (any, error) {
		panic("host bug")
	}))
	if err != nil || !strings.Contains(fmt.Sprint(r), "host bug") {
		t.Errorf("catch(panicking func) = %v, %v", r, err)
	}
}
