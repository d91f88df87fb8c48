package wire_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/wire"
)

var sampleBegin = wire.Begin{
	SessionID: "s", Input: "hi", RunID: "r1", WithHistory: true, Inspect: true, Events: true, HistoryMirror: true,
	Policy: core.Policy{SeedMode: core.SeedReconcile, OnBusy: core.BusyReject, MaxSteps: 3, MaxContextMessages: 4,
		MaxContextBytes: 1 << 40, TimeoutMs: 100, AllowedTools: []string{"a", "é"}, ToolErrors: core.ToolErrorsReport},
	MirrorGen: 7, MirrorLen: 9,
	History: []core.SeedMessage{
		{Role: core.RoleSystem, Content: "sys"},
		{Role: core.RoleUser, Content: "q", ID: "u1"},
		{Role: core.RoleAssistant, ContentMissing: true, ToolCalls: []core.ToolCall{{ID: "c", Name: "n", Arguments: "{}"}}},
		{Role: core.RoleTool, Content: "out", ToolCallID: "c"},
		{Role: "bot", Content: "x"},
	},
}

func TestBegin_RoundTrip(t *testing.T) {
	tests := []struct {
		name string
		b    wire.Begin
	}{
		// Ensure every field survives the trip.
		{"OK", sampleBegin},
		// Ensure a run without history or policy survives, with nil history.
		{"OKBare", wire.Begin{SessionID: "s", Input: ""}},
		// Ensure an empty history stays an empty, non-nil history.
		{"OKEmptyHistory", wire.Begin{SessionID: "s", WithHistory: true, History: []core.SeedMessage{}}},
		// Ensure an empty allow-list stays empty and non-nil.
		{"OKNoTools", wire.Begin{SessionID: "s", Policy: core.Policy{AllowedTools: []string{}}}},
		// Ensure the history-valid flag survives.
		{"OKHistoryValid", wire.Begin{SessionID: "s", WithHistory: true, HistoryValid: true,
			History: []core.SeedMessage{{Role: core.RoleUser, Content: "é"}}}},
		// Ensure policy.repair survives, with a default policy and another.
		{"OKRepair", wire.Begin{SessionID: "s", Policy: core.Policy{Repair: true}}},
		{"OKRepairPolicy", wire.Begin{SessionID: "s", Policy: core.Policy{Repair: true, MaxSteps: 2}}},
		// Ensure the token budget survives, with a default policy and
		// another, and a negative one reaches core's validation.
		{"OKTokens", wire.Begin{SessionID: "s", Policy: core.Policy{MaxContextTokens: 8000}}},
		{"OKTokensPolicy", wire.Begin{SessionID: "s", Policy: core.Policy{MaxContextTokens: 8000, ContextChunkTokens: 1000, MaxSteps: 2, Repair: true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := wire.AppendBegin(nil, &tc.b)
			got, err := wire.DecodeBegin(f, 0)
			if err != nil {
				t.Fatal(err)
			}
			got.Packed = nil
			// A policy that is not the default crossed as its JSON text.
			if want := string(hostmsg.AppendPolicyJSON(nil, &tc.b.Policy)); want != "{}" && got.PolicyJSON != want {
				t.Errorf("PolicyJSON %q, want %q", got.PolicyJSON, want)
			}
			got.PolicyJSON = ""
			if !reflect.DeepEqual(*got, tc.b) {
				t.Errorf("got %+v\nwant %+v", *got, tc.b)
			}
		})
	}
}

// Ensure a policy out of core's bounds written by a Go host is refused
// when the frame is decoded, with core's code and text (its JSON text is
// read by hostmsg.Policy, which calls core.Policy.Validate).
func TestBegin_PolicyOutOfBounds(t *testing.T) {
	for _, p := range []core.Policy{{MaxSteps: -3}, {ContextChunkTokens: -1}, {TimeoutMs: core.MaxTimeoutMs + 1}, {SeedMode: "sometimes"}} {
		_, err := wire.DecodeBegin(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Policy: p}), 0)
		want := p.Validate()
		if want == nil || !reflect.DeepEqual(err, want) {
			t.Errorf("%+v: got %v, want core's %v", p, err, want)
		}
	}
}

