package wasihost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/internal/build"
	"github.com/agentrt/agentrt/jshost"
	"github.com/agentrt/agentrt/wire"
)

var (
	// module is wasm/wasi compiled once for the whole test binary, as
	// agentrt build ships it: pre-initialized when Wizer is installed.
	// The modules are dist/'s when $AGENTRT_DIST is set (make test), else
	// built here.
	module *Module
	// modulePath is the built .wasm.
	modulePath string
	// plainModule is the plain build (with _initialize), and snapshot
	// whether module is the pre-initialized one.
	plainModule *Module
	snapshot    bool
	skipReason  string
)

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	ctx := context.Background()
	if _, err := exec.LookPath("go"); err != nil {
		skipReason = "go toolchain not found: cannot build the module"
		return m.Run()
	}
	root, err := build.Root()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "agentrt-wasihost-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	wasi, err := build.TestWasiModules(ctx, root, dir, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	modulePath, snapshot = wasi.Module, wasi.Snapshot
	module, err = CompileFile(ctx, modulePath, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer module.Close(ctx)
	plainModule, err = CompileFile(ctx, wasi.Plain, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer plainModule.Close(ctx)
	jsPath, err := build.TestModule(ctx, root, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if jsModule, err = jshost.CompileFile(ctx, jsPath, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer jsModule.Close(ctx)
	return m.Run()
}

// jsModule is the GOOS=js module (wasm/runtime), which AttachJS drives
// over its wire exports under jshost.
var jsModule *jshost.Module

// mustJSInstance starts a fresh instance of the GOOS=js module under
// jshost and attaches to its exports, closed when the test ends.
func mustJSInstance(t testing.TB) *Instance {
	t.Helper()
	needModules(t, jsModule != nil)
	js, err := jshost.NewInstance(context.Background(), jsModule, jshost.Config{})
	if err != nil {
		t.Fatal(err)
	}
	in := AttachJS(js.Exports(), js.Close)
	t.Cleanup(func() { in.Close(context.Background()) })
	return in
}

// needModules skips the test when the modules could not be built (ok
// false), and fails it under CI, where they must be.
func needModules(t testing.TB, ok bool) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal(skipReason)
	}
	t.Skip(skipReason)
}

// modules are the two modules the shared tables run on: the WASI module
// on its own instance, and the GOOS=js module attached under jshost. Both
// are driven over the same wire exports by the same code.
var modules = []struct {
	name  string
	start func(testing.TB) *Instance
}{{"WASI", mustInstance}, {"GoJS", mustJSInstance}}

// mustInstance starts a fresh instance (a cold start), closed when the
// test ends.
func mustInstance(t testing.TB) *Instance {
	t.Helper()
	needModules(t, module != nil)
	in, err := module.Instantiate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(context.Background()) })
	return in
}

