//go:build js && wasm

// Command runtime is the agentrt WebAssembly module every JavaScript host
// loads (GOOS=js GOARCH=wasm). On start it publishes one object at
// globalThis[AGENTRT_GLOBAL || "agentrt"]:
//
//	{ version, createRuntime(config) -> Runtime }
//
// and then waits for calls. See docs/contract.md and docs/module.md for
// the contract; package jsedge holds the conversions.
//
// Build it with `go run ./cmd/agentrt build` (or `make build`), which
// writes dist/agentrt.wasm and the wasm_exec.js that runs it.
package main

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/internal/hostturn"
	"github.com/agentrt/agentrt/wasm/internal/jsedge"
	"github.com/agentrt/agentrt/wasm/internal/jsutil"
	"github.com/agentrt/agentrt/wire"
)

func main() {
	name, ok := getenv(jsedge.EnvGlobal)
	if !ok || name == "" {
		name = jsedge.DefaultGlobal
	}
	api := jsutil.Object.New()
	api.Set(jsedge.ExportVersion, core.Version)
	api.Set(jsedge.ExportCreateRuntime, jsutil.FuncOr(js.Null(), createRuntime))
	js.Global().Set(name, api)
	select {}
}

// createRuntime(config) returns a Runtime object. Go cannot throw into
// JavaScript, so a refused config makes it return the Error (with code
// invalid_argument) instead; callers check `instanceof Error`.
func createRuntime(_ js.Value, args []js.Value) any {
	cfg, model, tools, err := jsedge.Config(jsutil.Arg(args, 0))
	if err != nil {
		return jsedge.Error(err)
	}
	d := &adapter{cache: jsedge.NewCache(), model: model}
	var native core.Model
	if model.Type() == js.TypeFunction {
		d.system = js.ValueOf(cfg.SystemPrompt)
	} else {
		native = core.Echo{}
	}
	if len(tools) > 0 {
		d.tools = make(map[string]js.Value, len(tools))
		for i := range cfg.Tools {
			cfg.Tools[i].Call = hostTool
			d.tools[cfg.Tools[i].Name] = tools[i]
		}
	}
	rt, err := core.New(cfg)
	if err != nil {
		return jsedge.Error(err)
	}
	d.x = hostturn.New(rt, native, jsedge.PolicyJSON)
	st := &runtimeState{rt: rt, cache: d.cache, drive: d}
	o := newRuntime(st)
	st.wire = registerDriver(o, d.x)
	return o
}

// runtimeState is what the methods of one Runtime object share: the core
// runtime, the cache of the JavaScript message objects its sessions were
// sent to the model as (see jsedge.Cache), the adapter of its run
// methods' turns, and its number on the wire.
type runtimeState struct {
	// The field of no size makes runtimeState not comparable: no equality
	// function is compiled into the module for it (nothing compares
	// runtime states). It is first, as a last field of no size would be padded.
	_     [0]func()
	rt    *core.Runtime
	cache *jsedge.Cache
	drive *adapter
	wire  int32
	// closed: close was called; the number on the wire goes once
	// no turn is left.
	closed bool
}

// prune drops the cached messages of sessions the store no longer holds
// (evicted, or removed by a failed first turn). It lists the sessions
// only when the cache holds more sessions than the store.
func (st *runtimeState) prune() {
	if st.cache.Sessions() <= st.rt.Stats().Sessions {
		return
	}
	live := map[string]bool{}
	for _, id := range st.rt.ListSessions() {
		live[id] = true
	}
	st.cache.Prune(func(id string) bool { return live[id] })
}

// Argument layouts of the four ADR entry points: where the policy, the
// history and the options are (-1: absent).
type layout struct{ policy, history, options int }

var (
	layoutRun                  = layout{-1, -1, 2}
	layoutRunWithPolicy        = layout{2, -1, 3}
	layoutRunWithHistory       = layout{-1, 2, 3}
	layoutRunWithPolicyHistory = layout{2, 3, 4}
)

// newRuntime returns the JavaScript Runtime object over st.rt. It is an
// adapter: every control method converts its arguments and calls the
// typed handler of hostturn.Driver that the wire's export of the same
// operation calls (docs/adr/0024-one-definition-per-operation.md), and
// converts its answer. Every method recovers from panics; the run
// methods answer through Promises.
func newRuntime(st *runtimeState) js.Value {
	x := st.drive.x
	o := jsutil.Object.New()
	null := js.Null()
	setStart(o, st, jsedge.MethodStartRun, layoutRun)
	setStart(o, st, jsedge.MethodStartRunWithPolicy, layoutRunWithPolicy)
	setStart(o, st, jsedge.MethodStartRunWithHistory, layoutRunWithHistory)
	setStart(o, st, jsedge.MethodStartRunWithPolicyAndHistory, layoutRunWithPolicyHistory)
	for i := range hostturn.Ops {
		setOp(o, st, &hostturn.Ops[i])
	}
	setMethod(o, jsedge.MethodGetSession, null, func(_ js.Value, args []js.Value) any {
		id := jsutil.Arg(args, 0)
		if id.Type() != js.TypeString {
			return js.Null()
		}
		s, ok := x.Snapshot(id.String())
		if !ok {
			return js.Null()
		}
		return st.cache.Session(&s)
	})
	setMethod(o, jsedge.MethodListSessions, null, func(js.Value, []js.Value) any {
		return jsedge.Strings(x.SessionIDs())
	})
	// stats(options?): the counters and heapAlloc of Counters; with
	// options.gc === true garbage is collected first.
	setMethod(o, jsedge.MethodStats, null, func(_ js.Value, args []js.Value) any {
		s := x.Counters(jsedge.StatsGC(jsutil.Arg(args, 0)))
		return jsedge.Stats(&s)
	})
	// checkHistory(history): history read as the run entry points read
	// it (an Array of host messages in any shape, or a packed
	// Uint8Array), and what seeding it would meet, running nothing. A
	// message of the wrong shape is the answer's one problem; anything
	// but an Array or a Uint8Array is not a history, and the call returns
	// (does not throw) the Error, invalid_argument.
	o.Set(jsedge.MethodCheckHistory, jsutil.Func("agentrt: checkHistory failed", func(_ js.Value, args []js.Value) any {
		h, err := jsedge.History(jsutil.Arg(args, 0), st.rt.Limits().MaxSeedMessages, nil, nil)
		var c core.HistoryCheck
		switch {
		case err != nil && core.ErrorCode(err) == core.CodeInvalidArgument:
			return jsedge.Error(err)
		case err != nil:
			c = core.UnreadableCheck(err)
		default:
			c = x.Check(h)
		}
		return jsedge.HistoryCheck(&c)
	}))
	setMethod(o, jsedge.MethodClose, nil, func(js.Value, []js.Value) any {
		st.closed = true
		unregisterDriver(st.wire)
		x.Close()
		st.cache.Reset()
		return nil
	})
	return o
}

