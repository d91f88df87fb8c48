package wazero_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/jshost"
	"github.com/agentrt/agentrt/wire"
)

// The fuzzed runtimes run with small seed limits, so that limit_exceeded
// is reachable with a few kilobytes of input.
var fuzzLimits = core.Limits{MaxSeedMessages: 24, MaxMessageBytes: 2048, MaxSeedBytes: 8192}

func fuzzLimitsJS() map[string]any {
	return map[string]any{
		"maxSeedMessages": fuzzLimits.MaxSeedMessages,
		"maxMessageBytes": fuzzLimits.MaxMessageBytes,
		"maxSeedBytes":    fuzzLimits.MaxSeedBytes,
	}
}

const (
	fuzzSession = "fz"
	liveSession = "alive"
)

// fuzzEnv is the one instance every fuzz input runs on (an instance per
// input would be too slow), with two runtimes: the built-in echo model,
// and a model written in Go that records the messages it was sent (the
// path that converts session messages to JavaScript through the cache).
type fuzzEnv struct {
	in      *jshost.Instance
	echo    jshost.Value
	jsModel jshost.Value
	onEvent jshost.Func

	mu     sync.Mutex
	seen   []any // request.messages of the latest model call
	events []map[string]any
}

var fuzzShared struct {
	sync.Mutex
	env *fuzzEnv
}

// fuzzEnvironment returns the shared environment, starting it (again, if
// an earlier input killed it).
func fuzzEnvironment(t *testing.T) *fuzzEnv {
	t.Helper()
	if module == nil {
		if os.Getenv("CI") != "" {
			t.Fatal(skipReason)
		}
		t.Skip(skipReason)
	}
	if fuzzShared.env != nil {
		select {
		case <-fuzzShared.env.in.Done():
			fuzzShared.env.in.Close(context.Background())
			fuzzShared.env = nil
		default:
			return fuzzShared.env
		}
	}
	ctx := context.Background()
	in, err := jshost.NewInstance(ctx, module, jshost.Config{})
	if err != nil {
		t.Fatalf("NewInstance: %v", err)
	}
	env := &fuzzEnv{in: in}
	env.onEvent = func(_ jshost.Value, args []jshost.Value) (any, error) {
		ev, _ := jshost.Export(args[0]).(map[string]any)
		env.mu.Lock()
		env.events = append(env.events, ev)
		env.mu.Unlock()
		return nil, nil
	}
	model := jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		msgs, _ := jshost.Export(jshost.Get(args[0], "messages")).([]any)
		env.mu.Lock()
		env.seen = msgs
		env.mu.Unlock()
		return map[string]any{"content": "js model saw " + strconv.Itoa(len(msgs))}, nil
	})
	api := in.Global("agentrt")
	for _, c := range []struct {
		dst *jshost.Value
		cfg map[string]any
	}{
		{&env.echo, map[string]any{"limits": fuzzLimitsJS()}},
		{&env.jsModel, map[string]any{"limits": fuzzLimitsJS(), "model": model}},
	} {
		rt, err := in.Call(ctx, api, "createRuntime", c.cfg)
		if err != nil || in.Get(rt, "startRun") == jshost.Undefined {
			in.Close(ctx)
			t.Fatalf("createRuntime = %v, %v", in.Export(rt), err)
		}
		*c.dst = rt
	}
	fuzzShared.env = env
	return env
}

// fuzzReader hands out the fuzz bytes; past the end it gives zeros.
type fuzzReader struct {
	b []byte
	i int
}

