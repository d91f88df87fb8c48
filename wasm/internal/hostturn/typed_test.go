package hostturn_test

import (
	"errors"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/internal/hostturn"
	"github.com/agentrt/agentrt/wire"
)

// Ensure a typed turn is the same turn as a frame turn: it shares the
// handles and the count of turns with the frames, takes model and tool
// answers as Go values, reports its events to OnEvent, and is refused or
// failed with codes as a frame turn is.
func TestDriver_Typed(t *testing.T) {
	rt := mustRuntime(t, core.Config{Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "look"},
		Call: func(core.Context, core.ToolInvocation) (string, error) { return "", errors.New("not here") }}}})
	x := hostturn.New(rt, nil, wire.ReadPolicyJSON)
	var events []core.EventType
	h, a, err := x.Start(core.RunRequest{SessionID: "s", Input: "hi", OnEvent: func(ev core.Event) { events = append(events, ev.Type) }})
	if err != nil || a.Kind != core.ActionModel || len(a.Request.Messages) != 1 {
		t.Fatalf("Start = %d %+v %v, want a model action on 1 message", h, a, err)
	}
	if x.Turns() != 1 || x.Run(h) == nil || x.Context(h) == nil {
		t.Fatalf("turns %d, run %v: want the live turn", x.Turns(), x.Run(h))
	}
	// A frame turn takes the next handle.
	act := mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "w", Input: "x"})))
	if act.Handle != h+1 || x.Turns() != 2 {
		t.Errorf("frame handle %d with %d turns, want %d with 2", act.Handle, x.Turns(), h+1)
	}
	a = x.Model(h, &core.ModelReply{ToolCalls: []core.ToolCall{{ID: "c", Name: "look", Arguments: "{}"}}}, nil)
	if a.Kind != core.ActionTool || a.Call.Name != "look" {
		t.Fatalf("after the reply: %+v, want the tool call", a)
	}
	a = x.Tool(h, "", errors.New("not here"))
	if a.Kind != core.ActionFailed || a.Err.Code != core.CodeToolError {
		t.Fatalf("after the failed tool: %+v, want tool_error", a)
	}
	if x.Run(h) != nil || x.Turns() != 1 {
		t.Errorf("the ended turn is still known (%d turns)", x.Turns())
	}
	if len(events) == 0 || events[len(events)-1] != core.EventRunFailed {
		t.Errorf("events = %v, want them ending in run.failed", events)
	}
	for _, a := range []core.Action{x.Model(h, &core.ModelReply{Content: "late"}, nil), x.Tool(h, "late", nil), x.Step(h, false)} {
		if a.Kind != core.ActionFailed || a.Err.Code != core.CodeInvalidArgument {
			t.Errorf("a call for an ended turn = %+v, want invalid_argument", a)
		}
	}
	if _, ok := rt.Session("s"); ok {
		t.Error("the failed first turn left its session")
	}
	if _, _, err := x.Start(core.RunRequest{SessionID: "", Input: "hi"}); core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Errorf("Start without a session = %v, want invalid_argument", err)
	}
	if x.Turns() != 1 {
		t.Errorf("%d turns after a refusal, want 1", x.Turns())
	}
}

// Ensure a typed turn waits for a session a frame turn holds, Hold
// returns once it is cancelled, and Step with expire times a turn out.
func TestDriver_TypedWaitCancelExpire(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	x := hostturn.New(rt, nil, wire.ReadPolicyJSON)
	act := mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "first"})))
	h, a, err := x.Start(core.RunRequest{SessionID: "s", Input: "second", RunID: "r2"})
	if err != nil || a.Kind != core.ActionWait {
		t.Fatalf("Start on a held session = %+v %v, want a wait", a, err)
	}
	if !x.Cancel("r2") {
		t.Fatal("Cancel of the waiting turn = false")
	}
	x.Hold(h) // returns: the run is stopped
	if a = x.Step(h, false); a.Kind != core.ActionFailed || a.Err.Code != core.CodeCancelled {
		t.Errorf("after the cancel: %+v, want cancelled", a)
	}
	h, _, _ = x.Start(core.RunRequest{SessionID: "t", Input: "x"})
	if a = x.Step(h, true); a.Kind != core.ActionFailed || a.Err.Code != core.CodeTimeout {
		t.Errorf("after expire: %+v, want timeout", a)
	}
	mustAction(t, x.Feed(wire.AppendModelReply(nil, &wire.ModelReply{Handle: act.Handle, Reply: core.ModelReply{Content: "ok"}})))
	if x.Turns() != 0 {
		t.Errorf("%d turns left", x.Turns())
	}
}