// setOp sets o[op.Name] to the method of an operation of the table
// (hostturn.Ops): its arguments converted to values, the handler the
// wire's op export runs, its answer converted back. A refusal is
// returned as the Error, as createRuntime returns one (nothing throws).
func setOp(o js.Value, st *runtimeState, op *hostturn.Op) {
	setMethod(o, op.Name, js.Null(), func(_ js.Value, args []js.Value) any {
		// Arguments after the operation's are ignored, as JavaScript
		// functions ignore them.
		if len(args) > len(op.Args) {
			args = args[:len(op.Args)]
		}
		vals := make([]wire.Value, len(args))
		for i, a := range args {
			vals[i] = jsedge.WireValue(a)
		}
		if op.Changes && len(args) > 0 && args[0].Type() == js.TypeString {
			st.cache.Forget(args[0].String())
		}
		v, err := st.drive.x.Call(op, vals)
		if err != nil {
			return jsedge.Error(err)
		}
		return jsedge.FromWireValue(v)
	})
}

// setStart sets o[name] to the run method of layout l. It is not
// inlined: inlined at its four calls, it compiled its closure four times.
//
//go:noinline
func setStart(o js.Value, st *runtimeState, name string, l layout) {
	setMethod(o, name, js.Null(), func(_ js.Value, args []js.Value) any {
		return startRun(st, l, args)
	})
}

// setMethod sets o[name] to a function calling fn that returns onPanic
// if fn panics (see jsutil.FuncOr): one call at each method instead of
// three.
//
//go:noinline
func setMethod(o js.Value, name string, onPanic any, fn func(js.Value, []js.Value) any) {
	o.Set(name, jsutil.FuncOr(onPanic, fn))
}

// startRun converts the arguments at once (so that later changes to the
// caller's objects do not matter), starts the run, and returns a Promise
// of its Result. Every refusal rejects the Promise; nothing throws.
func startRun(st *runtimeState, l layout, args []js.Value) js.Value {
	// The history array's messages as passed, for a healed copy
	// (seed.repaired).
	var held []js.Value
	req, err := request(st, l, args, &held)
	if err != nil {
		return jsedge.Rejected(err)
	}
	return jsedge.Async(func() (js.Value, error) {
		// The turn runs in Async's goroutine: no goroutine of its own.
		res, err := st.drive.run(req)
		st.prune()
		if st.closed {
			unregisterDriver(st.wire)
		}
		if err != nil {
			return js.Undefined(), err
		}
		v := st.cache.Result(res, req.IfHead != "")
		if res.Seed.Repaired != nil && held != nil {
			jsedge.SetRepaired(v, held, res.Seed.Edits)
		}
		return v, nil
	})
}

// request converts a run method's arguments to its run request, and
// sets *held to the messages of a history Array when the policy asks for
// repair (see jsedge.History). An
// omitted input (undefined or null) is allowed with approvals: those of
// the options, or, without them, the decisions a UIMessage history's
// last message carries (docs/adr/0019-tool-approvals.md).
func request(st *runtimeState, l layout, args []js.Value, held *[]js.Value) (core.RunRequest, error) {
	var req core.RunRequest
	var err error
	if req.SessionID, err = jsedge.String(jsutil.Arg(args, 0), "sessionId"); err != nil {
		return req, err
	}
	in := jsutil.Arg(args, 1)
	omitted := in.IsUndefined() || in.IsNull()
	if !omitted {
		if req.Input, err = jsedge.String(in, "input"); err != nil {
			return req, err
		}
	}
	if l.policy >= 0 {
		if req.Policy, err = jsedge.Policy(jsutil.Arg(args, l.policy)); err != nil {
			return req, err
		}
	}
	opts, err := jsedge.Options(jsutil.Arg(args, l.options))
	if err != nil {
		return req, err
	}
	req.RunID, req.Inspect, req.Approvals, req.IfHead = opts.RunID, opts.Inspect, opts.Approvals, opts.IfHead
	req.OnEvent = jsedge.Handler(opts.OnEvent, st.cache, req.IfHead != "")
	if l.history >= 0 {
		req.WithHistory = true
		var decided *[]core.Approval // the history's decisions
		if omitted && req.Approvals == nil {
			decided = &req.Approvals
		}
		if !req.Policy.Repair {
			held = nil
		}
		if req.History, err = jsedge.History(jsutil.Arg(args, l.history), st.rt.Limits().MaxSeedMessages, decided, held); err != nil {
			return req, err
		}
	}
	if omitted && req.Approvals == nil {
		_, err = jsedge.String(in, "input")
	}
	return req, err
}
