package core_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/mock"
)

func TestRuntime_Start_ConcurrentColdFirstTurnsSeedOnce(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	history := []core.SeedMessage{user("u1"), assistant("a1"), user("u2"), assistant("a2"), system("s")}
	const n = 50
	var wg sync.WaitGroup
	var cold, noop atomic.Int32
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			run, err := rt.StartRunWithHistory(bg, "shared", "turn "+strings.Repeat("x", i), history)
			if err != nil {
				errs <- err
				return
			}
			res, err := run.Wait(bg)
			if err != nil {
				errs <- err
				return
			}
			switch res.Seed.Mode {
			case core.SeedCold:
				cold.Add(1)
			case core.SeedNoop:
				noop.Add(1)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if cold.Load() != 1 || noop.Load() != n-1 {
		t.Fatalf("cold = %d, noop = %d; want 1 and %d", cold.Load(), noop.Load(), n-1)
	}
	if got := len(messagesOf(rt, "shared")); got != 4+2*n {
		t.Fatalf("session holds %d messages, want %d", got, 4+2*n)
	}
}

func TestRuntime_Start_ErrSessionBusy(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	model := &mock.Model{CompleteFn: mock.Blocking(started, release)}
	rt := mustRuntime(t, core.Config{Model: model})
	first, err := rt.StartRun(bg, "s", "one")
	if err != nil {
		t.Fatal(err)
	}
	<-started
	before := stateOf(rt)
	_, err = rt.StartRunWithPolicy(bg, "s", "two", core.Policy{OnBusy: core.BusyReject})
	if core.ErrorCode(err) != core.CodeSessionBusy {
		t.Fatalf("err = %v, want session_busy", err)
	}
	// Bad history is reported before the busy check.
	_, err = rt.StartRunWithPolicyAndHistory(bg, "s", "two", core.Policy{OnBusy: core.BusyReject}, []core.SeedMessage{{Role: "bot"}})
	if core.ErrorCode(err) != core.CodeInvalidHistory {
		t.Fatalf("err = %v, want invalid_history", err)
	}
	requireSameState(t, stateOf(rt), before)

	// A queued run waits its turn and then runs.
	second, err := rt.StartRun(bg, "s", "three")
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	if _, err := waitRun(t, first); err != nil {
		t.Fatal(err)
	}
	if _, err := waitRun(t, second); err != nil {
		t.Fatal(err)
	}
	want := []string{"user:one", "assistant:ok", "user:three", "assistant:ok"}
	if got := contents(messagesOf(rt, "s")); !reflect.DeepEqual(got, want) {
		t.Fatalf("session = %v, want %v", got, want)
	}
	// Another session is never blocked by a busy one.
	if _, err := rt.StartRunWithPolicy(bg, "other", "x", core.Policy{OnBusy: core.BusyReject}); err != nil {
		t.Fatal(err)
	}
}

// failureCase makes a run fail in one way after seeding.
type failureCase struct {
	name  string
	code  core.Code
	model func(started chan<- struct{}) core.ModelFunc
	tools []core.Tool
	pol   core.Policy
	input string
	// stop, if set, is called once the model or tool is running.
	stop func(rt *core.Runtime, run *core.Run)
}

func blockingTool(started chan<- struct{}) core.Tool {
	return core.Tool{ToolSpec: core.ToolSpec{Name: "slow"}, Call: func(ctx core.Context, _ core.ToolInvocation) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "", ctx.Err()
	}}
}

