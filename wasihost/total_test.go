package wasihost

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrt/agentrt/core"
)

// wellFormed reports the first place where msgs is not a sequence of
// whole turns: a user message, then assistant messages whose tool calls
// are each answered by a tool message, ending with an assistant message
// without tool calls.
func wellFormed(msgs []core.Message) error {
	i := 0
	for i < len(msgs) {
		if msgs[i].Role != core.RoleUser {
			return fmt.Errorf("message %d: %s where a user message starts a turn", i, msgs[i].Role)
		}
		i++
		for {
			if i == len(msgs) {
				return fmt.Errorf("message %d: the turn's last message is not the assistant's reply", i-1)
			}
			if msgs[i].Role != core.RoleAssistant {
				return fmt.Errorf("message %d: %s where the assistant answers", i, msgs[i].Role)
			}
			calls := msgs[i].ToolCalls
			i++
			if len(calls) == 0 {
				break
			}
			for _, c := range calls {
				if i == len(msgs) || msgs[i].Role != core.RoleTool || msgs[i].ToolCallID != c.ID {
					return fmt.Errorf("message %d: tool call %q has no result", i, c.ID)
				}
				i++
			}
		}
	}
	return nil
}

// checkRuntime fails t unless rt has no active run, at most maxSessions
// sessions, and every session is well-formed. It first runs one turn on
// a new session, which evicts the idle sessions beyond MaxSessions (busy
// ones stay while they are busy): its model must not fail.
func checkRuntime(t *testing.T, rt *Runtime, maxSessions int) {
	t.Helper()
	if _, err := rt.Run(context.Background(), core.RunRequest{SessionID: "probe", Input: "p"}); err != nil {
		t.Errorf("a run on a new session: %v", err)
	}
	st, err := rt.Stats(false)
	if err != nil {
		t.Fatal(err)
	}
	if st.ActiveRuns != 0 || st.Sessions > maxSessions {
		t.Errorf("after every run returned: %d active runs, %d sessions; want 0 and at most %d",
			st.ActiveRuns, st.Sessions, maxSessions)
	}
	ids, err := rt.ListSessions()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		s, ok, err := rt.Session(id)
		if err != nil || !ok {
			t.Fatalf("Session(%q): %v, %v", id, ok, err)
		}
		if err := wellFormed(s.Messages); err != nil {
			t.Errorf("session %q: %v", id, err)
		}
	}
	if n := rt.mirrorCount(); n > maxSessions {
		t.Errorf("the host keeps %d mirrors; want at most %d (one per live session)", n, maxSessions)
	}
}

// typed reports why err is not what a run may return: nil, or a
// *core.Error whose code is not internal.
func typed(err error) error {
	if err == nil {
		return nil
	}
	var e *core.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("untyped error %T: %v", err, err)
	}
	if e.Code == core.CodeInternal {
		return fmt.Errorf("internal error: %v", err)
	}
	return nil
}

// waitAll waits for wg, at most d; it fails t when runs are still out.
func waitAll(t *testing.T, wg *sync.WaitGroup, out *atomic.Int64, d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%d runs still hang after %v", out.Load(), d)
	}
}

// Ensure 16 goroutines of tool-using turns over more sessions than
// MaxSessions all complete: no run fails, none hangs, and afterwards no
// run is active, the module keeps at most MaxSessions sessions, and the
// host no more mirrors than that.
func TestRuntime_Run_ConcurrentToolTurns(t *testing.T) {
	const maxSessions = 4
	// A model that takes a moment, as one behind a network does.
	rec := &recorder{}
	model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		time.Sleep(time.Millisecond)
		return rec.Complete(ctx, req)
	})
	rt := mustRuntime(t, mustInstance(t), Config{Model: model, Tools: []core.Tool{clock},
		Limits: core.Limits{MaxSessions: maxSessions}})
	var wg sync.WaitGroup
	var out atomic.Int64
	errs := make(chan error, 16*8)
	for g := range 16 {
		wg.Add(1)
		out.Add(8)
		go func() {
			defer wg.Done()
			// Each goroutine is a host keeping its own conversation and
			// passing it whole, as a stateless server does.
			hist := []core.SeedMessage{seed(core.RoleUser, "hello"), seed(core.RoleAssistant, "hi")}
			for i := range 8 {
				sid := "s" + strconv.Itoa(g)
				res, err := rt.Run(context.Background(), core.RunRequest{SessionID: sid,
					Input: fmt.Sprint("g", g, "i", i), WithHistory: true, History: hist})
				out.Add(-1)
				if err != nil {
					errs <- fmt.Errorf("goroutine %d run %d: %w", g, i, err)
					continue
				}
				if res.Reply.Content == "" {
					errs <- fmt.Errorf("goroutine %d run %d: empty reply", g, i)
				}
				hist = append(hist, asSeed(res.Appended)...)
			}
		}()
	}
	waitAll(t, &wg, &out, 30*time.Second)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkRuntime(t, rt, maxSessions)
}

