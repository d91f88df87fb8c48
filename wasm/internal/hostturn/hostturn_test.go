package hostturn_test

import (
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wasm/internal/hostturn"
	"github.com/agentrt/agentrt/wire"
)

func mustAction(t *testing.T, frame []byte) *wire.Action {
	t.Helper()
	a, err := wire.DecodeAction(frame)
	if err != nil {
		e, _ := wire.DecodeRefused(frame)
		t.Fatalf("not an action: %v (refused: %v)", err, e)
	}
	return a
}

func mustRuntime(t *testing.T, cfg core.Config) *core.Runtime {
	t.Helper()
	rt, err := core.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// mirror is a host's mirror of one session, kept as docs/wire.md says.
type mirror struct {
	gen  uint64
	msgs []core.Message
}

func (m *mirror) apply(a *wire.Action, hist []core.Message) []core.Message {
	if a.Adopt {
		m.gen, m.msgs = a.Generation, append([]core.Message(nil), hist...)
	}
	if m.gen != a.Generation || len(m.msgs) < a.From {
		if a.From != 0 {
			panic("stale mirror without a full tail")
		}
		m.msgs = nil
	}
	m.gen = a.Generation
	m.msgs = append(m.msgs[:a.From], a.Tail...)
	return m.msgs[a.Start:a.End]
}

func TestDriver_Mirror(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	x := hostturn.New(rt, nil, wire.ReadPolicyJSON)
	hist := []core.SeedMessage{{Role: core.RoleSystem, Content: "s"}, {Role: core.RoleUser, Content: "a"}, {Role: core.RoleAssistant, Content: "b"}}
	histMsgs := []core.Message{{Role: core.RoleUser, Content: "a"}, {Role: core.RoleAssistant, Content: "b"}}
	var m mirror
	turn := func(input string, withHistory bool) (*wire.Action, []core.Message) {
		b := &wire.Begin{SessionID: "s", Input: input, WithHistory: withHistory, HistoryMirror: withHistory, MirrorGen: m.gen, MirrorLen: len(m.msgs)}
		if withHistory {
			b.History = hist
		}
		a := mustAction(t, x.Begin(wire.AppendBegin(nil, b)))
		if a.Kind != wire.ActModel {
			t.Fatalf("got action %d, want model", a.Kind)
		}
		sent := m.apply(a, histMsgs)
		done := mustAction(t, x.Feed(wire.AppendModelReply(nil, &wire.ModelReply{Handle: a.Handle, Reply: core.ModelReply{Content: "r-" + input}})))
		if done.Kind != wire.ActDone {
			t.Fatalf("got action %d, want done", done.Kind)
		}
		return a, sent
	}
	// Ensure a cold seed adopts the history mirror and sends only the input.
	a, sent := turn("q1", true)
	if !a.Adopt || a.From != 2 || len(a.Tail) != 1 {
		t.Errorf("cold: adopt %v from %d tail %d, want adopt from 2 tail 1", a.Adopt, a.From, len(a.Tail))
	}
	// Ensure a warm turn sends only what the mirror lacks (the reply and the input).
	a, sent = turn("q2", true)
	if a.Adopt || a.From != 3 || len(a.Tail) != 2 {
		t.Errorf("warm: adopt %v from %d tail %d, want from 3 tail 2", a.Adopt, a.From, len(a.Tail))
	}
	s, _ := rt.Session("s")
	if want := s.Messages[:len(s.Messages)-1]; !reflect.DeepEqual(sent, want) {
		t.Errorf("the model was sent %v, want %v", sent, want)
	}
	// Ensure a host without a mirror gets the whole session.
	m = mirror{}
	a, _ = turn("q3", false)
	if a.From != 0 || a.End != 7 || len(a.Tail) != 7 {
		t.Errorf("no mirror: from %d end %d tail %d, want 0, 7, 7", a.From, a.End, len(a.Tail))
	}
	if x.Turns() != 0 {
		t.Errorf("%d turns left", x.Turns())
	}
}

func TestDriver_Refusals(t *testing.T) {
	x := hostturn.New(mustRuntime(t, core.Config{}), nil, wire.ReadPolicyJSON)
	refused := func(frame []byte) *core.Error {
		e, err := wire.DecodeRefused(frame)
		if err != nil {
			t.Fatalf("not refused: %v", err)
		}
		return e
	}
	tests := []struct {
		name  string
		frame []byte
		code  core.Code
		index int
	}{
		// Ensure a malformed begin frame is refused.
		{"ErrFrame", cp(x.Begin([]byte("nope"))), core.CodeInvalidArgument, core.NoIndex},
		// Ensure a run core refuses is refused with its code and index.
		{"ErrHistory", cp(x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", WithHistory: true,
			History: []core.SeedMessage{{Role: core.RoleUser, Content: "a"}, {Role: "bot", Content: "b"}}}))), core.CodeInvalidHistory, 1},
		// Ensure an answer for an unknown turn is refused.
		{"ErrHandle", cp(x.Feed(wire.AppendModelReply(nil, &wire.ModelReply{Handle: 99}))), core.CodeInvalidArgument, core.NoIndex},
		// Ensure a malformed tool result is refused.
		{"ErrToolFrame", cp(x.Feed([]byte{'A', 'R', 'W', 1, 3})), core.CodeInvalidArgument, core.NoIndex},
		// Ensure a missing session is refused.
		{"ErrSession", cp(x.Session("none")), core.CodeInvalidArgument, core.NoIndex},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := refused(tc.frame)
			if e.Code != tc.code || e.Index != tc.index {
				t.Errorf("got %v, want %s at %d", e, tc.code, tc.index)
			}
		})
	}
	if st := mustStats(t, x); st.Sessions != 0 || st.ActiveRuns != 0 {
		t.Errorf("refusals changed the store: %+v", st)
	}
}