func mustRuntime(t testing.TB, in *Instance, cfg Config) *Runtime {
	t.Helper()
	rt, err := in.NewRuntime(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// echoModels are the models the shared tables run through: the module's
// echo model (no Go model) and core's Echo as a Go model, answered
// through the model action.
var echoModels = []struct {
	name  string
	model core.Model
}{{"ModuleEcho", nil}, {"GoModel", core.Echo{}}}

func seed(role core.Role, content string) core.SeedMessage {
	return core.SeedMessage{Role: role, Content: content}
}

func asSeed(ms []core.Message) []core.SeedMessage {
	out := make([]core.SeedMessage, len(ms))
	for i, m := range ms {
		out[i] = core.SeedMessage{ID: m.ID, Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls}
	}
	return out
}

func contents(ms []core.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Content
	}
	return out
}

// Ensure the ADR scenario on the WASI module, with the module's echo
// model and with a Go model: a cold session is seeded once from history,
// the next turn with the same history (plus the first turn) is a noop,
// and a new instance is cold again.
func TestColdStartedSessionIsSeededFromSuppliedHistory(t *testing.T) {
	models := []struct {
		name  string
		model core.Model
	}{
		{"ModuleEcho", nil},
		{"GoModel", core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
			return core.Echo{}.Complete(ctx, req)
		})},
	}
	for _, mc := range models {
		t.Run(mc.name, func(t *testing.T) {
			ctx := context.Background()
			h := []core.SeedMessage{
				seed(core.RoleSystem, "an old system prompt, skipped"),
				seed(core.RoleUser, "What is 2+2?"), seed(core.RoleAssistant, "4"),
				seed(core.RoleUser, "And 3+3?"), seed(core.RoleAssistant, "6"),
			}
			var seeded []core.SeedReport
			onEvent := func(ev core.Event) {
				if ev.Type == core.EventSessionSeeded {
					seeded = append(seeded, *ev.Seed)
				}
			}
			rt := mustRuntime(t, mustInstance(t), Config{SystemPrompt: "You are terse.", Model: mc.model})
			r, err := rt.Run(ctx, core.RunRequest{SessionID: "conv-1", Input: "And 4+4?", WithHistory: true, History: h, OnEvent: onEvent})
			if err != nil {
				t.Fatalf("first turn: %v", err)
			}
			if r.Seed.Mode != core.SeedCold || r.Seed.Seeded != 4 || r.Seed.SkippedSystem != 1 {
				t.Errorf("first turn seed = %+v, want cold, seeded 4, skippedSystem 1", r.Seed)
			}
			if want := "echo: And 4+4? (model received 5 messages)"; r.Reply.Content != want {
				t.Errorf("first reply = %q, want %q", r.Reply.Content, want)
			}
			if r.MessageCount != 6 {
				t.Errorf("messageCount = %d, want 6", r.MessageCount)
			}
			if len(seeded) != 1 || seeded[0].Mode != core.SeedCold {
				t.Errorf("session.seeded events = %+v, want one, cold", seeded)
			}

			h2 := append(append([]core.SeedMessage{}, h...), asSeed(r.Appended)...)
			r, err = rt.Run(ctx, core.RunRequest{SessionID: "conv-1", Input: "And 5+5?", WithHistory: true, History: h2})
			if err != nil {
				t.Fatalf("second turn: %v", err)
			}
			if r.Seed.Mode != core.SeedNoop || r.Seed.Seeded != 0 {
				t.Errorf("second turn seed = %+v, want noop, seeded 0", r.Seed)
			}
			if want := "echo: And 5+5? (model received 7 messages)"; r.Reply.Content != want {
				t.Errorf("second reply = %q, want %q", r.Reply.Content, want)
			}
			s, ok, err := rt.Session("conv-1")
			if err != nil || !ok {
				t.Fatalf("Session: %v, %v", ok, err)
			}
			want := []string{"What is 2+2?", "4", "And 3+3?", "6", "And 4+4?",
				"echo: And 4+4? (model received 5 messages)", "And 5+5?", "echo: And 5+5? (model received 7 messages)"}
			if got := contents(s.Messages); !reflect.DeepEqual(got, want) {
				t.Errorf("session = %q\nwant %q", got, want)
			}

			// A new instance is a cold start: the same history seeds again.
			h3 := append(append([]core.SeedMessage{}, h2...), asSeed(r.Appended)...)
			rt2 := mustRuntime(t, mustInstance(t), Config{SystemPrompt: "You are terse.", Model: mc.model})
			r, err = rt2.Run(ctx, core.RunRequest{SessionID: "conv-1", Input: "And 6+6?", WithHistory: true, History: h3})
			if err != nil {
				t.Fatalf("turn after a new instance: %v", err)
			}
			if r.Seed.Mode != core.SeedCold || r.Seed.Seeded != 8 {
				t.Errorf("seed after a new instance = %+v, want cold, seeded 8", r.Seed)
			}
			if want := "echo: And 6+6? (model received 9 messages)"; r.Reply.Content != want {
				t.Errorf("reply after a new instance = %q, want %q", r.Reply.Content, want)
			}
		})
	}
}

// recorder is a Go model that calls the clock tool once per user
// message and records the messages of every request.
type recorder struct {
	mu   sync.Mutex
	seen [][]string
}

func (m *recorder) Complete(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	m.mu.Lock()
	m.seen = append(m.seen, contents(req.Messages))
	m.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	if last.Role == core.RoleUser {
		req.Delta("thinking")
		return &core.ModelReply{ToolCalls: []core.ToolCall{{ID: "c" + last.Content, Name: "clock", Arguments: `{}`}}}, nil
	}
	return &core.ModelReply{Content: "it is " + last.Content}, nil
}

var clock = core.Tool{ToolSpec: core.ToolSpec{Name: "clock", Description: "the time"},
	Call: func(ctx core.Context, inv core.ToolInvocation) (string, error) {
		return "noon for " + inv.ToolCallID, nil
	}}

