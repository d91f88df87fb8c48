//go:build js && wasm

package jsedge

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/jsutil"
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

// Policy and limits fields: an object with another own key is refused,
// so that a misspelt field (timeoutMS) is an error, not a default. The
// glue (js/request.js) and httpapi refuse the same keys. Policy and
// Limits also read the fields by walking these tables, so their order
// is the one those functions assign them in.
var (
	policyFields = [...]string{FieldSeedMode, FieldOnBusy, FieldToolErrors, FieldMaxSteps,
		FieldMaxContextMessages, FieldMaxContextBytes, FieldTimeoutMs, FieldAllowedTools, FieldRepair}
	limitsFields = [...]string{FieldMaxSessions, FieldMaxMessagesPerSession, FieldMaxSessionBytes,
		FieldMaxSeedMessages, FieldMaxSeedBytes, FieldMaxMessageBytes, FieldMaxTotalBytes}
)

// object checks that v is a plain object, or null/undefined (ok, absent).
// With known names, it also refuses an own enumerable key of v
// (Object.keys) that is not one of them, naming it. The walk is here,
// not in a function of its own, because a function more costs the
// module more than its code (wasm/runtime/size_test.go).
func object(v js.Value, what string, known []string) (present bool, err error) {
	switch v.Type() {
	case js.TypeUndefined, js.TypeNull:
		return false, nil
	case js.TypeObject:
		if isArray(v) {
			return false, argError(what + " must be an object, not an Array")
		}
		if known == nil {
			return true, nil
		}
		keys := jsutil.Object.Call(MethodKeys, v)
	next:
		for i, n := 0, length(keys); i < n; i++ {
			k := get(keys, i).String()
			for _, name := range known {
				if k == name {
					continue next
				}
			}
			return false, argError("unknown " + what + " field \"" + k + "\"")
		}
		return true, nil
	}
	return false, argError(what + " must be an object")
}

// optInt reads o[name]: absent (null or undefined) is 0; otherwise a
// non-negative integer up to Number.MAX_SAFE_INTEGER.
func optInt(o js.Value, what, name string) (int64, error) {
	v := get(o, name)
	switch v.Type() {
	case js.TypeUndefined, js.TypeNull:
		return 0, nil
	case js.TypeNumber:
		f := v.Float()
		if f >= 0 && f <= maxSafeInteger && f == float64(int64(f)) {
			return int64(f), nil
		}
	}
	return 0, argError(what + "." + name + " must be a non-negative integer")
}

// optStr reads o[name]: absent is "", otherwise a string.
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

// Policy converts a JavaScript policy. null or undefined is the zero
// (default) Policy.
//
//	| field              | accepted                          | Go                 |
//	| ------------------ | --------------------------------- | ------------------ |
//	| seedMode           | string (core checks the value)    | SeedMode           |
//	| onBusy             | string (core checks the value)    | OnBusy             |
//	| toolErrors         | string (core checks the value)    | ToolErrors         |
//	| maxSteps           | non-negative integer              | MaxSteps           |
//	| maxContextMessages | non-negative integer              | MaxContextMessages |
//	| maxContextBytes    | non-negative integer              | MaxContextBytes    |
//	| timeoutMs          | non-negative integer              | Timeout            |
//	| allowedTools       | Array of strings (null: all tools)| AllowedTools       |
//	| repair             | boolean                           | Repair             |
//
// Absent fields (null or undefined) keep their defaults. Anything else,
// and any other own key, is refused with invalid_argument naming the
// field; the bounds of the values are core.Policy.Validate's.
func Policy(v js.Value) (p core.Policy, err error) {
	defer catch(&err, core.CodeInvalidArgument, nil)
	const what = "policy"
	if ok, err := object(v, what, policyFields[:]); !ok {
		return p, err
	}
	// policyFields: three strings, four integers, then the others. The
	// bounds of the integers (timeoutMs at most core.MaxTimeoutMs, ...)
	// are core's: core.Policy.Validate answers for every edge.
	var s [3]string
	for i := range s {
		if s[i], err = optStr(v, what, policyFields[i]); err != nil {
			return p, err
		}
	}
	var n [4]int64
	for i := range n {
		if n[i], err = optInt(v, what, policyFields[len(s)+i]); err != nil {
			return p, err
		}
	}
	p = core.Policy{SeedMode: core.SeedMode(s[0]), OnBusy: core.BusyMode(s[1]), ToolErrors: core.ToolErrorMode(s[2]),
		MaxSteps: int(n[0]), MaxContextMessages: int(n[1]), MaxContextBytes: n[2], TimeoutMs: n[3]}
	switch r := get(v, FieldRepair); r.Type() {
	case js.TypeUndefined, js.TypeNull:
	case js.TypeBoolean:
		p.Repair = r.Bool()
	default:
		return p, argError("policy.repair must be a boolean")
	}
	tools := get(v, FieldAllowedTools)
	if !nullish(tools) {
		if !isArray(tools) {
			return p, argError("policy.allowedTools must be an Array of strings")
		}
		p.AllowedTools = make([]string, length(tools))
		for i := range p.AllowedTools {
			t := get(tools, i)
			if t.Type() != js.TypeString {
				return p, argError("policy.allowedTools[" + itoa(i) + "] must be a string")
			}
			p.AllowedTools[i] = t.String()
		}
	}
	return p, nil
}