func TestRun_FailuresLeaveSessionAsSeedingLeftIt(t *testing.T) {
	echo := func(started chan<- struct{}) core.ModelFunc {
		return func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
			return core.Echo{}.Complete(ctx, req)
		}
	}
	tests := []failureCase{
		{
			// Ensure a model error rolls the turn back.
			name: "ErrModel", code: core.CodeModelError,
			model: func(chan<- struct{}) core.ModelFunc {
				return func(core.Context, *core.ModelRequest) (*core.ModelReply, error) {
					return nil, errors.New("upstream 500")
				}
			},
		},
		{
			// Ensure a panicking model fails only its run.
			name: "ErrModelPanic", code: core.CodeModelError,
			model: func(chan<- struct{}) core.ModelFunc {
				return func(core.Context, *core.ModelRequest) (*core.ModelReply, error) { panic("boom") }
			},
		},
		{
			// Ensure a failing tool rolls back the call and its partial messages.
			name: "ErrTool", code: core.CodeToolError, model: echo, input: "/tool broken {}",
			tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "broken"}, Call: func(core.Context, core.ToolInvocation) (string, error) {
				return "", errors.New("disk full")
			}}},
		},
		{
			// Ensure an unknown tool fails the run with tool_error.
			name: "ErrUnknownTool", code: core.CodeToolError, model: echo, input: "/tool nothere {}",
		},
		{
			// Ensure a tool the policy does not allow fails the run.
			name: "ErrDisallowedTool", code: core.CodeToolError, model: echo, input: "/tool clock {}",
			pol: core.Policy{AllowedTools: []string{}},
			tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "clock"}, Call: func(core.Context, core.ToolInvocation) (string, error) {
				return "noon", nil
			}}},
		},
		{
			// Ensure a timeout during the model call rolls back.
			name: "ErrTimeout", code: core.CodeTimeout, pol: core.Policy{TimeoutMs: 20},
			model: func(started chan<- struct{}) core.ModelFunc {
				return func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
					<-ctx.Done()
					return nil, ctx.Err()
				}
			},
		},
		{
			// Ensure a timeout is enforced even when the model ignores its context.
			name: "ErrTimeoutStubbornModel", code: core.CodeTimeout, pol: core.Policy{TimeoutMs: 20},
			model: func(started chan<- struct{}) core.ModelFunc {
				return func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
					time.Sleep(200 * time.Millisecond)
					return &core.ModelReply{Content: "late"}, nil
				}
			},
		},
		{
			// Ensure a cancel during the model call rolls back.
			name: "ErrCancelDuringModel", code: core.CodeCancelled,
			model: func(started chan<- struct{}) core.ModelFunc {
				return func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
					started <- struct{}{}
					<-ctx.Done()
					return nil, ctx.Err()
				}
			},
			stop: func(rt *core.Runtime, run *core.Run) {
				if !rt.CancelRun(run.ID()) {
					panic("first cancel returned false")
				}
			},
		},
		{
			// Ensure a cancel during a tool call leaves no dangling call.
			name: "ErrCancelDuringTool", code: core.CodeCancelled, model: echo, input: "/tool slow {}",
			stop: func(rt *core.Runtime, run *core.Run) { run.Cancel() },
		},
		{
			// Ensure a run needing more than maxSteps model calls fails.
			name: "ErrMaxSteps", code: core.CodeLimitExceeded, pol: core.Policy{MaxSteps: 3},
			model: func(chan<- struct{}) core.ModelFunc {
				return func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
					return &core.ModelReply{ToolCalls: []core.ToolCall{{Name: "clock", Arguments: "{}"}}}, nil
				}
			},
			tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "clock"}, Call: func(core.Context, core.ToolInvocation) (string, error) {
				return "noon", nil
			}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan struct{}, 1)
			tools := tc.tools
			if strings.Contains(tc.input, "slow") {
				tools = []core.Tool{blockingTool(started)}
			}
			// The model misbehaves for the failing run only; then it echoes.
			var armed atomic.Bool
			armed.Store(true)
			failing := tc.model(started)
			model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
				if armed.Load() {
					return failing(ctx, req)
				}
				return core.Echo{}.Complete(ctx, req)
			})
			rt := mustRuntime(t, core.Config{Model: model, Tools: tools})
			history := []core.SeedMessage{user("u1"), calling("c1"), toolResult("c1", "r"), assistant("a1")}
			input := tc.input
			if input == "" {
				input = "go"
			}
			var events []core.Event
			var mu sync.Mutex
			run, err := rt.Start(bg, core.RunRequest{SessionID: "s", Input: input, History: history, WithHistory: true, Policy: tc.pol,
				OnEvent: func(e core.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }})
			if err != nil {
				t.Fatal(err)
			}
			if tc.stop != nil {
				<-started
				tc.stop(rt, run)
			}
			_, err = waitRun(t, run)
			if core.ErrorCode(err) != tc.code {
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
			if got, want := messagesOf(rt, "s"), asMessages(history); !reflect.DeepEqual(got, want) {
				t.Fatalf("session = %v, want exactly the seed %v", contents(got), contents(want))
			}
			if run.Cancel() || rt.CancelRun(run.ID()) {
				t.Fatal("cancel of a finished run returned true")
			}
			mu.Lock()
			last := events[len(events)-1]
			mu.Unlock()
			wantLast := core.EventRunFailed
			if tc.code == core.CodeCancelled {
				wantLast = core.EventRunCancelled
			}
			if last.Type != wantLast || last.Err == nil || last.Err.Code != tc.code {
				t.Fatalf("last event = %+v, want %s with %s", last, wantLast, tc.code)
			}
			// The same runtime serves the next turn, with the seed intact.
			armed.Store(false)
			res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "again", History: history, WithHistory: true,
				Policy: core.Policy{}})
			if res.Seed.Mode != core.SeedNoop || len(messagesOf(rt, "s")) != len(history)+2 {
				t.Fatalf("retry: seed %+v, session %v", res.Seed, contents(messagesOf(rt, "s")))
			}
		})
	}
}

