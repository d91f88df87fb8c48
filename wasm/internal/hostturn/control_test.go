package hostturn_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/wasm/internal/hostturn"
	"github.com/agentrt/agentrt/wire"
)

// Ensure the op export's handler runs revertRun as core does, and
// refuses a malformed input, an operation the table does not have and
// bad arguments with invalid_argument, changing nothing.
func TestDriver_Op(t *testing.T) {
	rt := mustRuntime(t, core.Config{Model: core.Echo{}})
	defer rt.Close()
	x := hostturn.New(rt, core.Echo{}, wire.ReadPolicyJSON)
	for _, id := range []string{"r1", "r2"} {
		if _, err := rt.Execute(context.Background(), core.RunRequest{SessionID: "s", RunID: id, Input: id}); err != nil {
			t.Fatal(err)
		}
	}
	op := func(name string, args ...wire.Value) (wire.Value, *core.Error) {
		t.Helper()
		out := x.Op(wire.AppendOp(nil, name, args...))
		if e, err := wire.DecodeRefused(out); err == nil {
			return wire.Value{}, e
		}
		v, err := wire.DecodeValue(out)
		if err != nil {
			t.Fatalf("%s: unreadable answer %q: %v", name, out, err)
		}
		return v, nil
	}
	if v, e := op("revertRun", wire.Text("s"), wire.Text("r1")); e != nil || v.Kind != wire.ValueFalse {
		t.Fatalf("revertRun of an earlier run = %+v, %v; want false", v, e)
	}
	// The session was dropped: an earlier run is not the tail.
	if _, ok := rt.Session("s"); ok {
		t.Fatal("session kept after reverting an earlier run")
	}
	if _, err := rt.Execute(context.Background(), core.RunRequest{SessionID: "s", RunID: "r3", Input: "x"}); err != nil {
		t.Fatal(err)
	}
	before, _ := rt.Session("s")
	for name, frame := range map[string][]byte{
		"ErrEmpty":     nil,
		"ErrTruncated": wire.AppendOp(nil, "revertRun", wire.Text("s"), wire.Text("r3"))[:5],
		"ErrTrailing":  append(wire.AppendOp(nil, "revertRun", wire.Text("s"), wire.Text("r3")), 0),
		"ErrUTF8":      wire.AppendOp(nil, "revertRun", wire.Text("s\xff"), wire.Text("r3")),
		"ErrKind":      append(wire.AppendOp(nil, "revertRun"), 2, 9),
		"ErrUnknownOp": wire.AppendOp(nil, "revert", wire.Text("s"), wire.Text("r3")),
		"ErrTooMany":   wire.AppendOp(nil, "revertRun", wire.Text("s"), wire.Text("r3"), wire.Text("x")),
	} {
		e, err := wire.DecodeRefused(x.Op(frame))
		if err != nil || e.Code != core.CodeInvalidArgument {
			t.Errorf("%s: %v, %v; want a refused frame", name, e, err)
		}
	}
	// Bad arguments of a quiet operation answer false.
	if v, e := op("revertRun", wire.Text("s")); e != nil || v.Kind != wire.ValueFalse {
		t.Fatalf("revertRun with one argument = %+v, %v; want false", v, e)
	}
	if after, _ := rt.Session("s"); !reflect.DeepEqual(after, before) {
		t.Fatalf("session changed by refused operations: %+v", after)
	}
	if v, e := op("revertRun", wire.Text("s"), wire.Text("r3")); e != nil || v.Kind != wire.ValueTrue {
		t.Fatalf("revertRun of the last run = %+v, %v; want true", v, e)
	}
	if s, _ := rt.Session("s"); len(s.Messages) != 0 {
		t.Fatalf("messages after revert: %+v", s.Messages)
	}
	if _, err := rt.Execute(context.Background(), core.RunRequest{SessionID: "s", RunID: "r4", Input: "x"}); err != nil {
		t.Fatal(err)
	}
	if v, e := op("deleteSession", wire.Text("s")); e != nil || v.Kind != wire.ValueTrue {
		t.Fatalf("deleteSession = %+v, %v; want true", v, e)
	}
	if v, e := op("cancelRun", wire.Text("nope")); e != nil || v.Kind != wire.ValueFalse {
		t.Fatalf("cancelRun of no run = %+v, %v; want false", v, e)
	}
}

