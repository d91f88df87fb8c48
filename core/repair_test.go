package core_test

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/mock"
)

func withID(m core.SeedMessage, id string) core.SeedMessage { m.ID = id; return m }

func continues(m core.SeedMessage) core.SeedMessage { m.Continues = true; return m }

func withID2(m core.Message, id string) core.Message { m.ID = id; return m }

func msg(m core.SeedMessage) core.Message { return m.Message() }

func interrupted(id string) core.Message {
	return core.Message{Role: core.RoleTool, Content: core.InterruptedToolResult, ToolCallID: id}
}

// repairCases are broken histories, what a seed without repair refuses
// them with, and what a seed with repair stores and reports.
var repairCases = []struct {
	name    string
	history []core.SeedMessage
	refusal core.Error
	session []core.Message
	repairs []core.Repair
}{
	{
		name:    "missing_tool_result before the next user message",
		history: []core.SeedMessage{user("q"), calling("c1", "c2"), toolResult("c1", "r1"), user("again")},
		refusal: core.Error{Code: core.CodeInvalidHistory, Index: 1, Message: `tool call "c2" has no tool result before the next user or assistant message`},
		session: append(asMessages([]core.SeedMessage{user("q"), calling("c1", "c2"), toolResult("c1", "r1")}),
			interrupted("c2"), msg(user("again"))),
		repairs: []core.Repair{{Kind: core.RepairMissingToolResult, Index: 1, ToolCallID: "c2"}},
	},
	{
		name:    "missing_tool_result at the end, every call",
		history: []core.SeedMessage{system("s"), user("q"), calling("c1", "c2")},
		refusal: core.Error{Code: core.CodeInvalidHistory, Index: 2, Message: `tool call "c1" has no tool result before the next user or assistant message`},
		session: append(asMessages([]core.SeedMessage{user("q"), calling("c1", "c2")}), interrupted("c1"), interrupted("c2")),
		repairs: []core.Repair{
			{Kind: core.RepairMissingToolResult, Index: 2, ToolCallID: "c1"},
			{Kind: core.RepairMissingToolResult, Index: 2, ToolCallID: "c2"},
		},
	},
	{
		name: "missing_tool_result in a host message of several, before its text",
		history: []core.SeedMessage{withID(user("q"), "u1"), withID(calling("c1"), "a1"),
			continues(withID(assistant("Done."), "a1")), withID(user("ok"), "u2")},
		refusal: core.Error{Code: core.CodeInvalidHistory, Index: 1, Message: `tool call "c1" has no tool result before the next user or assistant message`},
		session: []core.Message{msg(withID(user("q"), "u1")), msg(withID(calling("c1"), "a1")), withID2(interrupted("c1"), "a1"),
			msg(withID(assistant("Done."), "a1")), msg(withID(user("ok"), "u2"))},
		repairs: []core.Repair{{Kind: core.RepairMissingToolResult, Index: 1, ToolCallID: "c1"}},
	},
	{
		name:    "orphan_tool_result",
		history: []core.SeedMessage{user("q"), toolResult("c9", "lost"), assistant("a")},
		refusal: core.Error{Code: core.CodeInvalidHistory, Index: 1, Message: `tool result "c9" answers no call of the preceding assistant message`},
		session: asMessages([]core.SeedMessage{user("q"), assistant("a")}),
		repairs: []core.Repair{{Kind: core.RepairOrphanToolResult, Index: 1, ToolCallID: "c9"}},
	},
	{
		name:    "duplicate_tool_result keeps the first answer",
		history: []core.SeedMessage{user("q"), calling("c1"), toolResult("c1", "first"), toolResult("c1", "second"), assistant("a")},
		refusal: core.Error{Code: core.CodeInvalidHistory, Index: 3, Message: `tool call "c1" is answered twice`},
		session: asMessages([]core.SeedMessage{user("q"), calling("c1"), toolResult("c1", "first"), assistant("a")}),
		repairs: []core.Repair{{Kind: core.RepairDuplicateToolResult, Index: 3, ToolCallID: "c1"}},
	},
	{
		name: "duplicate_message drops the whole host message",
		history: []core.SeedMessage{withID(user("q"), "u1"), withID(assistant("a"), "a1"), continues(withID(assistant("b"), "a1")),
			withID(user("q"), "u1"), withID(assistant("a"), "a1"), continues(withID(assistant("b"), "a1")), withID(user("next"), "u2")},
		refusal: core.Error{Code: core.CodeInvalidHistory, Index: 2, Message: `message id "u1" already appeared at index 0`},
		session: asMessages([]core.SeedMessage{withID(user("q"), "u1"), withID(assistant("a"), "a1"), continues(withID(assistant("b"), "a1")),
			withID(user("next"), "u2")}),
		repairs: []core.Repair{{Kind: core.RepairDuplicateMessage, Index: 2}, {Kind: core.RepairDuplicateMessage, Index: 3}},
	},
	{
		name: "every kind at once, host indexes",
		history: []core.SeedMessage{withID(user("q"), "u1"), calling("c1", "c2"), toolResult("c2", "r2"), toolResult("c2", "again"),
			toolResult("c7", "orphan"), withID(user("q"), "u1"), assistant("a")},
		refusal: core.Error{Code: core.CodeInvalidHistory, Index: 3, Message: `tool call "c2" is answered twice`},
		session: []core.Message{msg(withID(user("q"), "u1")), msg(calling("c1", "c2")), msg(toolResult("c2", "r2")),
			interrupted("c1"), msg(assistant("a"))},
		repairs: []core.Repair{
			{Kind: core.RepairDuplicateToolResult, Index: 3, ToolCallID: "c2"},
			{Kind: core.RepairOrphanToolResult, Index: 4, ToolCallID: "c7"},
			{Kind: core.RepairDuplicateMessage, Index: 5},
			{Kind: core.RepairMissingToolResult, Index: 1, ToolCallID: "c1"},
		},
	},
}

