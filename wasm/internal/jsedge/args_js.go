//go:build js && wasm

package jsedge

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
)

// maxSafeInteger is Number.MAX_SAFE_INTEGER: larger numbers are refused.
const maxSafeInteger = 1<<53 - 1

// argError is an invalid_argument error naming what is wrong.
func argError(msg string) error { return core.NewError(core.CodeInvalidArgument, msg) }

// String reads a required string argument; what names it in the error.
func String(v js.Value, what string) (string, error) {
	if v.Type() != js.TypeString {
		return "", argError(what + " must be a string")
	}
	return v.String(), nil
}

// object checks that v is a plain object, or null/undefined (ok, absent).
func object(v js.Value, what string) (present bool, err error) {
	switch v.Type() {
	case js.TypeUndefined, js.TypeNull:
		return false, nil
	case js.TypeObject:
		if isArray(v) {
			return false, argError(what + " must be an object, not an Array")
		}
		return true, nil
	}
	return false, argError(what + " must be an object")
}

// optStr reads o[name]: absent is "", otherwise a string. It is not
// inlined: it has many callers, and the module's size counts.
//
//go:noinline
func optStr(o js.Value, what, name string) (string, error) {
	v := get(o, name)
	switch v.Type() {
	case js.TypeUndefined, js.TypeNull:
		return "", nil
	case js.TypeString:
		return v.String(), nil
	}
	return "", argError(what + "." + name + " must be a string")
}

// Policy converts a JavaScript policy with hostmsg.Policy, the reader
// every edge shares: null or undefined is the zero (default) Policy; a
// field of the wrong type, another own key, or a value out of core's
// bounds is refused with invalid_argument naming the field. A getter
// that throws is refused the same way.
func Policy(v js.Value) (p core.Policy, err error) {
	defer catch(&err, core.CodeInvalidArgument, nil)
	return hostmsg.Policy(hostValue{v})
}

// PolicyJSON is the module's wire.PolicyReader: a begin frame's policy
// as JSON text (the glue sends a policy so) is read as this edge reads a
// policy, JSON.parse, then Policy.
func PolicyJSON(text string) (core.Policy, error) {
	if text == lastPolicy.text {
		return lastPolicy.p, nil
	}
	v, err := parse(text)
	if err != nil {
		return core.Policy{}, argError("policy is not valid JSON")
	}
	p, err := Policy(v)
	if err == nil {
		lastPolicy.text, lastPolicy.p = text, p
	}
	return p, err
}

// lastPolicy is the last policy PolicyJSON read, by its text: a host
// passes the same policy turn after turn, and reading it through
// syscall/js again would cost a warm turn about three times its time
// (some fifty calls into JavaScript; measured 82 µs against 24 µs). Its
// AllowedTools is shared by the turns that reuse it, which only read it.
// The module runs one goroutine at a time and PolicyJSON does not yield.
var lastPolicy struct {
	text string
	p    core.Policy
}

// Limits converts a JavaScript limits object with hostmsg.Limits, the
// reader every edge shares: null or undefined is the zero Limits (every
// limit its default); a field that is not an integer, another own key,
// or a value out of core's bounds is refused with invalid_argument.
func Limits(v js.Value) (l core.Limits, err error) {
	defer catch(&err, core.CodeInvalidArgument, nil)
	return hostmsg.Limits(hostValue{v})
}

// RunOptions are the options of one run call.
type RunOptions struct {
	// RunID names the run; empty means generated (an absent runId: an
	// empty string is refused, as a run named "" could not be cancelled
	// by its name).
	RunID string
	// OnEvent is the JavaScript event handler, or undefined.
	OnEvent js.Value
	// Inspect asks for each model call's messages in the result.
	Inspect bool
	// Approvals are the decisions on the tool calls the session awaits
	// (core.RunRequest.Approvals; docs/adr/0019-tool-approvals.md), nil
	// when absent.
	Approvals []core.Approval
	// IfHead is the run's precondition on the conversation's head
	// (core.RunRequest.IfHead; docs/adr/0025-conversation-heads.md), ""
	// when absent.
	IfHead string
}

// Options converts { runId?, onEvent?, inspect?, approvals?, ifHead? };
// null or undefined is no options. Wrong types, and an empty ifHead, are
// refused with invalid_argument.
func Options(v js.Value) (o RunOptions, err error) {
	defer catch(&err, core.CodeInvalidArgument, nil)
	o.OnEvent = js.Undefined()
	const what = "options"
	if ok, err := object(v, what); !ok {
		return o, err
	}
	if o.RunID, err = optName(v, FieldRunID); err != nil {
		return o, err
	}
	if o.IfHead, err = optName(v, FieldIfHead); err != nil {
		return o, err
	}
	switch f := get(v, FieldOnEvent); f.Type() {
	case js.TypeFunction:
		o.OnEvent = f
	case js.TypeUndefined, js.TypeNull:
	default:
		return o, argError("options.onEvent must be a function")
	}
	switch b := get(v, FieldInspect); b.Type() {
	case js.TypeBoolean:
		o.Inspect = b.Bool()
	case js.TypeUndefined, js.TypeNull:
	default:
		return o, argError("options.inspect must be a boolean")
	}
	if a := get(v, FieldApprovals); !nullish(a) {
		var msg string
		if o.Approvals, msg = hostmsg.ReadApprovals(hostValue{a}, "options.approvals", false); msg != "" {
			return o, argError(msg)
		}
	}
	return o, nil
}

