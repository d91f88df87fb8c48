//go:build js && wasm

package jsedge

import (
	"sync"
	"syscall/js"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/internal/jsutil"
)

// Model is a core.Model backed by a JavaScript function. Create it with
// NewModel.
type Model struct {
	fn    js.Value
	cache *Cache

	// system is the latest system prompt sent, and systemJS the same as
	// a JavaScript string, made once rather than on every call.
	mu       sync.Mutex
	system   string
	systemJS js.Value
	hasJS    bool
}

// systemValue returns s as a JavaScript string, made once per prompt.
func (m *Model) systemValue(s string) js.Value {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.hasJS || m.system != s {
		m.system, m.systemJS, m.hasJS = s, js.ValueOf(s), true
	}
	return m.systemJS
}

var _ core.ContextHonouring = (*Model)(nil)

// HonoursContext implements core.ContextHonouring: Complete calls the
// JavaScript function, which returns at once (a Promise for later
// answers), and waits for a Promise only until ctx is done, so the
// runtime calls it in the run's goroutine.
func (*Model) HonoursContext() {}

// NewModel returns a Model that calls fn(request) for each model call.
//
// request is { runId, sessionId, system, messages, tools, step,
// delta(text) }: messages in the session shape (see Message), tools as
// { name, description, parameters } with parameters parsed from its JSON
// text (undefined when the tool has none). delta(text) streams text as a
// model.delta event; calls after the model has answered are ignored.
//
// fn returns a reply or a Promise of one. A reply is { content,
// toolCalls? } (tool_calls accepted too, and winning when both are set),
// each call { id?, name, arguments } or OpenAI's { id, type: "function",
// function: { name, arguments } }, arguments read by the one rule of
// docs/contract.md (JSON text as it is, an object stringified, absent
// "{}", anything else refused); a bare string is taken as the content.
//
// # Notes
//
//   - A throw, a rejection or a malformed reply fails that run only, with
//     model_error.
//   - Complete waits for a Promise without blocking the event loop: it
//     parks its goroutine until a then/catch handler answers.
//   - delta is one long-lived js.Func bound to a number naming the model
//     call: a call after the model has answered finds no call of that
//     number and is ignored, silently.
//   - request.messages are frozen objects from cache (see Cache), shared
//     with later requests of the session; a nil cache converts them anew
//     on every call.
func NewModel(fn js.Value, cache *Cache) *Model { return &Model{fn: fn, cache: cache} }

// Complete implements core.Model.
func (m *Model) Complete(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	delta, forget := deltaFor(req.Delta)
	defer forget()

	msgs := m.cache.View(req.SessionID, req.Messages)
	r := newObject()
	r.Set(FieldRunID, req.RunID)
	r.Set(FieldSessionID, m.cache.SessionID(req.SessionID))
	r.Set(FieldSystem, m.systemValue(req.System))
	r.Set(FieldMessages, msgs)
	r.Set(FieldTools, toolSpecs(req.Tools))
	r.Set(FieldStep, req.Step)
	r.Set(FieldDelta, delta)

	v, err := try(func() js.Value { return m.fn.Invoke(r) })
	if err != nil {
		return nil, core.NewError(core.CodeModelError, "model threw: "+err.Error())
	}
	if v, err = Await(ctx, v, core.CodeModelError); err != nil {
		if e, ok := err.(*core.Error); ok {
			e.Message = "model rejected: " + e.Message
		}
		return nil, err
	}
	return reply(v)
}

// noTools is the frozen empty Array every request without tools shares.
var noTools = func() js.Value {
	a := jsutil.Array.New()
	freeze(a)
	return a
}()

func toolSpecs(specs []core.ToolSpec) js.Value {
	if len(specs) == 0 {
		return noTools
	}
	a := jsutil.Array.New(len(specs))
	for i := range specs {
		s := &specs[i]
		o := newObject()
		o.Set(FieldName, s.Name)
		o.Set(FieldDescription, s.Description)
		if s.Parameters != "" {
			if p, err := parse(s.Parameters); err == nil {
				o.Set(FieldParameters, p)
			}
		}
		a.SetIndex(i, o)
	}
	return a
}

// parse returns JSON.parse(s), or an error if it throws.
func parse(s string) (js.Value, error) {
	return try(func() js.Value { return jsJSON.Call(MethodParse, s) })
}

// reply converts what a model function answered, by hostmsg.Reply's
// rules (tool-call arguments as in histories: absent is "{}").
func reply(v js.Value) (_ *core.ModelReply, err error) {
	defer catch(&err, core.CodeModelError, nil)
	return hostmsg.Reply(hostValue{v})
}

// deltas maps the number of each model call in progress to its
// ModelRequest.Delta. deltaFunc, bound to such a number, is the delta
// function a model request carries.
var (
	deltasMu  sync.Mutex
	deltaNext int
	deltas    = map[int]func(string){}
	deltaFunc = jsutil.FuncOr(nil, func(_ js.Value, args []js.Value) any {
		id, t := jsutil.Arg(args, 0), jsutil.Arg(args, 1)
		if id.Type() != js.TypeNumber || t.Type() != js.TypeString {
			return nil
		}
		deltasMu.Lock()
		f := deltas[id.Int()]
		deltasMu.Unlock()
		if f != nil {
			f(t.String())
		}
		return nil
	})
)

// deltaFor returns the delta function of one model call and the function
// that ends it: deltaFunc bound to a number of its own.
func deltaFor(f func(string)) (js.Value, func()) {
	deltasMu.Lock()
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
