package core_test

import (
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/mock"
)

// cost is what one message of n bytes counts against MaxTotalBytes.
func cost(n int) int64 { return int64(n) + core.MessageOverhead }

// okModel answers "ok" (2 bytes) to everything.
func okModel() *mock.Model { return &mock.Model{} }

func TestStore_Budget_EvictsLeastRecentlyUsedIdleFirst(t *testing.T) {
	// Room for exactly four turns of input "x" and reply "ok".
	turn := cost(1) + cost(2)
	rt := mustRuntime(t, core.Config{Model: okModel(), Limits: core.Limits{MaxTotalBytes: 4 * turn}})
	for _, id := range []string{"a", "b", "c", "a", "d"} {
		mustComplete(t, rt, core.RunRequest{SessionID: id, Input: "x"})
	}
	// d needed one turn of room: b was the least recently used.
	if got := rt.ListSessions(); !reflect.DeepEqual(got, []string{"a", "c", "d"}) {
		t.Fatalf("sessions = %v, want [a c d]", got)
	}
	st := rt.Stats()
	if st.Evictions != 1 || st.BudgetBytes != 4*turn {
		t.Fatalf("stats = %+v", st)
	}
	if want := st.Bytes + int64(st.Messages)*core.MessageOverhead; st.BudgetUsed != want || st.BudgetUsed > st.BudgetBytes {
		t.Fatalf("budgetUsed = %d, want %d (<= %d)", st.BudgetUsed, want, st.BudgetBytes)
	}
}

func TestStore_Budget_NeverEvictsBusySessions(t *testing.T) {
	turn := cost(1) + cost(2)
	started, release := make(chan struct{}, 4), make(chan struct{})
	m := &mock.Model{}
	rt := mustRuntime(t, core.Config{Model: m, Limits: core.Limits{MaxTotalBytes: 2 * turn}})
	mustComplete(t, rt, core.RunRequest{SessionID: "old", Input: "x"})
	m.CompleteFn = mock.Blocking(started, release)
	busy, err := rt.Start(bg, core.RunRequest{SessionID: "old", Input: "y"})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	m.CompleteFn = nil
	// Ensure a new session cannot take the room of a session a run holds:
	// "old" is busy, so nothing can be evicted and the turn is refused.
	before := rt.Stats()
	run, err := rt.Start(bg, core.RunRequest{SessionID: "new", Input: strings.Repeat("z", int(turn))})
	if err == nil {
		_, err = waitRun(t, run)
	}
	if core.ErrorCode(err) != core.CodeLimitExceeded {
		t.Fatalf("err = %v, want limit_exceeded", err)
	}
	if _, ok := rt.Session("new"); ok {
		t.Fatal("the refused turn created its session")
	}
	if after := rt.Stats(); after.Sessions != before.Sessions || after.Evictions != 0 {
		t.Fatalf("stats changed: %+v -> %+v", before, after)
	}
	close(release)
	if _, err := waitRun(t, busy); err != nil {
		t.Fatal(err)
	}
}

func TestRun_Budget_ErrTurnCannotFit(t *testing.T) {
	budget := 4 * cost(10)
	tests := []struct {
		name string
		req  core.RunRequest
		// reply is the model's answer.
		reply string
	}{
		// Ensure an input larger than the whole budget is refused at Start.
		{name: "ErrInput", req: core.RunRequest{SessionID: "s", Input: strings.Repeat("i", int(budget))}, reply: "ok"},
		// Ensure a history larger than the budget is refused at Start.
		{name: "ErrHistory", req: core.RunRequest{SessionID: "s", Input: "x", WithHistory: true,
			History: []core.SeedMessage{user(strings.Repeat("h", int(budget))), assistant("a")}}, reply: "ok"},
		// Ensure a reply that cannot fit fails the run and rolls it back.
		{name: "ErrReply", req: core.RunRequest{SessionID: "s", Input: "x"}, reply: strings.Repeat("r", int(budget))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &mock.Model{CompleteFn: func(_ core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
				if req.SessionID != "s" {
					return &core.ModelReply{Content: "ok"}, nil
				}
				return &core.ModelReply{Content: tc.reply}, nil
			}}
			rt := mustRuntime(t, core.Config{Model: m, Limits: core.Limits{MaxTotalBytes: budget, MaxMessageBytes: 2 * budget, MaxSeedBytes: 2 * budget, MaxSessionBytes: 2 * budget}})
			mustComplete(t, rt, core.RunRequest{SessionID: "other", Input: "keep", WithHistory: true, History: []core.SeedMessage{user("u")}})
			before := stateOf(rt)
			run, err := rt.Start(bg, tc.req)
			if err == nil {
				_, err = waitRun(t, run)
			}
			if core.ErrorCode(err) != core.CodeLimitExceeded {
				t.Fatalf("err = %v, want limit_exceeded", err)
			}
			requireSameState(t, stateOf(rt), before)
			if st := rt.Stats(); st.Evictions != 0 || st.BudgetUsed != st.Bytes+int64(st.Messages)*core.MessageOverhead {
				t.Fatalf("stats = %+v: evicted, or a reservation left behind", st)
			}
		})
	}
}