// optName reads options[name], a name: absent (undefined or null) is "",
// otherwise a non-empty string. An empty runId is refused, as a run named
// "" could not be cancelled by its name; an empty ifHead, as core reads
// it as no precondition (core refuses any other string that is not a
// head).
func optName(v js.Value, name string) (string, error) {
	switch s := get(v, name); s.Type() {
	case js.TypeString:
		if s.String() != "" {
			return s.String(), nil
		}
		return "", argError("options." + name + " must not be empty")
	case js.TypeUndefined, js.TypeNull:
		return "", nil
	}
	return "", argError("options." + name + " must be a string")
}

// Handler returns a core event handler that calls the JavaScript
// function f with cache.Event(ev, head) (head: the run has ifHead), or
// nil when f is not a function (so that no event is converted when
// nobody listens). A handler that throws is ignored (the run goes on).
func Handler(f js.Value, cache *Cache, head bool) func(core.Event) {
	if f.Type() != js.TypeFunction {
		return nil
	}
	return func(ev core.Event) {
		defer func() { _ = recover() }()
		f.Invoke(cache.Event(&ev, head))
	}
}

// Config converts a JavaScript runtime config:
//
//	{ systemPrompt?: string,
//	  model?: "echo" | function(request) -> reply | Promise<reply>,
//	  tools?: [{ name, description?, parameters?, call(args, ctx) }],
//	  limits?: { ... },
//	  countByAction?: true }
//
// null or undefined is the zero Config (the Echo model). An omitted,
// null or "echo" model leaves cfg.Model nil and model undefined; a
// function is returned as model, for the caller to call (see Request and
// Reply). Each tool's spec is in cfg.Tools (see Tool), its object in
// tools at the same index; cfg.Tools' Call functions are left for the
// caller to set. Wrong types are refused with invalid_argument naming the
// field.
func Config(v js.Value) (cfg core.Config, model js.Value, tools []js.Value, err error) {
	defer catch(&err, core.CodeInvalidArgument, nil)
	cfg.AfterFunc = AfterFunc
	if model, tools, err = config(v, &cfg, false); err != nil {
		model, tools = js.Undefined(), nil
	}
	return
}

// ConfigJSON reads the JSON text of a config frame (wire.ConfigVersionJSON,
// the frame the glue passes to agentrt_create) as Config reads a config:
// JSON.parse, then the same reader, so that a config has one reader and
// one set of error texts in the module. The text is Config's object with
// what JSON carries: a model of "echo" or "host" (the host answers model
// calls; host is true), and tools with no call (the module hands each
// call to the host). cfg.Tools' Call functions are left for the caller.
func ConfigJSON(text string) (cfg core.Config, host bool, err error) {
	defer catch(&err, core.CodeInvalidArgument, nil)
	cfg.AfterFunc = AfterFunc
	v, err := parse(text)
	if err != nil {
		return cfg, false, argError("config is not valid JSON")
	}
	model, _, err := config(v, &cfg, true)
	return cfg, model.Type() == js.TypeString, err
}

// config is Config's reading of v into cfg, with one exit for the large
// Config (each return of it by value is a copy of every field in the
// module's code). For a config frame's JSON text (text), a model may be
// "host", returned as the string, and a tool has no call.
func config(v js.Value, cfg *core.Config, text bool) (model js.Value, tools []js.Value, err error) {
	const what = "config"
	if ok, err := object(v, what); !ok {
		return model, nil, err
	}
	if cfg.SystemPrompt, err = optStr(v, what, FieldSystemPrompt); err != nil {
		return model, nil, err
	}
	switch m := get(v, FieldModel); m.Type() {
	case js.TypeUndefined, js.TypeNull:
	case js.TypeString:
		if text && m.String() == ModelHost {
			model = m
		} else if m.String() != ModelEcho {
			return model, nil, argError("config.model must be \"echo\" or a function")
		}
	case js.TypeFunction:
		model = m
	default:
		return model, nil, argError("config.model must be \"echo\" or a function")
	}
	if cfg.Limits, err = Limits(get(v, FieldLimits)); err != nil {
		return model, nil, err
	}
	cfg.CountByAction = get(v, FieldCountByAction).Equal(js.ValueOf(true))
	list := get(v, FieldTools)
	if nullish(list) {
		return model, nil, nil
	}
	if !isArray(list) {
		return model, nil, argError("config.tools must be an Array")
	}
	cfg.Tools = make([]core.Tool, length(list))
	tools = make([]js.Value, len(cfg.Tools))
	for i := range cfg.Tools {
		tools[i] = get(list, i)
		what := "config.tools[" + itoa(i) + "]"
		if err = Tool(tools[i], what, &cfg.Tools[i]); err != nil {
			return model, nil, err
		}
		if !text && get(tools[i], FieldCall).Type() != js.TypeFunction {
			return model, nil, argError(what + ".call must be a function")
		}
	}
	return model, tools, nil
}

// StatsGC reads the options of stats(): whether options.gc is true (a
// garbage collection before the heap is read). Anything else, or a
// throwing getter, is false.
func StatsGC(v js.Value) (gc bool) {
	defer func() {
		if recover() != nil {
			gc = false
		}
	}()
	if v.Type() != js.TypeObject {
		return false
	}
	b := get(v, FieldGC)
	return b.Type() == js.TypeBoolean && b.Bool()
}
