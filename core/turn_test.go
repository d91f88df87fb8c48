package core_test

import (
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// addTool is a tool the turn tests call by name; the host answers it.
var addTool = core.Tool{ToolSpec: core.ToolSpec{Name: "add"}, Call: func(core.Context, core.ToolInvocation) (string, error) {
	return "3", nil
}}

// scripted answers model call i with replies[i].
func scripted(replies ...core.ModelReply) core.ModelFunc {
	return func(_ core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		r := replies[req.Step-1]
		return &r, nil
	}
}

// drive runs a Turn to its end, answering the model with model and
// every tool with tool, and returns the outcome and the requests.
func drive(t *testing.T, tn *core.Turn, model core.ModelFunc, tool func(*core.ToolCall) (string, error)) (core.Action, []core.ModelRequest) {
	t.Helper()
	var reqs []core.ModelRequest
	a := tn.Next()
	for i := 0; i < 100; i++ {
		switch a.Kind {
		case core.ActionModel:
			reqs = append(reqs, *a.Request)
			a = tn.FeedModel(model(nil, a.Request))
		case core.ActionTool:
			a = tn.FeedTool(tool(a.Call))
		default:
			return a, reqs
		}
	}
	t.Fatal("the turn did not end")
	return a, nil
}

func TestTurn_Next(t *testing.T) {
	replies := []core.ModelReply{
		{Content: "calling", ToolCalls: []core.ToolCall{{Name: "add", Arguments: "{}"}}},
		{Content: "done"},
	}
	hist := []core.SeedMessage{system("s"), user("a"), assistant("b")}
	req := func(id string) core.RunRequest {
		return core.RunRequest{SessionID: id, Input: "q", History: hist, WithHistory: true}
	}
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		// Ensure a host-driven turn gives the result, session and events
		// Execute gives on the same input, and names its window.
		{"OK", func(t *testing.T) {
			rt := mustRuntime(t, core.Config{Model: scripted(replies...), Tools: []core.Tool{addTool}})
			var evs []core.EventType
			r := req("host")
			r.OnEvent = func(ev core.Event) { evs = append(evs, ev.Type) }
			tn, err := rt.Begin(nil, r)
			if err != nil {
				t.Fatal(err)
			}
			got, reqs := drive(t, tn, scripted(replies...), func(*core.ToolCall) (string, error) { return "3", nil })
			if got.Kind != core.ActionDone {
				t.Fatalf("got %+v, want done", got)
			}
			var nevs []core.EventType
			r = req("native")
			r.OnEvent = func(ev core.Event) { nevs = append(nevs, ev.Type) }
			want, err := rt.Execute(nil, r)
			if err != nil {
				t.Fatal(err)
			}
			got.Result.RunID, want.RunID, got.Result.SessionID, want.SessionID = "", "", "", ""
			if got.Result.Head() != want.Head() {
				t.Errorf("result heads differ: %s, %s", got.Result.Head(), want.Head())
			}
			if !reflect.DeepEqual(exported(got.Result), exported(want)) {
				t.Errorf("result: got %+v, want %+v", got.Result, want)
			}
			if !reflect.DeepEqual(messagesOf(rt, "host"), messagesOf(rt, "native")) || !reflect.DeepEqual(evs, nevs) {
				t.Errorf("sessions or events differ: %v / %v", evs, nevs)
			}
			if len(reqs) != 2 || reqs[0].Offset != 0 || len(reqs[0].Messages) != 3 || reqs[1].Generation != reqs[0].Generation {
				t.Errorf("requests: %+v", reqs)
			}
			if a := tn.Next(); a.Kind != core.ActionDone {
				t.Errorf("after the end: got %v, want done again", a.Kind)
			}
		}},
		// Ensure a turn waits while another holds its session, then runs.
		{"OKWait", func(t *testing.T) {
			rt := mustRuntime(t, core.Config{})
			first, _ := rt.Begin(nil, core.RunRequest{SessionID: "s", Input: "1"})
			second, _ := rt.Begin(nil, core.RunRequest{SessionID: "s", Input: "2"})
			if a := first.Next(); a.Kind != core.ActionModel {
				t.Fatalf("first: got %v", a.Kind)
			}
			if a := second.Next(); a.Kind != core.ActionWait {
				t.Fatalf("second: got %v, want wait", a.Kind)
			}
			if _, err := rt.Begin(nil, core.RunRequest{SessionID: "s", Input: "3", Policy: core.Policy{OnBusy: core.BusyReject}}); !errors.Is(err, &core.Error{Code: core.CodeSessionBusy}) {
				t.Errorf("reject: got %v", err)
			}
			drive(t, first, scripted(core.ModelReply{Content: "a"}), nil)
			a, _ := drive(t, second, scripted(core.ModelReply{Content: "b"}), nil)
			if a.Kind != core.ActionDone || len(messagesOf(rt, "s")) != 4 {
				t.Errorf("got %v with %d messages", a.Kind, len(messagesOf(rt, "s")))
			}
		}},
		// Ensure a reply that repeats a tool call id fails the turn with
		// model_error naming the id and leaves the seeded session, for a
		// reply of a few calls and one of many (checked through a set).
		{"ErrReplyRepeatsID", func(t *testing.T) {
			for _, n := range []int{2, 5000} {
				calls := make([]core.ToolCall, n)
				for i := range calls {
					calls[i] = core.ToolCall{ID: "c" + strconv.Itoa(i), Name: "add", Arguments: "{}"}
				}
				calls[n-1].ID = "c0"
				rt := mustRuntime(t, core.Config{Tools: []core.Tool{addTool}})
				tn, _ := rt.Begin(nil, req("s"))
				a, _ := drive(t, tn, scripted(core.ModelReply{ToolCalls: calls}), nil)
				if a.Kind != core.ActionFailed || a.Err.Code != core.CodeModelError || a.Err.Message != `the model used tool call id "c0" twice` {
					t.Fatalf("%d calls: got %+v, want model_error", n, a)
				}
				if got := contents(messagesOf(rt, "s")); !reflect.DeepEqual(got, []string{"user:a", "assistant:b"}) {
					t.Errorf("%d calls: session: got %v, want the seeded history", n, got)
				}
			}
		}},
		// Ensure a cancel during a model call fails the turn at once, rolls
		// the session back to its seeded state and frees the session.
		{"ErrCancelled", func(t *testing.T) {
			rt := mustRuntime(t, core.Config{})
			tn, _ := rt.Begin(nil, req("s"))
			if a := tn.Next(); a.Kind != core.ActionModel {
				t.Fatalf("got %v", a.Kind)
			}
			if !rt.CancelRun(tn.Run().ID()) {
				t.Fatal("CancelRun: false")
			}
			a := tn.FeedModel(&core.ModelReply{Content: "late"}, nil)
			if a.Kind != core.ActionFailed || a.Err.Code != core.CodeCancelled {
				t.Fatalf("got %+v, want cancelled", a)
			}
			if got := contents(messagesOf(rt, "s")); !reflect.DeepEqual(got, []string{"user:a", "assistant:b"}) {
				t.Errorf("session: got %v, want the seeded history", got)
			}
			if s := rt.Stats(); s.ActiveRuns != 0 || s.RunsCancelled != 1 {
				t.Errorf("stats: %+v", s)
			}
			next, _ := rt.Begin(nil, core.RunRequest{SessionID: "s", Input: "again"})
			if a := next.Next(); a.Kind != core.ActionModel {
				t.Errorf("the session stayed busy: %v", a.Kind)
			}
		}},
		// Ensure Expire fails the turn with a timeout while a tool is out.
		{"ErrTimeout", func(t *testing.T) {
			rt := mustRuntime(t, core.Config{Model: scripted(replies...), Tools: []core.Tool{addTool},
				AfterFunc: func(int64, func()) func() { return func() {} }})
			r := req("s")
			r.Policy.TimeoutMs = 5
			tn, _ := rt.Begin(nil, r)
			a := tn.Next()
			a = tn.FeedModel(&replies[0], nil)
			if a.Kind != core.ActionTool {
				t.Fatalf("got %v, want tool", a.Kind)
			}
			tn.Expire()
			if a = tn.Next(); a.Kind != core.ActionFailed || a.Err.Code != core.CodeTimeout {
				t.Fatalf("got %+v, want timeout", a)
			}
			if n := len(messagesOf(rt, "s")); n != 2 {
				t.Errorf("session holds %d messages, want 2", n)
			}
		}},
		// Ensure a model error and a tool error fail the turn as on the
		// native path, with the same codes.
		{"ErrModelAndTool", func(t *testing.T) {
			rt := mustRuntime(t, core.Config{Model: scripted(replies...), Tools: []core.Tool{addTool}})
			tn, _ := rt.Begin(nil, req("m"))
			tn.Next()
			if a := tn.FeedModel(nil, errors.New("boom")); a.Kind != core.ActionFailed || a.Err.Code != core.CodeModelError || a.Err.Message != "boom" {
				t.Errorf("model: got %+v", a.Err)
			}
			tn, _ = rt.Begin(nil, req("t"))
			tn.Next()
			tn.FeedModel(&replies[0], nil)
			if a := tn.FeedTool("", errors.New("threw: x")); a.Kind != core.ActionFailed || a.Err.Code != core.CodeToolError || a.Err.Message != `tool "add" failed: threw: x` {
				t.Errorf("tool: got %+v", a.Err)
			}
			if len(messagesOf(rt, "m")) != 2 || len(messagesOf(rt, "t")) != 2 {
				t.Errorf("failed turns were not rolled back to the seeded history")
			}
		}},
		// Ensure answers fed out of turn change nothing.
		{"OKOutOfTurn", func(t *testing.T) {
			rt := mustRuntime(t, core.Config{})
			tn, _ := rt.Begin(nil, core.RunRequest{SessionID: "s", Input: "x"})
			tn.Next()
			if a := tn.FeedTool("nope", nil); a.Kind != core.ActionModel {
				t.Fatalf("got %v, want the model call still out", a.Kind)
			}
			tn.Delta("")
			a := tn.FeedModel(&core.ModelReply{Content: "y"}, nil)
			if a.Kind != core.ActionDone || a.Result.MessageCount != 2 {
				t.Errorf("got %+v", a)
			}
		}},
		// Ensure the generation changes when a rollback cuts the session,
		// and not when a turn only appends.
		{"OKGeneration", func(t *testing.T) {
			rt := mustRuntime(t, core.Config{})
			gen := func(input string, fail bool) uint64 {
				tn, _ := rt.Begin(nil, core.RunRequest{SessionID: "g", Input: input})
				a := tn.Next()
				g := a.Request.Generation
				if fail {
					tn.FeedModel(nil, errors.New("x"))
				} else {
					tn.FeedModel(&core.ModelReply{Content: "ok"}, nil)
				}
				return g
			}
			g1 := gen("1", false)
			g2 := gen("2", true)
			g3 := gen("3", false)
			if g1 != g2 || g3 == g2 {
				t.Errorf("generations %d %d %d: want the same, then a new one after the rollback", g1, g2, g3)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}

// exported is a result's exported fields: its head is computed from the
// session it names, which differs between two runs.
func exported(r *core.Result) core.Result {
	return core.Result{RunID: r.RunID, SessionID: r.SessionID, Status: r.Status, Reply: r.Reply,
		Appended: r.Appended, Seed: r.Seed, MessageCount: r.MessageCount, ModelCalls: r.ModelCalls,
		Context: r.Context, PendingApprovals: r.PendingApprovals}
}