func TestLimits_Defaults_BoundMemory(t *testing.T) {
	d := core.DefaultLimits
	if d.MaxTotalBytes <= 0 || d.MaxTotalBytes > 32<<20 {
		t.Fatalf("MaxTotalBytes = %d: must fit a 128 MB isolate with room to spare", d.MaxTotalBytes)
	}
	if d.MaxSessionBytes > d.MaxTotalBytes || d.MaxSeedBytes > d.MaxTotalBytes {
		t.Fatalf("per-session limits exceed the budget: %+v", d)
	}
	// Ensure 1 MiB inputs over many sessions, far past where the old
	// defaults ran out of memory in the module, never take the store
	// over its budget: old sessions are evicted instead.
	rt := mustRuntime(t, core.Config{Model: okModel()})
	input := strings.Repeat("m", 1<<20-64)
	for i := 0; i < 300; i++ {
		mustComplete(t, rt, core.RunRequest{SessionID: "s" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)), Input: input})
		if st := rt.Stats(); st.BudgetUsed > st.BudgetBytes {
			t.Fatalf("turn %d: budgetUsed %d > %d", i, st.BudgetUsed, st.BudgetBytes)
		}
	}
	if st := rt.Stats(); st.Evictions == 0 {
		t.Fatalf("stats = %+v: expected evictions", st)
	}
}

func TestRuntime_RevertRun(t *testing.T) {
	h := []core.SeedMessage{user("u1"), assistant("a1")}
	t.Run("OK", func(t *testing.T) {
		// Ensure a completed turn that is the session's tail is cut,
		// leaving what seeding added.
		rt := mustRuntime(t, core.Config{})
		res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "x", History: h, WithHistory: true})
		if !rt.RevertRun("s", res.RunID) {
			t.Fatal("RevertRun = false")
		}
		if got := messagesOf(rt, "s"); !reflect.DeepEqual(got, asMessages(h)) {
			t.Fatalf("session = %v, want the seeded history", contents(got))
		}
		if st := rt.Stats(); st.Messages != 2 || st.BudgetUsed != st.Bytes+2*core.MessageOverhead {
			t.Fatalf("stats = %+v", st)
		}
		// Ensure a second revert of the same run does not cut again; the
		// session is dropped instead (it no longer holds the turn).
		if rt.RevertRun("s", res.RunID) {
			t.Fatal("second RevertRun = true")
		}
		if _, ok := rt.Session("s"); ok {
			t.Fatal("session kept after a revert that did not apply")
		}
	})
	t.Run("OKFirstTurnRemovesEmptySession", func(t *testing.T) {
		rt := mustRuntime(t, core.Config{})
		res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "x"})
		if !rt.RevertRun("s", res.RunID) {
			t.Fatal("RevertRun = false")
		}
		if _, ok := rt.Session("s"); ok || rt.Stats().Sessions != 0 {
			t.Fatal("empty session kept")
		}
	})
	t.Run("ErrNewerTurnDropsSession", func(t *testing.T) {
		// Ensure a turn something newer was built on is never cut from
		// under it: the session is removed, so the host's history seeds it.
		rt := mustRuntime(t, core.Config{})
		first := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "x"})
		mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "y"})
		if rt.RevertRun("s", first.RunID) {
			t.Fatal("RevertRun = true")
		}
		if _, ok := rt.Session("s"); ok {
			t.Fatal("session kept")
		}
	})
	t.Run("ErrBusySessionDropped", func(t *testing.T) {
		started, release := make(chan struct{}, 1), make(chan struct{})
		m := &mock.Model{}
		rt := mustRuntime(t, core.Config{Model: m})
		first := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "x"})
		m.CompleteFn = mock.Blocking(started, release)
		next, err := rt.Start(bg, core.RunRequest{SessionID: "s", Input: "y"})
		if err != nil {
			t.Fatal(err)
		}
		<-started
		if rt.RevertRun("s", first.RunID) {
			t.Fatal("RevertRun = true while a run holds the session")
		}
		close(release)
		if _, err := waitRun(t, next); err != nil {
			t.Fatal(err)
		}
		if _, ok := rt.Session("s"); ok {
			t.Fatal("the removed session came back")
		}
	})
	t.Run("ErrUnknownSession", func(t *testing.T) {
		rt := mustRuntime(t, core.Config{})
		if rt.RevertRun("none", "r") {
			t.Fatal("RevertRun = true")
		}
	})
}

