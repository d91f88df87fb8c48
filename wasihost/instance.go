package wasihost

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// Export names of the WASI module. Keep in sync with
// wasm/internal/wasmexport and wasm/wasi.
const (
	expInitialize = "_initialize"
	expIn         = "agentrt_in"
	expOut        = "agentrt_out"
	expCreate     = "agentrt_create"
	expClose      = "agentrt_close"
	expBegin      = "agentrt_begin"
	expFeed       = "agentrt_feed"
	expNext       = "agentrt_next"
	expSession    = "agentrt_session"
	expSessions   = "agentrt_sessions"
	expOp         = "agentrt_op"
	expStats      = "agentrt_stats"
)

// Instance is one instance of the module: its own linear memory, its own
// sessions. A new Instance is a cold start. It is safe for concurrent
// use: calls into the module are serialised. Instantiate makes one of the
// WASI module; AttachJS makes one over an instance of the GOOS=js module
// that a host of its JavaScript side started: both export the same wire
// functions, and an Instance drives either through them alone.
type Instance struct {
	mu   sync.Mutex
	x    Exports
	dead bool
	// jsonConfig: the module reads a config frame of JSON text only (the
	// GOOS=js module), not the binary frame the WASI module reads.
	jsonConfig bool
	// close closes what the instance runs on.
	close func(context.Context) error
}

// Exports is what an Instance needs of a started instance of a module
// with agentrt's wire exports (docs/wire.md): calls of its exported
// functions, with i32 values as uint64 as api.Function takes them, and
// its linear memory. jshost.Exports is one, for the GOOS=js module.
type Exports interface {
	// Call calls the exported function name and returns its results.
	Call(ctx context.Context, name string, params ...uint64) ([]uint64, error)
	// Write copies b into the instance's memory at addr.
	Write(ctx context.Context, addr uint32, b []byte) error
	// Read returns a copy of n bytes of the instance's memory at addr.
	Read(ctx context.Context, addr, n uint32) ([]byte, error)
}

// AttachJS returns an Instance over x, a started instance of the GOOS=js
// module (dist/agentrt.wasm) whose JavaScript side a Go host plays, as
// package jshost does. Runtimes, turns, sessions and stats then go over
// the wire exports exactly as on the WASI module, the runtime's config
// crossing as JSON text (the config frame that module reads). close, if
// not nil, is called by Instance.Close and when a call traps. When x also
// has Yield(ctx) error (giving the guest's goroutines their turn between
// calls, as JavaScript's event loop does for the glue), a Runtime calls
// it after each Run, so that Go's collector finishes its cycles.
func AttachJS(x Exports, close func(context.Context) error) *Instance {
	return &Instance{x: x, jsonConfig: true, close: close}
}

// moduleExports are the exports of a wazero instance of the WASI module.
type moduleExports struct {
	mem   api.Memory
	fn    map[string]api.Function
	stack [3]uint64
}

func (m *moduleExports) Call(ctx context.Context, name string, params ...uint64) ([]uint64, error) {
	m.stack = [3]uint64{}
	copy(m.stack[:], params)
	if err := m.fn[name].CallWithStack(ctx, m.stack[:]); err != nil {
		return nil, err
	}
	return m.stack[:1], nil
}

func (m *moduleExports) Write(_ context.Context, addr uint32, b []byte) error {
	if !m.mem.Write(addr, b) {
		return errOutside
	}
	return nil
}

func (m *moduleExports) Read(_ context.Context, addr, n uint32) ([]byte, error) {
	b, ok := m.mem.Read(addr, n)
	if !ok {
		return nil, errOutside
	}
	return append([]byte(nil), b...), nil
}

var errOutside = errors.New("outside memory")

// Instantiate starts a new instance of the module and runs its
// _initialize when it exports one: the plain build does, and the
// pre-initialized build, whose memory already holds the initialized
// runtime, does not.
func (m *Module) Instantiate(ctx context.Context) (*Instance, error) {
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions(expInitialize).
		WithStderr(m.stderr).WithSysWalltime().WithSysNanotime().WithRandSource(rand.Reader)
	mod, err := m.rt.InstantiateModule(ctx, m.compiled, cfg)
	if err != nil {
		return nil, fmt.Errorf("wasihost: instantiate: %w", err)
	}
	x := &moduleExports{mem: mod.Memory(), fn: map[string]api.Function{}}
	for _, name := range requiredExports {
		x.fn[name] = mod.ExportedFunction(name)
	}
	return &Instance{x: x, close: mod.Close}, nil
}

// Close closes the instance: its runtimes and sessions are gone.
func (in *Instance) Close(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.dead = true
	if in.close == nil {
		return nil
	}
	return in.close(ctx)
}

