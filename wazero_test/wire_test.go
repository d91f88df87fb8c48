package wazero_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/jshost"
	"github.com/agentrt/agentrt/wire"
)

// wireRuntime drives a runtime through the module's wasmexport functions
// and the wire, as js/glue.js does, keeping a mirror of one session.
type wireRuntime struct {
	t  *testing.T
	x  jshost.Exports
	rt uint64
	// mirror of the session the turns run on (docs/wire.md, "Mirrors")
	gen  uint64
	msgs []core.Message
}

func (f *wireRuntime) call(export string, frame []byte) []byte {
	f.t.Helper()
	ctx := context.Background()
	res, err := f.x.Call(ctx, "agentrt_in", uint64(len(frame)))
	if err != nil {
		f.t.Fatalf("agentrt_in: %v", err)
	}
	if err := f.x.Write(ctx, uint32(res[0]), frame); err != nil {
		f.t.Fatal(err)
	}
	if res, err = f.x.Call(ctx, export, f.rt, uint64(len(frame))); err != nil {
		f.t.Fatalf("%s: %v", export, err)
	}
	n := uint32(res[0])
	at, err := f.x.Call(ctx, "agentrt_out")
	if err != nil {
		f.t.Fatal(err)
	}
	out, err := f.x.Read(ctx, uint32(at[0]), n)
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

// turn runs one turn, answering the model with model and every tool with
// "3"; it returns the result or the error, and the requests' messages.
func (f *wireRuntime) turn(b *wire.Begin, model func(step int, msgs []core.Message) core.ModelReply) (*core.Result, *core.Error, [][]core.Message) {
	f.t.Helper()
	b.MirrorGen, b.MirrorLen = f.gen, len(f.msgs)
	out := f.call("agentrt_begin", wire.AppendBegin(nil, b))
	var seen [][]core.Message
	for {
		if k, _ := wire.FrameKind(out); k == wire.KindRefused {
			e, err := wire.DecodeRefused(out)
			if err != nil {
				f.t.Fatal(err)
			}
			return nil, e, seen
		}
		a, err := wire.DecodeAction(out)
		if err != nil {
			f.t.Fatalf("action: %v", err)
		}
		switch a.Kind {
		case wire.ActModel:
			if f.gen != a.Generation || len(f.msgs) < a.From {
				f.msgs = nil
			}
			f.gen = a.Generation
			f.msgs = append(f.msgs[:a.From:a.From], a.Tail...)
			window := f.msgs[a.Start:a.End]
			seen = append(seen, append([]core.Message(nil), window...))
			reply := model(a.Step, window)
			out = f.call("agentrt_feed", wire.AppendModelReply(nil, &wire.ModelReply{Handle: a.Handle, Reply: reply}))
		case wire.ActTool:
			out = f.call("agentrt_feed", wire.AppendToolResult(nil, &wire.ToolResult{Handle: a.Handle, Text: "3"}))
		case wire.ActDone:
			return a.Result, nil, seen
		case wire.ActFailed:
			return nil, a.Err, seen
		default:
			f.t.Fatalf("unexpected action %d", a.Kind)
		}
	}
}

// scriptModel answers "add ..." with a call of the add tool, then with the
// number of messages it was sent and the last one's text.
func scriptModel(step int, msgs []core.Message) core.ModelReply {
	last := msgs[len(msgs)-1]
	if last.Role == core.RoleUser && strings.HasPrefix(last.Content, "add") && step == 1 {
		return core.ModelReply{ToolCalls: []core.ToolCall{{Name: "add", Arguments: `{"a":1}`}}}
	}
	return core.ModelReply{Content: itoa(len(msgs)) + ":" + last.Content}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// jsMessages converts the messages a JavaScript model received.
func jsMessages(v any) []core.Message {
	arr, _ := v.([]any)
	out := make([]core.Message, len(arr))
	for i, x := range arr {
		m, _ := x.(map[string]any)
		out[i].Role = core.Role(str(m["role"]))
		out[i].Content = str(m["content"])
		out[i].ID = str(m["id"])
		out[i].ToolCallID = str(m["tool_call_id"])
		calls, _ := m["tool_calls"].([]any)
		for _, c := range calls {
			cm, _ := c.(map[string]any)
			out[i].ToolCalls = append(out[i].ToolCalls, core.ToolCall{ID: str(cm["id"]), Name: str(cm["name"]), Arguments: str(cm["arguments"])})
		}
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

// Ensure the wire (wasmexport functions and the wire, under wazero)
// and the syscall/js path give the same sessions, replies and model
// requests for the same turns.
func TestWire_SameAsSyscallPath(t *testing.T) {
	ctx := context.Background()
	tool := map[string]any{"name": "add", "call": jshost.Func(func(jshost.Value, []jshost.Value) (any, error) { return "3", nil })}

	// The syscall/js path, with the same model as a JavaScript function.
	rawIn := mustInstance(t, nil)
	var rawSeen [][]core.Message
	rawModel := jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		msgs := jsMessages(jshost.Export(jshost.Get(args[0], "messages").(jshost.Value)))
		step := num(jshost.Export(jshost.Get(args[0], "step").(jshost.Value)))
		rawSeen = append(rawSeen, msgs)
		r := scriptModel(step, msgs)
		if len(r.ToolCalls) > 0 {
			return map[string]any{"content": r.Content, "toolCalls": []any{map[string]any{"name": "add", "arguments": r.ToolCalls[0].Arguments}}}, nil
		}
		return map[string]any{"content": r.Content}, nil
	})
	raw := mustRuntime(t, rawIn, "agentrt", map[string]any{"model": rawModel, "tools": []any{tool}})

	// The wire: the same configuration; the test answers the model.
	fastIn := mustInstance(t, nil)
	fastRT := mustRuntime(t, fastIn, "agentrt", map[string]any{"model": rawModel, "tools": []any{tool}})
	n, ok := jshost.Export(jshost.Get(fastRT, "fastPath").(jshost.Value)).(float64)
	if !ok {
		t.Fatalf("the runtime has no fastPath number")
	}
	fast := &wireRuntime{t: t, x: fastIn.Exports(), rt: uint64(n)}

	hist := []core.SeedMessage{
		{Role: core.RoleSystem, Content: "be brief"},
		{Role: core.RoleUser, Content: "hello", ID: "u1"},
		{Role: core.RoleAssistant, ContentMissing: true, ToolCalls: []core.ToolCall{{ID: "c1", Name: "add", Arguments: "{}"}}},
		{Role: core.RoleTool, Content: "2", ToolCallID: "c1"},
		{Role: core.RoleAssistant, Content: "two"},
	}
	jsHist := []any{
		map[string]any{"role": "system", "content": "be brief"},
		map[string]any{"role": "user", "content": "hello", "id": "u1"},
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c1", "name": "add", "arguments": "{}"}}},
		map[string]any{"role": "tool", "content": "2", "tool_call_id": "c1"},
		map[string]any{"role": "assistant", "content": "two"},
	}
	turns := []struct {
		input   string
		history bool
	}{{"first", true}, {"second", true}, {"add please", false}, {"last", false}}
	var fastSeen [][]core.Message
	for _, tc := range turns {
		b := &wire.Begin{SessionID: "s", Input: tc.input}
		var v jshost.Value
		var err error
		if tc.history {
			b.WithHistory, b.History = true, hist
			v, err = rawIn.CallAsync(ctx, raw, "startRunWithHistory", "s", tc.input, jsHist)
		} else {
			v, err = rawIn.CallAsync(ctx, raw, "startRun", "s", tc.input)
		}
		if err != nil {
			t.Fatalf("raw %q: %v", tc.input, err)
		}
		res, ferr, seen := fast.turn(b, scriptModel)
		if ferr != nil {
			t.Fatalf("fast %q: %v", tc.input, ferr)
		}
		fastSeen = append(fastSeen, seen...)
		want := asResult(t, rawIn, v)
		if res.Reply.Content != want.reply || res.MessageCount != want.messageCount || string(res.Seed.Mode) != want.seedMode {
			t.Errorf("turn %q: fast gave %q, %d messages, seed %s; raw %q, %d, %s", tc.input,
				res.Reply.Content, res.MessageCount, res.Seed.Mode, want.reply, want.messageCount, want.seedMode)
		}
	}
	if !reflect.DeepEqual(fastSeen, rawSeen) {
		t.Errorf("the models were sent different messages:\nfast %v\nraw  %v", fastSeen, rawSeen)
	}
	fs, _ := fastIn.CallAsync(ctx, fastRT, "getSession", "s")
	rs, _ := rawIn.CallAsync(ctx, raw, "getSession", "s")
	if got, want := jsMessages(get(fastIn.Export(fs), "messages")), jsMessages(get(rawIn.Export(rs), "messages")); !reflect.DeepEqual(got, want) {
		t.Errorf("sessions differ:\nfast %v\nraw  %v", got, want)
	}
	if !reflect.DeepEqual(fast.msgs, jsMessages(get(fastIn.Export(fs), "messages"))[:len(fast.msgs)]) {
		t.Errorf("the mirror is out of step with the session")
	}
}

// Ensure bad frames through the exports are refused with a typed error
// and leave the instance serving.
func TestWire_BadFrames(t *testing.T) {
	in := mustInstance(t, nil)
	rt := mustRuntime(t, in, "agentrt", map[string]any{})
	n, _ := jshost.Export(jshost.Get(rt, "fastPath").(jshost.Value)).(float64)
	f := &wireRuntime{t: t, x: in.Exports(), rt: uint64(n)}
	for _, frame := range [][]byte{nil, []byte("ARW"), {'A', 'R', 'W', 1, 1, 0xff}, wire.AppendModelReply(nil, &wire.ModelReply{Handle: 7})} {
		e, err := wire.DecodeRefused(f.call("agentrt_begin", frame))
		if err != nil || e.Code != core.CodeInvalidArgument {
			t.Errorf("frame % x: got %v, %v; want invalid_argument", frame, e, err)
		}
	}
	res, ferr, _ := f.turn(&wire.Begin{SessionID: "s", Input: "hi"}, scriptModel)
	if ferr != nil || !strings.HasPrefix(res.Reply.Content, "echo: hi") {
		t.Errorf("echo turn: %v %v", res, ferr)
	}
	mustServe(t, in, rt, "after")
}

// Ensure a begin frame whose history carries invalid UTF-8 is refused
// without the history-valid flag, and under it (a host that vouched
// wrongly) runs without harming the instance: the bytes are stored as
// they came and read back through syscall/js.
func TestWire_HistoryValidFlag(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	rt := mustRuntime(t, in, "agentrt", map[string]any{})
	n, _ := jshost.Export(jshost.Get(rt, "fastPath").(jshost.Value)).(float64)
	f := &wireRuntime{t: t, x: in.Exports(), rt: uint64(n)}
	bad := []core.SeedMessage{{Role: core.RoleUser, Content: "a\xffb", ID: "\xc3"}, {Role: core.RoleAssistant, Content: "ok"}}
	_, ferr, _ := f.turn(&wire.Begin{SessionID: "s", Input: "hi", WithHistory: true, History: bad}, scriptModel)
	if ferr == nil || ferr.Code != core.CodeInvalidHistory || ferr.Index != 0 {
		t.Fatalf("without the flag: got %v, want invalid_history at 0", ferr)
	}
	res, ferr, _ := f.turn(&wire.Begin{SessionID: "s", Input: "hi", WithHistory: true, HistoryValid: true, History: bad}, scriptModel)
	if ferr != nil || res.MessageCount != 4 || res.Seed.Seeded != 2 {
		t.Fatalf("with the flag: got %+v, %v", res, ferr)
	}
	v, err := in.Call(ctx, rt, "getSession", "s")
	if err != nil {
		t.Fatalf("getSession threw %v", err)
	}
	msgs, _ := get(jshost.Export(v), "messages").([]any)
	// A JavaScript engine's decoder makes U+FFFD of them; jshost keeps them.
	if c := get(msgs[0], "content"); len(msgs) != 4 || (c != "a\uFFFDb" && c != "a\xffb") {
		t.Errorf("getSession = %v", jshost.Export(v))
	}
	mustServe(t, in, rt, "after")
}

// create calls agentrt_create with frame; it returns the runtime's number,
// or the refusal.
func create(t *testing.T, in *jshost.Instance, frame []byte) (uint64, *core.Error) {
	t.Helper()
	ctx := context.Background()
	x := in.Exports()
	res, err := x.Call(ctx, "agentrt_in", uint64(len(frame)))
	if err != nil {
		t.Fatalf("agentrt_in: %v", err)
	}
	if err := x.Write(ctx, uint32(res[0]), frame); err != nil {
		t.Fatal(err)
	}
	if res, err = x.Call(ctx, "agentrt_create", uint64(len(frame))); err != nil {
		t.Fatalf("agentrt_create: %v", err)
	}
	if n := int32(uint32(res[0])); n >= 0 {
		return uint64(n), nil
	}
	at, err := x.Call(ctx, "agentrt_out")
	if err != nil {
		t.Fatal(err)
	}
	out, err := x.Read(ctx, uint32(at[0]), uint32(-int32(uint32(res[0]))))
	if err != nil {
		t.Fatal(err)
	}
	e, err := wire.DecodeRefused(out)
	if err != nil {
		t.Fatalf("agentrt_create's refusal: %v", err)
	}
	return 0, e
}

// Ensure agentrt_create makes a runtime from a config frame of JSON text,
// read as createRuntime reads a config: its refusals have createRuntime's
// texts, a binary config frame (the WASI module's) and text that is not
// JSON are refused, and none of it harms the instance. A runtime made so
// runs a turn whose model and tool the host answers, and agentrt_close
// ends it.
func TestWire_Create(t *testing.T) {
	ctx := context.Background()
	in := mustInstance(t, nil)
	api := in.Global("agentrt")
	for _, config := range []string{
		`{"limits":{"maxSessions":-1}}`,
		`{"limits":{"maxSessionz":1}}`,
		`{"model":"remote"}`,
		`{"tools":[{"name":"t","parameters":42}]}`,
		`{"tools":[{"name":"t"},{"name":"t"}]}`,
	} {
		var obj map[string]any
		if err := json.Unmarshal([]byte(config), &obj); err != nil {
			t.Fatal(err)
		}
		// createRuntime's tools carry their call.
		tools, _ := obj["tools"].([]any)
		for _, tl := range tools {
			tl.(map[string]any)["call"] = jshost.Func(func(jshost.Value, []jshost.Value) (any, error) { return "", nil })
		}
		v, err := in.Call(ctx, api, "createRuntime", obj)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := in.Export(in.Get(v, "message")).(string)
		_, e := create(t, in, wire.AppendConfigJSON(nil, config))
		if e == nil || e.Code != core.CodeInvalidArgument || want == "" || e.Message != want {
			t.Errorf("%s: agentrt_create refused with %v; createRuntime with %q", config, e, want)
		}
	}
	for _, frame := range [][]byte{
		wire.AppendConfig(nil, &wire.Config{SystemPrompt: "binary"}),
		wire.AppendConfigJSON(nil, "{"),
		[]byte("ARC"),
	} {
		if _, e := create(t, in, frame); e == nil || e.Code != core.CodeInvalidArgument {
			t.Errorf("frame % x: got %v, want invalid_argument", frame, e)
		}
	}
	n, e := create(t, in, wire.AppendConfigJSON(nil, `{"systemPrompt":"be brief","model":"host","tools":[{"name":"add","parameters":{"type":"object"}}]}`))
	if e != nil {
		t.Fatalf("create: %v", e)
	}
	f := &wireRuntime{t: t, x: in.Exports(), rt: n}
	res, ferr, seen := f.turn(&wire.Begin{SessionID: "s", Input: "add please"}, scriptModel)
	if ferr != nil || len(seen) != 2 || res.Reply.Content != "3:3" {
		t.Fatalf("turn: %+v, %v, %v", res, ferr, seen)
	}
	if r, err := f.x.Call(ctx, "agentrt_close", n); err != nil || r[0] != 1 {
		t.Fatalf("agentrt_close = %v, %v; want 1", r, err)
	}
	if _, ferr, _ := f.turn(&wire.Begin{SessionID: "s", Input: "again"}, scriptModel); ferr == nil || ferr.Code != core.CodeInvalidArgument {
		t.Fatalf("a turn after close: %v, want invalid_argument (no such runtime)", ferr)
	}
	echo, e := create(t, in, wire.AppendConfigJSON(nil, `{}`))
	if e != nil {
		t.Fatalf("create echo: %v", e)
	}
	f = &wireRuntime{t: t, x: in.Exports(), rt: echo}
	if res, ferr, _ := f.turn(&wire.Begin{SessionID: "s", Input: "hi"}, scriptModel); ferr != nil || !strings.HasPrefix(res.Reply.Content, "echo: hi") {
		t.Fatalf("echo turn: %+v, %v", res, ferr)
	}
	mustServe(t, in, mustRuntime(t, in, "agentrt", map[string]any{}), "after")
}