// Ensure Limits answers the runtime's limits, and CheckHistory core's
// report; a packed history over maxSeedMessages is refused as a begin
// frame carrying it is.
func TestDriver_LimitsAndCheck(t *testing.T) {
	l := core.Limits{MaxSeedMessages: 2, MaxMessageBytes: 100}
	rt := mustRuntime(t, core.Config{Limits: l})
	defer rt.Close()
	x := hostturn.New(rt, nil, wire.ReadPolicyJSON)
	got, err := wire.DecodeLimits(x.Limits())
	if err != nil || *got != rt.Limits() {
		t.Fatalf("Limits = %+v, %v; want %+v", got, err, rt.Limits())
	}
	for name, h := range map[string][]core.SeedMessage{
		"OK":     {{Role: core.RoleUser, Content: "a"}},
		"Orphan": {{Role: core.RoleUser, Content: "a"}, {Role: core.RoleTool, ToolCallID: "x", Content: "c"}},
	} {
		c, err := wire.DecodeCheck(x.CheckHistory(wire.EncodeHistory(h), 0))
		want := rt.CheckHistory(h)
		if err != nil || !reflect.DeepEqual(*c, want) {
			t.Fatalf("%s: CheckHistory = %+v, %v; want %+v", name, c, err, want)
		}
	}
	many := []core.SeedMessage{{Role: core.RoleUser, Content: "a"}, {Role: core.RoleAssistant, Content: "b"}, {Role: core.RoleUser, Content: "c"}}
	c, err := wire.DecodeCheck(x.CheckHistory(wire.EncodeHistory(many), 0))
	_, want := wire.DecodeBegin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "x", WithHistory: true, History: many}), 2)
	if err != nil || c.OK || len(c.Problems) != 1 || !reflect.DeepEqual(core.AsError(want), &core.Error{Code: c.Problems[0].Code, Index: c.Problems[0].Index, Message: c.Problems[0].Message}) {
		t.Fatalf("CheckHistory over maxSeedMessages = %+v, %v; want the begin frame's refusal %v", c, err, want)
	}
	c, err = wire.DecodeCheck(x.CheckHistory([]byte("ARH\x09"), 0))
	if err != nil || c.OK || len(c.Problems) != 1 || c.Problems[0].Code != core.CodeInvalidHistory {
		t.Fatalf("CheckHistory of an unknown version = %+v, %v", c, err)
	}
	// The same three messages as the glue packs an Array of two host
	// messages: bounded by those, so core answers (here: nothing wrong).
	c, err = wire.DecodeCheck(x.CheckHistory(wire.EncodeHistory(many), 2))
	core2 := rt.CheckHistory(many)
	if err != nil || !reflect.DeepEqual(*c, core2) {
		t.Fatalf("CheckHistory of an Array of 2 = %+v, %v; want core's %+v", c, err, core2)
	}
	// An Array of more host messages than maxSeedMessages is refused as
	// the syscall/js checkHistory refuses it (hostmsg.CheckCount).
	c, err = wire.DecodeCheck(x.CheckHistory(wire.EncodeHistory(many), 3))
	want2 := core.AsError(hostmsg.CheckCount(3, 2))
	if err != nil || c.OK || len(c.Problems) != 1 || !reflect.DeepEqual(want2, &core.Error{Code: c.Problems[0].Code, Index: c.Problems[0].Index, Message: c.Problems[0].Message}) {
		t.Fatalf("CheckHistory of an Array of 3 = %+v, %v; want %v", c, err, want2)
	}
}

// Ensure the typed control calls the syscall/js Runtime object makes and
// the frames the wire's exports answer come from the same handler: the
// stats frame holds Counters' store counters, both count the heap in
// use, and Snapshot, SessionIDs and RevertRun answer as the session and
// session-ids frames and Revert do.
func TestDriver_TypedControl(t *testing.T) {
	rt := mustRuntime(t, core.Config{Model: core.Echo{}})
	defer rt.Close()
	x := hostturn.New(rt, core.Echo{}, wire.ReadPolicyJSON)
	for _, id := range []string{"a", "b"} {
		if _, err := rt.Execute(context.Background(), core.RunRequest{SessionID: id, RunID: "r" + id, Input: id}); err != nil {
			t.Fatal(err)
		}
	}
	c := x.Counters(true)
	if c.Stats != rt.Stats() || c.HeapAlloc == 0 {
		t.Errorf("Counters = %+v; want the store's %+v and a heap", c, rt.Stats())
	}
	s, err := wire.DecodeStats(x.Stats(false))
	if err != nil {
		t.Fatal(err)
	}
	if s.Stats != c.Stats || s.HeapAlloc == 0 {
		t.Errorf("stats frame = %+v; want %+v and a heap", s, c.Stats)
	}
	ids, err := wire.DecodeSessions(x.Sessions())
	if err != nil {
		t.Fatal(err)
	}
	if got := x.SessionIDs(); !reflect.DeepEqual(got, ids) || len(got) != 2 {
		t.Errorf("SessionIDs = %q, the frame %q", got, ids)
	}
	snap, ok := x.Snapshot("a")
	_, msgs, err := wire.DecodeSession(x.Session("a"))
	if err != nil || !ok || len(snap.Messages) != len(msgs) || len(msgs) != 2 {
		t.Errorf("Snapshot = %d messages, %v; the frame %d, %v", len(snap.Messages), ok, len(msgs), err)
	}
	if _, ok := x.Snapshot("none"); ok {
		t.Error("Snapshot of no session reported one")
	}
	if !x.RevertRun("a", "ra") || x.RevertRun("a", "ra") {
		t.Error("RevertRun of the last run: want true once, then false")
	}
	if _, ok := x.Snapshot("a"); ok {
		t.Error("the reverted first run left its session")
	}
}