func (r *fuzzReader) byte() byte {
	if r.i >= len(r.b) {
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *fuzzReader) intn(n int) int { return int(r.byte()) % n }

// junk returns a value of a type no field of a message accepts as it is,
// or null/undefined (which some fields accept as absent).
func junk(b byte) any {
	switch b % 12 {
	case 0:
		return float64(42)
	case 1:
		return true
	case 2:
		return false
	case 3:
		return nil // null
	case 4:
		return jshost.Undefined
	case 5:
		return []any{"user", 1.5}
	case 6:
		return map[string]any{"role": "user", "content": "nested"}
	case 7:
		return jshost.Func(func(jshost.Value, []jshost.Value) (any, error) { return "called", nil })
	case 8:
		return math.NaN()
	case 9:
		return []byte{1, 2, 3} // a Uint8Array
	case 10:
		o := jshost.NewObject() // a cycle: JSON.stringify throws
		o.Set("self", o)
		return o
	default:
		return math.Inf(-1)
	}
}

// text returns a string: empty, unicode, invalid UTF-8 (jshost strings
// are Go strings: a lone surrogate can only be its WTF-8 bytes), NUL,
// big (several exceed maxSeedBytes), over maxMessageBytes, or raw fuzz
// bytes.
func (r *fuzzReader) text() string {
	switch r.intn(10) {
	case 0:
		return ""
	case 1:
		return "hello"
	case 2:
		return "héllo wörld ✓ 日本語 \u202e"
	case 3:
		return "😀 emoji 𝄞 \"quoted\" \\ <tag>&amp;"
	case 4:
		return "\xed\xa0\x80 lone high surrogate, \xed\xb0\x80 lone low"
	case 5:
		return "\xff\xfe invalid utf-8 \xc3"
	case 6:
		return "nul \x00 byte"
	case 7:
		return strings.Repeat("x", 1500)
	case 8:
		return strings.Repeat("y", int(fuzzLimits.MaxMessageBytes)+1)
	default:
		n := r.intn(16)
		b := make([]byte, n)
		for i := range b {
			b[i] = r.byte()
		}
		return string(b)
	}
}

func (r *fuzzReader) role() any {
	b := r.byte()
	switch b % 20 {
	case 0:
		return "user"
	case 1:
		return "assistant"
	case 2:
		return "tool"
	case 3:
		return "system"
	case 4:
		return ""
	case 5:
		return "User"
	case 6:
		return "wizard"
	case 7:
		return absent{}
	}
	return junk(b%20 - 8)
}

// absent marks a field left out of its object.
type absent struct{}

func (r *fuzzReader) idValue() any {
	b := r.byte()
	switch b % 16 {
	case 0:
		return absent{}
	case 1:
		return "c1"
	case 2:
		return "c2"
	case 3:
		return ""
	case 4:
		return "zz"
	}
	return junk(b%16 - 5)
}

func (r *fuzzReader) arguments() any {
	b := r.byte()
	switch b % 20 {
	case 0:
		return `{"a":1}`
	case 1:
		return ""
	case 2:
		return "not json {"
	case 3:
		return map[string]any{"a": 1, "b": []any{true, nil, "x"}, "c": map[string]any{"d": "é"}}
	case 4:
		return []any{1, "x"}
	case 5:
		return absent{}
	case 6:
		return map[string]any{"big": strings.Repeat("z", 3000)}
	}
	return junk(b%20 - 7)
}

// toolCalls returns a tool_calls value: absent, empty, right, with a
// repeated id, with junk elements, or not an Array at all.
func (r *fuzzReader) toolCalls() any {
	b := r.byte()
	switch b % 8 {
	case 0:
		return absent{}
	case 1:
		return []any{}
	case 2:
		return []any{toolCall("c1", "f", r.arguments())}
	case 3:
		return []any{map[string]any{"id": "c1", "name": "f"}, map[string]any{"id": "c1", "name": "g"}}
	case 4:
		return []any{junk(r.byte()), toolCall(r.idValue(), r.idValue(), r.arguments())}
	case 5:
		return junk(b >> 3)
	case 6:
		return nil
	}
	return []any{toolCall("c2", "f", r.arguments())}
}

// toolCall returns { id, name, arguments }, leaving out absent fields.
func toolCall(id, name, args any) map[string]any {
	c := map[string]any{}
	put(c, "id", id)
	put(c, "name", name)
	put(c, "arguments", args)
	return c
}

// put sets m[k] = v unless v is absent.
func put(m map[string]any, k string, v any) {
	if _, ok := v.(absent); !ok {
		m[k] = v
	}
}

// genHistory builds a history from the fuzz bytes: well-formed messages,
// tool-call blocks with right, orphaned, duplicated or missing results,
// objects whose fields take any type, and elements that are not objects.
func (r *fuzzReader) genHistory(n int) []any {
	var out []any
	next := 0 // tool call ids are unique within the history unless a mutation says otherwise
	for len(out) < n {
		switch r.intn(10) {
		case 0:
			out = append(out, msg("user", r.text()))
		case 1:
			out = append(out, msg("assistant", r.text()))
		case 2:
			out = append(out, msg("system", r.text()))
		case 3:
			cfg := r.byte()
			k := 1 + int(cfg)%3
			a := map[string]any{"role": "assistant"}
			switch (cfg >> 4) % 4 {
			case 0:
				a["content"] = nil
			case 1:
			case 2:
				a["content"] = ""
			case 3:
				a["content"] = r.text()
			}
			var ids []any
			var calls []any
			for j := 0; j < k; j++ {
				c := r.byte()
				next++
				var id any = "call_" + strconv.Itoa(next)
				switch (c >> 4) % 4 {
				case 2:
					if j > 0 {
						id = ids[j-1] // used twice in one message
					}
				case 3:
					id = float64(next)
				}
				ids = append(ids, id)
				call := map[string]any{"id": id, "name": "f"}
				if c&8 != 0 {
					delete(call, "name")
				}
				put(call, "arguments", r.arguments())
				calls = append(calls, call)
			}
			if cfg&4 != 0 {
				a["toolCalls"] = calls
			} else {
				a["tool_calls"] = calls
			}
			out = append(out, a)
			field := "tool_call_id"
			if cfg&8 != 0 {
				field = "toolCallId"
			}
			for j := 0; j < k; j++ {
				var id any = ids[j]
				switch r.intn(8) {
				case 4:
					id = "orphan"
				case 5:
					if j > 0 {
						id = ids[j-1] // answered twice
					}
				case 6:
					continue // unanswered
				case 7:
					id = junk(r.byte())
				}
				out = append(out, map[string]any{"role": "tool", field: id, "content": r.text()})
			}
		case 4:
			m := map[string]any{}
			put(m, "role", r.role())
			switch b := r.byte(); b % 4 {
			case 0:
				m["content"] = r.text()
			case 1:
			default:
				m["content"] = junk(b >> 2)
			}
			put(m, "tool_call_id", r.idValue())
			put(m, "toolCallId", r.idValue())
			put(m, "id", r.idValue())
			if r.byte()%2 == 0 {
				put(m, "tool_calls", r.toolCalls())
			} else {
				put(m, "toolCalls", r.toolCalls())
			}
			out = append(out, m)
		case 5:
			out = append(out, junk(r.byte()))
		case 6:
			m := map[string]any{"role": "tool", "content": r.text()}
			put(m, "tool_call_id", r.idValue())
			out = append(out, m)
		case 7:
			m := msg("user", r.text())
			put(m, "id", r.idValue())
			out = append(out, m)
		case 8:
			out = append(out, r.uiMessage(&next))
		case 9:
			// OpenAI: content parts, the developer role, a function call.
			m := map[string]any{"role": []string{"user", "developer", "assistant"}[r.intn(3)]}
			m["content"] = r.parts("text", "image_url", "refusal")
			out = append(out, m)
		}
	}
	return out[:n]
}

// parts returns 0-3 parts of the given types (or junk), each a text part
// with fuzz text, another type, or a part of the wrong shape.
func (r *fuzzReader) parts(types ...string) []any {
	ps := []any{}
	for k := r.intn(4); k > 0; k-- {
		switch b := r.byte(); b % 6 {
		case 0, 1, 2:
			t := types[int(b>>3)%len(types)]
			p := map[string]any{"type": t}
			switch t {
			case "text", "reasoning":
				p["text"] = r.text()
			case "refusal":
				p["refusal"] = r.text()
			}
			ps = append(ps, p)
		case 3:
			ps = append(ps, map[string]any{"type": "text", "text": junk(b >> 3)})
		case 4:
			ps = append(ps, map[string]any{"type": junk(b >> 3)})
		default:
			ps = append(ps, junk(b>>3))
		}
	}
	return ps
}

// uiMessage returns a Vercel AI SDK UIMessage: text, skipped and tool
// parts in any order, tool parts in every state.
func (r *fuzzReader) uiMessage(next *int) map[string]any {
	role := []string{"user", "assistant", "assistant", "system"}[r.intn(4)]
	m := map[string]any{"role": role, "id": "ui-" + strconv.Itoa(*next)}
	if r.byte()%8 == 0 {
		m["parts"] = junk(r.byte())
		return m
	}
	parts := []any{}
	for k := r.intn(5); k > 0; k-- {
		switch b := r.byte(); b % 4 {
		case 0:
			parts = append(parts, r.parts("text", "step-start", "reasoning", "data-x", "hologram")...)
		default:
			*next++
			p := map[string]any{"type": "tool-f", "toolCallId": "ui_" + strconv.Itoa(*next)}
			if b&4 != 0 {
				p["type"], p["toolName"] = "dynamic-tool", "g"
			}
			put(p, "input", r.arguments())
			switch (b >> 3) % 5 {
			case 0, 1:
				p["state"] = "output-available"
				put(p, "output", []any{r.text(), absent{}, map[string]any{"k": 1.5}, junk(r.byte())}[r.intn(4)])
			case 2:
				p["state"] = "output-error"
				p["errorText"] = r.text()
			case 3:
				p["state"] = "input-available"
			default:
				p["state"] = junk(r.byte())
			}
			parts = append(parts, p)
		}
	}
	m["parts"] = parts
	return m
}

// --- the native model of the edge's decoding: the shared rules of
// core/hostmsg, read over the Go values the history is made from

func nullish(v any) bool {
	switch v.(type) {
	case nil, absent:
		return true
	}
	return v == jshost.Undefined
}

// fuzzValue is hostmsg.Value over a Go value as the fuzzer builds it,
// typed as the value it converts to in the instance. Objects' JSON text
// is the instance's JSON.stringify, as on the module's array path.
type fuzzValue struct {
	v   any
	ctx context.Context
	in  *jshost.Instance
}

var _ hostmsg.Value[fuzzValue] = fuzzValue{}

func (f fuzzValue) Kind() hostmsg.Kind {
	switch x := f.v.(type) {
	case absent:
		return hostmsg.Undefined
	case nil:
		return hostmsg.Null
	case bool:
		return hostmsg.Bool
	case float64, int:
		return hostmsg.Number
	case string:
		return hostmsg.String
	case []any:
		return hostmsg.Array
	case map[string]any, []byte, *jshost.Object:
		return hostmsg.Object
	default:
		if x == jshost.Undefined {
			return hostmsg.Undefined
		}
	}
	return hostmsg.Other
}

func (f fuzzValue) Text() string { s, _ := f.v.(string); return s }

func (f fuzzValue) Len() int { a, _ := f.v.([]any); return len(a) }

func (f fuzzValue) Index(i int) fuzzValue {
	a, _ := f.v.([]any)
	if i < 0 || i >= len(a) {
		return fuzzValue{absent{}, f.ctx, f.in}
	}
	return fuzzValue{a[i], f.ctx, f.in}
}

// Get reads a field of a map; other objects (Uint8Arrays, the cyclic
// object) have none of the fields a message has.
func (f fuzzValue) Get(key string) fuzzValue {
	m, _ := f.v.(map[string]any)
	v, ok := m[key]
	if !ok {
		v = absent{}
	}
	return fuzzValue{v, f.ctx, f.in}
}

// Keys lists a map's keys; a test of messages needs no order.
func (f fuzzValue) Keys() []string {
	m, _ := f.v.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

func (f fuzzValue) Number() float64 {
	switch x := f.v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	}
	return 0
}

func (f fuzzValue) Bool() bool { b, _ := f.v.(bool); return b }

func (f fuzzValue) JSON() (string, bool) {
	v, err := f.in.Invoke(f.ctx, f.in.Global("JSON", "stringify"), f.v)
	s, ok := v.(string)
	return s, err == nil && ok
}

// decodeNative decodes a history the way the edge should, by hostmsg's
// rules. It returns the index of the first message the edge cannot
// convert, or -1.
func decodeNative(ctx context.Context, in *jshost.Instance, elems []any) ([]core.SeedMessage, int) {
	out := make([]core.SeedMessage, 0, len(elems))
	for i, e := range elems {
		var msg string
		if out, msg = hostmsg.Append(out, fuzzValue{e, ctx, in}); msg != "" {
			return nil, i
		}
	}
	return out, -1
}

// refusal is an expected rejection: its code and index (-1: none).
type refusal struct {
	code  string
	index int
}

func codeOf(err error) refusal {
	e := core.AsError(err)
	return refusal{string(e.Code), e.Index}
}

// toSession converts getSession().messages, exported, to core messages.
func toSession(t *testing.T, v any) []core.Message {
	t.Helper()
	list, ok := v.([]any)
	if !ok && v != nil {
		t.Fatalf("messages = %T, want an Array", v)
	}
	out := make([]core.Message, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			t.Fatalf("message %d = %v, want an object", i, e)
		}
		s := func(k string) string {
			x, ok := m[k]
			if !ok {
				return ""
			}
			str, ok := x.(string)
			if !ok || str == "" {
				t.Fatalf("message %d: %s = %#v, want a non-empty string or no field", i, k, x)
			}
			return str
		}
		out[i] = core.Message{Role: core.Role(s("role")), ID: s("id"), ToolCallID: s("tool_call_id")}
		c, ok := m["content"].(string)
		if !ok {
			t.Fatalf("message %d: content = %#v, want a string", i, m["content"])
		}
		out[i].Content = c
		if calls, ok := m["tool_calls"]; ok {
			list, _ := calls.([]any)
			if len(list) == 0 {
				t.Fatalf("message %d: tool_calls = %#v, want a non-empty Array or no field", i, calls)
			}
			for _, c := range list {
				cm, _ := c.(map[string]any)
				id, _ := cm["id"].(string)
				name, _ := cm["name"].(string)
				args, _ := cm["arguments"].(string)
				out[i].ToolCalls = append(out[i].ToolCalls, core.ToolCall{ID: id, Name: name, Arguments: args})
			}
		}
	}
	return out
}