// cp copies a frame: the Driver reuses its output buffer.
func cp(b []byte) []byte { return append([]byte(nil), b...) }

func mustStats(t *testing.T, x *hostturn.Driver) *wire.Stats {
	s, err := wire.DecodeStats(x.Stats(false))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDriver_NativeModel(t *testing.T) {
	// Ensure a native model is answered inside: one frame per turn.
	x := hostturn.New(mustRuntime(t, core.Config{}), core.Echo{}, wire.ReadPolicyJSON)
	a := mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "hi"})))
	if a.Kind != wire.ActDone || a.Result.MessageCount != 2 {
		t.Errorf("got %+v", a)
	}
}

func FuzzBegin(f *testing.F) {
	f.Add(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "x", WithHistory: true, HistoryMirror: true,
		History: []core.SeedMessage{{Role: core.RoleUser, Content: "x"}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Ensure any begin frame either refuses or runs to an end, and
		// leaves no turn behind.
		x := hostturn.New(mustRuntime(t, core.Config{}), core.Echo{}, wire.ReadPolicyJSON)
		out := x.Begin(b)
		if k, err := wire.FrameKind(out); err != nil || (k != wire.KindAction && k != wire.KindRefused) {
			t.Fatalf("bad answer %v %v", k, err)
		}
		if x.Turns() != 0 {
			t.Fatalf("%d turns left", x.Turns())
		}
	})
}

