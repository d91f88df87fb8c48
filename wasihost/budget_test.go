package wasihost

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// budgetTurns runs one turn on each of n sessions, each turn storing an
// input and a reply of about size bytes.
func budgetTurns(t *testing.T, rt *Runtime, n, size int) {
	t.Helper()
	input := strings.Repeat("x", size)
	for i := range n {
		res, err := rt.Run(context.Background(), core.RunRequest{SessionID: "s" + strconv.Itoa(i), Input: input})
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		if res.Reply.Content == "" {
			t.Fatalf("session %d: an empty reply", i)
		}
	}
}

// budgetUsed is what the module's store counts against MaxTotalBytes
// (core.Stats.BudgetUsed, with no run in progress): its messages' bytes
// and their overhead.
func budgetUsed(t *testing.T, rt *Runtime) (used int64, sessions, evictions int) {
	t.Helper()
	st, err := rt.Stats(false)
	if err != nil {
		t.Fatal(err)
	}
	if st.ActiveRuns != 0 {
		t.Fatalf("%d runs active after every run returned", st.ActiveRuns)
	}
	used = st.Bytes + int64(st.Messages)*core.MessageOverhead
	// The stats frame carries the module's own count (core.Stats.BudgetUsed).
	if st.BudgetUsed != used || st.BudgetBytes <= 0 {
		t.Fatalf("stats: budgetUsed %d, budgetBytes %d; want %d and the limit", st.BudgetUsed, st.BudgetBytes, used)
	}
	return used, st.Sessions, st.Evictions
}

// Ensure the module enforces Limits.MaxTotalBytes set through wasihost:
// many sessions under a small budget evict the least recently used ones,
// and the store stays within the budget. The config frame used to carry
// six limits and not this one: the module then held every session.
func TestRuntime_Limits_MaxTotalBytes(t *testing.T) {
	for _, mc := range echoModels {
		t.Run(mc.name, func(t *testing.T) {
			const budget = 64 << 10
			rt := mustRuntime(t, mustInstance(t), Config{Model: mc.model, Limits: core.Limits{MaxTotalBytes: budget}})
			budgetTurns(t, rt, 40, 4<<10) // about 8 KiB a session: 320 KiB in all
			used, sessions, evictions := budgetUsed(t, rt)
			if used > budget {
				t.Errorf("the store holds %d bytes in %d sessions, over MaxTotalBytes (%d)", used, sessions, budget)
			}
			if evictions == 0 || sessions >= 40 {
				t.Errorf("%d sessions, %d evictions: want the budget to evict sessions", sessions, evictions)
			}
			// The last session, the most recently used, is still there.
			if _, ok, err := rt.Session("s39"); err != nil || !ok {
				t.Errorf("the last session was evicted: %v, %v", ok, err)
			}
		})
	}
}

// Ensure the host's mirrors follow the module's evictions under
// Limits.MaxTotalBytes: after many sessions under a small budget, the
// host keeps a mirror of live sessions only, and their bytes stay within
// the budget. The mirrors were pruned only past MaxSessions (1000 by
// default), so a small budget left the host with a mirror of every
// session the module had evicted.
func TestRuntime_Mirrors_FollowBudgetEvictions(t *testing.T) {
	const budget = 64 << 10
	rt := mustRuntime(t, mustInstance(t), Config{Model: core.Echo{}, Limits: core.Limits{MaxTotalBytes: budget}})
	budgetTurns(t, rt, 200, 4<<10) // a mirror of each would hold 1.6 MiB
	_, sessions, evictions := budgetUsed(t, rt)
	if evictions == 0 {
		t.Fatalf("no session was evicted (%d sessions): the budget did not reach the module", sessions)
	}
	live, err := rt.ListSessions()
	if err != nil {
		t.Fatal(err)
	}
	rt.in.mu.Lock()
	var bytes int64
	var stale []string
	for id, m := range rt.mirrors {
		for i := range m.msgs {
			bytes += int64(len(m.msgs[i].Content))
		}
		if !contains(live, id) {
			stale = append(stale, id)
		}
	}
	n := len(rt.mirrors)
	rt.in.mu.Unlock()
	if len(stale) > 0 || n > len(live) {
		t.Errorf("the host keeps %d mirrors for %d live sessions (%d of evicted sessions)", n, len(live), len(stale))
	}
	if bytes > budget {
		t.Errorf("the mirrors hold %d bytes of content, over the module's budget (%d)", bytes, budget)
	}
}

