package jshost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is returned by the methods of an Instance after Close.
var ErrClosed = errors.New("jshost: instance is closed")

// ExitError reports that the guest program is no longer running: it
// exited (Code is its exit code, 2 after a Go panic) or it crashed (a
// trap, Code -1, with the cause in Err). Stderr holds the end of what the
// guest wrote to stderr, where a panic's message is.
type ExitError struct {
	Code   int
	Err    error
	Stderr string
}

// Error says how the guest ended, with the end of its stderr.
func (e *ExitError) Error() string {
	var s string
	if e.Err != nil {
		s = "jshost: guest crashed: " + e.Err.Error()
	} else {
		s = fmt.Sprintf("jshost: guest exited with code %d", e.Code)
	}
	if t := strings.TrimSpace(e.Stderr); t != "" {
		s += "\n" + t
	}
	return s
}

// Unwrap returns the cause of a crash, or nil.
func (e *ExitError) Unwrap() error { return e.Err }

// Config configures an Instance. The zero Config runs the program with
// argv ["js"], no environment, and output captured only.
type Config struct {
	// Args is the program's argv; empty means ["js"] (wasm_exec.js's).
	Args []string
	// Env is the program's environment.
	Env map[string]string
	// Stdout and Stderr, if set, receive the program's output as it is
	// written, besides Instance.Stdout and Instance.Stderr. They are
	// called from the event loop.
	Stdout, Stderr io.Writer
}

// Instance is one running GOOS=js program, with its own object world and
// event loop: the Go counterpart of new Go() plus go.run(instance) in
// wasm_exec.js.
//
// Every method is safe for concurrent use, except from inside a Func the
// guest is calling (see Func). Values an Instance returns belong to it:
// read them through Get and Export, pass them back to its methods, and
// never to another Instance.
type Instance struct {
	m   *Module
	cfg Config
	w   world

	mod     api.Module
	mem     api.Memory
	fns     map[string][]api.Function // an api.Function per nesting depth
	depth   int
	refs    *refTable
	callCtx context.Context
	cancel  context.CancelFunc
	started time.Time
	origin  int64

	timers    map[int64]*timer
	nextTimer int64

	stdout, stderr capture

	qmu    sync.Mutex
	queue  []func()
	wake   chan struct{}
	quit   chan struct{}
	loopOK chan struct{} // closed when the loop has returned

	exited   chan struct{} // closed when the guest has exited or crashed
	exitErr  *ExitError
	ran      bool
	closing  sync.Once
	closeErr error
}

// capture is a goroutine-safe output buffer with an optional tee.
type capture struct {
	mu  sync.Mutex
	buf bytes.Buffer
	tee io.Writer
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.buf.Write(p)
	c.mu.Unlock()
	if c.tee != nil {
		c.tee.Write(p)
	}
	return len(p), nil
}

func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