func TestRuntime_Start_RunIDs(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	// Ensure generated ids carry the reserved prefix.
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "x"})
	if !strings.HasPrefix(res.RunID, core.GeneratedRunIDPrefix) {
		t.Fatalf("generated id %q lacks %q", res.RunID, core.GeneratedRunIDPrefix)
	}
	// Ensure a host id with the reserved prefix is refused, changing nothing.
	before := stateOf(rt)
	_, err := rt.Start(bg, core.RunRequest{SessionID: "s", Input: "y", RunID: core.GeneratedRunIDPrefix + "run-9"})
	if core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Fatalf("err = %v, want invalid_argument", err)
	}
	requireSameState(t, stateOf(rt), before)
	// Ensure host ids shaped like the old generated ones never meet a
	// generated id.
	started, release := make(chan struct{}, 4), make(chan struct{})
	rt2 := mustRuntime(t, core.Config{Model: &mock.Model{CompleteFn: mock.Blocking(started, release)}})
	var runs []*core.Run
	for i, id := range []string{"run-1", "run-2", ""} {
		r, err := rt2.Start(bg, core.RunRequest{SessionID: "s" + string(rune('0'+i)), Input: "x", RunID: id})
		if err != nil {
			t.Fatalf("run %q: %v", id, err)
		}
		runs = append(runs, r)
	}
	close(release)
	for _, r := range runs {
		if _, err := waitRun(t, r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStore_Budget_Hammer runs, reverts, deletes and reads from many
// goroutines under a small budget; the budget is never exceeded, and
// when all is done it counts exactly the stored messages.
func TestStore_Budget_Hammer(t *testing.T) {
	budget := 40 * cost(64)
	rt := mustRuntime(t, core.Config{Limits: core.Limits{MaxTotalBytes: budget, MaxMessageBytes: budget}})
	var wg sync.WaitGroup
	var over atomic.Int64
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 60; i++ {
				id := string(rune('a' + (g+i)%10))
				input := strings.Repeat("x", (g*7+i*13)%200)
				if st := rt.Stats(); st.BudgetUsed > st.BudgetBytes {
					over.Store(st.BudgetUsed)
				}
				switch i % 6 {
				case 0:
					rt.DeleteSession(id)
				case 1:
					res, err := rt.Execute(bg, core.RunRequest{SessionID: id, Input: input})
					if err == nil {
						rt.RevertRun(id, res.RunID)
					}
				default:
					run, err := rt.Start(bg, core.RunRequest{SessionID: id, Input: input, WithHistory: true,
						History: []core.SeedMessage{user("h"), assistant(strings.Repeat("y", i*3))}})
					if err != nil {
						if core.ErrorCode(err) != core.CodeLimitExceeded {
							t.Error(err)
						}
						continue
					}
					if i%7 == 0 {
						run.Cancel()
					}
					if _, err := run.Wait(bg); err != nil && core.ErrorCode(err) != core.CodeLimitExceeded && core.ErrorCode(err) != core.CodeCancelled {
						t.Error(err)
					}
				}
			}
		}(g)
	}
	wg.Wait()
	if v := over.Load(); v != 0 {
		t.Fatalf("budgetUsed reached %d > %d", v, budget)
	}
	st := rt.Stats()
	var msgs int
	var bytes int64
	for _, id := range rt.ListSessions() {
		for _, m := range messagesOf(rt, id) {
			msgs++
			bytes += m.Size()
		}
	}
	if st.Messages != msgs || st.Bytes != bytes || st.BudgetUsed != bytes+int64(msgs)*core.MessageOverhead || st.ActiveRuns != 0 {
		t.Fatalf("stats %+v disagree with the store (%d messages, %d bytes)", st, msgs, bytes)
	}
}

// Ensure a run refused as busy evicts nothing, though its input would
// have needed room.
func TestRuntime_Start_ErrSessionBusyEvictsNothing(t *testing.T) {
	turn := cost(1) + cost(2)
	started, release := make(chan struct{}, 1), make(chan struct{})
	m := &mock.Model{}
	rt := mustRuntime(t, core.Config{Model: m, Limits: core.Limits{MaxTotalBytes: 3 * turn}})
	mustComplete(t, rt, core.RunRequest{SessionID: "idle", Input: "x"})
	m.CompleteFn = mock.Blocking(started, release)
	busy, err := rt.Start(bg, core.RunRequest{SessionID: "busy", Input: "x"})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	_, err = rt.Start(bg, core.RunRequest{SessionID: "busy", Input: strings.Repeat("z", int(2*turn)), Policy: core.Policy{OnBusy: core.BusyReject}})
	if core.ErrorCode(err) != core.CodeSessionBusy {
		t.Fatalf("err = %v, want session_busy", err)
	}
	if _, ok := rt.Session("idle"); !ok || rt.Stats().Evictions != 0 {
		t.Fatalf("a refused run evicted: stats %+v", rt.Stats())
	}
	close(release)
	if _, err := waitRun(t, busy); err != nil {
		t.Fatal(err)
	}
}
