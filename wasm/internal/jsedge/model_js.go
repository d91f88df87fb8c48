//go:build js && wasm

package jsedge

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/internal/onethread"
	"github.com/agentrt/agentrt/wasm/internal/jsutil"
)

// Request converts a model request to the object a JavaScript model
// function is called with:
//
//	{ runId, sessionId, system, messages, tools, step, delta(text) }
//
// messages in the session shape (see the table in values_js.go), frozen
// objects from cache shared with later requests of the session; tools
// as { name, description, parameters } with parameters parsed from its
// JSON text (undefined when the tool has none); system is
// the prompt as the JavaScript string the caller made once. delta(text)
// streams text through req.Delta until end is called: call end once the
// model has answered, and later calls are ignored, silently.
func Request(req *core.ModelRequest, system js.Value, cache *Cache) (r js.Value, end func()) {
	delta, end := deltaFor(req.Delta)
	r = newObject()
	setString(r, FieldRunID, req.RunID)
	r.Set(FieldSessionID, cache.SessionID(req.SessionID))
	setValue(r, FieldSystem, system)
	r.Set(FieldMessages, cache.View(req))
	setValue(r, FieldTools, toolSpecs(req.Tools))
	r.Set(FieldStep, req.Step)
	setValue(r, FieldDelta, delta)
	return r, end
}

// Invoke calls the function fn with args and returns what it returned,
// or what it threw as an error whose text describes the thrown value.
func Invoke(fn js.Value, args ...any) (js.Value, error) {
	return try(func() js.Value { return fn.Invoke(args...) })
}

// Reply converts what a model function answered (settled, see Await):
// { content, toolCalls? } (tool_calls accepted too, and winning when both
// are set), each call { id?, name, arguments } or OpenAI's { id, type:
// "function", function: { name, arguments } }, arguments read by the one
// rule of docs/contract.md (JSON text as it is, an object stringified,
// absent "{}", anything else refused); a bare string is taken as the
// content. Anything else is refused with model_error.
func Reply(v js.Value) (*core.ModelReply, error) { return reply(v) }

var noToolsArray js.Value

// noTools returns the frozen empty Array every request without tools
// shares, made on the first call.
func noTools() js.Value {
	if noToolsArray.IsUndefined() {
		a := jsutil.Array.New()
		freeze(a)
		noToolsArray = a
	}
	return noToolsArray
}

func toolSpecs(specs []core.ToolSpec) js.Value {
	if len(specs) == 0 {
		return noTools()
	}
	a := jsutil.Array.New(len(specs))
	for i := range specs {
		s := &specs[i]
		o := newObject()
		setString(o, FieldName, s.Name)
		setString(o, FieldDescription, s.Description)
		if s.Parameters != "" {
			if p, err := parse(s.Parameters); err == nil {
				setValue(o, FieldParameters, p)
			}
		}
		a.SetIndex(i, o)
	}
	return a
}

// parse returns JSON.parse(s), or an error if it throws.
func parse(s string) (js.Value, error) {
	return try(func() js.Value { return jsRefs().json.Call(MethodParse, s) })
}

// reply converts what a model function answered, by hostmsg.Reply's
// rules (tool-call arguments as in histories: absent is "{}").
func reply(v js.Value) (_ *core.ModelReply, err error) {
	defer catch(&err, core.CodeModelError, nil)
	return hostmsg.Reply(hostValue{v})
}

// deltas maps the number of each model call in progress to its
// ModelRequest.Delta. deltaFunc, bound to such a number, is the delta
// function a model request carries; it is made by the first model call.
var (
	deltasMu  onethread.Mutex
	deltaNext uint32
	deltas    map[uint32]func(string)
	deltaFunc js.Func
)

// callDelta is deltaFunc's Go side: deltaFunc(id, text).
func callDelta(_ js.Value, args []js.Value) any {
	id, t := jsutil.Arg(args, 0), jsutil.Arg(args, 1)
	if id.Type() != js.TypeNumber || t.Type() != js.TypeString {
		return nil
	}
	deltasMu.Lock()
	f := deltas[uint32(id.Int())]
	deltasMu.Unlock()
	if f != nil {
		f(t.String())
	}
	return nil
}

// deltaFor returns the delta function of one model call and the function
// that ends it: deltaFunc bound to a number of its own.
func deltaFor(f func(string)) (js.Value, func()) {
	deltasMu.Lock() // before the first use's making: see newPromise
	if deltas == nil {
		deltaFunc = jsutil.FuncOr(nil, callDelta)
		deltas = map[uint32]func(string){}
	}
	deltaNext++
	id := deltaNext
	deltas[id] = f
	deltasMu.Unlock()
	return deltaFunc.Call(MethodBind, js.Null(), id), func() {
		deltasMu.Lock()
		delete(deltas, id)
		deltasMu.Unlock()
	}
}
