package wasihost

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// Ensure revertRun (through agentrt_op) removes a completed run's messages as core's
// RevertRun does, reports a run that is not the session's last as not
// reverted, and refuses a malformed input with invalid_argument,
// changing nothing.
func TestRuntime_RevertRun(t *testing.T) {
	ctx := context.Background()
	native, err := core.New(core.Config{Model: core.Echo{}})
	if err != nil {
		t.Fatal(err)
	}
	defer native.Close()
	in := mustInstance(t)
	rt := mustRuntime(t, in, Config{Model: core.Echo{}})
	for _, req := range []core.RunRequest{{SessionID: "s", RunID: "r1", Input: "one"}, {SessionID: "s", RunID: "r2", Input: "two"}} {
		if _, err := native.Execute(ctx, req); err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Run(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ session, run string }{{"s", "r1"}, {"s", "r2"}, {"none", "r2"}} {
		want := native.RevertRun(c.session, c.run)
		got, err := rt.RevertRun(c.session, c.run)
		if err != nil || got != want {
			t.Fatalf("RevertRun(%q, %q) = %v, %v; want %v", c.session, c.run, got, err, want)
		}
		ws, wok := native.Session("s")
		gs, gok, err := rt.Session("s")
		if err != nil || gok != wok || !reflect.DeepEqual(gs.Messages, ws.Messages) {
			t.Fatalf("after RevertRun(%q, %q): session %+v, %v, %v; want %+v, %v", c.session, c.run, gs.Messages, gok, err, ws.Messages, wok)
		}
	}
	before, _, _ := rt.Session("s")
	for name, frame := range map[string][]byte{
		"ErrEmpty":     nil,
		"ErrTruncated": wire.AppendOp(nil, "revertRun", wire.Text("s"), wire.Text("r1"))[:3],
		"ErrTrailing":  append(wire.AppendOp(nil, "revertRun", wire.Text("s"), wire.Text("r1")), 0),
		"ErrUTF8":      wire.AppendOp(nil, "revertRun", wire.Text("s\xff"), wire.Text("r1")),
		"ErrUnknownOp": wire.AppendOp(nil, "revert", wire.Text("s"), wire.Text("r1")),
	} {
		t.Run(name, func(t *testing.T) {
			in.mu.Lock()
			err := in.write(frame)
			var n int32
			if err == nil {
				n, err = in.call(expOp, uint64(uint32(rt.num)), uint64(len(frame)))
			}
			var out []byte
			if err == nil {
				out, err = in.output(n)
			}
			in.mu.Unlock()
			if err != nil || n <= 0 {
				t.Fatalf("agentrt_op = %d, %v; want a refused frame", n, err)
			}
			var e *core.Error
			if err := refused(out); !errors.As(err, &e) || e.Code != core.CodeInvalidArgument {
				t.Fatalf("refusal %#v, want invalid_argument", err)
			}
		})
	}
	if after, _, err := rt.Session("s"); err != nil || !reflect.DeepEqual(after, before) {
		t.Fatalf("session after refused reverts: %+v, %v; want %+v", after, err, before)
	}
	if _, err := rt.Run(ctx, core.RunRequest{SessionID: "s", Input: "three"}); err != nil {
		t.Fatalf("run after refused reverts: %v", err)
	}
}

// Ensure agentrt_limits answers the limits the runtime enforces: the
// config's, defaults filled in.
func TestRuntime_Limits(t *testing.T) {
	l := core.Limits{MaxSessions: 3, MaxSeedBytes: 1 << 20, MaxMessageBytes: 4096}
	rt := mustRuntime(t, mustInstance(t), Config{Model: core.Echo{}, Limits: l})
	native, err := core.New(core.Config{Model: core.Echo{}, Limits: l})
	if err != nil {
		t.Fatal(err)
	}
	defer native.Close()
	got, err := rt.Limits()
	if err != nil {
		t.Fatal(err)
	}
	if want := native.Limits(); *got != want {
		t.Fatalf("Limits() = %+v, want %+v", *got, want)
	}
}

// Ensure agentrt_check reports what core.CheckHistory finds, under the
// runtime's limits, and changes nothing; a history that packs more
// messages than maxSeedMessages is the refusal a run carrying it gets,
// and a buffer that is not a packed history is its one problem, as an
// unreadable history is.
func TestRuntime_CheckHistory(t *testing.T) {
	l := core.Limits{MaxSeedMessages: 4}
	rt := mustRuntime(t, mustInstance(t), Config{Model: core.Echo{}, Limits: l})
	native, err := core.New(core.Config{Model: core.Echo{}, Limits: l})
	if err != nil {
		t.Fatal(err)
	}
	defer native.Close()
	call := core.ToolCall{ID: "c1", Name: "clock", Arguments: "{}"}
	histories := map[string][]core.SeedMessage{
		"OK":       {seed(core.RoleUser, "a"), seed(core.RoleAssistant, "b")},
		"Empty":    nil,
		"Orphan":   {seed(core.RoleUser, "a"), {Role: core.RoleTool, ToolCallID: "x", Content: "c"}},
		"Missing":  {seed(core.RoleUser, "a"), {Role: core.RoleAssistant, ToolCalls: []core.ToolCall{call}}, seed(core.RoleUser, "b")},
		"Awaiting": {seed(core.RoleUser, "a"), {Role: core.RoleAssistant, ToolCalls: []core.ToolCall{call}}},
		"BadRole":  {{Role: "robot", Content: "a"}},
	}
	for name, h := range histories {
		t.Run(name, func(t *testing.T) {
			got, err := rt.CheckHistory(h)
			if err != nil {
				t.Fatal(err)
			}
			want := native.CheckHistory(h)
			if !reflect.DeepEqual(*got, want) {
				t.Fatalf("CheckHistory = %+v\nwant %+v", *got, want)
			}
		})
	}
	many := []core.SeedMessage{seed(core.RoleUser, "a"), seed(core.RoleAssistant, "b"), seed(core.RoleUser, "c"), seed(core.RoleAssistant, "d"), seed(core.RoleUser, "e")}
	_, runErr := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "x", WithHistory: true, History: many})
	got, err := rt.CheckHistory(many)
	var e *core.Error
	if err != nil || !errors.As(runErr, &e) || got.OK || len(got.Problems) != 1 ||
		got.Problems[0] != (core.Problem{Code: e.Code, Index: e.Index, Message: e.Message}) {
		t.Fatalf("CheckHistory over maxSeedMessages = %+v, %v; want the run's refusal %v", got, err, runErr)
	}
	out, err := rt.exchange(expCheck, []byte("not a packed history"), 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := wire.DecodeCheck(out)
	if err != nil {
		t.Fatal(err)
	}
	if c.OK || len(c.Problems) != 1 || c.Problems[0].Code != core.CodeInvalidHistory || c.Problems[0].Repair != "" {
		t.Fatalf("check of garbage = %+v, want one invalid_history problem without repair", c)
	}
	if ids, err := rt.ListSessions(); err != nil || len(ids) != 0 {
		t.Fatalf("sessions after checks: %q, %v", ids, err)
	}
}
