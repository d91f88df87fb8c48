package wazero_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/jshost"
	"github.com/agentrt/agentrt/wire"
)

// The run methods of a Runtime object are an adapter over the driver the
// wire's exports call: these tests pin what the adapter answers for a
// model or a tool that throws, rejects, settles twice or hangs until the
// run is cancelled or times out, and for two runs on one session.

// wantCode checks that err is a rejection with code whose message holds
// text.
func wantCode(t *testing.T, what string, err error, code, text string) {
	t.Helper()
	var ex *jshost.Exception
	if !errors.As(err, &ex) || ex.Code != code || !strings.Contains(ex.Message, text) {
		t.Errorf("%s = %v, want %s naming %q", what, err, code, text)
	}
}

// mustCleanState checks that no run is active and that session holds
// count messages (0: the store does not hold it).
func mustCleanState(t *testing.T, in *jshost.Instance, rt jshost.Value, session string, count int) {
	t.Helper()
	if s := in.Export(mustCall(t, in, rt, "stats")); num(get(s, "activeRuns")) != 0 {
		t.Errorf("stats = %v, want no active run", s)
	}
	s := in.Export(mustCall(t, in, rt, "getSession", session))
	if count == 0 {
		if s != nil {
			t.Errorf("session %s = %v, want none (rolled back)", session, s)
		}
		return
	}
	if got := num(get(s, "messageCount")); got != count {
		t.Errorf("session %s holds %d messages, want %d", session, got, count)
	}
}

// Ensure a model whose Promise never settles holds its run until the run
// is cancelled (cancelled, rolled back) or times out (timeout), a late
// settlement changes nothing, and a model that throws is a model_error.
func TestAdapter_ModelHangsThrows(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	called := make(chan func(any), 4)
	model := jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		if s, _ := jshost.Get(args[0], "sessionId").(string); s == "throws" {
			return nil, errors.New("socket closed")
		}
		p, resolve, _ := in.NewPromise()
		called <- resolve
		return p, nil
	})
	rt := mustRuntime(t, in, "agentrt", map[string]any{"model": model})

	p, err := in.Call(ctx, rt, "startRun", "hang", "hello", map[string]any{"runId": "r-hang"})
	if err != nil {
		t.Fatal(err)
	}
	resolve := <-called
	if ok := mustCall(t, in, rt, "cancelRun", "r-hang"); ok != true {
		t.Fatalf("cancelRun = %v, want true", ok)
	}
	_, err = in.Await(ctx, p)
	wantCode(t, "hung model, cancelled", err, "cancelled", "")
	resolve(map[string]any{"content": "too late"})
	if ok := mustCall(t, in, rt, "cancelRun", "r-hang"); ok != false {
		t.Errorf("second cancelRun = %v, want false", ok)
	}
	mustCleanState(t, in, rt, "hang", 0)

	p, err = in.Call(ctx, rt, "startRunWithPolicy", "slow", "hello", map[string]any{"timeoutMs": 5})
	if err != nil {
		t.Fatal(err)
	}
	resolve = <-called
	_, err = in.Await(ctx, p)
	wantCode(t, "hung model, timed out", err, "timeout", "5 ms")
	resolve(map[string]any{"content": "too late"})
	mustCleanState(t, in, rt, "slow", 0)

	_, err = in.CallAsync(ctx, rt, "startRun", "throws", "hello")
	wantCode(t, "throwing model", err, "model_error", "model threw: socket closed")
	mustCleanState(t, in, rt, "throws", 0)

	// The runtime still serves: a model that answers at once completes.
	p, err = in.Call(ctx, rt, "startRun", "hang", "again")
	if err != nil {
		t.Fatal(err)
	}
	(<-called)(map[string]any{"content": "fine"})
	v, err := in.Await(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if r := asResult(t, in, v); r.reply != "fine" || r.messageCount != 2 {
		t.Errorf("after the failures: reply %q, %d messages, want fine, 2", r.reply, r.messageCount)
	}
}