func TestRuntime_Run_Repair(t *testing.T) {
	for _, tc := range repairCases {
		t.Run(tc.name, func(t *testing.T) {
			// Ensure a seed without repair refuses the history, naming the
			// host message, and changes nothing.
			rt := mustRuntime(t, core.Config{})
			_, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "go", History: tc.history, WithHistory: true})
			var e *core.Error
			if !asError(err, &e) || !reflect.DeepEqual(*e, tc.refusal) {
				t.Fatalf("refused with %v, want %v", err, &tc.refusal)
			}
			if len(rt.ListSessions()) != 0 {
				t.Fatalf("a refused seed left a session")
			}

			// Ensure the history is listed by CheckHistory, each problem
			// with its repair, the first one as the refusal.
			check := core.CheckHistory(tc.history, core.Limits{})
			if check.OK || len(check.Problems) != len(tc.repairs) {
				t.Fatalf("check = %+v, want %d problems", check, len(tc.repairs))
			}
			for i, p := range check.Problems {
				if p.Code != core.CodeInvalidHistory || p.Index != tc.repairs[i].Index || p.Repair != tc.repairs[i].Kind || p.Message == "" {
					t.Fatalf("problem %d = %+v, want the repair %+v", i, p, tc.repairs[i])
				}
			}
			if p := check.Problems[0]; p.Index != tc.refusal.Index || p.Message != tc.refusal.Message {
				t.Fatalf("first problem %+v is not the refusal %v", p, &tc.refusal)
			}

			// Ensure a seed with repair stores the repaired history, gives
			// it to the model and reports the repairs.
			model := &mock.Model{}
			rt = mustRuntime(t, core.Config{Model: model})
			res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "go", History: tc.history, WithHistory: true,
				Policy: core.Policy{Repair: true}})
			if !reflect.DeepEqual(res.Seed.Repairs, tc.repairs) {
				t.Fatalf("repairs\n got %+v\nwant %+v", res.Seed.Repairs, tc.repairs)
			}
			if res.Seed.Mode != core.SeedCold || res.Seed.Seeded != len(tc.session) {
				t.Fatalf("seed = %+v, want cold with %d messages", res.Seed, len(tc.session))
			}
			got := messagesOf(rt, "s")
			if !reflect.DeepEqual(got[:len(tc.session)], tc.session) {
				t.Fatalf("session\n got %+v\nwant %+v", got, tc.session)
			}
			reqs := model.Requests()
			if len(reqs) != 1 || !reflect.DeepEqual(reqs[0].Messages[:len(tc.session)], tc.session) {
				t.Fatalf("the model was not sent the repaired history: %+v", reqs)
			}
			if err := core.ValidateHistory(core.SeedMessages(got), core.Limits{}); err != nil {
				t.Fatalf("the repaired session fails validation: %v", err)
			}

			// Ensure the same broken history on the next turn is a noop, in
			// both seed modes, and reports no repair.
			for _, mode := range []core.SeedMode{core.SeedIfEmpty, core.SeedReconcile} {
				res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "more", History: tc.history, WithHistory: true,
					Policy: core.Policy{Repair: true, SeedMode: mode}})
				if res.Seed.Mode != core.SeedNoop || res.Seed.Repairs != nil {
					t.Fatalf("%s: seed = %+v, want a noop", mode, res.Seed)
				}
			}
		})
	}
}

