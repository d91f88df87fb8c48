package core_test

import (
	"sync"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// The tests in this file hold the state a turn reuses or makes lazily to
// what each owner may see: done channels made when first asked for, a
// session's lane serving later sessions, a Run's Turn inside it, the
// message.appended event sharing the result's copy of its message, and
// recycled runs.

// closed reports whether c is closed, without waiting.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func begin(t *testing.T, rt *core.Runtime, req core.RunRequest) *core.Turn {
	t.Helper()
	tn, err := rt.Begin(bg, req)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	return tn
}

func reply(text string) *core.ModelReply { return &core.ModelReply{Content: text} }

func TestRun_DoneMadeLazily(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	// Ensure a turn nobody asked for Done closes it all the same: asked
	// after the end, twice, it is closed, and Wait answers at once.
	tn := begin(t, rt, core.RunRequest{SessionID: "s", Input: "a"})
	if a := tn.Next(); a.Kind != core.ActionModel {
		t.Fatalf("got %v, want model", a.Kind)
	}
	if a := tn.FeedModel(reply("r"), nil); a.Kind != core.ActionDone {
		t.Fatalf("got %v, want done", a.Kind)
	}
	run := tn.Run()
	if !closed(run.Done()) || !closed(run.Done()) {
		t.Error("Done of an ended run is not closed")
	}
	if res, err := run.Wait(bg); err != nil || res.Reply.Content != "r" {
		t.Errorf("Wait: %v, %v", res, err)
	}
	// Ensure a Done asked for before the end is the one closed at the
	// end, and a later call returns a closed channel too.
	tn = begin(t, rt, core.RunRequest{SessionID: "s", Input: "b"})
	early := tn.Run().Done()
	tn.Next()
	if closed(early) {
		t.Fatal("Done is closed while the turn runs")
	}
	tn.FeedModel(reply("r"), nil)
	if !closed(early) || !closed(tn.Run().Done()) {
		t.Error("Done asked for early is not closed at the end")
	}
	// Ensure a turn that fails before it gets its lane closes Done too.
	holder := begin(t, rt, core.RunRequest{SessionID: "s", Input: "c"})
	holder.Next()
	waiter := begin(t, rt, core.RunRequest{SessionID: "s", Input: "d"})
	if a := waiter.Next(); a.Kind != core.ActionWait {
		t.Fatalf("got %v, want wait", a.Kind)
	}
	rt.CancelRun(waiter.Run().ID())
	if a := waiter.Next(); a.Kind != core.ActionFailed || a.Err.Code != core.CodeCancelled {
		t.Fatalf("got %+v, want cancelled", a)
	}
	if !closed(waiter.Run().Done()) {
		t.Error("Done of a cancelled waiter is not closed")
	}
	holder.FeedModel(reply("r"), nil)
}

func TestRun_DoneRacesTheEnd(t *testing.T) {
	// Ensure Done, Wait and the model's context, asked for from other
	// goroutines while the run ends, all see it end (run with -race).
	model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		go func() { <-ctx.Done() }() // asked for while the run ends
		return reply("r"), nil
	})
	rt := mustRuntime(t, core.Config{Model: model})
	for i := 0; i < 50; i++ {
		run, err := rt.Start(bg, core.RunRequest{SessionID: "s" + string(rune('a'+i%5)), Input: "x"})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if g%2 == 0 {
					<-run.Done()
				} else if _, err := run.Wait(bg); err != nil && core.AsError(err).Code != core.CodeCancelled {
					t.Error(err)
				}
			}()
		}
		if i%3 == 0 {
			go run.Cancel() // a cancel racing the end: cancelled or completed
		}
		wg.Wait()
		if !closed(run.Done()) {
			t.Fatal("Done is not closed after Wait returned")
		}
	}
}

func TestRunContext_DoneAfterStop(t *testing.T) {
	// Ensure the context a model gets is done once the run is cancelled,
	// whether the model asks for Done before the cancel or after it.
	for _, early := range []bool{true, false} {
		entered := make(chan (<-chan struct{}), 1)
		asked := make(chan (<-chan struct{}), 1)
		release := make(chan struct{})
		model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
			var d <-chan struct{}
			if early {
				d = ctx.Done()
			}
			entered <- d
			<-release
			asked <- ctx.Done()
			return reply("late"), nil
		})
		rt := mustRuntime(t, core.Config{Model: model})
		run, err := rt.Start(bg, core.RunRequest{SessionID: "s", Input: "x"})
		if err != nil {
			t.Fatal(err)
		}
		d := <-entered
		if early && closed(d) {
			t.Fatal("the context is done before the cancel")
		}
		if !run.Cancel() {
			t.Fatal("Cancel of a running run reported false")
		}
		if early {
			<-d
		}
		close(release)
		if d := <-asked; !closed(d) {
			t.Errorf("early %v: Done asked for after the cancel is not closed", early)
		}
		if _, err := waitRun(t, run); err == nil {
			t.Errorf("early %v: the cancelled run completed", early)
		}
	}
}