func TestDecodeBegin_Errors(t *testing.T) {
	good := wire.AppendBegin(nil, &sampleBegin)
	trunc := good[:len(good)-1]
	bad := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	tests := []struct {
		name  string
		in    []byte
		code  core.Code
		index int
	}{
		// Ensure an empty buffer is refused.
		{"ErrEmpty", nil, core.CodeInvalidArgument, core.NoIndex},
		// Ensure a wrong magic is refused.
		{"ErrMagic", bad(func(b []byte) []byte { b[0] = 'X'; return b }), core.CodeInvalidArgument, core.NoIndex},
		// Ensure an unknown version is refused.
		{"ErrVersion", bad(func(b []byte) []byte { b[3] = 9; return b }), core.CodeInvalidArgument, core.NoIndex},
		// Ensure another frame kind is refused.
		{"ErrKind", bad(func(b []byte) []byte { b[4] = byte(wire.KindToolResult); return b }), core.CodeInvalidArgument, core.NoIndex},
		// Ensure a truncated frame is refused (the history's length runs past the end).
		{"ErrTruncated", trunc, core.CodeInvalidArgument, core.NoIndex},
		// Ensure trailing bytes are refused.
		{"ErrTrailing", append(append([]byte(nil), good...), 0), core.CodeInvalidArgument, core.NoIndex},
		// Ensure a bad message inside the history is refused with its index.
		// Ensure the reserved flag bit is refused, the retired repair and
		// token bits, and a binary policy that is not the default.
		{"ErrFlagReserved", []byte("ARW\x01\x01\x01s\x00\x00\x80" + "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), core.CodeInvalidArgument, core.NoIndex},
		{"ErrTokensRetired", []byte("ARW\x01\x01\x01s\x00\x00\x40" + "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" + "\x00\x00"), core.CodeInvalidArgument, core.NoIndex},
		{"ErrRepairRetired", []byte("ARW\x01\x01\x01s\x00\x00\x20" + "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), core.CodeInvalidArgument, core.NoIndex},
		{"ErrBinaryPolicy", []byte("ARW\x01\x01\x01s\x00\x00\x00" + "\x00\x00\x00\x06\x00\x00\x00\x00\x00\x00"), core.CodeInvalidArgument, core.NoIndex},
		{"ErrHistoryRole", wire.AppendBegin(nil, &wire.Begin{SessionID: "s", WithHistory: true,
			Packed: []byte{'A', 'R', 'H', 1, 2, 0, 1, 1, 'a', 9, 0}}), core.CodeInvalidHistory, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wire.DecodeBegin(tc.in, 0)
			e, ok := err.(*core.Error)
			if !ok || e.Code != tc.code || e.Index != tc.index {
				t.Errorf("got %v, want code %s index %d", err, tc.code, tc.index)
			}
		})
	}
}

// Ensure the history-valid flag skips the UTF-8 check of the history's
// strings only: the same invalid bytes are refused without it, and the
// frame's own strings are checked with it.
func TestDecodeBegin_HistoryValid(t *testing.T) {
	packed := wire.AppendHistory(nil, []core.SeedMessage{{Role: core.RoleUser, Content: "ok"}, {Role: core.RoleUser, Content: "\xff\xfe"}})
	b := wire.Begin{SessionID: "s", WithHistory: true, Packed: packed}
	if _, err := wire.DecodeBegin(wire.AppendBegin(nil, &b), 0); err == nil || err.(*core.Error).Code != core.CodeInvalidHistory || err.(*core.Error).Index != 1 {
		t.Errorf("without the flag: got %v, want invalid_history at 1", err)
	}
	b.HistoryValid = true
	got, err := wire.DecodeBegin(wire.AppendBegin(nil, &b), 0)
	if err != nil || len(got.History) != 2 || got.History[1].Content != "\xff\xfe" {
		t.Fatalf("with the flag: got %+v, %v", got, err)
	}
	b.SessionID = "\xff"
	if _, err := wire.DecodeBegin(wire.AppendBegin(nil, &b), 0); err == nil || err.(*core.Error).Code != core.CodeInvalidArgument {
		t.Errorf("invalid session id under the flag: got %v, want invalid_argument", err)
	}
}

func sampleResult() *core.Result {
	reply := core.Message{Role: core.RoleAssistant, Content: "done"}
	return &core.Result{RunID: "r", SessionID: "s", Status: "completed", Reply: reply,
		Appended:     []core.Message{{Role: core.RoleUser, Content: "hi"}, reply},
		Seed:         core.SeedReport{Mode: core.SeedCold, Seeded: 3, SkippedSystem: 1},
		MessageCount: 5,
		ModelCalls:   []core.ModelCall{{Step: 1, MessageCount: 4, Messages: []core.Message{{Role: core.RoleUser, Content: "hi", ID: "x"}}}, {Step: 2, MessageCount: 5}},
	}
}

// repairedResult is sampleResult with a seed that repaired the history.
func repairedResult() *core.Result {
	r := sampleResult()
	r.Seed.Repairs = []core.Repair{{Kind: core.RepairMissingToolResult, Index: 2, ToolCallID: "c1"}, {Kind: core.RepairDuplicateMessage, Index: 300}}
	r.Seed.Edits = []core.HistoryEdit{
		{Op: core.EditInsert, Index: 4, Call: 2, Message: core.SeedMessage{ID: "a2", Role: core.RoleTool, Content: core.InterruptedToolResult, ToolCallID: "c1"}},
		{Op: core.EditDrop, Index: 300},
	}
	return r
}

func sampleActions() []wire.Action {
	call := core.ToolCall{ID: "c1", Name: "add", Arguments: `{"a":1}`}
	tool := core.Message{Role: core.RoleTool, Content: "2", ToolCallID: "c1"}
	events := []core.Event{
		{Type: core.EventRunStarted, Seq: 1},
		{Type: core.EventSessionSeeded, Seq: 2, Seed: &core.SeedReport{Mode: core.SeedNoop, SkippedSystem: 2}},
		{Type: core.EventMessageAppended, Seq: 3, Message: &core.Message{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{call}}},
		{Type: core.EventModelDelta, Seq: 4, Step: 2, Delta: "d"},
		{Type: core.EventToolStarted, Seq: 5, ToolCall: &call},
		{Type: core.EventToolFinished, Seq: 6, ToolCall: &call, Message: &tool, Err: core.NewIndexError(core.CodeToolError, 0, "x")},
		{Type: core.EventRunCompleted, Seq: 7},
		{Type: core.EventRunFailed, Seq: 8, Err: core.NewError(core.CodeTimeout, "t")},
		{Type: core.EventRunCancelled, Seq: 9, Err: core.NewError(core.CodeCancelled, "c")},
	}
	return []wire.Action{
		{Handle: 1, Kind: wire.ActWait},
		{Handle: 2, Events: events, Kind: wire.ActModel, Step: 1, Generation: 3, Adopt: true, From: 1, Start: 0, End: 2, Tail: []core.Message{tool}},
		{Handle: 3, Kind: wire.ActTool, Call: call},
		{Handle: 4, Kind: wire.ActDone, Result: sampleResult()},
		{Handle: 5, Kind: wire.ActFailed, Err: core.NewIndexError(core.CodeInvalidHistory, 3, "bad")},
		{Handle: 6, Kind: wire.ActDone, Result: repairedResult(), Events: []core.Event{{Type: core.EventSessionSeeded, Seq: 2, Seed: &repairedResult().Seed}}},
		{Handle: 7, Kind: wire.ActModel, Step: 2, Generation: 3, From: 1, Start: 1, End: 1, Tail: []core.Message{},
			Events: []core.Event{{Type: core.EventModelContext, Seq: 3, Step: 2, Context: &core.ContextReport{Messages: 1, Tokens: 1 << 40, Dropped: 300}}}},
	}
}

func TestAction_RoundTrip(t *testing.T) {
	for _, a := range sampleActions() {
		t.Run("OK", func(t *testing.T) {
			// Ensure every action kind and event type survives the trip.
			got, err := wire.DecodeAction(wire.AppendAction(nil, &a))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, a) {
				t.Errorf("got  %+v\nwant %+v", *got, a)
			}
		})
	}
}

func TestHostFrames_RoundTrip(t *testing.T) {
	// Ensure model replies, tool results and deltas survive the trip.
	m := wire.ModelReply{Handle: 9, Reply: core.ModelReply{Content: "c", ToolCalls: []core.ToolCall{{ID: "", Name: "n", Arguments: ""}}}}
	gm, err := wire.DecodeModelReply(wire.AppendModelReply(nil, &m))
	if err != nil || !reflect.DeepEqual(*gm, m) {
		t.Errorf("model reply: got %+v, %v; want %+v", gm, err, m)
	}
	mf := wire.ModelReply{Handle: 1, Failed: true, Error: "boom"}
	if g, err := wire.DecodeModelReply(wire.AppendModelReply(nil, &mf)); err != nil || !reflect.DeepEqual(*g, mf) {
		t.Errorf("failed model reply: got %+v, %v", g, err)
	}
	tr := wire.ToolResult{Handle: 2, Failed: true, Text: "no"}
	if g, err := wire.DecodeToolResult(wire.AppendToolResult(nil, &tr)); err != nil || *g != tr {
		t.Errorf("tool result: got %+v, %v", g, err)
	}
	d := wire.Delta{Handle: 3, Text: "δ"}
	if g, err := wire.DecodeDelta(wire.AppendDelta(nil, &d)); err != nil || *g != d {
		t.Errorf("delta: got %+v, %v", g, err)
	}
	s := wire.Stats{Stats: core.Stats{Sessions: 1, Messages: 2, Bytes: 3, ActiveRuns: 4, Evictions: 5, RunsCompleted: 6, RunsFailed: 7, RunsCancelled: 8, BudgetUsed: 10, BudgetBytes: 11}, HeapAlloc: 9}
	if g, err := wire.DecodeStats(wire.AppendStats(nil, &s)); err != nil || *g != s {
		t.Errorf("stats: got %+v, %v", g, err)
	}
	ids := []string{"a", "b"}
	if g, err := wire.DecodeSessions(wire.AppendSessions(nil, ids)); err != nil || !reflect.DeepEqual(g, ids) {
		t.Errorf("sessions: got %v, %v", g, err)
	}
	msgs := sampleResult().Appended
	if gen, g, err := wire.DecodeSession(wire.AppendSession(nil, 4, msgs, "")); err != nil || gen != 4 || !reflect.DeepEqual(g, msgs) {
		t.Errorf("session: got %d %v, %v", gen, g, err)
	}
	e := core.NewIndexError(core.CodeLimitExceeded, 2, "x")
	if g, err := wire.DecodeRefused(wire.AppendRefused(nil, e)); err != nil || !reflect.DeepEqual(*g, *e) {
		t.Errorf("refused: got %+v, %v", g, err)
	}
	if k, err := wire.FrameKind(wire.AppendRefused(nil, e)); err != nil || k != wire.KindRefused {
		t.Errorf("kind: got %v, %v", k, err)
	}
}

func TestDecodeAction_Errors(t *testing.T) {
	good := wire.AppendAction(nil, &sampleActions()[1])
	tests := []struct {
		name string
		in   []byte
	}{
		// Ensure a truncated action frame is refused.
		{"ErrTruncated", good[:len(good)-3]},
		// Ensure trailing bytes are refused.
		{"ErrTrailing", append(append([]byte(nil), good...), 1)},
		// Ensure an unknown action is refused.
		{"ErrAction", []byte{'A', 'R', 'W', 1, byte(wire.KindAction), 0, 0, 9}},
		// Ensure a window whose tail does not end at End is refused.
		{"ErrWindow", wire.AppendAction(nil, &wire.Action{Kind: wire.ActModel, From: 0, End: 1})},
		// Ensure an event count past the buffer is refused before allocating.
		{"ErrCount", []byte{'A', 'R', 'W', 1, byte(wire.KindAction), 0, 0xff, 0xff, 0xff, 0xff, 0x0f}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wire.DecodeAction(tc.in)
			if e, ok := err.(*core.Error); !ok || e.Code != core.CodeInvalidArgument {
				t.Errorf("got %v, want invalid_argument", err)
			}
		})
	}
}

// FuzzDecodeOp feeds arbitrary bytes to the op export's input decoder:
// it never panics, and what it accepts encodes back to an input that
// decodes to the same operation and arguments (a varint may be written
// longer than needed, so the bytes may differ).
func FuzzDecodeOp(f *testing.F) {
	f.Add(wire.AppendOp(nil, "revertRun", wire.Text("s"), wire.Text("r")))
	f.Add(wire.AppendOp(nil, "tag", wire.Text("s"), wire.Value{}, wire.Bool(true)))
	f.Fuzz(func(t *testing.T, b []byte) {
		name, args, err := wire.DecodeOp(b)
		if err != nil {
			return
		}
		name2, args2, err := wire.DecodeOp(wire.AppendOp(nil, name, args...))
		if err != nil || name2 != name || len(args2) != len(args) {
			t.Fatalf("op input %q does not round-trip: %q %+v, %v", b, name2, args2, err)
		}
		for i := range args {
			if args[i].Kind != args2[i].Kind || args[i].Text != args2[i].Text {
				t.Fatalf("op input %q: argument %d is %+v after a round trip, was %+v", b, i, args2[i], args[i])
			}
		}
	})
}

// FuzzDecode feeds arbitrary bytes to every decoder: none may panic, and
// whatever decodes must encode back to the same bytes (the encodings are
// canonical) except where noted.
func FuzzDecode(f *testing.F) {
	f.Add(wire.AppendBegin(nil, &sampleBegin))
	f.Add(wire.AppendBegin(nil, &wire.Begin{SessionID: "s", WithHistory: true, HistoryValid: true,
		Packed: wire.AppendHistory(nil, []core.SeedMessage{{Role: core.RoleUser, Content: "\xff"}})}))
	for _, a := range sampleActions() {
		f.Add(wire.AppendAction(nil, &a))
	}
	f.Add(wire.AppendModelReply(nil, &wire.ModelReply{Handle: 1, Reply: core.ModelReply{Content: "x", ToolCalls: []core.ToolCall{{Name: "n"}}}}))
	f.Add(wire.AppendToolResult(nil, &wire.ToolResult{Handle: 1, Text: "x"}))
	f.Add(wire.AppendDelta(nil, &wire.Delta{Handle: 1, Text: "x"}))
	f.Add(wire.AppendStats(nil, &wire.Stats{}))
	f.Add(wire.AppendSessions(nil, []string{"a"}))
	f.Add(wire.AppendSession(nil, 1, sampleResult().Appended, ""))
	f.Add(wire.AppendRefused(nil, core.NewError(core.CodeInternal, "x")))
	f.Add(wire.AppendCommit(nil, &core.Commit{SessionID: "s", RunID: "r", Input: "x", MirrorGen: 1, MirrorLen: 2, Reply: "y"}))
	f.Add(wire.AppendCommitted(nil, &wire.Committed{Count: 3, Dropped: []string{"a"}}))
	f.Add(wire.AppendCommitted(nil, &wire.Committed{Stale: true}))
	f.Add(wire.AppendLimits(nil, &core.Limits{MaxSessions: 1}))
	f.Add(wire.AppendValue(nil, wire.Text("x")))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := wire.FrameKind(b); err != nil {
			return
		}
		if g, err := wire.DecodeBegin(b, 1000); err == nil {
			g.History = nil // re-encoded from Packed, as it came
			if re := wire.AppendBegin(nil, g); !bytes.Equal(re, b) {
				// Non-canonical varints in the header may differ; the
				// decoded value must still be stable.
				g2, err := wire.DecodeBegin(re, 1000)
				if err != nil || g2.SessionID != g.SessionID || g2.Input != g.Input {
					t.Fatalf("begin does not round-trip: %v", err)
				}
			}
		}
		if a, err := wire.DecodeAction(b); err == nil {
			re := wire.AppendAction(nil, a)
			if _, err := wire.DecodeAction(re); err != nil {
				t.Fatalf("action re-encodes to an undecodable frame: %v", err)
			}
		}
		if m, err := wire.DecodeModelReply(b); err == nil {
			if _, err := wire.DecodeModelReply(wire.AppendModelReply(nil, m)); err != nil {
				t.Fatal(err)
			}
		}
		if v, err := wire.DecodeValue(b); err == nil {
			if v2, err := wire.DecodeValue(wire.AppendValue(nil, v)); err != nil || v2.Kind != v.Kind || v2.Text != v.Text {
				t.Fatalf("value frame %q does not round-trip: %+v, %v", b, v2, err)
			}
		}
		_, _ = wire.DecodeToolResult(b)
		_, _ = wire.DecodeDelta(b)
		_, _ = wire.DecodeStats(b)
		_, _ = wire.DecodeSessions(b)
		_, _, _ = wire.DecodeSession(b)
		_, _ = wire.DecodeRefused(b)
		var c core.Commit
		if err := wire.DecodeCommitInto(&c, b); err == nil {
			var c2 core.Commit
			if err := wire.DecodeCommitInto(&c2, wire.AppendCommit(nil, &c)); err != nil || c2 != c {
				t.Fatalf("commit does not round-trip: %v", err)
			}
		}
		if c, err := wire.DecodeCommitted(b); err == nil {
			if c2, err := wire.DecodeCommitted(wire.AppendCommitted(nil, c)); err != nil || !reflect.DeepEqual(c2, c) {
				t.Fatalf("committed does not round-trip: %v", err)
			}
		}
		if l, err := wire.DecodeLimits(b); err == nil {
			if l2, err := wire.DecodeLimits(wire.AppendLimits(nil, l)); err != nil || *l2 != *l {
				t.Fatalf("limits do not round-trip: %v", err)
			}
		}
	})
}