// Ensure reconcile treats the repaired session as equal to the host's
// history extended with the turn it received: the tail is appended.
func TestRuntime_Run_RepairReconcileAppends(t *testing.T) {
	history := []core.SeedMessage{user("q"), calling("c1"), user("again")}
	rt := mustRuntime(t, core.Config{})
	pol := core.Policy{Repair: true, SeedMode: core.SeedReconcile}
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "go", History: history, WithHistory: true, Policy: pol})
	next := append(append([]core.SeedMessage(nil), history...), core.SeedMessages(res.Appended)...)
	res = mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "more", History: next, WithHistory: true, Policy: pol})
	if res.Seed.Mode != core.SeedNoop {
		t.Fatalf("seed = %+v, want a noop", res.Seed)
	}
	next = append(append(next, core.SeedMessages(res.Appended)...), user("and"), assistant("x"))
	before := len(messagesOf(rt, "s"))
	res = mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "last", History: next, WithHistory: true, Policy: pol})
	if res.Seed.Mode != core.SeedAppended || res.Seed.Seeded != 2 {
		t.Fatalf("seed = %+v (session had %d), want 2 appended", res.Seed, before)
	}
}

// Ensure repair refuses what it does not fix, exactly as without repair.
func TestRuntime_Run_RepairNeverGuesses(t *testing.T) {
	cases := []struct {
		name    string
		history []core.SeedMessage
		want    core.Error
	}{
		{"unknown role", []core.SeedMessage{user("q"), {Role: "bot", Content: "x"}},
			core.Error{Code: core.CodeInvalidHistory, Index: 1, Message: `unknown role "bot"`}},
		{"a call without a name", []core.SeedMessage{user("q"), {Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "c1"}}}},
			core.Error{Code: core.CodeInvalidHistory, Index: 1, Message: `tool call "c1" has no name`}},
		{"a tool message without tool_call_id after a repair", []core.SeedMessage{user("q"), toolResult("c9", "x"), toolResult("", "y")},
			core.Error{Code: core.CodeInvalidHistory, Index: 2, Message: "tool message has no tool_call_id"}},
		{"a repeated id with other content (an edited message)", []core.SeedMessage{withID(user("first q"), "1"), assistant("answer 1"),
			withID(user("different second q"), "1"), assistant("answer 2")},
			core.Error{Code: core.CodeInvalidHistory, Index: 2, Message: `message id "1" already appeared at index 0 with different content`}},
		{"a repeated id whose host message has one more part", []core.SeedMessage{user("q"), withID(assistant("a"), "a1"), user("r"),
			withID(assistant("a"), "a1"), continues(withID(assistant("b"), "a1"))},
			core.Error{Code: core.CodeInvalidHistory, Index: 3, Message: `message id "a1" already appeared at index 1 with different content`}},
		{"a repeated id with other tool calls, after a repair", []core.SeedMessage{withID(user("q"), "u1"), toolResult("c9", "x"),
			withID(calling("c1"), "a1"), toolResult("c1", "r"), withID(calling("c2"), "a1"), toolResult("c2", "r")},
			core.Error{Code: core.CodeInvalidHistory, Index: 4, Message: `message id "a1" already appeared at index 2 with different content`}},
		{"an edited message is refused, not repaired as an orphan result", []core.SeedMessage{withID(user("q"), "h"), withID(toolResult("c3", "x"), "h")},
			core.Error{Code: core.CodeInvalidHistory, Index: 1, Message: `message id "h" already appeared at index 0 with different content`}},
		{"an edited message is refused before the calls it leaves unanswered", []core.SeedMessage{withID(user("q"), "h"), calling("c1"), withID(user("r"), "h")},
			core.Error{Code: core.CodeInvalidHistory, Index: 2, Message: `message id "h" already appeared at index 0 with different content`}},
		{"missing content after a duplicate", []core.SeedMessage{withID(user("q"), "u"), withID(user("q"), "u"), {Role: core.RoleUser, ContentMissing: true}},
			core.Error{Code: core.CodeInvalidHistory, Index: 2, Message: "user message has no content"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := mustRuntime(t, core.Config{})
			_, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "go", History: tc.history, WithHistory: true, Policy: core.Policy{Repair: true}})
			var e *core.Error
			if !asError(err, &e) || !reflect.DeepEqual(*e, tc.want) {
				t.Fatalf("got %v, want %v", err, &tc.want)
			}
			if len(rt.ListSessions()) != 0 {
				t.Fatalf("a refused seed left a session")
			}
			check := core.CheckHistory(tc.history, core.Limits{})
			last := check.Problems[len(check.Problems)-1]
			if check.OK || last.Repair != "" || last.Index != tc.want.Index || last.Message != tc.want.Message {
				t.Fatalf("check = %+v, want the refusal last, without repair", check)
			}
		})
	}
}