func TestStore_LaneServesLaterSessions(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	// a1 holds session a, a2 waits for it; b's turns come and go, their
	// lane kept for the next join.
	a1 := begin(t, rt, core.RunRequest{SessionID: "a", Input: "1"})
	if a := a1.Next(); a.Kind != core.ActionModel {
		t.Fatalf("a1: %v", a.Kind)
	}
	a2 := begin(t, rt, core.RunRequest{SessionID: "a", Input: "2"})
	if a := a2.Next(); a.Kind != core.ActionWait {
		t.Fatalf("a2: %v, want wait", a.Kind)
	}
	for i := 0; i < 3; i++ {
		b := begin(t, rt, core.RunRequest{SessionID: "b", Input: "x"})
		b.Next()
		if a := b.FeedModel(reply("r"), nil); a.Kind != core.ActionDone {
			t.Fatalf("b: %v", a.Kind)
		}
	}
	// Ensure deleting the session a2 waits for changes nothing for the
	// lane: a2 still waits, c (on the spare lane) runs at once.
	rt.DeleteSession("a")
	if a := a2.Next(); a.Kind != core.ActionWait {
		t.Fatalf("a2 after delete: %v, want wait", a.Kind)
	}
	c := begin(t, rt, core.RunRequest{SessionID: "c", Input: "x"})
	if a := c.Next(); a.Kind != core.ActionModel {
		t.Fatalf("c: %v, want model", a.Kind)
	}
	// Ensure a1's end hands the lane to a2 alone.
	a1.FeedModel(reply("r1"), nil)
	a3 := begin(t, rt, core.RunRequest{SessionID: "a", Input: "3"})
	if a := a2.Next(); a.Kind != core.ActionModel {
		t.Fatalf("a2 after a1: %v, want model", a.Kind)
	}
	if a := a3.Next(); a.Kind != core.ActionWait {
		t.Fatalf("a3 while a2 runs: %v, want wait", a.Kind)
	}
	// Ensure a waiter cancelled while its lane is held leaves the lane
	// to the holder, and a lane dropped after a cancel serves again.
	rt.CancelRun(a3.Run().ID())
	if a := a3.Next(); a.Kind != core.ActionFailed {
		t.Fatalf("a3 cancelled: %v", a.Kind)
	}
	if a := a2.FeedModel(reply("r2"), nil); a.Kind != core.ActionDone {
		t.Fatalf("a2: %v", a.Kind)
	}
	c.FeedModel(reply("rc"), nil)
	for _, id := range []string{"a", "b", "c", "d"} {
		tn := begin(t, rt, core.RunRequest{SessionID: id, Input: "again"})
		if a := tn.Next(); a.Kind != core.ActionModel {
			t.Fatalf("%s again: %v, want model (a lane left held?)", id, a.Kind)
		}
		tn.FeedModel(reply("r"), nil)
	}
	if got := contents(messagesOf(rt, "a")); len(got) != 4 || got[0] != "user:2" || got[2] != "user:again" {
		t.Errorf("session a: %q", got)
	}
	if st := rt.Stats(); st.ActiveRuns != 0 {
		t.Errorf("%d runs active", st.ActiveRuns)
	}
}

func TestStore_LaneReuseUnderLoad(t *testing.T) {
	// Ensure runs on a few sessions, started, cancelled and deleted from
	// many goroutines, all end, and each session's turns stay whole
	// (run with -race).
	model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		return reply("r"), nil
	})
	rt := mustRuntime(t, core.Config{Model: model})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				id := string(rune('a' + (g+i)%3))
				run, err := rt.Start(bg, core.RunRequest{SessionID: id, Input: "x"})
				if err != nil {
					t.Error(err)
					return
				}
				switch i % 7 {
				case 0:
					run.Cancel()
				case 3:
					rt.DeleteSession(id)
				}
				waitRun(t, run)
			}
		}()
	}
	wg.Wait()
	for _, id := range rt.ListSessions() {
		msgs := messagesOf(rt, id)
		if len(msgs)%2 != 0 {
			t.Errorf("session %s holds %d messages: a turn was cut", id, len(msgs))
		}
	}
	if st := rt.Stats(); st.ActiveRuns != 0 {
		t.Errorf("%d runs active", st.ActiveRuns)
	}
}