func TestRun_Cancel_TwiceReturnsFalse(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	rt := mustRuntime(t, core.Config{Model: &mock.Model{CompleteFn: mock.Blocking(started, release)}})
	run, err := rt.StartRun(bg, "s", "x")
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if !run.Cancel() {
		t.Fatal("first cancel returned false")
	}
	if run.Cancel() || rt.CancelRun(run.ID()) {
		t.Fatal("second cancel returned true")
	}
	if _, err := waitRun(t, run); core.ErrorCode(err) != core.CodeCancelled {
		t.Fatalf("err = %v", err)
	}
	if _, ok := rt.Session("s"); ok {
		t.Fatal("a cancelled first run left an empty session behind")
	}
	if rt.CancelRun("nope") {
		t.Fatal("cancel of an unknown run returned true")
	}
}

func TestRun_Cancel_WhileQueuedCreatesNothing(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	rt := mustRuntime(t, core.Config{Model: &mock.Model{CompleteFn: mock.Blocking(started, release)}})
	first, _ := rt.StartRun(bg, "a", "x")
	<-started
	var events []core.EventType
	queued, err := rt.Start(bg, core.RunRequest{SessionID: "a", Input: "y", OnEvent: func(e core.Event) { events = append(events, e.Type) }})
	if err != nil {
		t.Fatal(err)
	}
	if !queued.Cancel() {
		t.Fatal("cancel of a queued run returned false")
	}
	if _, err := waitRun(t, queued); core.ErrorCode(err) != core.CodeCancelled {
		t.Fatalf("err = %v", err)
	}
	if !reflect.DeepEqual(events, []core.EventType{core.EventRunCancelled}) {
		t.Fatalf("events = %v", events)
	}
	close(release)
	waitRun(t, first)
	if got := contents(messagesOf(rt, "a")); len(got) != 2 {
		t.Fatalf("session = %v", got)
	}
}

func TestRun_Events_OrderAndSequence(t *testing.T) {
	tool := core.Tool{ToolSpec: core.ToolSpec{Name: "clock", Description: "the time"}, Call: func(_ core.Context, inv core.ToolInvocation) (string, error) {
		return "noon (" + inv.Arguments + ")", nil
	}}
	rt := mustRuntime(t, core.Config{Tools: []core.Tool{tool}})
	var got []core.Event
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: `/tool clock {"tz":"UTC"}`, History: []core.SeedMessage{user("hi"), assistant("hello")}, WithHistory: true,
		OnEvent: func(e core.Event) { got = append(got, e) }})
	var types []string
	for i, e := range got {
		if e.Seq != i+1 || e.RunID != res.RunID || e.SessionID != "s" {
			t.Fatalf("event %d = %+v", i, e)
		}
		if e.Type != core.EventModelDelta {
			types = append(types, string(e.Type))
		}
	}
	want := []string{"run.started", "session.seeded", "message.appended", "message.appended", "tool.started", "tool.finished", "message.appended", "message.appended", "run.completed"}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("events = %v, want %v", types, want)
	}
	if res.Reply.Content != `tool clock returned: noon ({"tz":"UTC"}) (model received 5 messages)` {
		t.Fatalf("reply = %q", res.Reply.Content)
	}
	if len(res.Appended) != 4 || len(res.ModelCalls) != 2 || res.ModelCalls[0].MessageCount != 3 {
		t.Fatalf("result = %+v", res)
	}
	// Deltas concatenate to the reply.
	var text strings.Builder
	for _, e := range got {
		if e.Type == core.EventModelDelta && e.Step == 2 {
			text.WriteString(e.Delta)
		}
	}
	if text.String() != res.Reply.Content {
		t.Fatalf("deltas = %q, reply %q", text.String(), res.Reply.Content)
	}
	if len(run(t, rt).Events()) == 0 {
		t.Fatal("Events() is empty")
	}
}

func run(t *testing.T, rt *core.Runtime) *core.Run {
	r, err := rt.StartRun(bg, "events", "x")
	if err != nil {
		t.Fatal(err)
	}
	waitRun(t, r)
	return r
}