func TestCheckHistory_OK(t *testing.T) {
	// Ensure a valid history is OK with no problems, and a limit is a
	// problem no repair fixes.
	if c := core.CheckHistory([]core.SeedMessage{user("q"), calling("c1"), toolResult("c1", "r")}, core.Limits{}); !c.OK || len(c.Problems) != 0 {
		t.Fatalf("check = %+v, want OK", c)
	}
	c := core.CheckHistory([]core.SeedMessage{user("q"), user("r")}, core.Limits{MaxSeedMessages: 1})
	if c.OK || len(c.Problems) != 1 || c.Problems[0].Code != core.CodeLimitExceeded || c.Problems[0].Repair != "" {
		t.Fatalf("check = %+v, want one limit problem", c)
	}
}

// FuzzRepairHistory injects defects into random histories (a result
// dropped, a message repeated, an orphan result, a stray result before a
// result carrying its call's message id): with repair, a
// history either seeds, and the session then passes validation and holds
// the history's messages in order, or is refused with a typed history
// error, changing nothing; CheckHistory agrees.
func FuzzRepairHistory(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 4, 0, 0, 0, 0}, byte(0))
	f.Add([]byte{0, 0x80, 1, 1, 4, 0, 2, 2, 0, 2, 2, 0, 0, 0x80, 1}, byte(3))
	f.Add([]byte{1, 8, 1, 2, 2, 2, 3, 0, 0}, byte(7))
	f.Add([]byte{0, 0, 0, 1, 4, 0, 2, 2, 0}, byte(8))
	f.Add([]byte{0, 0, 0, 1, 8, 0, 2, 2, 0, 2, 2, 1}, byte(9))
	f.Fuzz(func(t *testing.T, data []byte, defects byte) {
		history := historyFromBytes(data)
		// Inject: drop a result, repeat a message, add an orphan.
		if defects&1 != 0 {
			for i := range history {
				if history[i].Role == core.RoleTool {
					history = append(history[:i:i], history[i+1:]...)
					break
				}
			}
		}
		if defects&2 != 0 && len(history) > 0 {
			m := history[len(history)/2]
			m.ID = "dup"
			history = append(history, m, m)
		}
		if defects&4 != 0 {
			history = append(history, toolResult("orphan", "x"))
		}
		if defects&8 != 0 {
			// A stray result between a call and its result, which carries
			// the calling message's id.
			for i := 1; i < len(history); i++ {
				if history[i].Role == core.RoleTool && history[i-1].Role == core.RoleAssistant && len(history[i-1].ToolCalls) > 0 {
					history = append(history[:i:i], append([]core.SeedMessage{toolResult("stray", "x")}, history[i:]...)...)
					history[i-1].ID, history[i+1].ID = "m", "m"
					break
				}
			}
		}
		rt := mustRuntime(t, core.Config{Limits: core.Limits{MaxSeedMessages: 64}})
		check := core.CheckHistory(history, core.Limits{MaxSeedMessages: 64})
		run, err := rt.StartRunWithPolicyAndHistory(bg, "s", "input", core.Policy{Repair: true}, history)
		if verr := core.ValidateHistory(history, core.Limits{MaxSeedMessages: 64}); verr != nil {
			// The first problem is what a seed without repair refuses.
			e, p := core.AsError(verr), check.Problems[0]
			if check.OK || p.Code != e.Code || p.Index != e.Index || p.Message != e.Message {
				t.Fatalf("first problem %+v, refusal %v", p, verr)
			}
		} else if !check.OK {
			t.Fatalf("valid history, check %+v", check)
		}
		if err != nil {
			var e *core.Error
			if !asError(err, &e) || (e.Code != core.CodeInvalidHistory && e.Code != core.CodeLimitExceeded) || e.Index < 0 || e.Index > len(history) {
				t.Fatalf("refusal %v is not a typed history error with an index", err)
			}
			if p := check.Problems[len(check.Problems)-1]; p.Code != e.Code || p.Index != e.Index || p.Message != e.Message {
				t.Fatalf("last problem %+v, refusal with repair %v", p, err)
			}
			if len(rt.ListSessions()) != 0 {
				t.Fatalf("a refused seed left a session")
			}
			if check.OK || check.Problems[len(check.Problems)-1].Repair != "" {
				t.Fatalf("refused (%v), but check says it repairs: %+v", err, check)
			}
			return
		}
		res, err := waitRun(t, run)
		if err != nil {
			t.Fatalf("accepted history failed the run: %v", err)
		}
		for _, p := range check.Problems {
			if p.Repair == "" {
				t.Fatalf("seeded, but check lists a problem without repair: %+v", check)
			}
		}
		if len(res.Seed.Repairs) != len(check.Problems) {
			t.Fatalf("%d repairs, %d problems", len(res.Seed.Repairs), len(check.Problems))
		}
		got := messagesOf(rt, "s")
		if err := core.ValidateHistory(core.SeedMessages(got), core.Limits{}); err != nil {
			t.Fatalf("the repaired session fails validation: %v\n%+v", err, got)
		}
		// The healed copy, stored with the turn, seeds without repair.
		if (res.Seed.Repaired != nil) != (len(res.Seed.Repairs) > 0) || len(res.Seed.Edits) != len(res.Seed.Repairs) {
			t.Fatalf("repairs %+v, repaired %+v, edits %+v", res.Seed.Repairs, res.Seed.Repaired, res.Seed.Edits)
		}
		if res.Seed.Repaired != nil {
			stored := append(append([]core.SeedMessage(nil), res.Seed.Repaired...), core.SeedMessages(res.Appended)...)
			if err := core.ValidateHistory(stored, core.Limits{}); err != nil {
				t.Fatalf("the healed copy fails validation: %v\n%+v", err, stored)
			}
		}
		// Again with the same history: a noop.
		res = mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "again", History: history, WithHistory: true,
			Policy: core.Policy{Repair: true, SeedMode: core.SeedReconcile}})
		if res.Seed.Mode != core.SeedNoop && len(history) > 0 {
			t.Fatalf("the same history seeded again: %+v", res.Seed)
		}
	})
}