func TestDriver_StaleHandle(t *testing.T) {
	// A handle dies with its turn; the ended turn's state serves the next
	// turn. Ensure an answer, a delta or a next for a dead handle is
	// refused, with the next turn (on the same session or another one)
	// left as it was, whether its turn took the dead turn's slot or not.
	rt := mustRuntime(t, core.Config{})
	x := hostturn.New(rt, nil, wire.ReadPolicyJSON)
	begin := func(session, input string) *wire.Action {
		t.Helper()
		a := mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: session, Input: input, Events: true})))
		if a.Kind != wire.ActModel {
			t.Fatalf("got action %d, want model", a.Kind)
		}
		return a
	}
	reply := func(h uint64, text string) []byte {
		return x.Feed(wire.AppendModelReply(nil, &wire.ModelReply{Handle: h, Reply: core.ModelReply{Content: text}}))
	}
	refusedInvalid := func(what string, frame []byte) {
		t.Helper()
		e, err := wire.DecodeRefused(frame)
		if err != nil {
			t.Fatalf("%s: not refused: %v", what, err)
		}
		if e.Code != core.CodeInvalidArgument {
			t.Errorf("%s: got %v, want invalid_argument", what, e)
		}
	}
	old := begin("a", "one")
	if done := mustAction(t, reply(old.Handle, "r1")); done.Kind != wire.ActDone {
		t.Fatalf("got action %d, want done", done.Kind)
	}
	refusedInvalid("reply before a new turn", reply(old.Handle, "late"))
	for _, session := range []string{"a", "b"} {
		cur := begin(session, "two")
		refusedInvalid("reply "+session, cp(reply(old.Handle, "late")))
		refusedInvalid("delta "+session, cp(x.Feed(wire.AppendDelta(nil, &wire.Delta{Handle: old.Handle, Text: "late"}))))
		refusedInvalid("next "+session, cp(x.Next(old.Handle, true)))
		done := mustAction(t, reply(cur.Handle, "r2"))
		if done.Kind != wire.ActDone {
			t.Fatalf("%s: got action %d (%v), want done", session, done.Kind, done.Err)
		}
		for _, ev := range done.Events {
			if ev.Type == core.EventModelDelta {
				t.Errorf("%s: the dead handle's delta reached the turn", session)
			}
		}
		s, _ := rt.Session(session)
		if got := s.Messages[len(s.Messages)-1].Content; got != "r2" {
			t.Errorf("%s: the session ends with %q, want the live turn's reply r2", session, got)
		}
		old = cur
	}
	// Ensure a live turn beside a dead one keeps its handle.
	a1 := begin("c", "x")
	a2 := begin("d", "y")
	mustAction(t, reply(a1.Handle, "r"))
	a3 := begin("c", "z")
	if a3.Handle == a1.Handle || a3.Handle == a2.Handle {
		t.Errorf("handle %d given again while %d and %d were out", a3.Handle, a1.Handle, a2.Handle)
	}
	for _, h := range []uint64{a2.Handle, a3.Handle} {
		if done := mustAction(t, reply(h, "r")); done.Kind != wire.ActDone {
			t.Errorf("handle %d: got action %d, want done", h, done.Kind)
		}
	}
	if x.Turns() != 0 {
		t.Errorf("%d turns left", x.Turns())
	}
}

// Ensure a commit frame stores a turn on the host's mirror, answers
// stale on any other session, and refuses a malformed frame or a limit,
// changing nothing.
func TestDriver_Commit(t *testing.T) {
	x := hostturn.New(mustRuntime(t, core.Config{Limits: core.Limits{MaxMessageBytes: 100}}), core.Echo{}, wire.ReadPolicyJSON)
	a := mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "hi"})))
	gen, msgs, err := wire.DecodeSession(x.Session("s"))
	if err != nil || a.Kind != wire.ActDone || len(msgs) != 2 {
		t.Fatal(err)
	}
	commit := func(c core.Commit) []byte { return cp(x.Commit(wire.AppendCommit(nil, &c))) }
	good := core.Commit{SessionID: "s", RunID: "glue:1", Input: "again", MirrorGen: gen, MirrorLen: 2, Reply: "ok"}
	stale := good
	stale.MirrorLen = 1
	if c, err := wire.DecodeCommitted(commit(stale)); err != nil || !c.Stale || c.Count != 0 {
		t.Fatalf("stale commit: %+v %v", c, err)
	}
	tooBig := good
	tooBig.Reply = string(make([]byte, 101))
	if e, err := wire.DecodeRefused(commit(tooBig)); err != nil || e.Code != core.CodeLimitExceeded {
		t.Fatalf("commit over maxMessageBytes: %v %v", e, err)
	}
	if e, err := wire.DecodeRefused(cp(x.Commit([]byte("ARW\x01\x05")))); err != nil || e.Code != core.CodeInvalidArgument {
		t.Fatalf("malformed commit: %v %v", e, err)
	}
	if st := mustStats(t, x); st.Messages != 2 || st.RunsCompleted != 1 {
		t.Fatalf("refused commits changed the store: %+v", st)
	}
	c, err := wire.DecodeCommitted(commit(good))
	if err != nil || c.Stale || c.Count != 4 {
		t.Fatalf("commit: %+v %v", c, err)
	}
	if st := mustStats(t, x); st.Messages != 4 || st.RunsCompleted != 2 || st.ActiveRuns != 0 {
		t.Fatalf("stats after a commit: %+v", st)
	}
	// A frame with a string after the reply (a head, as commits once
	// carried) is malformed: refused, nothing changed.
	after := wire.AppendString(wire.AppendCommit(nil, &core.Commit{SessionID: "s", RunID: "glue:2", Input: "more", MirrorGen: gen, MirrorLen: 4, Reply: "ok"}), core.Head(msgs))
	if e, err := wire.DecodeRefused(cp(x.Commit(after))); err != nil || e.Code != core.CodeInvalidArgument {
		t.Fatalf("commit with bytes after the reply: %v %v", e, err)
	}
	if st := mustStats(t, x); st.Messages != 4 || st.RunsCompleted != 2 {
		t.Fatalf("a refused commit changed the store: %+v", st)
	}
}

