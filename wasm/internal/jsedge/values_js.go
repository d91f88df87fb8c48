//go:build js && wasm

package jsedge

import (
	"syscall/js"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/internal/jsutil"
	"github.com/agentrt/agentrt/wire"
)

// refs are the JavaScript globals and interned strings the edge uses,
// looked up on first use (see jsRefs), not at start-up: a module that is
// loaded and not yet called pays nothing for them.
type refs struct {
	promise, json, string, reflectGet, freeze, arrayOf js.Value
	// interned: see internedNames.
	interned map[string]js.Value
}

var (
	refsMade bool
	theRefs  refs
)

// jsRefs returns the edge's refs, made on the first call. It is not
// inlined: it has many callers, and the module's size counts.
//
// The module runs one goroutine at a time, so a plain flag does what a
// sync.Once would: should a garbage-collection assist park the first
// caller while makeRefs allocates, a second caller makes the same refs
// again, which is harmless. The edge's other values made on first use,
// which pair two values, are made under their own locks. The package's
// six sync.Once and two atomics cost the module about 1.5 KB of gzip.
//
//go:noinline
func jsRefs() *refs {
	if !refsMade {
		makeRefs()
		refsMade = true
	}
	return &theRefs
}

// makeRefs looks the refs up, once.
func makeRefs() {
	g := js.Global()
	theRefs = refs{
		promise:    g.Get(GlobalPromise),
		json:       g.Get(GlobalJSON),
		string:     g.Get(GlobalString),
		reflectGet: g.Get(GlobalReflect).Get(MethodGet),
		freeze:     jsutil.Object.Get(MethodFreeze),
		arrayOf:    jsutil.Array.Get(MethodOf),
		interned:   make(map[string]js.Value, len(internedNames)+len(hostmsgNames)),
	}
	for _, s := range internedNames {
		theRefs.interned[s] = js.ValueOf(s)
	}
	for _, s := range hostmsgNames {
		if theRefs.interned[s].IsUndefined() {
			theRefs.interned[s] = js.ValueOf(s)
		}
	}
}

// get reads v[key] through a call of Reflect.get, so that a throwing
// getter or Proxy trap becomes a Go panic that the caller recovers from
// (see catch), not an exception unwinding through the Go runtime, as a
// plain Value.Get would. The field names the edge reads are passed as
// JavaScript strings made once (see interned).
func get(v js.Value, key any) js.Value {
	r := jsRefs()
	if s, ok := key.(string); ok {
		if k := r.interned[s]; !k.IsUndefined() {
			key = k
		}
	}
	return r.reflectGet.Invoke(v, key)
}

// internedNames are made JavaScript strings once (refs.interned): the
// field names get reads and the constant values the edge sets (roles,
// seed modes, the run status). Passing a Go string instead makes a new
// JavaScript string on every call, and every js.Value made costs a Go
// finalizer, whose registration dominated the profile of a warm turn.
// The map is read-only once made.
var internedNames = [...]string{
	FieldRole, FieldContent, FieldToolCallID, FieldToolCallIDCamel, FieldToolCalls,
	FieldToolCallsCamel, FieldID, FieldName, FieldArguments, FieldLength, MethodThen,
	FieldMessage, FieldGC, FieldRunID, FieldOnEvent, FieldInspect, FieldCall,
	FieldDescription, FieldParameters, FieldApprovals, FieldIfHead,
	string(core.RoleUser), string(core.RoleAssistant), string(core.RoleTool), string(core.RoleSystem),
	string(core.SeedNone), string(core.SeedCold), string(core.SeedNoop), string(core.SeedAppended),
	string(core.SeedReplaced), statusCompleted,
}

// statusCompleted is the status of a completed run's Result.
const statusCompleted = "completed"

// setString sets o[name] to s: one call at each field instead of a
// conversion to any and a call.
//
//go:noinline
func setString(o js.Value, name, s string) { o.Set(name, s) }

// setValue sets o[name] to v: one call at each field instead of a
// conversion of v to any (a copy of it on the heap) and a call.
//
//go:noinline
func setValue(o js.Value, name string, v js.Value) { o.Set(name, v) }

// str returns s as a value for Value.Set: its interned JavaScript string
// when there is one, s itself otherwise. It is not inlined, to keep
// the map lookup in one place.
//
//go:noinline
func str(s string) any {
	if v := jsRefs().interned[s]; !v.IsUndefined() {
		return v
	}
	return s
}

// length reads v.length with get: a non-negative integer, or 0.
func length(v js.Value) int {
	n := get(v, FieldLength)
	if n.Type() != js.TypeNumber {
		return 0
	}
	if f := n.Float(); f > 0 && f <= maxSafeInteger {
		return int(f)
	}
	return 0
}