func TestRun_ToolErrorsReport(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "/tool missing", Policy: core.Policy{ToolErrors: core.ToolErrorsReport}})
	if !strings.HasPrefix(res.Reply.Content, `tool missing returned: error: unknown tool "missing"`) {
		t.Fatalf("reply = %q", res.Reply.Content)
	}
}

func TestWindow_NeverSplitsToolBlock(t *testing.T) {
	model := &mock.Model{}
	rt := mustRuntime(t, core.Config{Model: model})
	h := []core.SeedMessage{user("u1"), assistant("a1"), user("u2"), calling("c1", "c2"), toolResult("c1", "r1"), toolResult("c2", "r2"), assistant("a2")}
	tests := []struct {
		name     string
		pol      core.Policy
		wantSent []string
	}{
		// Ensure the window drops the oldest whole turns.
		{"OK_Messages2", core.Policy{MaxContextMessages: 2}, []string{"assistant:a2", "user:now"}},
		// Ensure a tool block that does not fit whole is dropped whole.
		{"OK_Messages4", core.Policy{MaxContextMessages: 4}, []string{"assistant:a2", "user:now"}},
		{"OK_Messages5", core.Policy{MaxContextMessages: 5}, []string{"assistant:", "tool:r1", "tool:r2", "assistant:a2", "user:now"}},
		// Ensure a byte window keeps at least the current message.
		{"OK_Bytes1", core.Policy{MaxContextBytes: 1}, []string{"user:now"}},
		// Ensure no window sends everything.
		{"OK_None", core.Policy{}, []string{"user:u1", "assistant:a1", "user:u2", "assistant:", "tool:r1", "tool:r2", "assistant:a2", "user:now"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := "w" + string(rune('a'+i))
			mustComplete(t, rt, core.RunRequest{SessionID: id, Input: "now", History: h, WithHistory: true, Policy: tc.pol})
			reqs := model.Requests()
			if got := contents(reqs[len(reqs)-1].Messages); !reflect.DeepEqual(got, tc.wantSent) {
				t.Fatalf("sent %v, want %v", got, tc.wantSent)
			}
			if n := len(messagesOf(rt, id)); n != len(h)+2 {
				t.Fatalf("the session lost messages: %d", n)
			}
		})
	}
}

func TestStore_EvictsLeastRecentlyUsed(t *testing.T) {
	rt := mustRuntime(t, core.Config{Limits: core.Limits{MaxSessions: 2}})
	for _, id := range []string{"a", "b", "a", "c"} {
		mustComplete(t, rt, core.RunRequest{SessionID: id, Input: "x"})
	}
	if got := rt.ListSessions(); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Fatalf("sessions = %v, want [a c]", got)
	}
	st := rt.Stats()
	if st.Evictions != 1 || st.Sessions != 2 || st.Messages != 6 {
		t.Fatalf("stats = %+v", st)
	}
	// Eviction is a cold start that seeding repairs.
	res := mustComplete(t, rt, core.RunRequest{SessionID: "b", Input: "y", History: []core.SeedMessage{user("x"), assistant("echo")}, WithHistory: true})
	if res.Seed.Mode != core.SeedCold {
		t.Fatalf("seed = %+v", res.Seed)
	}
}