// Ensure repeated ids are found among many, in tables of every size, one
// after another (the table is reused), and unique ids are accepted.
func TestValidateHistory_DuplicateIDsAmongMany(t *testing.T) {
	for _, n := range []int{3000, 10, 700, 3000} {
		h := make([]core.SeedMessage, n)
		for i := range h {
			h[i] = withID(user("m"), "id-"+strconv.Itoa(i))
		}
		if err := core.ValidateHistory(h, core.Limits{}); err != nil {
			t.Fatalf("%d unique ids refused: %v", n, err)
		}
		h = append(h, withID(user("m"), "id-"+strconv.Itoa(n/3)))
		err := core.ValidateHistory(h, core.Limits{})
		want := core.Error{Code: core.CodeInvalidHistory, Index: n, Message: `message id "id-` + strconv.Itoa(n/3) + `" already appeared at index ` + strconv.Itoa(n/3)}
		if e := core.AsError(err); err == nil || !reflect.DeepEqual(*e, want) {
			t.Fatalf("%d ids and a repeat: %v, want %v", n, err, &want)
		}
		h[n].Content = "edited"
		err = core.ValidateHistory(h, core.Limits{})
		want.Message += " with different content"
		if e := core.AsError(err); err == nil || !reflect.DeepEqual(*e, want) {
			t.Fatalf("%d ids and an edited repeat: %v, want %v", n, err, &want)
		}
	}
}

