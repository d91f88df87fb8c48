//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/internal/hostturn"
	"github.com/agentrt/agentrt/wasm/internal/jsedge"
)

// adapter answers the model and tool calls of the turns a Runtime
// object's run methods start. It drives no turn of its own: each turn is
// begun, fed and stepped through the typed calls of the runtime's
// hostturn.Driver, the driver the wire's exports call too, so handles,
// holds, cancels, timeouts and the count of live turns are kept in one
// place. Package jsedge converts the values. Each turn runs in the
// goroutine of the Promise its run method returned (jsedge.Async), which
// may block: while its session is busy (hostturn.Driver.Hold) and while
// a Promise of the model or a tool is pending (jsedge.Await, which
// yields to the event loop).
type adapter struct {
	x     *hostturn.Driver
	cache *jsedge.Cache
	// model is the JavaScript model function; when it is not a function,
	// x answers model calls in the module (the echo model).
	model js.Value
	// system is the runtime's system prompt as a JavaScript string, made
	// once.
	system js.Value
	// tools are the JavaScript tool objects by name.
	tools map[string]js.Value
}

// hostTool is the Call of the core.Tools of a runtime whose tools are
// JavaScript objects: the adapter calls them, core never does.
func hostTool(core.Context, core.ToolInvocation) (string, error) {
	return "", core.NewError(core.CodeToolError, "tools run in the driver")
}

// run runs req's turn to its end and returns its outcome; a refused run
// returns its *core.Error and changes nothing. Whatever the model and
// tools do, the turn ends in core: a throw or a rejection is fed as the
// call's failure, and a run stopped while a call is out (cancelled, timed
// out) abandons the call.
func (d *adapter) run(req core.RunRequest) (*core.Result, error) {
	x := d.x
	h, a, err := x.Start(req)
	if err != nil {
		return nil, err
	}
	ctx, r := x.Context(h), x.Run(h)
	for {
		switch a.Kind {
		case core.ActionModel:
			reply, err := d.complete(ctx, a.Request)
			if ctx.Err() != nil {
				a = x.Step(h, false) // stopped while the call was out
				continue
			}
			a = x.Model(h, reply, err)
		case core.ActionTool, core.ActionApproval:
			ask := a.Kind == core.ActionApproval
			v, err := d.call(ctx, r, a.Call, ask)
			if ctx.Err() != nil {
				a = x.Step(h, false) // stopped while the call or the question was out
				continue
			}
			if ask {
				a = x.Approval(h, v.Type() == js.TypeBoolean && v.Bool(), err)
				continue
			}
			out := ""
			if err == nil {
				out, err = jsedge.ToolOutput(v)
			}
			a = x.Tool(h, out, err)
		case core.ActionCount:
			// Only the wire's turns have a host that counts (the glue's
			// countTokens); a run method has none to ask.
			a = x.FailCount(h, core.NewError(core.CodeInvalidArgument, "a runtime whose host counts tokens runs its turns on the wire"))
		case core.ActionWait:
			x.Hold(h)
			a = x.Step(h, false)
		case core.ActionDone:
			return a.Result, nil
		default:
			return nil, a.Err
		}
	}
}

// complete makes one model call of the JavaScript function, whose answer
// may be a thenable.
func (d *adapter) complete(ctx core.Context, req *core.ModelRequest) (reply *core.ModelReply, err error) {
	defer func() {
		if recover() != nil {
			reply, err = nil, core.NewError(core.CodeModelError, "the model panicked")
		}
	}()
	r, end := jsedge.Request(req, d.system, d.cache)
	defer end()
	v, err := jsedge.Invoke(d.model, r)
	if err != nil {
		return nil, core.NewError(core.CodeModelError, "model threw: "+err.Error())
	}
	if v, err = jsedge.Await(ctx, v, core.CodeModelError); err != nil {
		if e, ok := err.(*core.Error); ok {
			e.Message = "model rejected: " + e.Message
		}
		return nil, err
	}
	return jsedge.Reply(v)
}

// call makes one tool call of run r, or, with ask, asks whether it
// needs approval (the approval action): the JavaScript tool's call
// method, or its needsApproval (see jsedge.NeedsApproval), whose answer
// may be a thenable and is returned settled. A throw or a rejection is a
// tool_error, its text prefixed "needsApproval " when asking, as the
// glue's (js/approve.js). Core refused the calls of tools it does not
// know or the policy does not allow.
func (d *adapter) call(ctx core.Context, r *core.Run, c *core.ToolCall, ask bool) (v js.Value, err error) {
	defer func() {
		if recover() != nil {
			v, err = js.Undefined(), core.NewError(core.CodeToolError, "the tool panicked")
		}
	}()
	obj := d.tools[c.Name] // tools are objects: undefined is none
	if obj.IsUndefined() {
		return v, core.NewError(core.CodeToolError, "no tool "+c.Name)
	}
	method, what := jsedge.FieldCall, ""
	if ask {
		method, what = jsedge.FieldNeedsApproval, jsedge.FieldNeedsApproval+" "
		if n := jsedge.NeedsApproval(obj); n.Type() != js.TypeFunction {
			return js.ValueOf(n.Type() == js.TypeBoolean && n.Bool()), nil
		}
	}
	args, callCtx, err := jsedge.ToolArgs(r, c)
	if err != nil {
		return v, err
	}
	v, err = jsedge.Method(obj, method, args, callCtx)
	if err != nil {
		return v, core.NewError(core.CodeToolError, what+"threw: "+err.Error())
	}
	if v, err = jsedge.Await(ctx, v, core.CodeToolError); err != nil {
		if e, ok := err.(*core.Error); ok {
			e.Message = what + "rejected: " + e.Message
		}
	} else if ask && v.Type() != js.TypeBoolean {
		err = core.NewError(core.CodeToolError, "needsApproval must answer a boolean")
	}
	return v, err
}