func FuzzCommit(f *testing.F) {
	f.Add(wire.AppendCommit(nil, &core.Commit{SessionID: "s", RunID: "glue:1", Input: "x", MirrorGen: 1, MirrorLen: 2, Reply: "y"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Ensure any commit frame is answered with a committed or refused
		// frame, committed only when it decodes, and that the runtime
		// serves the next turn.
		x := hostturn.New(mustRuntime(t, core.Config{}), core.Echo{}, wire.ReadPolicyJSON)
		mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "hi"})))
		out := cp(x.Commit(b))
		if k, err := wire.FrameKind(out); err != nil || (k != wire.KindCommitted && k != wire.KindRefused) {
			t.Fatalf("bad answer %v %v", k, err)
		}
		if _, err := wire.DecodeCommitted(out); err == nil {
			var in core.Commit
			if err := wire.DecodeCommitInto(&in, b); err != nil {
				t.Fatalf("a refused frame was committed: %v", err)
			}
		}
		if a := mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "next"}))); a.Kind != wire.ActDone {
			t.Fatalf("the next turn: %+v", a)
		}
	})
}

// Ensure a limits query is answered with the limits in force, and that a
// reply the host refused as oversize fails the run with limit_exceeded,
// rolled back, the session free.
func TestDriver_LimitsAndOversize(t *testing.T) {
	rt := mustRuntime(t, core.Config{Limits: core.Limits{MaxMessageBytes: 4096, MaxSessions: 3}})
	x := hostturn.New(rt, nil, wire.ReadPolicyJSON)
	l, err := wire.DecodeLimits(x.Feed(wire.AppendLimitsQuery(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if want := rt.Limits(); *l != want {
		t.Fatalf("limits: got %+v, want %+v", *l, want)
	}
	a := mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "hi"})))
	if a.Kind != wire.ActModel {
		t.Fatalf("got action %d, want model", a.Kind)
	}
	a = mustAction(t, x.Feed(wire.AppendModelReply(nil, &wire.ModelReply{Handle: a.Handle, Failed: true, Oversize: true, Error: "too big"})))
	if a.Kind != wire.ActFailed || a.Err.Code != core.CodeLimitExceeded {
		t.Fatalf("got action %d (%v), want failed limit_exceeded", a.Kind, a.Err)
	}
	if st := rt.Stats(); st.ActiveRuns != 0 || st.Messages != 0 {
		t.Fatalf("after the refused reply: %+v", st)
	}
}

// Ensure the sessions the store evicts or deletes are reported once, in
// the next action or committed frame, whichever turn it belongs to.
func TestDriver_Dropped(t *testing.T) {
	rt := mustRuntime(t, core.Config{Limits: core.Limits{MaxSessions: 2}})
	x := hostturn.New(rt, core.Echo{}, wire.ReadPolicyJSON)
	turn := func(id string) *wire.Action {
		return mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: id, Input: "hi"})))
	}
	turn("a")
	turn("b")
	if a := turn("c"); !reflect.DeepEqual(a.Dropped, []string{"a"}) || a.DroppedAll {
		t.Fatalf("evicted: got %v %v, want [a]", a.Dropped, a.DroppedAll)
	}
	rt.DeleteSession("b")
	if a := turn("c"); !reflect.DeepEqual(a.Dropped, []string{"b"}) {
		t.Fatalf("deleted: got %v, want [b]", a.Dropped)
	}
	if a := turn("c"); len(a.Dropped) != 0 {
		t.Fatalf("reported again: %v", a.Dropped)
	}
}