// Ensure a history cache never changes what a begin frame decodes to,
// whatever sequence of frames and limits it sees.
func TestDecodeBeginCached_SameAsDecodeBegin(t *testing.T) {
	other := sampleBegin
	other.History = sampleBegin.History[:3]
	elsewhere := sampleBegin
	elsewhere.SessionID = "t"
	bare := wire.Begin{SessionID: "s", Input: "x"}
	empty := wire.Begin{SessionID: "s", WithHistory: true, History: []core.SeedMessage{}}
	a, b := wire.AppendBegin(nil, &sampleBegin), wire.AppendBegin(nil, &other)
	badHistory := append([]byte(nil), a...)
	badHistory[len(badHistory)-1] = 0xff // invalid UTF-8 in the last string
	vouched := sampleBegin
	vouched.HistoryValid = true
	badVouched := wire.AppendBegin(nil, &vouched)
	badVouched[len(badVouched)-1] = 0xff // the same bytes, under the flag
	frames := []struct {
		f   []byte
		max int
	}{
		{a, 0}, {a, 0}, {b, 0}, {a, 0}, {a, 3}, {a, 0}, {badHistory, 0}, {a, 0}, {wire.AppendBegin(nil, &elsewhere), 0}, {a, 0},
		{wire.AppendBegin(nil, &bare), 0}, {a, 0}, {wire.AppendBegin(nil, &empty), 0}, {wire.AppendBegin(nil, &empty), 0}, {a, 0},
		// A history decoded unchecked under the flag is not served to a
		// frame without it.
		{badVouched, 0}, {badHistory, 0}, {badVouched, 0}, {badVouched, 0}, {a, 0},
	}
	var cache wire.HistoryCache
	for i, fr := range frames {
		want, werr := wire.DecodeBegin(fr.f, fr.max)
		got, gerr := wire.DecodeBeginCached(fr.f, fr.max, &cache)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gerr, werr) {
			t.Fatalf("frame %d: got %+v, %v\nwant %+v, %v", i, got, gerr, want, werr)
		}
	}
}