func TestRun_OldIDAfterItsTurn(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	old := begin(t, rt, core.RunRequest{SessionID: "s", Input: "1", RunID: "old"})
	old.Next()
	old.FeedModel(reply("r1"), nil)
	cur := begin(t, rt, core.RunRequest{SessionID: "s", Input: "2", RunID: "cur"})
	cur.Next()
	// Ensure cancelling the ended run's id touches nothing: the run after
	// it (with the ended run's Run and Turn state gone) completes.
	if rt.CancelRun("old") || old.Run().Cancel() {
		t.Error("an ended run was cancelled")
	}
	if a := old.Next(); a.Kind != core.ActionDone {
		t.Errorf("the ended turn answers %v, want its done", a.Kind)
	}
	if a := cur.FeedModel(reply("r2"), nil); a.Kind != core.ActionDone {
		t.Fatalf("cur: %v (%v)", a.Kind, a.Err)
	}
	// Ensure reverting the older turn, which is no longer the tail,
	// removes the session instead of cutting the newer turn.
	if rt.RevertRun("s", "old") {
		t.Error("RevertRun cut a turn that is not the tail")
	}
	if _, ok := rt.Session("s"); ok {
		t.Error("the session is still there")
	}
}

func TestEvent_AppendedMessageStaysPut(t *testing.T) {
	// message.appended points at the result's copy of its message.
	// Ensure the events a host kept still say what they said after the
	// turn appended more (tool calls grow the result) and after later
	// turns.
	var kept []core.Event
	var texts []string
	onEvent := func(ev core.Event) {
		if ev.Type == core.EventMessageAppended {
			kept = append(kept, ev)
			texts = append(texts, string(ev.Message.Role)+":"+ev.Message.Content)
		}
	}
	calls := []core.ToolCall{{ID: "c1", Name: "add"}}
	rt := mustRuntime(t, core.Config{Tools: []core.Tool{addTool}, Model: scripted(
		core.ModelReply{Content: "using", ToolCalls: calls},
		core.ModelReply{Content: "done"},
	)})
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "q", OnEvent: onEvent})
	if len(res.Appended) != 4 {
		t.Fatalf("appended %d", len(res.Appended))
	}
	rt2 := mustRuntime(t, core.Config{})
	for i := 0; i < 3; i++ {
		mustComplete(t, rt2, core.RunRequest{SessionID: "s", Input: "more", OnEvent: onEvent})
	}
	for i, ev := range kept {
		if got := string(ev.Message.Role) + ":" + ev.Message.Content; got != texts[i] {
			t.Errorf("event %d now says %q, said %q", i, got, texts[i])
		}
	}
	for i, m := range res.Appended {
		if got := string(m.Role) + ":" + m.Content; got != texts[i] {
			t.Errorf("appended %d is %q, its event said %q", i, got, texts[i])
		}
	}
}

// turnDone drives tn through one model call answered with text and
// returns its result.
func turnDone(t *testing.T, tn *core.Turn, text string) *core.Result {
	t.Helper()
	if a := tn.Next(); a.Kind != core.ActionModel {
		t.Fatalf("%s: %v, want model", tn.Run().ID(), a.Kind)
	}
	a := tn.FeedModel(reply(text), nil)
	if a.Kind != core.ActionDone {
		t.Fatalf("%s: %v (%v), want done", tn.Run().ID(), a.Kind, a.Err)
	}
	return a.Result
}

