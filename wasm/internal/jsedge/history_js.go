//go:build js && wasm

package jsedge

import (
	"syscall/js"
	"unsafe"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/wasm/internal/jsutil"
	"github.com/agentrt/agentrt/wire"
)

// History converts a host history to core seed messages. v is either an
// Array of message objects or a Uint8Array in the packed format
// (docs/packed-history.md), decoded with one copy and no per-message
// JavaScript call.
//
// The messages of an Array are read by package hostmsg, in every shape
// docs/contract.md lists (the module's own, OpenAI chat messages, Vercel
// AI SDK UIMessages), through hostValue:
//
//	| JavaScript                    | hostmsg.Kind                 |
//	| ----------------------------- | ---------------------------- |
//	| undefined, null               | Undefined, Null              |
//	| boolean, number, string       | Bool, Number, String         |
//	| Array (Array.isArray)         | Array                        |
//	| any other object              | Object                       |
//	| function, symbol, bigint      | Other                        |
//
// An object's JSON text (tool-call arguments, a tool part's output) is
// JSON.stringify's. Each error names the message's index in v; a getter
// or Proxy trap that throws is refused with invalid_history at the
// message being read. An Array longer than maxMessages (zero: the
// default limit) is refused with limit_exceeded before any message is
// read. Anything but an Array or a Uint8Array is refused with
// invalid_argument.
//
// With approvals not nil, History also sets *approvals to the decisions
// the last message of an Array in the UIMessage shape carries (the tool
// parts in state approval-responded, read by hostmsg.Approvals), refusing a
// malformed one with invalid_history and the message's index: a run that
// omits its input and carries no approvals resumes with them. A packed
// history carries none.
//
// With held not nil, History also sets *held to the elements of an Array
// as it read them, for a healed copy of the history (SetRepaired); a
// packed history leaves it nil.
func History(v js.Value, maxMessages int, approvals *[]core.Approval, held *[]js.Value) (_ []core.SeedMessage, err error) {
	at := core.NoIndex
	defer catch(&err, core.CodeInvalidHistory, &at)
	if maxMessages <= 0 {
		maxMessages = core.DefaultLimits.MaxSeedMessages
	}
	if v.Type() == js.TypeObject && v.InstanceOf(jsutil.Uint8Array) {
		buf := jsutil.BytesFromJS(v)
		if len(buf) == 0 {
			return wire.DecodeHistoryBytes(buf, maxMessages)
		}
		// buf is this function's own copy and is never written again:
		// the decoded strings may share it without a second copy.
		return wire.DecodeHistory(unsafe.String(&buf[0], len(buf)), maxMessages)
	}
	if !isArray(v) {
		return nil, core.NewError(core.CodeInvalidArgument, "history must be an Array of messages or a packed Uint8Array")
	}
	n := length(v)
	if err := hostmsg.CheckCount(n, maxMessages); err != nil {
		return nil, err
	}
	out := make([]core.SeedMessage, 0, n)
	var elems []js.Value
	if held != nil {
		elems = make([]js.Value, n)
		*held = elems
	}
	for i := 0; i < n; i++ {
		at = i
		e := get(v, i)
		if elems != nil {
			elems[i] = e
		}
		var msg string
		if out, msg = hostmsg.Append(out, hostValue{e}); msg != "" {
			return nil, hostmsg.Refusal(i, msg)
		}
	}
	if approvals != nil && n > 0 {
		at = n - 1
		if *approvals, err = hostmsg.Approvals(hostValue{v}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func isArray(v js.Value) bool {
	return v.Type() == js.TypeObject && jsutil.Array.Call(MethodIsArray, v).Bool()
}

// hostValue is hostmsg.Value over a JavaScript value (see History).
type hostValue struct{ v js.Value }

var _ hostmsg.Value[hostValue] = hostValue{}

func (h hostValue) Kind() hostmsg.Kind {
	switch h.v.Type() {
	case js.TypeUndefined:
		return hostmsg.Undefined
	case js.TypeNull:
		return hostmsg.Null
	case js.TypeBoolean:
		return hostmsg.Bool
	case js.TypeNumber:
		return hostmsg.Number
	case js.TypeString:
		return hostmsg.String
	case js.TypeObject:
		if isArray(h.v) {
			return hostmsg.Array
		}
		return hostmsg.Object
	}
	return hostmsg.Other
}

func (h hostValue) Text() string { return h.v.String() }

func (h hostValue) Len() int { return length(h.v) }

func (h hostValue) Index(i int) hostValue { return hostValue{get(h.v, i)} }

func (h hostValue) Get(key string) hostValue { return hostValue{get(h.v, key)} }

func (h hostValue) Keys() []string {
	keys := jsutil.Object.Call(MethodKeys, h.v)
	out := make([]string, length(keys))
	for i := range out {
		out[i] = get(keys, i).String()
	}
	return out
}

func (h hostValue) Number() float64 { return h.v.Float() }

func (h hostValue) Bool() bool { return h.v.Bool() }

func (h hostValue) JSON() (string, bool) {
	s, err := stringify(h.v)
	return s, err == nil
}

// hostmsgNames are the field names hostmsg reads, made JavaScript
// strings once with internedNames (see refs).
var hostmsgNames = [...]string{
	hostmsg.FieldType, hostmsg.FieldFunction, hostmsg.FieldParts, hostmsg.FieldText,
	hostmsg.FieldRefusal, hostmsg.FieldToolName, hostmsg.FieldState, hostmsg.FieldInput,
	hostmsg.FieldOutput, hostmsg.FieldErrorText,
}

func nullish(v js.Value) bool {
	t := v.Type()
	return t == js.TypeUndefined || t == js.TypeNull
}

// stringify returns JSON.stringify(v), or an error if it throws or gives
// undefined.
func stringify(v js.Value) (string, error) {
	r, err := try(func() js.Value { return jsRefs().json.Call(MethodStringify, v) })
	if err != nil {
		return "", err
	}
	if r.Type() != js.TypeString {
		return "", textError("value has no JSON form")
	}
	return r.String(), nil
}