func sameMessages(a, b []core.Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if len(x.ToolCalls) == 0 {
			x.ToolCalls = nil
		}
		if len(y.ToolCalls) == 0 {
			y.ToolCalls = nil
		}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// warmHistory makes the warm session: a user turn and a tool-call block.
func warmHistory() []any {
	return history(
		msg("user", "w1"),
		map[string]any{"role": "assistant", "content": nil,
			"tool_calls": []any{map[string]any{"id": "w-c1", "name": "f", "arguments": map[string]any{"q": 1}}}},
		map[string]any{"role": "tool", "tool_call_id": "w-c1", "content": "r", "id": "host-7"},
		msg("assistant", "w2"),
	)
}

// FuzzHistoryArray drives startRunWithHistory and
// startRunWithPolicyAndHistory of the real module with JavaScript history
// arrays built from the fuzz bytes, on a cold or a warm session, and
// checks each outcome against a native model: the edge's decoding table
// mirrored in Go, then core.ValidateHistory and the seeding rules.
//
// Invariants: the call never kills the instance (another session still
// completes a turn afterwards); it completes, or rejects with an Error
// whose code and index are the model's (invalid_history,
// limit_exceeded or invalid_argument); a refusal changes nothing
// (getSession and listSessions unchanged, no event); an accepted history
// is stored as the seeding rules say (for a cold session, the accepted
// non-system messages followed by the turn) and a JavaScript model is
// sent exactly the session.
func FuzzHistoryArray(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzShared.Lock()
		defer fuzzShared.Unlock()
		env := fuzzEnvironment(t)
		if err := env.check(t, data); err != nil {
			t.Fatal(err)
		}
	})
}