// Limits converts a JavaScript limits object (maxSessions,
// maxMessagesPerSession, maxSessionBytes, maxSeedMessages, maxSeedBytes,
// maxMessageBytes, maxTotalBytes: non-negative integers; absent or 0 means
// the default).
// null or undefined is the zero Limits. Anything else, and any other own
// key, is refused with invalid_argument naming the field; the bounds of
// the values are core.Limits.Validate's.
func Limits(v js.Value) (l core.Limits, err error) {
	defer catch(&err, core.CodeInvalidArgument, nil)
	const what = "limits"
	if ok, err := object(v, what, limitsFields[:]); !ok {
		return l, err
	}
	var n [len(limitsFields)]int64
	for i := range n {
		if n[i], err = optInt(v, what, limitsFields[i]); err != nil {
			return l, err
		}
	}
	return core.Limits{MaxSessions: int(n[0]), MaxMessagesPerSession: int(n[1]), MaxSessionBytes: n[2],
		MaxSeedMessages: int(n[3]), MaxSeedBytes: n[4], MaxMessageBytes: n[5], MaxTotalBytes: n[6]}, nil
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
}

// Options converts { runId?, onEvent?, inspect? }; null or undefined is
// no options. Wrong types are refused with invalid_argument.
func Options(v js.Value) (o RunOptions, err error) {
	defer catch(&err, core.CodeInvalidArgument, nil)
	o.OnEvent = js.Undefined()
	const what = "options"
	if ok, err := object(v, what, nil); !ok {
		return o, err
	}
	switch id := get(v, FieldRunID); id.Type() {
	case js.TypeString:
		if o.RunID = id.String(); o.RunID == "" {
			return o, argError("options.runId must not be empty")
		}
	case js.TypeUndefined, js.TypeNull:
	default:
		return o, argError("options.runId must be a string")
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
	return o, nil
}

// Handler returns a core event handler that calls the JavaScript
// function f with cache.Event(ev), or nil when f is not a function (so
// that no event is converted when nobody listens). A handler that throws
// is ignored (the run goes on). cache may be nil.
func Handler(f js.Value, cache *Cache) func(core.Event) {
	if f.Type() != js.TypeFunction {
		return nil
	}
	return func(ev core.Event) {
		defer func() { _ = recover() }()
		f.Invoke(cache.Event(&ev))
	}
}

// Config converts a JavaScript runtime config:
//
//	{ systemPrompt?: string,
//	  model?: "echo" | function(request) -> reply | Promise<reply>,
//	  tools?: [{ name, description?, parameters?, call(args, ctx) }],
//	  limits?: { ... } }
//
// null or undefined is the zero Config (the Echo model). An omitted,
// null or "echo" model leaves cfg.Model nil and model undefined; a
// function is returned as model, for the caller to call (see Request and
// Reply). Each tool's spec is in cfg.Tools (see ToolSpec), its object in
// tools at the same index; cfg.Tools' Call functions are left for the
// caller to set. Wrong types are refused with invalid_argument naming the
// field.
func Config(v js.Value) (cfg core.Config, model js.Value, tools []js.Value, err error) {
	defer catch(&err, core.CodeInvalidArgument, nil)
	cfg.AfterFunc = AfterFunc
	const what = "config"
	if ok, err := object(v, what, nil); !ok {
		return cfg, js.Undefined(), nil, err
	}
	if cfg.SystemPrompt, err = optStr(v, what, FieldSystemPrompt); err != nil {
		return cfg, js.Undefined(), nil, err
	}
	switch m := get(v, FieldModel); m.Type() {
	case js.TypeUndefined, js.TypeNull:
	case js.TypeString:
		if m.String() != ModelEcho {
			return cfg, js.Undefined(), nil, argError("config.model must be \"echo\" or a function")
		}
	case js.TypeFunction:
		model = m
	default:
		return cfg, js.Undefined(), nil, argError("config.model must be \"echo\" or a function")
	}
	if cfg.Limits, err = Limits(get(v, FieldLimits)); err != nil {
		return cfg, js.Undefined(), nil, err
	}
	list := get(v, FieldTools)
	if nullish(list) {
		return cfg, model, nil, nil
	}
	if !isArray(list) {
		return cfg, js.Undefined(), nil, argError("config.tools must be an Array")
	}
	cfg.Tools = make([]core.Tool, length(list))
	tools = make([]js.Value, len(cfg.Tools))
	for i := range cfg.Tools {
		tools[i] = get(list, i)
		if cfg.Tools[i].ToolSpec, err = ToolSpec(tools[i], "config.tools["+itoa(i)+"]"); err != nil {
			return cfg, js.Undefined(), nil, err
		}
	}
	return cfg, model, tools, nil
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