// Ensure the limits frame and the oversize status round-trip, and that an
// unknown status is refused.
func TestLimitsAndOversize_RoundTrip(t *testing.T) {
	l := core.Limits{MaxSessions: 1, MaxMessagesPerSession: 2, MaxSessionBytes: 3, MaxSeedMessages: 4, MaxSeedBytes: 5, MaxMessageBytes: 6, MaxTotalBytes: 1 << 40}
	got, err := wire.DecodeLimits(wire.AppendLimits(nil, &l))
	if err != nil || *got != l {
		t.Fatalf("limits: got %+v, %v; want %+v", got, err, l)
	}
	if !wire.IsLimitsQuery(wire.AppendLimitsQuery(nil)) || wire.IsLimitsQuery(wire.AppendLimits(nil, &l)) {
		t.Fatal("IsLimitsQuery")
	}
	m := &wire.ModelReply{Handle: 7, Failed: true, Oversize: true, Error: "big"}
	frame := wire.AppendModelReply(nil, m)
	back, err := wire.DecodeModelReply(frame)
	if err != nil || !reflect.DeepEqual(back, m) {
		t.Fatalf("model reply: got %+v, %v; want %+v", back, err, m)
	}
	var a wire.Answer
	if err := wire.DecodeAnswerInto(&a, frame); err != nil || !a.Failed || !a.Oversize || a.Text != "big" {
		t.Fatalf("answer: got %+v, %v", a, err)
	}
	frame[len(frame)-5] = 3 // the status byte: handle 7 is one byte after the header
	if _, err := wire.DecodeModelReply(frame); err == nil {
		t.Fatal("status 3 was accepted")
	}
}

// Ensure a failed action and a run.failed event carry the messages the
// run keeps (core.Error.Appended) across the wire, and an error without
// them reads back without them.
func TestFailedActionKeepsAppended(t *testing.T) {
	kept := []core.Message{{Role: core.RoleTool, Content: "paid", ToolCallID: "c1"}}
	e := &core.Error{Code: core.CodeModelError, Message: "down", Index: core.NoIndex, Appended: kept}
	a := wire.Action{Handle: 2, Kind: wire.ActFailed, Err: e, Events: []core.Event{{Type: core.EventRunFailed, Seq: 3, Err: e}}}
	got, err := wire.DecodeAction(wire.AppendAction(nil, &a))
	if err != nil || !reflect.DeepEqual(got.Err, e) || !reflect.DeepEqual(got.Events[0].Err, e) {
		t.Fatalf("got %+v, %v", got, err)
	}
	plain := core.NewError(core.CodeTimeout, "late")
	got, err = wire.DecodeAction(wire.AppendAction(nil, &wire.Action{Handle: 2, Kind: wire.ActFailed, Err: plain}))
	if err != nil || !reflect.DeepEqual(got.Err, plain) {
		t.Fatalf("got %+v, %v", got.Err, err)
	}
}