// fault is what a faulty model or tool does on one call.
type fault int

const (
	faultNone      fault = iota
	faultError           // returns an error
	faultCoreError       // returns a *core.Error of another code
	faultPanic           // panics
	faultSlow            // answers after a few milliseconds
	faultHang            // blocks until its context is done
	faultHangDeaf        // blocks, ignoring its context, until the test ends
	faultNilReply        // returns neither a reply nor an error
	faultCount
)

// faulty is a model and a tool whose calls misbehave at random.
type faulty struct {
	mu   sync.Mutex
	rng  *rand.Rand
	stop chan struct{} // closed when the test ends: frees deaf hangs
	calm atomic.Bool   // no faults while set
}

func (f *faulty) pick() fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calm.Load() || f.rng.Intn(3) == 0 {
		return faultNone
	}
	return fault(f.rng.Intn(int(faultCount)))
}

// misbehave acts out a fault; it returns done=true with err when the
// call ends there.
func (f *faulty) misbehave(ctx core.Context, x fault) (done bool, err error) {
	switch x {
	case faultError:
		return true, errors.New("faulty: failed")
	case faultCoreError:
		return true, core.NewError(core.CodeLimitExceeded, "faulty: a code of its own")
	case faultPanic:
		panic("faulty: panicked")
	case faultSlow:
		time.Sleep(time.Duration(1+rand.Intn(3)) * time.Millisecond)
	case faultHang:
		<-ctx.Done()
		return true, ctx.Err()
	case faultHangDeaf:
		<-f.stop
		return true, errors.New("faulty: woke at the end")
	}
	return false, nil
}

func (f *faulty) Complete(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	x := f.pick()
	if done, err := f.misbehave(ctx, x); done {
		return nil, err
	}
	if x == faultNilReply {
		return nil, nil
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role == core.RoleUser && f.pick() != faultNone {
		req.Delta("thinking")
		return &core.ModelReply{ToolCalls: []core.ToolCall{{ID: "c" + strconv.Itoa(req.Step), Name: "clock", Arguments: `{}`}}}, nil
	}
	return &core.ModelReply{Content: "ok after " + strconv.Itoa(len(req.Messages))}, nil
}

func (f *faulty) tool() core.Tool {
	return core.Tool{ToolSpec: core.ToolSpec{Name: "clock", Description: "the time"},
		Call: func(ctx core.Context, inv core.ToolInvocation) (string, error) {
			if done, err := f.misbehave(ctx, f.pick()); done {
				return "", err
			}
			return "noon", nil
		}}
}

// propertyRounds is how many batches TestRuntime_Run_Faults runs:
// AGENTRT_PROPERTY_ROUNDS, or a few for a bounded go test.
func propertyRounds(t *testing.T) int {
	if s := os.Getenv("AGENTRT_PROPERTY_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("AGENTRT_PROPERTY_ROUNDS=%q: want a positive number", s)
		}
		return n
	}
	if testing.Short() {
		return 1
	}
	return 3
}