// Ensure a tool that throws, rejects or settles twice answers as the
// contract says (tool_error naming the failure; the first settlement
// wins), and a tool that hangs holds its run until it is cancelled.
func TestAdapter_ToolFailures(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	hung := make(chan struct{}, 1)
	tool := func(name string, call func([]jshost.Value) (any, error)) map[string]any {
		return map[string]any{"name": name, "call": jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
			return call(args)
		})}
	}
	twice := map[string]any{"then": jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		ok, _ := args[0].(*jshost.Function)
		bad, _ := args[1].(*jshost.Function)
		ok.Invoke("first")
		ok.Invoke("second")
		bad.Invoke("late")
		return nil, nil
	})}
	rt := mustRuntime(t, in, "agentrt", map[string]any{"tools": []any{
		tool("throws", func([]jshost.Value) (any, error) { return nil, errors.New("no disk") }),
		tool("rejects", func([]jshost.Value) (any, error) {
			p, _, reject := in.NewPromise()
			reject(errors.New("no network"))
			return p, nil
		}),
		tool("twice", func([]jshost.Value) (any, error) { return twice, nil }),
		tool("hangs", func([]jshost.Value) (any, error) {
			p, _, _ := in.NewPromise()
			hung <- struct{}{}
			return p, nil
		}),
	}})

	_, err := in.CallAsync(ctx, rt, "startRun", "t1", "/tool throws")
	wantCode(t, "throwing tool", err, "tool_error", "threw: no disk")
	_, err = in.CallAsync(ctx, rt, "startRun", "t1", "/tool rejects")
	wantCode(t, "rejecting tool", err, "tool_error", "rejected: no network")
	mustCleanState(t, in, rt, "t1", 0)

	v, err := in.CallAsync(ctx, rt, "startRun", "t2", "/tool twice")
	if err != nil {
		t.Fatalf("tool settling twice: %v", err)
	}
	if r := asResult(t, in, v); !strings.HasPrefix(r.reply, "tool twice returned: first") {
		t.Errorf("tool settling twice: reply %q, want the first settlement", r.reply)
	}

	p, err := in.Call(ctx, rt, "startRun", "t3", "/tool hangs", map[string]any{"runId": "r-tool"})
	if err != nil {
		t.Fatal(err)
	}
	<-hung
	if ok := mustCall(t, in, rt, "cancelRun", "r-tool"); ok != true {
		t.Fatalf("cancelRun = %v, want true", ok)
	}
	_, err = in.Await(ctx, p)
	wantCode(t, "hung tool, cancelled", err, "cancelled", "")
	mustCleanState(t, in, rt, "t3", 0)
	mustCleanState(t, in, rt, "t2", 4)
	mustServe(t, in, rt, "t3")
}

// Ensure two runs on one session run one after the other: the second
// waits while the first's model call is out, then sees the first's turn,
// and a run cancelled while it waits for the session leaves it as the
// first left it.
func TestAdapter_TwoRunsOneSession(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	type call struct {
		count   int
		resolve func(any)
	}
	calls := make(chan call, 4)
	model := jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		msgs, _ := jshost.Export(jshost.Get(args[0], "messages")).([]any)
		p, resolve, _ := in.NewPromise()
		calls <- call{len(msgs), resolve}
		return p, nil
	})
	rt := mustRuntime(t, in, "agentrt", map[string]any{"model": model})
	first, err := in.Call(ctx, rt, "startRun", "s", "one")
	if err != nil {
		t.Fatal(err)
	}
	c1 := <-calls
	second, err := in.Call(ctx, rt, "startRun", "s", "two")
	if err != nil {
		t.Fatal(err)
	}
	third, err := in.Call(ctx, rt, "startRun", "s", "three", map[string]any{"runId": "r-third"})
	if err != nil {
		t.Fatal(err)
	}
	// Both later runs wait for the session: cancel the third there.
	if ok := mustCall(t, in, rt, "cancelRun", "r-third"); ok != true {
		t.Fatalf("cancelRun of a waiting run = %v, want true", ok)
	}
	_, err = in.Await(ctx, third)
	wantCode(t, "run cancelled while waiting", err, "cancelled", "")
	if s := in.Export(mustCall(t, in, rt, "stats")); num(get(s, "activeRuns")) != 2 {
		t.Errorf("stats = %v, want 2 active runs", s)
	}
	c1.resolve("reply one")
	c2 := <-calls
	if c1.count != 1 || c2.count != 3 {
		t.Errorf("the model was sent %d then %d messages, want 1 then 3", c1.count, c2.count)
	}
	c2.resolve("reply two")
	for i, p := range []jshost.Value{first, second} {
		if _, err := in.Await(ctx, p); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
	}
	s := in.Export(mustCall(t, in, rt, "getSession", "s"))
	var got []string
	for _, m := range get(s, "messages").([]any) {
		got = append(got, get(m, "content").(string))
	}
	if want := "one,reply one,two,reply two"; strings.Join(got, ",") != want {
		t.Errorf("session = %v, want %s", got, want)
	}
	mustCleanState(t, in, rt, "s", 4)
}