// fuzzSeeds cover each outcome; the layout is read by check: h0 (bit 0
// warm, bit 1 JavaScript model, bits 2-4 policy kind, bit 5 onEvent), h1
// (bit 0 the warm session's messages first, bits 1-3 history kind: 6 not
// an Array, 7 packed; bits 4-5 input kind), the message count, then one
// kind byte per message and its fields (see genHistory).
var fuzzSeeds = [][]byte{
	// Accepted: a cold session seeded with a tool-call block.
	{0x00, 0x00, 4, 0, 1, 1, 2, 3, 0x00, 0x00, 0x00, 0x00, 1, 0, 1},
	// Accepted: warm, reconcile, the session's messages first, events, JavaScript model.
	{0x2f, 0x01, 2, 0, 1, 1, 1},
	// Accepted: warm if-empty is a no-op; the input equals the last user message.
	{0x09, 0x10, 1, 0, 1},
	// Accepted: lone surrogates (WTF-8) and invalid UTF-8.
	{0x22, 0x00, 2, 0, 4, 1, 5},
	// Accepted: the same history packed.
	{0x00, 0x0e, 4, 0, 1, 1, 2, 3, 0x00, 0x00, 0x00, 0x00, 1, 0, 1},
	// Accepted: arguments given as an object, camelCase fields, two calls.
	{0x00, 0x00, 4, 0, 1, 3, 0x0d, 0x00, 3, 0x00, 3, 0, 1, 0, 2},
	// invalid_history: unknown role.
	{0x04, 0x00, 2, 0, 1, 4, 6, 0, 1, 0, 0, 0, 0, 0},
	// invalid_history: content is a number.
	{0x00, 0x00, 1, 4, 0, 2, 0, 0, 0, 0, 0},
	// invalid_history: user message without content.
	{0x00, 0x00, 1, 4, 0, 1, 0, 0, 0, 0, 0},
	// invalid_history: tool_calls on a user message (camelCase).
	{0x00, 0x00, 1, 4, 0, 0, 1, 0, 0, 0, 1, 2, 0},
	// invalid_history: orphaned tool result.
	{0x00, 0x00, 2, 0, 1, 6, 1, 4},
	// invalid_history: a call answered twice.
	{0x00, 0x00, 4, 0, 1, 3, 0x01, 0x00, 0x00, 0x00, 0x00, 0, 1, 5, 1},
	// invalid_history: an unanswered call before the next user message.
	{0x00, 0x00, 3, 0, 1, 3, 0x00, 0x00, 0x00, 6, 0, 1},
	// invalid_history: a call id used twice in one message.
	{0x00, 0x00, 4, 0, 1, 3, 0x01, 0x00, 0x00, 0x20, 0x00, 0, 1, 0, 1},
	// invalid_history: an element that is a function.
	{0x00, 0x00, 2, 0, 1, 5, 7},
	// invalid_history: arguments that cannot be stringified (a cycle).
	{0x00, 0x00, 3, 0, 1, 3, 0x00, 0x00, 17, 0, 1},
	// invalid_history: tool_call_id of the wrong type.
	{0x00, 0x00, 3, 0, 1, 3, 0x00, 0x00, 0x00, 7, 0, 1},
	// limit_exceeded: more messages than maxSeedMessages.
	{0x00, 0x00, 27},
	// limit_exceeded: one message over maxMessageBytes.
	{0x00, 0x00, 2, 0, 1, 0, 8},
	// limit_exceeded: the history over maxSeedBytes.
	{0x00, 0x00, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7},
	// limit_exceeded: the input over maxMessageBytes, on a warm session.
	{0x01, 0x20, 1, 0, 1},
	// invalid_argument: an unknown seed mode.
	{0x10, 0x00, 1, 0, 1},
	// invalid_argument: a policy that is a number.
	{0x14, 0x00, 1, 0, 1},
	// invalid_argument: a seed mode that is a number, warm.
	{0x19, 0x00, 1, 0, 1},
	// invalid_argument: a history that is not an Array.
	{0x00, 0x0c, 1, 0, 1},
}