func TestTurn_RecycledIntoTheNextRun(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	var events []core.Event
	onEvent := func(ev core.Event) { events = append(events, ev) }
	first := begin(t, rt, core.RunRequest{SessionID: "s", Input: "1", RunID: "first", OnEvent: onEvent})
	run := first.Run()
	turnDone(t, first, "r1")
	first.Recycle()
	events = events[:0]
	// Ensure the next run takes the recycled one and starts afresh: its
	// own id, result, event numbers and model call.
	next := begin(t, rt, core.RunRequest{SessionID: "s", Input: "2", RunID: "next", OnEvent: onEvent})
	if next.Run() != run {
		t.Fatal("the next run did not reuse the recycled one")
	}
	a := next.Next()
	if a.Kind != core.ActionModel || a.Request.RunID != "next" || a.Request.Step != 1 || len(a.Request.Messages) != 3 {
		t.Fatalf("next's model call: %v %+v", a.Kind, a.Request)
	}
	a.Request.Delta("partial")
	// Ensure the ended run's id cancels nothing, not the run in its place.
	if rt.CancelRun("first") {
		t.Error("the recycled run's old id was cancelled")
	}
	a = next.FeedModel(reply("r2"), nil)
	if a.Kind != core.ActionDone {
		t.Fatalf("next: %v (%v)", a.Kind, a.Err)
	}
	res := a.Result
	if res.RunID != "next" || res.MessageCount != 4 || len(res.Appended) != 2 || res.Reply.Content != "r2" ||
		len(res.ModelCalls) != 1 || res.ModelCalls[0].MessageCount != 3 {
		t.Errorf("next's result: %+v", res)
	}
	want := []core.EventType{core.EventRunStarted, core.EventMessageAppended, core.EventModelDelta,
		core.EventMessageAppended, core.EventRunCompleted}
	if len(events) != len(want) {
		t.Fatalf("next emitted %d events, want %d", len(events), len(want))
	}
	for i, ev := range events {
		if ev.Type != want[i] || ev.Seq != i+1 || ev.RunID != "next" {
			t.Errorf("event %d: %s seq %d run %q", i, ev.Type, ev.Seq, ev.RunID)
		}
	}
	if got := contents(messagesOf(rt, "s")); len(got) != 4 || got[3] != "assistant:r2" {
		t.Errorf("session: %q", got)
	}
}

func TestTurn_RecycleLeavesReachableRunsAlone(t *testing.T) {
	rt := mustRuntime(t, core.Config{AfterFunc: func(int64, func()) func() { return func() {} }})
	// A turn not yet ended, and one whose run armed a timeout, are not
	// recycled: the next run is a new one.
	going := begin(t, rt, core.RunRequest{SessionID: "a", Input: "1"})
	going.Next()
	going.Recycle()
	if b := begin(t, rt, core.RunRequest{SessionID: "b", Input: "1"}); b.Run() == going.Run() {
		t.Fatal("a turn still going was recycled")
	} else {
		turnDone(t, b, "r")
	}
	turnDone(t, begin(t, rt, core.RunRequest{SessionID: "c", Input: "1"}), "r")
	timed := begin(t, rt, core.RunRequest{SessionID: "d", Input: "1", Policy: core.Policy{TimeoutMs: 1000}})
	turnDone(t, timed, "r")
	timed.Recycle()
	if e := begin(t, rt, core.RunRequest{SessionID: "e", Input: "1"}); e.Run() == timed.Run() {
		t.Fatal("a run that armed a timeout was recycled")
	}
	if a := going.FeedModel(reply("r"), nil); a.Kind != core.ActionDone {
		t.Fatalf("going: %v", a.Kind)
	}
}

func TestTurn_RecycleUnderLoad(t *testing.T) {
	// Ensure turns driven, recycled and cancelled by id from many
	// goroutines each end with their own result (run with -race).
	rt := mustRuntime(t, core.Config{})
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				id := string(rune('a'+g)) + "-" + string(rune('0'+i%10))
				tn, err := rt.Begin(bg, core.RunRequest{SessionID: string(rune('a' + g%3)), Input: id, RunID: id})
				if err != nil {
					t.Error(err)
					return
				}
				rt.CancelRun(string(rune('a'+(g+1)%6)) + "-" + string(rune('0'+i%10)))
				a := tn.Next()
				for a.Kind == core.ActionWait {
					a = tn.Next()
				}
				if a.Kind == core.ActionModel {
					a = tn.FeedModel(reply(id), nil)
				}
				switch {
				case a.Kind == core.ActionDone && (a.Result.RunID != id || a.Result.Reply.Content != id):
					t.Errorf("%s ended with %+v", id, a.Result)
				case a.Kind == core.ActionFailed && a.Err.Code != core.CodeCancelled:
					t.Errorf("%s failed: %v", id, a.Err)
				}
				tn.Recycle()
			}
		}()
	}
	wg.Wait()
	if st := rt.Stats(); st.ActiveRuns != 0 {
		t.Errorf("%d runs active", st.ActiveRuns)
	}
}

func TestRun_CancelledByIDAsItIsAdmitted(t *testing.T) {
	// Ensure a cancel by id that races the run's admission finds the run
	// whole or not at all (run with -race): it used to find it before
	// its context was set.
	rt := mustRuntime(t, core.Config{})
	for i := 0; i < 500; i++ {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); rt.CancelRun("x") }()
		tn := begin(t, rt, core.RunRequest{SessionID: "s", Input: "1", RunID: "x"})
		wg.Wait()
		if a := tn.Next(); a.Kind == core.ActionModel {
			tn.FeedModel(reply("r"), nil)
		}
		tn.Recycle()
	}
}