// Ensure random faults of a Go model and Go tools (errors, panics, nil
// replies, hangs that honour the context and hangs that do not), random
// cancels and timeouts, over a few sessions and a small MaxSessions,
// leave the runtime sound: every run returns a result or a typed error
// that is not internal, no run stays active, the module keeps at most
// MaxSessions sessions, and every session is well-formed.
func TestRuntime_Run_Faults(t *testing.T) {
	const maxSessions = 3
	seedv := time.Now().UnixNano()
	t.Logf("seed %d", seedv)
	rng := rand.New(rand.NewSource(seedv))
	f := &faulty{rng: rand.New(rand.NewSource(seedv + 1)), stop: make(chan struct{})}
	defer close(f.stop)
	rt := mustRuntime(t, mustInstance(t), Config{Model: f, Tools: []core.Tool{f.tool()},
		Limits: core.Limits{MaxSessions: maxSessions}})
	hist := []core.SeedMessage{seed(core.RoleUser, "hello"), seed(core.RoleAssistant, "hi")}
	for round := range propertyRounds(t) {
		var wg sync.WaitGroup
		var out atomic.Int64
		errs := make(chan error, 64)
		for g := range 12 {
			// Each goroutine's choices, drawn up front: rng is not shared.
			sid := "s" + strconv.Itoa(rng.Intn(5))
			withHist := rng.Intn(2) == 0
			cancelAfter := time.Duration(0)
			if rng.Intn(4) == 0 {
				cancelAfter = time.Duration(1+rng.Intn(20)) * time.Millisecond
			}
			byID := rng.Intn(2) == 0
			runID := fmt.Sprint("r", round, "-", g)
			wg.Add(1)
			out.Add(1)
			go func() {
				defer wg.Done()
				defer out.Add(-1)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if cancelAfter > 0 {
					time.AfterFunc(cancelAfter, func() {
						if byID {
							rt.CancelRun(runID)
						} else {
							cancel()
						}
					})
				}
				_, err := rt.Run(ctx, core.RunRequest{SessionID: sid, RunID: runID, Input: "q" + runID,
					WithHistory: withHist, History: hist, Policy: core.Policy{TimeoutMs: 40}})
				if e := typed(err); e != nil {
					errs <- fmt.Errorf("run %s: %w", runID, e)
				}
			}()
		}
		waitAll(t, &wg, &out, 20*time.Second)
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		f.calm.Store(true)
		checkRuntime(t, rt, maxSessions)
		f.calm.Store(false)
		if t.Failed() {
			return
		}
	}
}

// mirrorCount returns how many sessions the host keeps a mirror of.
func (rt *Runtime) mirrorCount() int {
	rt.in.mu.Lock()
	defer rt.in.mu.Unlock()
	return len(rt.mirrors)
}

// Ensure a Run in progress when its Runtime is closed returns code
// cancelled (as core's Close cancels runs), not an internal error, and
// that a session id that is not UTF-8 is refused, typed, at once.
func TestRuntime_Run_ClosedAndBadIDs(t *testing.T) {
	release := make(chan struct{})
	called := make(chan struct{}, 1)
	model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		called <- struct{}{}
		<-release
		return &core.ModelReply{Content: "late"}, nil
	})
	in := mustInstance(t)
	rt := mustRuntime(t, in, Config{Model: model})
	done := make(chan error, 1)
	go func() {
		_, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "hi"})
		done <- err
	}()
	<-called
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	close(release)
	select {
	case err := <-done:
		if core.ErrorCode(err) != core.CodeCancelled {
			t.Fatalf("run in progress at Close: %v, want code cancelled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run in progress at Close hangs")
	}
	if _, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s", Input: "again"}); typed(err) != nil || err == nil {
		t.Fatalf("run after Close: %v, want a typed refusal", err)
	}

	rt2 := mustRuntime(t, in, Config{Model: &recorder{}, Tools: []core.Tool{clock}})
	for _, id := range []string{"x\xff", "x\xed\xa0\x80"} {
		_, err := rt2.Run(context.Background(), core.RunRequest{SessionID: id, Input: "hi"})
		if core.ErrorCode(err) != core.CodeInvalidArgument {
			t.Errorf("session id %q: %v, want code invalid_argument", id, err)
		}
	}
	checkRuntime(t, rt2, core.DefaultLimits.MaxSessions)
}