// Ensure a Go model and Go tools get through the module exactly what
// native core gives them, and the turns end with the same results and
// sessions: seeding, tool round trips, a window, a warm turn, a
// reconcile.
func TestRuntime_Run_SameAsCore(t *testing.T) {
	ctx := context.Background()
	var nat, was recorder
	native, err := core.New(core.Config{SystemPrompt: "sys", Model: &nat, Tools: []core.Tool{clock}})
	if err != nil {
		t.Fatal(err)
	}
	defer native.Close()
	rt := mustRuntime(t, mustInstance(t), Config{SystemPrompt: "sys", Model: &was, Tools: []core.Tool{clock}})
	h := []core.SeedMessage{seed(core.RoleUser, "a"), seed(core.RoleAssistant, "b")}
	reqs := []core.RunRequest{
		{SessionID: "s", Input: "one", WithHistory: true, History: h},
		{SessionID: "s", Input: "two"},
		{SessionID: "s", Input: "three", Policy: core.Policy{MaxContextMessages: 3}},
		{SessionID: "s", Input: "four", WithHistory: true, History: h, Policy: core.Policy{SeedMode: core.SeedReconcile}},
		{SessionID: "t", Input: "x", WithHistory: true, History: h, Inspect: true},
	}
	for i, req := range reqs {
		req.RunID = fmt.Sprint("r", i)
		want, werr := native.Execute(ctx, req)
		got, gerr := rt.Run(ctx, req)
		if !reflect.DeepEqual(gerr, werr) {
			t.Fatalf("turn %d: error %v, want %v", i, gerr, werr)
		}
		// The head is computed on demand from core's session (unexported
		// state), which this edge does not carry: the exported fields are
		// compared, and the session's head below.
		if !sameExported(got, want) {
			t.Fatalf("turn %d: result\n got %+v\nwant %+v", i, got, want)
		}
		if gs, ok, err := rt.Session(req.SessionID); err != nil || !ok {
			t.Fatalf("turn %d: session: %v %v", i, ok, err)
		} else if ws, _ := native.Session(req.SessionID); gs.Head != ws.Head || gs.Head != want.Head() {
			t.Fatalf("turn %d: session head %q, core's %q, the result's %q", i, gs.Head, ws.Head, want.Head())
		}
	}
	if len(nat.seen) < 2*len(reqs) {
		t.Fatalf("the model was called %d times, want at least %d", len(nat.seen), 2*len(reqs))
	}
	if !reflect.DeepEqual(was.seen, nat.seen) {
		t.Fatalf("the model saw\n %q\nwant %q", was.seen, nat.seen)
	}
	for _, id := range []string{"s", "t"} {
		want, _ := native.Session(id)
		got, ok, err := rt.Session(id)
		if err != nil || !ok || !reflect.DeepEqual(got.Messages, want.Messages) {
			t.Fatalf("session %s = %+v, %v, %v\nwant %+v", id, got.Messages, ok, err, want.Messages)
		}
	}
}

// Ensure refused requests come back as the core's typed errors, change
// nothing, and leave the instance serving.
func TestRuntime_Run_Errors(t *testing.T) {
	ctx := context.Background()
	failing := core.ModelFunc(func(core.Context, *core.ModelRequest) (*core.ModelReply, error) {
		return nil, errors.New("no answer")
	})
	tests := []struct {
		name  string
		model core.Model
		req   core.RunRequest
		code  core.Code
		index int
	}{
		{name: "ErrInvalidHistory", req: core.RunRequest{SessionID: "s", Input: "x", WithHistory: true,
			History: []core.SeedMessage{seed(core.RoleUser, "a"), seed("robot", "b")}}, code: core.CodeInvalidHistory, index: 1},
		{name: "ErrOrphanToolResult", req: core.RunRequest{SessionID: "s", Input: "x", WithHistory: true,
			History: []core.SeedMessage{{Role: core.RoleTool, Content: "r", ToolCallID: "nope"}}}, code: core.CodeInvalidHistory, index: 0},
		{name: "ErrPolicy", req: core.RunRequest{SessionID: "s", Input: "x", Policy: core.Policy{MaxSteps: -1}}, code: core.CodeInvalidArgument, index: core.NoIndex},
		{name: "ErrSeedMode", req: core.RunRequest{SessionID: "s", Input: "x", Policy: core.Policy{SeedMode: "sometimes"}}, code: core.CodeInvalidArgument, index: core.NoIndex},
		{name: "ErrModel", model: failing, req: core.RunRequest{SessionID: "s", Input: "x"}, code: core.CodeModelError, index: core.NoIndex},
		{name: "ErrUnknownTool", model: core.ModelFunc(func(core.Context, *core.ModelRequest) (*core.ModelReply, error) {
			return &core.ModelReply{ToolCalls: []core.ToolCall{{Name: "nope"}}}, nil
		}), req: core.RunRequest{SessionID: "s", Input: "x"}, code: core.CodeToolError, index: core.NoIndex},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := mustRuntime(t, mustInstance(t), Config{Model: tt.model})
			_, err := rt.Run(ctx, tt.req)
			var e *core.Error
			if !errors.As(err, &e) || e.Code != tt.code || e.Index != tt.index {
				t.Fatalf("error %#v, want code %s index %d", err, tt.code, tt.index)
			}
			if ids, err := rt.ListSessions(); err != nil || len(ids) != 0 {
				t.Fatalf("sessions after a refusal: %q, %v", ids, err)
			}
			// The instance still serves.
			rt2 := mustRuntime(t, rt.in, Config{})
			if r, err := rt2.Run(ctx, core.RunRequest{SessionID: "ok", Input: "hi"}); err != nil || r.Reply.Content == "" {
				t.Fatalf("run after a refusal: %+v, %v", r, err)
			}
		})
	}
}