// Ensure a mirror still serves its session after other sessions were
// evicted and their mirrors dropped: the next turn of a live session
// sends the model the whole session, in order.
func TestRuntime_Mirrors_LiveSessionAfterEvictions(t *testing.T) {
	var last []string
	model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		last = contents(req.Messages)
		return core.Echo{}.Complete(ctx, req)
	})
	rt := mustRuntime(t, mustInstance(t), Config{Model: model, Limits: core.Limits{MaxTotalBytes: 64 << 10}})
	ctx := context.Background()
	big := strings.Repeat("y", 4<<10)
	for i := range 30 {
		// keep is used between every two other sessions: never the least
		// recently used.
		if _, err := rt.Run(ctx, core.RunRequest{SessionID: "keep", Input: "k" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
		for j := range 2 {
			if _, err := rt.Run(ctx, core.RunRequest{SessionID: "other" + strconv.Itoa(2*i+j), Input: big}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := rt.Run(ctx, core.RunRequest{SessionID: "keep", Input: "k30"}); err != nil {
		t.Fatal(err)
	}
	s, ok, err := rt.Session("keep")
	if err != nil || !ok {
		t.Fatalf("keep: %v, %v", ok, err)
	}
	if len(s.Messages) != 62 {
		t.Fatalf("keep holds %d messages, want 62", len(s.Messages))
	}
	if got, want := strings.Join(last, "|"), strings.Join(contents(s.Messages[:61]), "|"); got != want {
		t.Fatalf("the last model call was sent %q, want the session %q", got, want)
	}
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// Ensure Policy.MaxContextTokens crosses the begin frame: the module
// windows what the model is sent by tokens as core does (the same
// windows, the same Result.Context and model.context events, with
// core.EstimateTokens), and refuses an input that cannot fit, changing
// nothing.
func TestRuntime_Run_MaxContextTokens(t *testing.T) {
	text := strings.Repeat("abcd", 46) // 46 + 4 = 50 tokens
	type call struct {
		offset, n int
	}
	recording := func(calls *[]call) core.Model {
		return core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
			*calls = append(*calls, call{req.Offset, len(req.Messages)})
			return &core.ModelReply{Content: text}, nil
		})
	}
	var wantCalls, gotCalls []call
	native, err := core.New(core.Config{Model: recording(&wantCalls), SystemPrompt: "Be brief."})
	if err != nil {
		t.Fatal(err)
	}
	defer native.Close()
	rt := mustRuntime(t, mustInstance(t), Config{Model: recording(&gotCalls), SystemPrompt: "Be brief."})
	ctx := context.Background()
	policy := core.Policy{MaxContextTokens: 1000}
	for i := range 40 {
		var wantEv, gotEv []core.ContextReport
		onEvent := func(evs *[]core.ContextReport) func(core.Event) {
			return func(ev core.Event) {
				if ev.Type == core.EventModelContext {
					*evs = append(*evs, *ev.Context)
				}
			}
		}
		want, err := native.Execute(ctx, core.RunRequest{SessionID: "s", Input: text, Policy: policy, OnEvent: onEvent(&wantEv)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := rt.Run(ctx, core.RunRequest{SessionID: "s", Input: text, Policy: policy, OnEvent: onEvent(&gotEv)})
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		if got.Context == nil || *got.Context != *want.Context || !reflect.DeepEqual(gotEv, wantEv) {
			t.Fatalf("turn %d: context %+v, events %+v; core says %+v, %+v", i, got.Context, gotEv, want.Context, wantEv)
		}
		// Without OnEvent the result still reports the window.
		if i == 39 {
			again, err := rt.Run(ctx, core.RunRequest{SessionID: "t", Input: "x", Policy: policy})
			if err != nil || again.Context == nil || again.Context.Messages != 1 {
				t.Fatalf("without OnEvent: %+v, %v", again, err)
			}
		}
	}
	if !reflect.DeepEqual(gotCalls[:40], wantCalls) {
		t.Fatalf("the model was sent %v; core sends %v", gotCalls[:40], wantCalls)
	}
	if wantCalls[39].offset == 0 {
		t.Fatal("the window never moved: the test measures nothing")
	}
	before, _, _ := rt.Session("s")
	_, err = rt.Run(ctx, core.RunRequest{SessionID: "s", Input: strings.Repeat("x", 4000), Policy: policy})
	if core.ErrorCode(err) != core.CodeLimitExceeded || !strings.Contains(err.Error(), "maxContextTokens (1000)") {
		t.Fatalf("an input over the budget: got %v, want limit_exceeded naming the budget", err)
	}
	after, _, _ := rt.Session("s")
	if !reflect.DeepEqual(after, before) {
		t.Fatal("a refused input changed the session")
	}
	if _, err = rt.Run(ctx, core.RunRequest{SessionID: "s", Input: "x", Policy: core.Policy{MaxContextTokens: -1}}); core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Fatalf("a negative budget: got %v, want invalid_argument", err)
	}
}

// Ensure every field of core.Limits reaches the module: a runtime created
// with one limit set reports it in force (the limits query), for each
// field of the struct, walked by reflection so that a limit added to
// core.Limits and not to the config frame fails here.
func TestInstance_NewRuntime_EveryLimit(t *testing.T) {
	in := mustInstance(t)
	typ := reflect.TypeOf(core.Limits{})
	for i := 0; i < typ.NumField(); i++ {
		t.Run(typ.Field(i).Name, func(t *testing.T) {
			var set core.Limits
			want := core.DefaultLimits
			// Below every default: a value the module would not use on its
			// own.
			reflect.ValueOf(&set).Elem().Field(i).SetInt(int64(7 + i))
			reflect.ValueOf(&want).Elem().Field(i).SetInt(int64(7 + i))
			rt := mustRuntime(t, in, Config{Limits: set})
			defer rt.Close()
			out, err := rt.exchange(expFeed, wire.AppendLimitsQuery(nil))
			if err != nil {
				t.Fatal(err)
			}
			got, err := wire.DecodeLimits(out)
			if err != nil {
				t.Fatal(err)
			}
			if *got != want {
				t.Fatalf("limits in force %+v, want %+v", *got, want)
			}
		})
	}
}

// Ensure a frame that says more sessions were dropped than it names (the
// module logs 1,024 between two frames) drops the mirrors of the dropped
// sessions only: the turn's own session keeps its mirror, which the
// module counts on, and the run goes on.
func TestRuntime_Mirrors_DroppedAll(t *testing.T) {
	var last []string
	model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		last = contents(req.Messages)
		return core.Echo{}.Complete(ctx, req)
	})
	rt := mustRuntime(t, mustInstance(t), Config{Model: model, Limits: core.Limits{MaxSessions: 2000}})
	ctx := context.Background()
	for _, in := range []string{"a", "b"} {
		if _, err := rt.Run(ctx, core.RunRequest{SessionID: "keep", Input: in}); err != nil {
			t.Fatal(err)
		}
	}
	budgetTurns(t, rt, 1100, 1)
	// Deleting answers no action frame: the module logs every id until
	// the next one, past its 1,024.
	for i := range 1100 {
		if ok, err := rt.DeleteSession("s" + strconv.Itoa(i)); !ok || err != nil {
			t.Fatalf("delete s%d: %v, %v", i, ok, err)
		}
	}
	if _, err := rt.Run(ctx, core.RunRequest{SessionID: "keep", Input: "c"}); err != nil {
		t.Fatalf("a run after the module dropped more sessions than it names: %v", err)
	}
	s, _, err := rt.Session("keep")
	if err != nil || len(s.Messages) != 6 || strings.Join(last, "|") != strings.Join(contents(s.Messages[:5]), "|") {
		t.Fatalf("the model was sent %q; the session is %q (%v)", last, contents(s.Messages), err)
	}
	if n := rt.mirrorCount(); n != 1 {
		t.Fatalf("the host keeps %d mirrors, want 1 (keep)", n)
	}
}