// Ensure a repaired history is not adopted as the host's mirror: the
// host mirrored the history it sent, not the repaired one, so the model
// action carries the whole window, the fix in place.
func TestDriver_MirrorRepaired(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	x := hostturn.New(rt, nil, wire.ReadPolicyJSON)
	hist := []core.SeedMessage{{Role: core.RoleUser, Content: "a"},
		{Role: core.RoleAssistant, ContentMissing: true, ToolCalls: []core.ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}}}
	b := &wire.Begin{SessionID: "s", Input: "q", WithHistory: true, HistoryMirror: true, Events: true,
		Policy: core.Policy{Repair: true}, History: hist}
	a := mustAction(t, x.Begin(wire.AppendBegin(nil, b)))
	if a.Kind != wire.ActModel || a.Adopt || a.From != 0 || len(a.Tail) != 4 {
		t.Fatalf("got kind %d adopt %v from %d tail %d, want a model action with the whole window of 4", a.Kind, a.Adopt, a.From, len(a.Tail))
	}
	if m := a.Tail[2]; m.Role != core.RoleTool || m.ToolCallID != "c1" || m.Content != core.InterruptedToolResult {
		t.Errorf("the window's third message is %+v, want the interrupted marker", m)
	}
	done := mustAction(t, x.Feed(wire.AppendModelReply(nil, &wire.ModelReply{Handle: a.Handle, Reply: core.ModelReply{Content: "r"}})))
	want := []core.Repair{{Kind: core.RepairMissingToolResult, Index: 1, ToolCallID: "c1"}}
	if done.Kind != wire.ActDone || !reflect.DeepEqual(done.Result.Seed.Repairs, want) {
		t.Fatalf("done %d with seed %+v, want the repairs %+v", done.Kind, done.Result.Seed, want)
	}
	var seeded *core.SeedReport
	for _, ev := range append(a.Events, done.Events...) {
		if ev.Type == core.EventSessionSeeded {
			seeded = ev.Seed
		}
	}
	if seeded == nil || !reflect.DeepEqual(seeded.Repairs, want) {
		t.Errorf("session.seeded event %+v, want the repairs", seeded)
	}
}

// Ensure a tool output the host refused unsent as oversize fails the run
// limit_exceeded, whatever toolErrors says, rolled back, the session free.
func TestDriver_ToolOversize(t *testing.T) {
	rt := mustRuntime(t, core.Config{Tools: []core.Tool{{ToolSpec: core.ToolSpec{Name: "big"},
		Call: func(core.Context, core.ToolInvocation) (string, error) { return "", nil }}}})
	x := hostturn.New(rt, nil, wire.ReadPolicyJSON)
	a := mustAction(t, x.Begin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "hi", Policy: core.Policy{ToolErrors: core.ToolErrorsReport}})))
	a = mustAction(t, x.Feed(wire.AppendModelReply(nil, &wire.ModelReply{Handle: a.Handle, Reply: core.ModelReply{ToolCalls: []core.ToolCall{{ID: "c", Name: "big", Arguments: "{}"}}}})))
	if a.Kind != wire.ActTool {
		t.Fatalf("got action %d, want tool", a.Kind)
	}
	a = mustAction(t, x.Feed(wire.AppendToolResult(nil, &wire.ToolResult{Handle: a.Handle, Failed: true, Oversize: true})))
	if a.Kind != wire.ActFailed || a.Err.Code != core.CodeLimitExceeded || a.Err.Message != `the result of tool "big" is more than maxMessageBytes` {
		t.Fatalf("got action %d (%v), want failed limit_exceeded", a.Kind, a.Err)
	}
	if st := rt.Stats(); st.ActiveRuns != 0 || st.Messages != 0 || st.RunsFailed != 1 {
		t.Fatalf("after the refused output: %+v", st)
	}
}
