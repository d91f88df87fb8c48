package wasihost

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// Ensure a Go host app played at random, on both modules, never loses,
// duplicates or corrupts its conversations. The app keeps each
// conversation's durable history and stores what a completed run reports
// (Appended; a paused run's too); it runs turns with models and tools
// that fail, panic or hang until a timeout, pauses on a tool that needs
// approval and approves or denies it later, and is killed at random
// points: before a run, inside the model's call, inside a tool's call,
// and after a run returned but before the app stored its result (the
// runtime closed, or the whole instance dropped). After a kill the next
// step starts a fresh instance, whose sessions seed from the stored
// history. After every step:
//
//   - every model call saw exactly the stored conversation followed by
//     the messages of the turn in progress (nothing forgotten, nothing
//     twice, in order);
//   - the stored history checks OK, or its only problems are the calls
//     awaiting approval at its end;
//   - a tool ran at most once per model call that asked for it, and an
//     approved tool at most once per resume sent for it (a resume the
//     app was killed in may have run it: at least once across a crash,
//     ADR 0019 point 5);
//   - every failure has a stable code, never internal;
//   - a live runtime's session is the stored conversation.
//
// The steps are seeded: AGENTRT_HOSTKILL_SEED replays a seed (printed on
// failure), AGENTRT_HOSTKILL_STEPS sets the steps per module.
func TestHostApp_KilledAtRandom(t *testing.T) {
	seed := int64(rand.Uint32())
	if s := os.Getenv("AGENTRT_HOSTKILL_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("AGENTRT_HOSTKILL_SEED: %v", err)
		}
		seed = n
	}
	steps := 80
	if s := os.Getenv("AGENTRT_HOSTKILL_STEPS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("AGENTRT_HOSTKILL_STEPS must be a positive integer")
		}
		steps = n
	}
	for _, m := range modules {
		t.Run(m.name, func(t *testing.T) {
			app := newHostApp(t, m.start, seed)
			defer func() {
				if t.Failed() {
					t.Logf("replay with AGENTRT_HOSTKILL_SEED=%d (step %d)", seed, app.step)
				}
			}()
			for app.step = 0; app.step < steps && !t.Failed(); app.step++ {
				app.play()
			}
			t.Logf("seed %d: %d steps, %d kills, %d completed runs, %d resumes, %d tool runs", seed, steps, app.kills, app.completed, app.resumes, len(app.runs))
			if app.kills == 0 || app.completed == 0 || app.resumes == 0 {
				t.Errorf("the steps met %d kills, %d completed runs and %d resumes: too few to test anything", app.kills, app.completed, app.resumes)
			}
		})
	}
}

// hostApp is the app TestHostApp_KilledAtRandom plays.
type hostApp struct {
	t     *testing.T
	start func(testing.TB) *Instance
	rng   *rand.Rand
	step  int

	// in and rt are the live instance and runtime; nil after a kill.
	in *Instance
	rt *Runtime
	// warm holds the conversations the live runtime ran and the app
	// stored since it started: only those may run without their history.
	warm map[string]bool
	// store is the app's durable history of each conversation.
	store map[string][]core.SeedMessage

	mu sync.Mutex // guards what the model and tools write below
	// steps are the runs by run id ("step-N"): a model or tool call
	// reads its own run's, since a call the run stopped waiting for goes
	// on in its goroutine and may come after the next step began (Run's
	// doc says so).
	steps map[string]*hostStep
	// asked counts the model calls that asked for each call id; runs
	// the runs of each call id's tool; approved the resumes sent that
	// approved it.
	asked, runs, approved map[string]int
	nextID                int

	kills, completed, resumes int
}

func newHostApp(t *testing.T, start func(testing.TB) *Instance, seed int64) *hostApp {
	return &hostApp{t: t, start: start, rng: rand.New(rand.NewSource(seed)), warm: map[string]bool{},
		store: map[string][]core.SeedMessage{}, steps: map[string]*hostStep{}, asked: map[string]int{}, runs: map[string]int{}, approved: map[string]int{}}
}

// errLate answers a model or tool call that comes after its run
// returned: its step is over, and it does nothing.
var errLate = errors.New("the run has returned")

// hostStep is one step's run, as its model and tool calls see it.
type hostStep struct {
	// expect is the stored conversation the model must see first; the
	// turn's own messages follow it.
	expect []core.SeedMessage
	// fault is how the model or the tools misbehave: "" (they answer),
	// "model-error", "model-panic", "model-hang" (until the run's
	// timeout), "tool-error", "tool-panic", or "kill-model" and
	// "kill-tool" (the app killed inside that call).
	fault string
	// returned: Run returned; a call that comes later does nothing.
	returned bool
}