// Ensure a history just under maxSeedBytes whose last call is unanswered
// gets one answer from CheckHistory, a plain seed and a repaired seed:
// the markers count against no seed limit, so the plain refusal is the
// only problem and repair seeds it. A history over the limit before its
// first repairable problem is refused for the limit by all three.
func TestRepair_MarkersCountAgainstNoSeedLimit(t *testing.T) {
	calls := calling("c1")
	size := int64(len("q"))
	for _, c := range calls.ToolCalls {
		size += int64(len(c.ID) + len(c.Name) + len(c.Arguments))
	}
	history := []core.SeedMessage{user("q"), calls}
	limits := core.Limits{MaxSeedBytes: size}
	want := core.Error{Code: core.CodeInvalidHistory, Index: 1, Message: `tool call "c1" has no tool result before the next user or assistant message`}

	check := core.CheckHistory(history, limits)
	if check.OK || len(check.Problems) != 1 || check.Problems[0] != (core.Problem{Code: want.Code, Index: want.Index, Message: want.Message, Repair: core.RepairMissingToolResult}) {
		t.Fatalf("check = %+v, want the one repairable problem", check)
	}
	rt := mustRuntime(t, core.Config{Limits: limits})
	_, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "go", History: history, WithHistory: true})
	if e := core.AsError(err); err == nil || !reflect.DeepEqual(*e, want) {
		t.Fatalf("plain seed: %v, want %v", err, &want)
	}
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "go", History: history, WithHistory: true, Policy: core.Policy{Repair: true}})
	if len(res.Seed.Repairs) != 1 || res.Seed.Repairs[0].Kind != core.RepairMissingToolResult {
		t.Fatalf("repaired seed: %+v", res.Seed)
	}

	// One byte less: the limit is met at message 1, before the problem.
	limits.MaxSeedBytes--
	over := core.Error{Code: core.CodeLimitExceeded, Index: 1, Message: "history exceeds maxSeedBytes (" + strconv.Itoa(int(limits.MaxSeedBytes)) + ") at this message"}
	check = core.CheckHistory(history, limits)
	if check.OK || len(check.Problems) != 1 || check.Problems[0] != (core.Problem{Code: over.Code, Index: over.Index, Message: over.Message}) {
		t.Fatalf("check over the limit = %+v, want %v", check, &over)
	}
	rt = mustRuntime(t, core.Config{Limits: limits})
	for _, repair := range []bool{false, true} {
		_, err := rt.Execute(bg, core.RunRequest{SessionID: "s", Input: "go", History: history, WithHistory: true, Policy: core.Policy{Repair: repair}})
		if e := core.AsError(err); err == nil || !reflect.DeepEqual(*e, over) {
			t.Fatalf("repair %v over the limit: %v, want %v", repair, err, &over)
		}
	}
}