// catch, deferred by a converter with a named error result, turns a panic
// (a throwing getter, a Proxy trap) into an *core.Error with code, naming
// the message at *index when index is not nil.
func catch(err *error, code core.Code, index *int) {
	if p := recover(); p != nil {
		i := core.NoIndex
		if index != nil {
			i = *index
		}
		*err = core.NewIndexError(code, i, "reading the value threw: "+panicText(p))
	}
}

// ErrNotJS is nil on GOOS=js: the edge is available.
var ErrNotJS error

// Go to JavaScript, as this package converts it:
//
//	| Go                 | JavaScript                                          |
//	| ------------------ | --------------------------------------------------- |
//	| core.Message       | { role, content, tool_call_id?, tool_calls?, id? }  |
//	| core.ToolCall      | { id, name, arguments }  (arguments: JSON text)     |
//	| core.SeedReport    | { mode, seeded, skippedSystem, repairs? }           |
//	| core.Repair        | { kind, index, toolCallId? }                        |
//	| core.HistoryCheck  | { ok, problems: [{ code, index, message, repair }], |
//	|                    |   head? }  (repair: a kind, or null)                |
//	| core.ModelCall     | { step, messageCount, messages? }                   |
//	| *core.Result       | { runId, sessionId, status, reply, appended, seed,  |
//	|                    |   messageCount, modelCalls, pendingApprovals?,      |
//	|                    |   head? }  (head: on a run with ifHead)             |
//	| PendingApproval    | { toolCallId, name, arguments }                     |
//	| core.Event         | { type, runId, sessionId, seq, ... }  (see Event)   |
//	| error              | Error with code, message, index?, head?, missing?   |
//	|                    |   (see Error)                                       |
//	| core.Session       | { id, messageCount, messages, head }                |
//	| core.Stats         | { sessions, messages, bytes, activeRuns, evictions, |
//	|                    |   runsCompleted, runsFailed, runsCancelled }        |
//
// Optional fields are left out (undefined), never set to null or "".

//go:noinline
func newObject() js.Value { return jsutil.Object.New() }

// ToolCall returns c as { id, name, arguments }.
func ToolCall(c *core.ToolCall) js.Value {
	o := newObject()
	setString(o, FieldID, c.ID)
	setString(o, FieldName, c.Name)
	setString(o, FieldArguments, c.Arguments)
	return o
}

// Seed returns r as { mode, seeded, skippedSystem, repairs? }.
func Seed(r *core.SeedReport) js.Value {
	o := newObject()
	o.Set(FieldMode, str(string(r.Mode)))
	o.Set(FieldSeeded, r.Seeded)
	o.Set(FieldSkippedSystem, r.SkippedSystem)
	if len(r.Repairs) > 0 {
		setValue(o, FieldRepairs, repairs(r.Repairs))
	}
	return o
}

// Result returns r as a JavaScript Result (docs/contract.md), with
// modelCalls always present, each call's messages only when the run
// asked for inspection, pendingApprovals only when the run stopped
// for approvals (status "awaiting_approval"), and head (r.Head) only
// with head, for a run with ifHead: other runs compute none, as the
// glue's. A nil r is null. The reply
// and the appended messages are taken from (and added to) the session's
// cache, frozen: the next turn's model request reuses them.
func (c *Cache) Result(r *core.Result, head bool) js.Value {
	if r == nil {
		return js.Null()
	}
	o := newObject()
	setString(o, FieldRunID, r.RunID)
	setString(o, FieldSessionID, r.SessionID)
	o.Set(FieldStatus, str(r.Status))
	setValue(o, FieldReply, c.Message(r.SessionID, &r.Reply))
	setValue(o, FieldAppended, c.Add(r.SessionID, r.Appended))
	setValue(o, FieldSeed, Seed(&r.Seed))
	o.Set(FieldMessageCount, r.MessageCount)
	calls := make([]any, len(r.ModelCalls))
	for i := range r.ModelCalls {
		mc := &r.ModelCalls[i]
		co := newObject()
		co.Set(FieldStep, mc.Step)
		co.Set(FieldMessageCount, mc.MessageCount)
		if mc.Messages != nil {
			setValue(co, FieldMessages, c.Lookup(r.SessionID, mc.Messages))
		}
		calls[i] = co
	}
	setValue(o, FieldModelCalls, arrayOf(calls))
	if len(r.PendingApprovals) > 0 {
		setValue(o, FieldPendingApprovals, pendingApprovals(r.PendingApprovals))
	}
	if head {
		setString(o, FieldHead, r.Head())
	}
	return o
}

// pendingApprovals returns ps as [{ toolCallId, name, arguments }].
func pendingApprovals(ps []core.PendingApproval) js.Value {
	a := jsutil.Array.New()
	for i := range ps {
		p := &ps[i]
		v := newObject()
		setString(v, FieldCtxToolCallID, p.ToolCallID)
		setString(v, FieldName, p.Name)
		setString(v, FieldArguments, p.Arguments)
		a.SetIndex(i, v)
	}
	return a
}