// Ensure a config the module refuses returns invalid_argument.
func TestInstance_NewRuntime_Errors(t *testing.T) {
	in := mustInstance(t)
	tests := []struct {
		name string
		cfg  Config
	}{
		{"ErrNegativeLimit", Config{Limits: core.Limits{MaxSessions: -1}}},
		{"ErrToolNoName", Config{Tools: []core.Tool{{Call: clock.Call}}}},
		{"ErrToolTwice", Config{Tools: []core.Tool{clock, clock}}},
		{"ErrToolNoCall", Config{Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "x"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := in.NewRuntime(tt.cfg); core.ErrorCode(err) != core.CodeInvalidArgument {
				t.Fatalf("got %v, want code invalid_argument", err)
			}
		})
	}
	mustRuntime(t, in, Config{})
}

// Ensure malformed frames and calls through the raw exports are refused
// with typed errors and the instance stays alive.
func TestInstance_Exports_BadInput(t *testing.T) {
	in := mustInstance(t)
	rt := mustRuntime(t, in, Config{Model: &recorder{}, Tools: []core.Tool{clock}})
	begin := wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "hi"})
	raw := func(name string, num int32, frame []byte) error {
		in.mu.Lock()
		defer in.mu.Unlock()
		out, _, err := in.exchange(name, num, frame)
		if err != nil {
			return err
		}
		return refused(out)
	}
	tests := []struct {
		name  string
		call  func() error
		code  core.Code
		index int
	}{
		{"ErrGarbage", func() error { return raw(expBegin, rt.num, []byte("not a frame")) }, core.CodeInvalidArgument, core.NoIndex},
		{"ErrEmpty", func() error { return raw(expBegin, rt.num, nil) }, core.CodeInvalidArgument, core.NoIndex},
		{"ErrTruncated", func() error { return raw(expBegin, rt.num, begin[:len(begin)-2]) }, core.CodeInvalidArgument, core.NoIndex},
		{"ErrWrongKind", func() error { return raw(expFeed, rt.num, begin) }, core.CodeInvalidArgument, core.NoIndex},
		{"ErrUnknownRuntime", func() error { return raw(expBegin, 99, begin) }, core.CodeInvalidArgument, core.NoIndex},
		{"ErrNegativeRuntime", func() error { return raw(expBegin, -1, begin) }, core.CodeInvalidArgument, core.NoIndex},
		{"ErrUnknownHandle", func() error {
			return raw(expFeed, rt.num, wire.AppendModelReply(nil, &wire.ModelReply{Handle: 12345}))
		}, core.CodeInvalidArgument, core.NoIndex},
		{"ErrUnknownTurnTool", func() error {
			return raw(expFeed, rt.num, wire.AppendToolResult(nil, &wire.ToolResult{Handle: 7}))
		}, core.CodeInvalidArgument, core.NoIndex},
		{"ErrBadHistory", func() error {
			return raw(expBegin, rt.num, wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "x", WithHistory: true,
				History: []core.SeedMessage{seed(core.RoleUser, "a"), seed(core.RoleAssistant, "b"), {Role: core.RoleTool, Content: "c"}}}))
		}, core.CodeInvalidHistory, 2},
		{"ErrSizeTooLarge", func() error {
			in.mu.Lock()
			defer in.mu.Unlock()
			n, err := in.call(expBegin, uint64(uint32(rt.num)), 1<<30)
			if err != nil {
				return err
			}
			out, err := in.output(n)
			if err != nil {
				return err
			}
			return refused(out)
		}, core.CodeInvalidArgument, core.NoIndex},
		{"ErrConfig", func() error {
			in.mu.Lock()
			defer in.mu.Unlock()
			if err := in.write([]byte("ARC\x01\xff")); err != nil {
				return err
			}
			n, err := in.call(expCreate, 5)
			if err != nil {
				return err
			}
			if n >= 0 {
				return fmt.Errorf("agentrt_create accepted garbage: %d", n)
			}
			out, err := in.output(-n)
			if err != nil {
				return err
			}
			return refused(out)
		}, core.CodeInvalidArgument, core.NoIndex},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var e *core.Error
			if !errors.As(err, &e) || e.Code != tt.code || e.Index != tt.index {
				t.Fatalf("got %#v, want code %s index %d", err, tt.code, tt.index)
			}
		})
	}
	if ids, err := rt.ListSessions(); err != nil || len(ids) != 0 {
		t.Fatalf("sessions after refused frames: %q, %v", ids, err)
	}
	r, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "hi"})
	if err != nil || r.Reply.Content != "it is noon for chi" {
		t.Fatalf("run after refused frames: %+v, %v", r, err)
	}
}