// Ensure the run methods and the wire drive their turns with one driver:
// a wire turn waits while a run method's turn holds the session, takes
// the handle after it, and sees its messages; and close with a run
// method's turn still out keeps the runtime's number for it, which the
// end of that turn drops.
func TestAdapter_SharedWithWire(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	called := make(chan func(any), 2)
	model := jshost.Func(func(jshost.Value, []jshost.Value) (any, error) {
		p, resolve, _ := in.NewPromise()
		called <- resolve
		return p, nil
	})
	rt := mustRuntime(t, in, "agentrt", map[string]any{"model": model})
	n, _ := jshost.Export(jshost.Get(rt, "fastPath").(jshost.Value)).(float64)
	f := &wireRuntime{t: t, x: in.Exports(), rt: uint64(n)}
	action := func(out []byte) *wire.Action {
		t.Helper()
		a, err := wire.DecodeAction(out)
		if err != nil {
			e, _ := wire.DecodeRefused(out)
			t.Fatalf("not an action: %v (refused: %v)", err, e)
		}
		return a
	}

	first, err := in.Call(ctx, rt, "startRun", "s", "from js")
	if err != nil {
		t.Fatal(err)
	}
	resolve := <-called
	a := action(f.call("agentrt_begin", wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "from the wire"})))
	if a.Kind != wire.ActWait || a.Handle != 2 {
		t.Fatalf("wire turn: action %d handle %d, want a wait with handle 2 (the run method's turn has 1)", a.Kind, a.Handle)
	}
	resolve("js reply")
	if _, err := in.Await(ctx, first); err != nil {
		t.Fatal(err)
	}
	res, err := f.x.Call(ctx, "agentrt_next", f.rt, a.Handle, 0)
	if err != nil {
		t.Fatal(err)
	}
	at, _ := f.x.Call(ctx, "agentrt_out")
	out, _ := f.x.Read(ctx, uint32(at[0]), uint32(res[0]))
	if a = action(out); a.Kind != wire.ActModel || a.End != 3 || len(a.Tail) != 3 || a.Tail[1].Content != "js reply" {
		t.Fatalf("wire turn after the wait: %+v, want a model call on the 3 messages", a)
	}
	action(f.call("agentrt_feed", wire.AppendModelReply(nil, &wire.ModelReply{Handle: a.Handle, Reply: core.ModelReply{Content: "wire reply"}})))
	mustCleanState(t, in, rt, "s", 4)

	hung, err := in.Call(ctx, rt, "startRun", "t", "left out")
	if err != nil {
		t.Fatal(err)
	}
	<-called
	mustCall(t, in, rt, "close")
	_, err = in.Await(ctx, hung)
	wantCode(t, "run out at close", err, "cancelled", "")
	out = f.call("agentrt_begin", wire.AppendBegin(nil, &wire.Begin{SessionID: "u", Input: "after close"}))
	if e, err := wire.DecodeRefused(out); err != nil || e.Code != "invalid_argument" || !strings.Contains(e.Message, "no open runtime") {
		t.Errorf("a wire turn after close and the last turn's end = %v %v, want invalid_argument (no open runtime)", e, err)
	}
}
