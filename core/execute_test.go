package core_test

import (
	"context"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/mock"
)

// honouring is a model that implements core.ContextHonouring: it calls fn
// and records the stack of each call, to tell in which goroutine it ran.
type honouring struct {
	fn func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error)

	mu     sync.Mutex
	stacks []string
}

func (h *honouring) HonoursContext() {}

func (h *honouring) Complete(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	buf := make([]byte, 64<<10)
	buf = buf[:runtime.Stack(buf, false)]
	h.mu.Lock()
	h.stacks = append(h.stacks, string(buf))
	h.mu.Unlock()
	if h.fn == nil {
		return &core.ModelReply{Content: "ok"}, nil
	}
	return h.fn(ctx, req)
}

// calledFrom reports whether call i ran in a goroutine whose stack holds
// the function named fn.
func (h *honouring) calledFrom(i int, fn string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return i < len(h.stacks) && strings.Contains(h.stacks[i], fn)
}

var _ core.ContextHonouring = (*honouring)(nil)

func TestRuntime_Execute(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		// Ensure Execute returns what Start and Wait return, with the same
		// events, and runs a context-honouring model in the caller's
		// goroutine.
		{"OK", func(t *testing.T) {
			m := &honouring{}
			rt := mustRuntime(t, core.Config{Model: m})
			var events []core.EventType
			req := core.RunRequest{SessionID: "s", Input: "hi", History: []core.SeedMessage{user("a"), assistant("b")}, WithHistory: true,
				OnEvent: func(e core.Event) { events = append(events, e.Type) }}
			res, err := rt.Execute(bg, req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Reply.Content != "ok" || res.MessageCount != 4 || res.Seed.Mode != core.SeedCold {
				t.Fatalf("got %+v", res)
			}
			want := []core.EventType{core.EventRunStarted, core.EventSessionSeeded, core.EventMessageAppended, core.EventMessageAppended, core.EventRunCompleted}
			if !reflect.DeepEqual(events, want) {
				t.Fatalf("events = %v, want %v", events, want)
			}
			if !m.calledFrom(0, "core.(*Runtime).Execute(") {
				t.Fatal("the model was not called in the goroutine that called Execute")
			}
			if st := rt.Stats(); st.ActiveRuns != 0 || st.RunsCompleted != 1 {
				t.Fatalf("stats = %+v", st)
			}
		}},
		// Ensure a refused run returns its error and leaves nothing.
		{"ErrRefused", func(t *testing.T) {
			rt := mustRuntime(t, core.Config{})
			before := stateOf(rt)
			_, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "x", WithHistory: true,
				History: []core.SeedMessage{{Role: "robot", Content: "x"}}})
			if core.ErrorCode(err) != core.CodeInvalidHistory {
				t.Fatalf("err = %v", err)
			}
			if _, err := rt.Execute(bg, core.RunRequest{Input: "x"}); core.ErrorCode(err) != core.CodeInvalidArgument {
				t.Fatalf("err = %v", err)
			}
			requireSameState(t, stateOf(rt), before)
		}},
		// Ensure CancelRun stops a run in Execute, which returns cancelled
		// and rolls the turn back.
		{"ErrCancelled", func(t *testing.T) {
			started := make(chan struct{}, 1)
			block := false
			rt := mustRuntime(t, core.Config{Model: &honouring{fn: func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
				if !block {
					return &core.ModelReply{Content: "ok"}, nil
				}
				return mock.Blocking(started, nil)(ctx, req)
			}}})
			if _, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "first"}); err != nil {
				t.Fatal(err)
			}
			block = true
			cancelled := make(chan bool)
			go func() {
				<-started
				cancelled <- rt.CancelRun("r1")
			}()
			_, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "second", RunID: "r1"})
			if core.ErrorCode(err) != core.CodeCancelled {
				t.Fatalf("err = %v", err)
			}
			if !<-cancelled {
				t.Fatal("CancelRun returned false")
			}
			if got, want := contents(messagesOf(rt, "s")), []string{"user:first", "assistant:ok"}; !reflect.DeepEqual(got, want) {
				t.Fatalf("session = %v, want %v", got, want)
			}
		}},
		// Ensure the caller's ctx stops the run.
		{"ErrParentDone", func(t *testing.T) {
			started := make(chan struct{}, 1)
			rt := mustRuntime(t, core.Config{Model: &honouring{fn: mock.Blocking(started, nil)}})
			ctx, cancel := context.WithCancel(bg)
			go func() {
				<-started
				cancel()
			}()
			_, err := rt.Execute(ctx, core.RunRequest{SessionID: "s", Input: "x"})
			if core.ErrorCode(err) != core.CodeCancelled {
				t.Fatalf("err = %v", err)
			}
			if _, ok := rt.Session("s"); ok {
				t.Fatal("a cancelled first run left its session behind")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

func TestRun_ContextHonouringModel(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		// Ensure a model that does not honour its context is still called
		// in a goroutine of its own, so that a run can leave it behind.
		{"OtherModelsOwnGoroutine", func(t *testing.T) {
			var stack string
			m := &mock.Model{CompleteFn: func(core.Context, *core.ModelRequest) (*core.ModelReply, error) {
				buf := make([]byte, 64<<10)
				stack = string(buf[:runtime.Stack(buf, false)])
				return &core.ModelReply{Content: "ok"}, nil
			}}
			rt := mustRuntime(t, core.Config{Model: m})
			if _, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "x"}); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(stack, "core.(*Runtime).Execute(") {
				t.Fatal("a model that does not honour its context was called in the run's goroutine")
			}
		}},
		// Ensure a panic in a directly called model fails the run with
		// model_error and rolls the turn back.
		{"ErrPanic", func(t *testing.T) {
			rt := mustRuntime(t, core.Config{Model: &honouring{fn: func(core.Context, *core.ModelRequest) (*core.ModelReply, error) {
				panic("boom")
			}}})
			for _, start := range []bool{false, true} {
				var err error
				if start {
					run, serr := rt.StartRun(bg, "s", "x")
					if serr != nil {
						t.Fatal(serr)
					}
					_, err = waitRun(t, run)
				} else {
					_, err = rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "x"})
				}
				if core.ErrorCode(err) != core.CodeModelError {
					t.Fatalf("start=%v: err = %v", start, err)
				}
			}
			if _, ok := rt.Session("s"); ok {
				t.Fatal("a failed first run left its session behind")
			}
		}},
		// Ensure the policy's timeout stops a directly called model that
		// waits on its context.
		{"ErrTimeout", func(t *testing.T) {
			rt := mustRuntime(t, core.Config{Model: &honouring{fn: mock.Blocking(nil, nil)}})
			_, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "x", Policy: core.Policy{TimeoutMs: 1}})
			if core.ErrorCode(err) != core.CodeTimeout {
				t.Fatalf("err = %v", err)
			}
		}},
		// Ensure Echo is called directly and still streams its deltas in
		// order before the reply is appended.
		{"EchoDirect", func(t *testing.T) {
			rt := mustRuntime(t, core.Config{})
			var text string
			var types []core.EventType
			res, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "hello there", OnEvent: func(e core.Event) {
				types = append(types, e.Type)
				text += e.Delta
			}})
			if err != nil {
				t.Fatal(err)
			}
			if text != res.Reply.Content || res.Reply.Content != "echo: hello there (model received 1 messages)" {
				t.Fatalf("deltas %q, reply %q", text, res.Reply.Content)
			}
			if types[len(types)-2] != core.EventMessageAppended || types[len(types)-1] != core.EventRunCompleted {
				t.Fatalf("events = %v", types)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}