// hostFaults are the faults a step may have, each as likely; most steps
// have none (see play).
var hostFaults = []string{"model-error", "model-panic", "model-hang", "tool-error", "tool-panic", "kill-model", "kill-model", "kill-tool", "kill-tool"}

// conversations are the app's conversation ids.
var conversations = []string{"a", "b", "c"}

// play plays one step at random and checks the invariants after it.
func (a *hostApp) play() {
	t := a.t
	if a.rt == nil {
		a.in = a.start(t)
		a.rt = mustRuntime(t, a.in, Config{Model: core.ModelFunc(a.complete), Tools: a.tools()})
		a.warm = map[string]bool{}
	}
	id := conversations[a.rng.Intn(len(conversations))]
	awaiting := core.CheckHistory(a.store[id], core.Limits{}).Awaiting
	req := core.RunRequest{SessionID: id, Policy: core.Policy{TimeoutMs: 100}}
	if len(awaiting) > 0 {
		a.resumes++
		for _, c := range awaiting {
			ok := a.rng.Intn(3) > 0
			req.Approvals = append(req.Approvals, core.Approval{ToolCallID: c.ToolCallID, Approved: ok})
			if ok {
				a.approved[c.ToolCallID]++
			}
		}
	} else {
		req.Input = [...]string{"hello", "tool look", "tool pay", "tool both"}[a.rng.Intn(4)] + " " + strconv.Itoa(a.step)
	}
	if !a.warm[id] || a.rng.Intn(2) == 0 {
		req.History, req.WithHistory = a.store[id], true
	}
	st := &hostStep{expect: a.store[id]}
	if n := a.rng.Intn(24); n < len(hostFaults) {
		st.fault = hostFaults[n]
	}
	req.RunID = "step-" + strconv.Itoa(a.step)
	a.mu.Lock()
	a.steps[req.RunID] = st
	a.mu.Unlock()
	if a.rng.Intn(25) == 0 {
		a.kill() // before the run
		return
	}
	res, err := a.rt.Run(context.Background(), req)
	a.mu.Lock()
	st.returned = true
	a.mu.Unlock()
	switch {
	case a.rt == nil:
		// Killed inside a call: whatever the run answered, nothing of it
		// is stored. Its 100 ms timeout may fire before the kill lands
		// when the machine is loaded (a timeout, then the kill).
		if err == nil {
			t.Errorf("step %d: a run whose app was killed completed: %+v", a.step, res)
		}
		if code := core.ErrorCode(err); !errors.Is(err, ErrDead) && code != core.CodeCancelled && code != core.CodeTimeout {
			t.Errorf("step %d: a killed run: %v, want ErrDead, cancelled or timeout", a.step, err)
		}
	case err != nil:
		switch code := core.ErrorCode(err); code {
		case core.CodeModelError, core.CodeToolError, core.CodeTimeout:
		default:
			t.Errorf("step %d: run %+v: %v (code %q)", a.step, req, err, code)
		}
		// A resume that failed after its approved tool ran keeps the
		// result: the app stores it, or is killed before it could.
		if e := core.AsError(err); len(e.Appended) > 0 {
			if a.rng.Intn(12) == 0 {
				a.kill()
			} else {
				a.store[id] = append(append([]core.SeedMessage(nil), a.store[id]...), asSeed(e.Appended)...)
				a.warm[id] = true
			}
		}
	case a.rng.Intn(12) == 0:
		a.kill() // after the run, before the app stored its result
	default:
		if res.Seed.Repairs != nil {
			t.Errorf("step %d: a stored history needed repairs: %+v", a.step, res.Seed.Repairs)
		}
		a.store[id] = append(append([]core.SeedMessage(nil), a.store[id]...), asSeed(res.Appended)...)
		a.warm[id] = true
		a.completed++
	}
	a.check(id)
}

// kill ends the app: its runtime closed, or its whole instance dropped.
func (a *hostApp) kill() {
	a.kills++
	if a.rng.Intn(2) == 0 {
		a.rt.Close()
	}
	a.in.Close(context.Background())
	a.in, a.rt = nil, nil
}