// fuzzCase is what check decided to send.
type fuzzCase struct {
	warm, js, events, prefix bool
	policy                   int // see policyArgs
	histKind                 int
	input                    string
	elems                    []any
}

// policyArgs returns the arguments of the call for policy kind k, and the
// refusal the policy alone causes at the edge (edge) or in core (later).
func policyArgs(k int, input string, hist, opts any) (method string, args []any, edge, later string) {
	pol := func(p any) []any { return []any{fuzzSession, input, p, hist, opts} }
	switch k {
	case 0:
		return "startRunWithHistory", []any{fuzzSession, input, hist, opts}, "", ""
	case 1:
		return "startRunWithPolicyAndHistory", pol(map[string]any{}), "", ""
	case 2:
		return "startRunWithPolicyAndHistory", pol(map[string]any{"seedMode": "if-empty"}), "", ""
	case 3:
		return "startRunWithPolicyAndHistory", pol(map[string]any{"seedMode": "reconcile"}), "", ""
	case 4:
		return "startRunWithPolicyAndHistory", pol(map[string]any{"seedMode": "sometimes"}), "", "invalid_argument"
	case 5:
		return "startRunWithPolicyAndHistory", pol(float64(7)), "invalid_argument", ""
	case 6:
		return "startRunWithPolicyAndHistory", pol(map[string]any{"seedMode": float64(5)}), "invalid_argument", ""
	}
	return "startRunWithPolicyAndHistory", pol(nil), "", ""
}