// call calls export name with up to three arguments and returns its
// result as an int32 (0 for exports with none). The caller holds mu.
func (in *Instance) call(name string, args ...uint64) (int32, error) {
	if in.dead {
		return 0, ErrDead
	}
	res, err := in.x.Call(context.Background(), name, args...)
	if err != nil {
		in.dead = true
		if in.close != nil {
			in.close(context.Background())
		}
		return 0, fmt.Errorf("%w: %s: %v", ErrDead, name, err)
	}
	if len(res) == 0 {
		return 0, nil
	}
	return int32(uint32(res[0])), nil
}

// yield gives the guest's goroutines their turn when its Exports can
// (AttachJS). An error is left for the next call to meet.
func (in *Instance) yield() {
	y, ok := in.x.(interface{ Yield(context.Context) error })
	if !ok {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.dead {
		y.Yield(context.Background())
	}
}

// write copies frame into the module's input buffer. The caller holds mu.
func (in *Instance) write(frame []byte) error {
	p, err := in.call(expIn, uint64(len(frame)))
	if err != nil {
		return err
	}
	if in.x.Write(context.Background(), uint32(p), frame) != nil {
		in.dead = true
		return fmt.Errorf("%w: the input buffer is outside memory", ErrDead)
	}
	return nil
}

// output copies the output frame of length n. The caller holds mu.
func (in *Instance) output(n int32) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	p, err := in.call(expOut)
	if err != nil {
		return nil, err
	}
	b, err := in.x.Read(context.Background(), uint32(p), uint32(n))
	if err != nil {
		in.dead = true
		return nil, fmt.Errorf("%w: the output frame is outside memory", ErrDead)
	}
	return b, nil
}

// exchange writes frame, calls export name with the runtime's number,
// the frame's length and args, and returns the output frame. The caller
// holds mu.
func (in *Instance) exchange(name string, rt int32, frame []byte, args ...uint64) ([]byte, int32, error) {
	if err := in.write(frame); err != nil {
		return nil, 0, err
	}
	n, err := in.call(name, append([]uint64{uint64(uint32(rt)), uint64(len(frame))}, args...)...)
	if err != nil {
		return nil, 0, err
	}
	out, err := in.output(n)
	return out, n, err
}

// refused returns the error a refused frame carries, or nil when b is
// not one.
func refused(b []byte) error {
	if k, err := wire.FrameKind(b); err != nil || k != wire.KindRefused {
		return nil
	}
	e, err := wire.DecodeRefused(b)
	if err != nil {
		return core.NewError(core.CodeInternal, "wasihost: unreadable refused frame: "+err.Error())
	}
	return e
}

// NewRuntime creates a runtime in the instance for cfg. A config the
// module refuses (a negative limit, a tool with no name or a duplicate
// name) returns its *core.Error with code invalid_argument. A tool with
// NeedsApproval is asked about each call by the module (approval.go).
func (in *Instance) NewRuntime(cfg Config) (*Runtime, error) {
	c := wire.Config{SystemPrompt: cfg.SystemPrompt, Echo: cfg.Model == nil, Limits: cfg.Limits, CountByAction: cfg.CountTokens != nil}
	tools := map[string]*core.Tool{}
	for i := range cfg.Tools {
		t := &cfg.Tools[i]
		if t.Call == nil {
			return nil, core.NewError(core.CodeInvalidArgument, "tool "+t.Name+" has no Call")
		}
		mode := wire.ApprovalNever
		if t.NeedsApproval != nil {
			mode = wire.ApprovalAsk
		}
		c.Tools = append(c.Tools, t.ToolSpec)
		c.Approval = append(c.Approval, mode)
		tools[t.Name] = t
	}
	if err := cfg.Limits.Validate(); err != nil {
		return nil, err
	}
	var frame []byte
	if in.jsonConfig {
		frame = wire.AppendConfigJSON(nil, configJSON(&cfg))
	} else {
		frame = wire.AppendConfig(nil, &c)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if err := in.write(frame); err != nil {
		return nil, err
	}
	n, err := in.call(expCreate, uint64(len(frame)))
	if err != nil {
		return nil, err
	}
	if n < 0 {
		out, err := in.output(-n)
		if err != nil {
			return nil, err
		}
		if e := refused(out); e != nil {
			return nil, e
		}
		return nil, core.NewError(core.CodeInternal, "wasihost: agentrt_create failed without a refused frame")
	}
	rt := &Runtime{in: in, num: n, cfg: cfg, tools: tools, specs: c.Tools,
		mirrors: mirrors{}, ended: make(chan struct{})}
	rt.maxSessions = cfg.Limits.MaxSessions
	if rt.maxSessions <= 0 {
		rt.maxSessions = core.DefaultLimits.MaxSessions
	}
	return rt, nil
}