// Event returns ev as { type, runId, sessionId, seq, ... } with the fields
// of its type:
//
//	session.seeded    seed
//	message.appended  message
//	model.delta       delta, step
//	tool.started      toolCall
//	tool.finished     toolCall, message (the result), error (if it failed)
//	run.completed     result
//	run.awaiting_approval  result (its status "awaiting_approval")
//	run.failed        error
//	run.cancelled     error
//
// Its messages (and the result's) are from the session's cache, frozen;
// its result has head with head (see Cache.Result).
func (c *Cache) Event(ev *core.Event, head bool) js.Value {
	o := newObject()
	setString(o, FieldType, string(ev.Type))
	setString(o, FieldRunID, ev.RunID)
	setString(o, FieldSessionID, ev.SessionID)
	o.Set(FieldSeq, ev.Seq)
	if ev.Seed != nil {
		setValue(o, FieldSeed, Seed(ev.Seed))
	}
	if ev.Type == core.EventModelDelta {
		setString(o, FieldDelta, ev.Delta)
		o.Set(FieldStep, ev.Step)
	}
	if ev.ToolCall != nil {
		setValue(o, FieldToolCall, ToolCall(ev.ToolCall))
	}
	if ev.Message != nil {
		setValue(o, FieldMessage, c.Message(ev.SessionID, ev.Message))
	}
	if ev.Result != nil {
		setValue(o, FieldResult, c.Result(ev.Result, head))
	}
	if ev.Err != nil {
		setValue(o, FieldError, Error(ev.Err))
	}
	return o
}

// Error returns err as a JavaScript Error whose message is the error's
// message, with code (core.ErrorCode: anything that is not a *core.Error
// is "internal"), index when one message is at fault, appended, the
// messages a failed run keeps in its session (core.Error.Appended), when
// there are any, and on history_diverged head, the conversation's head,
// and missing, the messages a caller that is only behind lacks (when it
// is). A nil err is undefined.
func Error(err error) js.Value {
	if err == nil {
		return js.Undefined()
	}
	e := core.AsError(err)
	o := jsutil.Error.New(e.Message)
	setString(o, FieldCode, string(e.Code))
	if e.Index >= 0 {
		o.Set(FieldIndex, e.Index)
	}
	if len(e.Appended) > 0 {
		setValue(o, FieldAppended, noCache.Lookup("", e.Appended))
	}
	if e.Head != "" {
		setString(o, FieldHead, e.Head)
	}
	if e.Missing != nil {
		setValue(o, FieldMissing, noCache.Lookup("", e.Missing))
	}
	return o
}

// noCache is a Cache of no session: its Lookup converts every message.
var noCache Cache

// Session returns s as { id, messageCount, messages, head }, its messages
// frozen, those the session's cache holds taken from it (see
// Cache.Lookup).
func (c *Cache) Session(s *core.Session) js.Value {
	o := newObject()
	setString(o, FieldID, s.ID)
	o.Set(FieldMessageCount, len(s.Messages))
	setValue(o, FieldMessages, c.Lookup(s.ID, s.Messages))
	setString(o, FieldHead, s.Head)
	return o
}

// Stats returns s as a plain object of counters, heapAlloc among them.
func Stats(s *wire.Stats) js.Value {
	o := newObject()
	o.Set(FieldSessions, s.Sessions)
	o.Set(FieldMessagesCount, s.Messages)
	o.Set(FieldBytes, float64(s.Bytes))
	o.Set(FieldActiveRuns, s.ActiveRuns)
	o.Set(FieldEvictions, s.Evictions)
	o.Set(FieldRunsCompleted, s.RunsCompleted)
	o.Set(FieldRunsFailed, s.RunsFailed)
	o.Set(FieldRunsCancelled, s.RunsCancelled)
	o.Set(FieldBudgetUsed, float64(s.BudgetUsed))
	o.Set(FieldBudgetBytes, float64(s.BudgetBytes))
	o.Set(FieldHeapAlloc, float64(s.HeapAlloc))
	return o
}

// Strings returns ss as a JavaScript array of strings.
func Strings(ss []string) js.Value {
	a := jsutil.Array.New(len(ss))
	for i, s := range ss {
		a.SetIndex(i, s)
	}
	return a
}

// WireValue converts an argument of a table operation to its value: a
// string to a text, undefined or null to null, and anything else to a
// value of no kind, which every argument refuses.
func WireValue(v js.Value) wire.Value {
	switch v.Type() {
	case js.TypeString:
		return wire.Text(v.String())
	case js.TypeUndefined, js.TypeNull:
		return wire.Value{}
	}
	return wire.Value{Kind: 0xff}
}

// FromWireValue converts an operation's answer to JavaScript: null, a
// boolean or a string.
func FromWireValue(v wire.Value) any {
	switch v.Kind {
	case wire.ValueFalse:
		return false
	case wire.ValueTrue:
		return true
	case wire.ValueText:
		return v.Text
	}
	return js.Null()
}