// check checks the invariants of conversation id after a step.
func (a *hostApp) check(id string) {
	t := a.t
	stored := a.store[id]
	c := core.CheckHistory(stored, core.Limits{})
	awaiting := map[int]bool{}
	for _, w := range c.Awaiting {
		awaiting[w.Index] = true
	}
	for _, p := range c.Problems {
		if p.Repair != core.RepairMissingToolResult || !awaiting[p.Index] {
			t.Errorf("step %d: the stored history of %s has a problem: %+v", a.step, id, p)
		}
	}
	a.mu.Lock()
	for call, n := range a.runs {
		if strings.HasPrefix(call, "pay") {
			if n > a.approved[call] {
				t.Errorf("step %d: %s ran %d times for %d approvals sent", a.step, call, n, a.approved[call])
			}
		} else if n > a.asked[call] {
			t.Errorf("step %d: %s ran %d times for %d model calls asking it", a.step, call, n, a.asked[call])
		}
	}
	a.mu.Unlock()
	for _, m := range stored {
		if m.Role == core.RoleTool && m.Content == "paid" && a.runs[m.ToolCallID] == 0 {
			t.Errorf("step %d: %s is stored as paid but never ran", a.step, m.ToolCallID)
		}
	}
	if a.rt == nil || !a.warm[id] {
		return
	}
	s, ok, err := a.rt.Session(id)
	if err != nil || !ok {
		t.Errorf("step %d: session %s of a live runtime: %v, %v", a.step, id, ok, err)
		return
	}
	if got, want := hostKillText(asSeed(s.Messages)), hostKillText(stored); got != want {
		t.Errorf("step %d: session %s holds\n%s\nthe app stored\n%s", a.step, id, got, want)
	}
}

// complete is the app's model: it asks for the tools the input names,
// answers after tool results, and misbehaves as the step's fault says.
// It checks that it is shown the stored conversation first.
func (a *hostApp) complete(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	a.mu.Lock()
	st := a.steps[req.RunID]
	late := st.returned
	a.mu.Unlock()
	if late {
		return nil, errLate
	}
	expect, fault := st.expect, st.fault
	got := make([]core.SeedMessage, len(req.Messages))
	for i, m := range req.Messages {
		got[i] = core.SeedMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls}
	}
	if len(got) < len(expect) || hostKillText(got[:len(expect)]) != hostKillText(expect) {
		a.t.Errorf("step %d: the model was shown\n%s\nthe stored conversation is\n%s", a.step, hostKillText(got), hostKillText(expect))
	} else if turn := got[len(expect):]; len(turn) > 6 {
		a.t.Errorf("step %d: the turn in progress holds %d messages:\n%s", a.step, len(turn), hostKillText(turn))
	}
	switch fault {
	case "model-error":
		return nil, errors.New("the model is down")
	case "model-panic":
		panic("the model panicked")
	case "model-hang":
		<-ctx.Done()
		return nil, ctx.Err()
	case "kill-model":
		a.mu.Lock()
		defer a.mu.Unlock()
		if st.returned {
			return nil, errLate
		}
		a.kill()
		return nil, errors.New("killed")
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != core.RoleUser {
		return &core.ModelReply{Content: "done after " + strconv.Itoa(len(req.Messages))}, nil
	}
	var calls []core.ToolCall
	a.mu.Lock()
	for _, name := range []string{"look", "pay"} {
		if strings.HasPrefix(last.Content, "tool "+name) || strings.HasPrefix(last.Content, "tool both") {
			a.nextID++
			call := name + "-" + strconv.Itoa(a.nextID)
			a.asked[call]++
			calls = append(calls, core.ToolCall{ID: call, Name: name, Arguments: "{}"})
		}
	}
	a.mu.Unlock()
	if calls != nil {
		return &core.ModelReply{ToolCalls: calls}, nil
	}
	return &core.ModelReply{Content: "hi after " + strconv.Itoa(len(req.Messages))}, nil
}

// tools are the app's tools: "look" runs at once, "pay" needs approval.
// Both misbehave as the step's fault says.
func (a *hostApp) tools() []core.Tool {
	call := func(out string) func(ctx core.Context, inv core.ToolInvocation) (string, error) {
		return func(ctx core.Context, inv core.ToolInvocation) (string, error) {
			a.mu.Lock()
			defer a.mu.Unlock()
			st := a.steps[inv.RunID]
			if st.returned {
				return "", errLate
			}
			a.runs[inv.ToolCallID]++
			switch st.fault {
			case "tool-error":
				return "", errors.New("the tool is down")
			case "tool-panic":
				panic("the tool panicked")
			case "kill-tool":
				a.kill()
				return "", errors.New("killed")
			}
			return out, nil
		}
	}
	yes := func(core.ToolInvocation) (bool, error) { return true, nil }
	return []core.Tool{
		{ToolSpec: core.ToolSpec{Name: "look"}, Call: call("looked")},
		{ToolSpec: core.ToolSpec{Name: "pay"}, NeedsApproval: yes, Call: call("paid")},
	}
}

// hostKillText is messages as lines of role, content, call id and calls.
func hostKillText(ms []core.SeedMessage) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "%s:%q", m.Role, m.Content)
		if m.ToolCallID != "" {
			b.WriteString(" @" + m.ToolCallID)
		}
		for _, c := range m.ToolCalls {
			b.WriteString(" ->" + c.ID + ":" + c.Name)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