func TestRun_SessionCapsRollBack(t *testing.T) {
	rt := mustRuntime(t, core.Config{Limits: core.Limits{MaxMessagesPerSession: 5}})
	h := []core.SeedMessage{user("u1"), assistant("a1"), user("u2"), assistant("a2")}
	run, err := rt.StartRunWithHistory(bg, "s", "x", h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := waitRun(t, run); core.ErrorCode(err) != core.CodeLimitExceeded {
		t.Fatalf("err = %v", err)
	}
	if got := len(messagesOf(rt, "s")); got != 4 {
		t.Fatalf("session holds %d, want the 4 seeded", got)
	}
	// A seed over the cap changes nothing.
	run, _ = rt.StartRunWithHistory(bg, "t", "x", append(h, user("u3"), assistant("a3")))
	if _, err := waitRun(t, run); core.ErrorCode(err) != core.CodeLimitExceeded {
		t.Fatalf("err = %v", err)
	}
	if _, ok := rt.Session("t"); ok {
		t.Fatal("an over-cap seed created the session")
	}
}

func TestRuntime_New_ErrBadConfig(t *testing.T) {
	call := func(core.Context, core.ToolInvocation) (string, error) { return "", nil }
	tests := []struct {
		name string
		cfg  core.Config
	}{
		// Ensure a tool without a name is refused.
		{"ErrToolName", core.Config{Tools: []core.Tool{{Call: call}}}},
		// Ensure a tool without a function is refused.
		{"ErrToolCall", core.Config{Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "t"}}}}},
		// Ensure duplicate tool names are refused.
		{"ErrToolDup", core.Config{Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "t"}, Call: call}, {ToolSpec: core.ToolSpec{Name: "t"}, Call: call}}}},
		// Ensure negative limits are refused.
		{"ErrLimits", core.Config{Limits: core.Limits{MaxSessions: -1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := core.New(tc.cfg); core.ErrorCode(err) != core.CodeInvalidArgument {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestRuntime_Close_CancelsAndRefuses(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	rt, _ := core.New(core.Config{Model: &mock.Model{CompleteFn: mock.Blocking(started, release)}})
	run, _ := rt.StartRun(bg, "s", "x")
	<-started
	rt.Close()
	rt.Close()
	if _, err := waitRun(t, run); core.ErrorCode(err) != core.CodeCancelled {
		t.Fatalf("err = %v", err)
	}
	if _, err := rt.StartRun(bg, "s", "y"); core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Fatalf("err = %v", err)
	}
}

func TestRuntime_Start_DuplicateRunID(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	rt := mustRuntime(t, core.Config{Model: &mock.Model{CompleteFn: mock.Blocking(started, release)}})
	run, err := rt.Start(bg, core.RunRequest{SessionID: "s", RunID: "mine"})
	if err != nil || run.ID() != "mine" {
		t.Fatalf("run %v err %v", run, err)
	}
	<-started
	if _, err := rt.Start(bg, core.RunRequest{SessionID: "t", RunID: "mine"}); core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Fatalf("err = %v", err)
	}
	close(release)
	waitRun(t, run)
	// Once finished, the id may be used again.
	mustComplete(t, rt, core.RunRequest{SessionID: "t", RunID: "mine"})
}

// A hammer test: many goroutines run, read, list and delete sessions at
// once; the race detector and the store's counters must agree.
func TestRuntime_Hammer(t *testing.T) {
	rt := mustRuntime(t, core.Config{Limits: core.Limits{MaxSessions: 8}})
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				id := string(rune('a' + (g+i)%12))
				switch i % 5 {
				case 0:
					rt.DeleteSession(id)
				case 1:
					rt.Session(id)
					rt.ListSessions()
					rt.Stats()
				default:
					run, err := rt.StartRunWithPolicyAndHistory(bg, id, "x", core.Policy{SeedMode: core.SeedReconcile},
						[]core.SeedMessage{user("h"), assistant("i")})
					if err != nil {
						t.Error(err)
						return
					}
					if i%7 == 0 {
						run.Cancel()
					}
					run.Wait(bg)
				}
			}
		}(g)
	}
	wg.Wait()
	st := rt.Stats()
	var msgs int
	for _, id := range rt.ListSessions() {
		msgs += len(messagesOf(rt, id))
	}
	if st.Messages != msgs || st.Sessions != len(rt.ListSessions()) || st.ActiveRuns != 0 || st.Sessions > 8 {
		t.Fatalf("stats %+v disagree with the store (%d messages)", st, msgs)
	}
}

type ctxKey struct{}

// Ensure values on the context a host starts a run with reach its model.
func TestRun_ContextValuesReachModel(t *testing.T) {
	var got any
	model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		got = ctx.(interface{ Value(any) any }).Value(ctxKey{})
		return &core.ModelReply{Content: "ok"}, nil
	})
	rt := mustRuntime(t, core.Config{Model: model})
	run, err := rt.StartRun(context.WithValue(bg, ctxKey{}, "request-1"), "s", "x")
	if err != nil {
		t.Fatal(err)
	}
	waitRun(t, run)
	if got != "request-1" {
		t.Fatalf("model saw value %v", got)
	}
}

// Ensure a cancelled parent context cancels the run.
func TestRun_ParentContextCancels(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	rt := mustRuntime(t, core.Config{Model: &mock.Model{CompleteFn: mock.Blocking(started, release)}})
	ctx, cancel := context.WithCancel(bg)
	run, err := rt.StartRun(ctx, "s", "x")
	if err != nil {
		t.Fatal(err)
	}
	<-started
	cancel()
	if _, err := waitRun(t, run); core.ErrorCode(err) != core.CodeCancelled {
		t.Fatalf("err = %v", err)
	}
}