func (env *fuzzEnv) call(ctx context.Context, rt jshost.Value, method string, args ...any) (any, error) {
	v, err := env.in.Call(ctx, rt, method, args...)
	if err != nil {
		return nil, err
	}
	return env.in.Export(v), nil
}

// check runs one fuzz input; an error describes a broken invariant.
func (env *fuzzEnv) check(t *testing.T, data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in := env.in
	r := &fuzzReader{b: data}
	h0, h1 := r.byte(), r.byte()
	fc := fuzzCase{
		warm: h0&1 != 0, js: h0&2 != 0, policy: int(h0>>2) % 8, events: h0&0x20 != 0,
		prefix: h1&1 != 0, histKind: int(h1>>1) % 8,
	}
	inputKind := int(h1>>4) % 4
	fc.elems = r.genHistory(r.intn(28))
	rt := env.echo
	if fc.js {
		rt = env.jsModel
	}
	for _, s := range []string{fuzzSession, liveSession} {
		if _, err := env.call(ctx, env.echo, "deleteSession", s); err != nil {
			return fmt.Errorf("deleteSession: %w", err)
		}
		if _, err := env.call(ctx, env.jsModel, "deleteSession", s); err != nil {
			return fmt.Errorf("deleteSession: %w", err)
		}
	}
	if fc.warm {
		if _, err := in.CallAsync(ctx, rt, "startRunWithHistory", fuzzSession, "warm up", warmHistory()); err != nil {
			return fmt.Errorf("warming the session: %w", err)
		}
	}
	before, err := env.call(ctx, rt, "getSession", fuzzSession)
	if err != nil {
		return err
	}
	var current []core.Message
	if before != nil {
		current = toSession(t, get(before, "messages"))
		if fc.prefix {
			msgs, _ := get(before, "messages").([]any)
			fc.elems = append(append([]any{}, msgs...), fc.elems...)
		}
	}
	listBefore, err := env.call(ctx, rt, "listSessions")
	if err != nil {
		return err
	}

	// The input: plain, the last history message's text (which must not
	// be appended twice), over maxMessageBytes, or unicode.
	fc.input = "next turn"
	switch inputKind {
	case 1:
		if n := len(fc.elems); n > 0 {
			if m, ok := fc.elems[n-1].(map[string]any); ok {
				if c, ok := m["content"].(string); ok && !strings.HasPrefix(c, core.EchoToolPrefix) {
					fc.input = c
				}
			}
		}
	case 2:
		fc.input = strings.Repeat("i", int(fuzzLimits.MaxMessageBytes)+1)
	case 3:
		fc.input = "ünïcödé \xed\xa0\x80 ✓"
	}

	// What the history argument is, and what the edge makes of it.
	var hist any = fc.elems
	var seeds []core.SeedMessage
	var want *refusal
	switch fc.histKind {
	case 6:
		hist = junk(h1 >> 4)
		switch hist.(type) {
		case []byte, []any: // a packed history or an Array: not this case
			hist = "not a history"
		}
		want = &refusal{"invalid_argument", -1}
	case 7:
		// The same history in the packed format: the edge must agree.
		if len(fc.elems) <= fuzzLimits.MaxSeedMessages {
			if s, bad := decodeNative(ctx, in, fc.elems); bad < 0 {
				b := wire.EncodeHistory(s)
				hist = b
				if seeds, err = wire.DecodeHistoryBytes(b, fuzzLimits.MaxSeedMessages); err != nil {
					c := codeOf(err)
					want = &c
				}
				break
			}
		}
		fc.histKind = 0
	}
	if fc.histKind < 6 {
		switch s, bad := decodeNative(ctx, in, fc.elems); {
		case len(fc.elems) > fuzzLimits.MaxSeedMessages:
			want = &refusal{"limit_exceeded", fuzzLimits.MaxSeedMessages}
		case bad >= 0:
			want = &refusal{"invalid_history", bad}
		default:
			seeds = s
		}
	}
	var opts any
	if fc.events {
		opts = map[string]any{"onEvent": env.onEvent}
	}
	method, args, edgeErr, coreErr := policyArgs(fc.policy, fc.input, hist, opts)
	switch {
	case edgeErr != "":
		want = &refusal{edgeErr, -1}
	case want != nil:
	case coreErr != "":
		want = &refusal{coreErr, -1}
	case int64(len(fc.input)) > fuzzLimits.MaxMessageBytes:
		want = &refusal{"limit_exceeded", -1}
	default:
		if err := core.ValidateHistory(seeds, fuzzLimits); err != nil {
			c := codeOf(err)
			want = &c
		}
	}

	env.mu.Lock()
	env.events, env.seen = nil, nil
	env.mu.Unlock()
	res, runErr := in.CallAsync(ctx, rt, method, args...)
	var exit *jshost.ExitError
	if errors.As(runErr, &exit) || errors.Is(runErr, jshost.ErrClosed) {
		return fmt.Errorf("the call killed the instance: %v", runErr)
	}
	if errors.Is(runErr, context.DeadlineExceeded) {
		return fmt.Errorf("the call did not settle: %v", runErr)
	}
	env.mu.Lock()
	events, seen := env.events, env.seen
	env.mu.Unlock()

	if want != nil {
		t.Logf("refused: %+v", *want)
		var ex *jshost.Exception
		if !errors.As(runErr, &ex) {
			return fmt.Errorf("%s with %d messages (%+v) = %v, %v; want a rejection %+v", method, len(fc.elems), fc, in.Export(res), runErr, *want)
		}
		if ex.Code != want.code || ex.Index != want.index || ex.Message == "" || ex.Name != "Error" {
			return fmt.Errorf("%s rejected with %s %q [%s] index %d; want code %s index %d (%+v)",
				method, ex.Name, ex.Message, ex.Code, ex.Index, want.code, want.index, fc)
		}
		after, err := env.call(ctx, rt, "getSession", fuzzSession)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(after, before) {
			return fmt.Errorf("a refused call (%s) changed the session:\nbefore %v\nafter  %v", ex.Code, before, after)
		}
		listAfter, err := env.call(ctx, rt, "listSessions")
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(listAfter, listBefore) {
			return fmt.Errorf("a refused call (%s) changed listSessions: %v, was %v", ex.Code, listAfter, listBefore)
		}
		if len(events) != 0 {
			return fmt.Errorf("a refused call (%s) emitted events %v", ex.Code, events)
		}
	} else {
		if runErr != nil {
			return fmt.Errorf("%s with %d messages (%+v) = %v; want it completed", method, len(fc.elems), fc, runErr)
		}
		if err := env.checkAccepted(t, ctx, rt, &fc, seeds, current, in.Export(res), seen, events); err != nil {
			return err
		}
	}

	stats, err := env.call(ctx, rt, "stats")
	if err != nil {
		return err
	}
	if n := num(get(stats, "activeRuns")); n != 0 {
		return fmt.Errorf("stats.activeRuns = %d after the call, want 0", n)
	}
	v, err := in.CallAsync(ctx, env.echo, "startRun", liveSession, "still there?")
	if err != nil {
		return fmt.Errorf("the instance stopped serving: %v", err)
	}
	if reply, _ := get(in.Export(v), "reply", "content").(string); reply != "echo: still there? (model received 1 messages)" {
		return fmt.Errorf("the instance answered %q", reply)
	}
	return nil
}