func (c *capture) tail(n int) string {
	s := c.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

// NewUnstartedInstance instantiates m without running the program, so
// that globals can be set first (Set(Global(), ...)). Call Start to run
// it, and Close when done.
func NewUnstartedInstance(ctx context.Context, m *Module, cfg Config) (*Instance, error) {
	in := &Instance{
		m:      m,
		cfg:    cfg,
		fns:    map[string][]api.Function{},
		timers: map[int64]*timer{},
		wake:   make(chan struct{}, 1),
		quit:   make(chan struct{}),
		loopOK: make(chan struct{}),
		exited: make(chan struct{}),
	}
	in.stdout.tee, in.stderr.tee = cfg.Stdout, cfg.Stderr
	in.w.stdout, in.w.stderr = &in.stdout, &in.stderr
	in.w.wrap = in.wrapper
	in.w.setTimer = func(d time.Duration, fire func()) int64 { return in.addTimer(d, fire, false) }
	in.w.clearTimer = in.clearTimer
	in.w.init()
	in.refs = newRefTable(in.w.global, in.w.goObj)
	in.callCtx, in.cancel = context.WithCancel(context.WithValue(context.Background(), instanceKey{}, in))
	name := fmt.Sprintf("agentrt-guest-%d", m.n.Add(1))
	mod, err := m.rt.InstantiateModule(ctx, m.compiled, wazero.NewModuleConfig().WithName(name).WithStartFunctions())
	if err != nil {
		in.cancel()
		return nil, fmt.Errorf("jshost: instantiate: %w", err)
	}
	in.mod = mod
	in.mem = mod.Memory()
	if in.mem == nil {
		mod.Close(ctx)
		in.cancel()
		return nil, errors.New("jshost: the module exports no memory")
	}
	go in.loop()
	return in, nil
}

// NewInstance instantiates m and starts its program; see Start. On error
// the instance is closed.
func NewInstance(ctx context.Context, m *Module, cfg Config) (*Instance, error) {
	in, err := NewUnstartedInstance(ctx, m, cfg)
	if err != nil {
		return nil, err
	}
	if err := in.Start(ctx); err != nil {
		in.Close(ctx)
		return nil, err
	}
	return in, nil
}

// Start runs the program until it exits or every goroutine waits for an
// event (main blocks or returns to wait for callbacks), as go.run does.
// A program that exits with code 0 during Start is not an error; any
// other exit, or a crash, is an *ExitError. Start may be called once.
func (in *Instance) Start(ctx context.Context) error {
	return in.do(ctx, func() error {
		if in.ran {
			return errors.New("jshost: instance already started")
		}
		in.ran = true
		argc, argv, err := in.writeArgs()
		if err != nil {
			return err
		}
		in.started = time.Now()
		in.origin = in.started.UnixNano()
		if _, err := in.callGuest(expRun, uint64(argc), uint64(argv)); err != nil {
			if in.exitErr != nil && in.exitErr.Code == 0 && in.exitErr.Err == nil {
				return nil
			}
			return in.exitErr
		}
		return nil
	})
}

// writeArgs lays out argv and the environment from offset 4096 as
// wasm_exec.js does: NUL-terminated strings 8-byte aligned, then a table
// of 8-byte pointers (argv..., 0, env..., 0).
func (in *Instance) writeArgs() (argc, argv uint32, err error) {
	args := in.cfg.Args
	if len(args) == 0 {
		args = []string{"js"}
	}
	keys := make([]string, 0, len(in.cfg.Env))
	for k := range in.cfg.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	offset := uint32(argvOffset)
	var ptrs []uint32
	str := func(s string) error {
		b := append([]byte(s), 0)
		if int(offset)+len(b) >= wasmMinDataAddr {
			return errors.New("jshost: total length of command line and environment variables exceeds limit")
		}
		in.write(int64(offset), b)
		ptrs = append(ptrs, offset)
		offset += uint32(len(b))
		if offset%8 != 0 {
			offset += 8 - offset%8
		}
		return nil
	}
	for _, a := range args {
		if err := str(a); err != nil {
			return 0, 0, err
		}
	}
	ptrs = append(ptrs, 0)
	for _, k := range keys {
		if err := str(k + "=" + in.cfg.Env[k]); err != nil {
			return 0, 0, err
		}
	}
	ptrs = append(ptrs, 0)
	argv = offset
	if int(offset)+8*len(ptrs) >= wasmMinDataAddr {
		return 0, 0, errors.New("jshost: total length of command line and environment variables exceeds limit")
	}
	for _, p := range ptrs {
		in.setI64(offset, int64(p))
		offset += 8
	}
	return uint32(len(args)), argv, nil
}

// --- calls into the guest

// callGuest calls an export of the guest with a separate api.Function per
// nesting depth (api.Function.Call must not be re-entered). An error
// marks the guest as ended; inside a host function it also unwinds the
// outer call.
func (in *Instance) callGuest(name string, params ...uint64) ([]uint64, error) {
	if in.exitErr != nil {
		return nil, in.exitErr
	}
	fs := in.fns[name]
	for len(fs) <= in.depth {
		fs = append(fs, in.mod.ExportedFunction(name))
	}
	in.fns[name] = fs
	f := fs[in.depth]
	in.depth++
	res, err := f.Call(in.callCtx, params...)
	in.depth--
	if err != nil {
		in.crash(err)
		if in.depth > 0 {
			panic(guestAbort{err})
		}
		return nil, in.exitErr
	}
	return res, nil
}

func (in *Instance) getsp() uint32 {
	res, _ := in.callGuest(expGetsp)
	if len(res) == 0 {
		panic(errMemory)
	}
	return uint32(res[0])
}

func (in *Instance) resume() error {
	_, err := in.callGuest(expResume)
	return err
}

// exit records a wasmExit.
func (in *Instance) exit(code int) {
	if in.exitErr != nil {
		return
	}
	in.exitErr = &ExitError{Code: code, Stderr: in.stderr.tail(4096)}
	close(in.exited)
}

// crash records the end of the guest after a failed call; an exit
// recorded first wins.
func (in *Instance) crash(err error) {
	if in.exitErr != nil {
		return
	}
	in.exitErr = &ExitError{Code: -1, Err: err, Stderr: in.stderr.tail(4096)}
	close(in.exited)
}

// wrapper is _makeFuncWrapper(id): a function that hands its call to the
// guest's js.FuncOf id as _pendingEvent and resumes the guest.
func (in *Instance) wrapper(id uint32) *Function {
	return &Function{call: func(this Value, args []Value) (Value, error) {
		if in.exitErr != nil {
			return nil, throwf("Error", "Go program has already exited")
		}
		ev := NewObject()
		ev.Set("id", float64(id))
		ev.Set("this", this)
		ev.Set("args", &Array{Elems: append([]Value{}, args...)})
		in.w.goObj.Set("_pendingEvent", ev)
		if err := in.resume(); err != nil {
			return nil, throwf("Error", "Go program has already exited")
		}
		return ev.Get("result"), nil
	}}
}

// --- the API

func (in *Instance) ended() error {
	if in.exitErr != nil {
		return in.exitErr
	}
	return nil
}

// Global returns globalThis, or follows path from it (Global("agentrt",
// "version")). It returns Undefined after Close.
func (in *Instance) Global(path ...string) Value {
	return in.Get(in.w.global, path...)
}

// Get follows path from v through properties and array indexes, as
// v[path[0]][path[1]]... would in JavaScript; a missing step gives
// Undefined. It returns Undefined after Close.
func (in *Instance) Get(v Value, path ...string) Value {
	var out Value = Undefined
	in.do(context.Background(), func() error {
		for _, k := range path {
			v = in.w.get(v, k)
		}
		out = v
		return nil
	})
	return out
}

// Set sets v[key] = x, converting x with ToJS.
func (in *Instance) Set(v Value, key string, x any) error {
	return in.do(context.Background(), func() error {
		jx, err := ToJS(x)
		if err != nil {
			return err
		}
		if !isObject(v) {
			return fmt.Errorf("jshost: cannot set %q on %s", key, typeOf(v))
		}
		in.w.set(v, key, jx)
		return nil
	})
}

// Export converts v to plain Go values on the event loop; see Export.
func (in *Instance) Export(v Value) any {
	var out any
	in.do(context.Background(), func() error { out = Export(v); return nil })
	return out
}

func (in *Instance) convertArgs(args []any) ([]Value, error) {
	vs := make([]Value, len(args))
	for i, a := range args {
		v, err := ToJS(a)
		if err != nil {
			return nil, fmt.Errorf("jshost: argument %d: %w", i, err)
		}
		vs[i] = v
	}
	return vs, nil
}

// apply runs a call on the loop and maps its outcome.
func (in *Instance) apply(ctx context.Context, f func() (Value, error)) (Value, error) {
	var out Value
	err := in.do(ctx, func() error {
		if err := in.ended(); err != nil {
			return err
		}
		v, err := f()
		if g := in.ended(); g != nil {
			return g
		}
		if err != nil {
			return err
		}
		out = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Call calls v[method](args...) with args converted by ToJS. A thrown
// value is returned as an *Exception; an ended guest as an *ExitError.
func (in *Instance) Call(ctx context.Context, v Value, method string, args ...any) (Value, error) {
	return in.apply(ctx, func() (Value, error) {
		vs, err := in.convertArgs(args)
		if err != nil {
			return nil, err
		}
		return in.w.call(in.w.get(v, method), v, vs)
	})
}

// Invoke calls the function fn(args...) with this undefined; see Call.
func (in *Instance) Invoke(ctx context.Context, fn Value, args ...any) (Value, error) {
	return in.apply(ctx, func() (Value, error) {
		vs, err := in.convertArgs(args)
		if err != nil {
			return nil, err
		}
		return in.w.call(fn, Undefined, vs)
	})
}

// New calls new ctor(args...); see Call.
func (in *Instance) New(ctx context.Context, ctor Value, args ...any) (Value, error) {
	return in.apply(ctx, func() (Value, error) {
		vs, err := in.convertArgs(args)
		if err != nil {
			return nil, err
		}
		return in.w.construct(ctor, vs)
	})
}

// Await waits until v settles, if it is a Promise (any other value is
// returned as it is), and returns its value; a rejection is an
// *Exception. It returns early with ctx's error, or an *ExitError when the
// guest ends first.
func (in *Instance) Await(ctx context.Context, v Value) (Value, error) {
	p, ok := v.(*Promise)
	if !ok {
		return v, nil
	}
	type outcome struct {
		v   Value
		err error
	}
	ch := make(chan outcome, 1)
	err := in.do(ctx, func() error {
		in.w.react(p, func(v Value) { ch <- outcome{v: v} },
			func(v Value) { ch <- outcome{err: newException(v)} })
		return nil
	})
	if err != nil {
		return nil, err
	}
	select {
	case o := <-ch:
		return o.v, o.err
	case <-in.exited:
		select { // settled in the same turn the guest ended
		case o := <-ch:
			return o.v, o.err
		default:
		}
		return nil, in.exitErr
	case <-in.loopOK:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// CallAsync calls v[method](args...) and awaits the Promise it returns.
func (in *Instance) CallAsync(ctx context.Context, v Value, method string, args ...any) (Value, error) {
	r, err := in.Call(ctx, v, method, args...)
	if err != nil {
		return nil, err
	}
	return in.Await(ctx, r)
}

// NewPromise returns a pending Promise and the functions that settle it.
// resolve and reject may be called from any goroutine, including inside a
// Func; only the first call of either has an effect. Their argument is
// converted with ToJS (an error becomes an Error object); resolving with
// a Promise adopts its state.
func (in *Instance) NewPromise() (p *Promise, resolve, reject func(any)) {
	p = &Promise{}
	var once atomic.Bool
	settle := func(x any, fulfil bool) {
		if !once.CompareAndSwap(false, true) {
			return
		}
		in.post(func() {
			v, err := ToJS(x)
			if err != nil {
				in.w.settle(p, rejected, newError("TypeError", err.Error()))
				return
			}
			if fulfil {
				in.w.resolveWith(p, v)
			} else {
				in.w.settle(p, rejected, v)
			}
		})
	}
	return p, func(x any) { settle(x, true) }, func(x any) { settle(x, false) }
}

// Stdout returns everything the guest has written to stdout.
func (in *Instance) Stdout() string { return in.stdout.String() }

// Stderr returns everything the guest has written to stderr, including
// the runtime's panic messages.
func (in *Instance) Stderr() string { return in.stderr.String() }

// LiveRefs is the number of JavaScript values the guest holds references
// to (js.Value objects not yet finalized), besides the seven predefined
// ones. It returns -1 after Close.
func (in *Instance) LiveRefs() int {
	n := -1
	in.do(context.Background(), func() error { n = in.refs.live(); return nil })
	return n
}

// Done is closed when the guest has exited or crashed.
func (in *Instance) Done() <-chan struct{} { return in.exited }

// Wait waits until the guest exits: nil for exit code 0, an *ExitError
// otherwise, or ctx's error.
func (in *Instance) Wait(ctx context.Context) error {
	select {
	case <-in.exited:
		if in.exitErr.Code == 0 && in.exitErr.Err == nil {
			return nil
		}
		return in.exitErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the event loop and releases the instance. Later calls of
// the instance's methods return ErrClosed (Get returns Undefined). Close
// is idempotent.
//
// # Notes
//
//   - Close waits for a call into the guest that is running to return: a
//     guest stuck in a loop that never yields blocks it, as it would block
//     a browser tab.
func (in *Instance) Close(ctx context.Context) error {
	in.closing.Do(func() {
		in.cancel()
		close(in.quit)
		<-in.loopOK
		in.closeErr = in.mod.Close(ctx)
	})
	return in.closeErr
}