// Ensure a cancelled context and a policy timeout stop a run with the
// core's codes, roll the session back, and free it for the next run.
func TestRuntime_Run_CancelAndTimeout(t *testing.T) {
	slow := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		<-ctx.Done()
		return nil, errors.New("stopped")
	})
	rt := mustRuntime(t, mustInstance(t), Config{Model: slow})
	h := []core.SeedMessage{seed(core.RoleUser, "a"), seed(core.RoleAssistant, "b")}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := rt.Run(ctx, core.RunRequest{SessionID: "s", Input: "x", WithHistory: true, History: h})
	if core.ErrorCode(err) != core.CodeCancelled {
		t.Fatalf("cancelled run: %v, want code cancelled", err)
	}
	_, err = rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "y", WithHistory: true, History: h,
		Policy: core.Policy{TimeoutMs: 30}})
	if core.ErrorCode(err) != core.CodeTimeout {
		t.Fatalf("timed-out run: %v, want code timeout", err)
	}
	s, ok, err := rt.Session("s")
	if err != nil || !ok || !reflect.DeepEqual(contents(s.Messages), []string{"a", "b"}) {
		t.Fatalf("session after stopped runs: %+v, %v, %v; want the seeded history", s, ok, err)
	}
	st, err := rt.Stats(false)
	if err != nil || st.RunsCancelled != 1 || st.RunsFailed != 1 || st.ActiveRuns != 0 {
		t.Fatalf("stats %+v, %v", st, err)
	}
}

// Ensure runs on one session from many goroutines are ordered: none is
// lost or duplicated.
func TestRuntime_Run_Concurrent(t *testing.T) {
	rt := mustRuntime(t, mustInstance(t), Config{Model: core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		time.Sleep(time.Millisecond)
		return core.Echo{}.Complete(ctx, req)
	})})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: fmt.Sprint("m", i)}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s, _, err := rt.Session("s")
	if err != nil || len(s.Messages) != 16 {
		t.Fatalf("session holds %d messages, %v; want 16", len(s.Messages), err)
	}
	for i := 0; i < 16; i += 2 {
		if s.Messages[i].Role != core.RoleUser || s.Messages[i+1].Role != core.RoleAssistant {
			t.Fatalf("message %d: %s then %s", i, s.Messages[i].Role, s.Messages[i+1].Role)
		}
	}
	if ok, err := rt.DeleteSession("s"); !ok || err != nil {
		t.Fatalf("DeleteSession: %v, %v", ok, err)
	}
}

// sameExported reports whether the results a and b have equal exported
// fields.
func sameExported(a, b *core.Result) bool {
	if a == nil || b == nil {
		return a == b
	}
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := 0; i < va.NumField(); i++ {
		if va.Type().Field(i).IsExported() && !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return false
		}
	}
	return true
}