// checkAccepted checks a completed run against the seeding rules.
func (env *fuzzEnv) checkAccepted(t *testing.T, ctx context.Context, rt jshost.Value, fc *fuzzCase,
	seeds []core.SeedMessage, current []core.Message, res any, seen []any, events []map[string]any) error {
	var h []core.Message
	skipped := 0
	for i := range seeds {
		if seeds[i].Role == core.RoleSystem {
			skipped++
			continue
		}
		h = append(h, seeds[i].Message())
	}
	mode, session, seeded := "noop", current, 0
	switch {
	case len(current) == 0:
		if len(h) > 0 {
			mode, session, seeded = "cold", h, len(h)
		}
	case fc.policy == 3: // reconcile
		switch {
		case core.IsPrefix(h, current):
		case core.IsPrefix(current, h):
			mode, session, seeded = "appended", h, len(h)-len(current)
		default:
			mode, session, seeded = "replaced", h, len(h)
		}
	}
	session = append([]core.Message{}, session...)
	if n := len(session); !(n > 0 && session[n-1].Role == core.RoleUser && session[n-1].Content == fc.input) {
		session = append(session, core.Message{Role: core.RoleUser, Content: fc.input})
	}
	sent := append([]core.Message{}, session...)
	reply := "echo: " + fc.input + " (model received " + strconv.Itoa(len(session)) + " messages)"
	if fc.js {
		reply = "js model saw " + strconv.Itoa(len(session))
	}
	session = append(session, core.Message{Role: core.RoleAssistant, Content: reply})

	t.Logf("accepted: %s, seeded %d, skipped %d, %d messages", mode, seeded, skipped, len(session))
	gotSeed := fmt.Sprint(get(res, "seed", "mode"), num(get(res, "seed", "seeded")), num(get(res, "seed", "skippedSystem")))
	if wantSeed := fmt.Sprint(mode, seeded, skipped); gotSeed != wantSeed {
		return fmt.Errorf("seed = %s, want %s (%+v)", gotSeed, wantSeed, fc)
	}
	if get(res, "status") != "completed" || get(res, "sessionId") != fuzzSession || num(get(res, "messageCount")) != len(session) {
		return fmt.Errorf("result = %v, want completed on %s with %d messages", res, fuzzSession, len(session))
	}
	if got, _ := get(res, "reply", "content").(string); got != reply {
		return fmt.Errorf("reply = %q, want %q", got, reply)
	}
	after, err := env.call(ctx, rt, "getSession", fuzzSession)
	if err != nil {
		return err
	}
	if got := toSession(t, get(after, "messages")); !sameMessages(got, session) {
		return fmt.Errorf("session after an accepted history (%s, %+v) =\n%+v\nwant\n%+v", mode, fc, got, session)
	}
	if num(get(after, "messageCount")) != len(session) {
		return fmt.Errorf("getSession.messageCount = %v, want %d", get(after, "messageCount"), len(session))
	}
	if fc.js {
		if got := toSession(t, seen); !sameMessages(got, sent) {
			return fmt.Errorf("the model was sent\n%+v\nwant the session\n%+v", got, sent)
		}
	}
	if fc.events {
		if len(events) < 3 || events[0]["type"] != "run.started" || events[1]["type"] != "session.seeded" ||
			events[len(events)-1]["type"] != "run.completed" {
			return fmt.Errorf("events = %v, want run.started, session.seeded, ..., run.completed", events)
		}
		for i, ev := range events {
			if num(ev["seq"]) != i+1 || ev["sessionId"] != fuzzSession || ev["runId"] != get(res, "runId") {
				return fmt.Errorf("event %d = %v, want seq %d of run %v", i, ev, i+1, get(res, "runId"))
			}
		}
	}
	return nil
}
