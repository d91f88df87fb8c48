package wasihost

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// Export names of the WASI module. Keep in sync with
// internal/wasmexport and wasm/wasi.
const (
	expInitialize = "_initialize"
	expIn         = "agentrt_in"
	expOut        = "agentrt_out"
	expCreate     = "agentrt_create"
	expClose      = "agentrt_close"
	expBegin      = "agentrt_begin"
	expFeed       = "agentrt_feed"
	expNext       = "agentrt_next"
	expCancel     = "agentrt_cancel"
	expSession    = "agentrt_session"
	expDelete     = "agentrt_delete"
	expSessions   = "agentrt_sessions"
	expStats      = "agentrt_stats"
)

// Instance is one instance of the module: its own linear memory, its own
// sessions. A new Instance is a cold start. It is safe for concurrent
// use: calls into the module are serialised.
type Instance struct {
	mu    sync.Mutex
	mod   api.Module
	mem   api.Memory
	fn    map[string]api.Function
	stack [3]uint64
	dead  bool
}

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
	in := &Instance{mod: mod, mem: mod.Memory(), fn: map[string]api.Function{}}
	for _, name := range requiredExports {
		in.fn[name] = mod.ExportedFunction(name)
	}
	return in, nil
}

// Close closes the instance: its runtimes and sessions are gone.
func (in *Instance) Close(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.dead = true
	return in.mod.Close(ctx)
}

// call calls export name with up to three arguments and returns its
// result as an int32 (0 for exports with none). The caller holds mu.
func (in *Instance) call(name string, args ...uint64) (int32, error) {
	if in.dead {
		return 0, ErrDead
	}
	in.stack = [3]uint64{}
	copy(in.stack[:], args)
	if err := in.fn[name].CallWithStack(context.Background(), in.stack[:]); err != nil {
		in.dead = true
		in.mod.Close(context.Background())
		return 0, fmt.Errorf("%w: %s: %v", ErrDead, name, err)
	}
	return int32(uint32(in.stack[0])), nil
}

// write copies frame into the module's input buffer. The caller holds mu.
func (in *Instance) write(frame []byte) error {
	p, err := in.call(expIn, uint64(len(frame)))
	if err != nil {
		return err
	}
	if !in.mem.Write(uint32(p), frame) {
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
	b, ok := in.mem.Read(uint32(p), uint32(n))
	if !ok {
		in.dead = true
		return nil, fmt.Errorf("%w: the output frame is outside memory", ErrDead)
	}
	return append([]byte(nil), b...), nil
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
	frame := wire.AppendConfig(nil, &c)
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