// Ensure the host's copy heals: after one repaired turn, the host's
// history with the repairs applied (SeedReport.Repaired) followed by the
// turn's Appended is a history CheckHistory accepts, that a fresh runtime
// seeds without repair to the same session, and that the warm runtime
// takes as a noop in both seed modes. The session.seeded event carries
// no content.
func TestRepair_HostCopyHeals(t *testing.T) {
	for _, tc := range repairCases {
		t.Run(tc.name, func(t *testing.T) {
			rt := mustRuntime(t, core.Config{})
			var event *core.SeedReport
			res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "go", History: tc.history, WithHistory: true,
				Policy: core.Policy{Repair: true}, OnEvent: func(ev core.Event) {
					if ev.Type == core.EventSessionSeeded {
						event = ev.Seed
					}
				}})
			if res.Seed.Repaired == nil || len(res.Seed.Edits) != len(res.Seed.Repairs) {
				t.Fatalf("seed = %+v, want the repaired history and one edit per repair", res.Seed)
			}
			if event == nil || event.Repaired != nil || len(event.Edits) != len(res.Seed.Edits) {
				t.Fatalf("session.seeded = %+v, want the edits and no content", event)
			}
			stored := append(append([]core.SeedMessage(nil), res.Seed.Repaired...), core.SeedMessages(res.Appended)...)
			if c := core.CheckHistory(stored, core.Limits{}); !c.OK {
				t.Fatalf("the stored copy has problems: %+v", c.Problems)
			}
			want := messagesOf(rt, "s")
			cold := mustRuntime(t, core.Config{})
			res2 := mustComplete(t, cold, core.RunRequest{SessionID: "s", Input: "later", History: stored, WithHistory: true})
			if res2.Seed.Mode != core.SeedCold || res2.Seed.Repairs != nil || res2.Seed.Repaired != nil {
				t.Fatalf("cold start from the stored copy: %+v", res2.Seed)
			}
			if got := messagesOf(cold, "s")[:len(want)]; !reflect.DeepEqual(got, want) {
				t.Fatalf("cold session %v\nwant %v", got, want)
			}
			for _, mode := range []core.SeedMode{core.SeedIfEmpty, core.SeedReconcile} {
				res3 := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "later", History: stored, WithHistory: true,
					Policy: core.Policy{SeedMode: mode}})
				if res3.Seed.Mode != core.SeedNoop {
					t.Fatalf("%s: warm turn with the stored copy: %+v", mode, res3.Seed)
				}
				stored = append(stored, core.SeedMessages(res3.Appended)...)
			}
		})
	}
	// A history without problems has no repaired copy.
	rt := mustRuntime(t, core.Config{})
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "go", History: []core.SeedMessage{user("q"), assistant("a")},
		WithHistory: true, Policy: core.Policy{Repair: true}})
	if res.Seed.Repaired != nil || res.Seed.Edits != nil {
		t.Fatalf("seed = %+v, want no repaired copy", res.Seed)
	}
}
