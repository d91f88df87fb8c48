package core_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/mock"
)

// The ADR's reference test: a cold session's run sees the seeded turns plus
// the current input; a second turn on the warm session, passing the same
// history, is not re-seeded and nothing is duplicated.
func TestColdStartedSessionIsSeededFromSuppliedHistory(t *testing.T) {
	model := &mock.Model{}
	rt := mustRuntime(t, core.Config{SystemPrompt: "be brief", Model: model})
	history := []core.SeedMessage{
		system("host prompt"),
		user("What is the capital of France?"),
		assistant("Paris."),
		user("And of Italy?"),
		assistant("Rome."),
	}

	res := mustComplete(t, rt, core.RunRequest{SessionID: "conv-1", Input: "And of Spain?", History: history, WithHistory: true})
	if want := (core.SeedReport{Mode: core.SeedCold, Seeded: 4, SkippedSystem: 1}); !reflect.DeepEqual(res.Seed, want) {
		t.Fatalf("seed = %+v, want %+v", res.Seed, want)
	}
	reqs := model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("model called %d times, want 1", len(reqs))
	}
	want := append(asMessages(history), core.Message{Role: core.RoleUser, Content: "And of Spain?"})
	if !reflect.DeepEqual(reqs[0].Messages, want) {
		t.Fatalf("model saw %v, want %v", contents(reqs[0].Messages), contents(want))
	}
	if reqs[0].System != "be brief" {
		t.Fatalf("system = %q", reqs[0].System)
	}

	// The second turn passes the same history again: a warm session is not
	// re-seeded.
	res = mustComplete(t, rt, core.RunRequest{SessionID: "conv-1", Input: "Thanks", History: history, WithHistory: true})
	if want := (core.SeedReport{Mode: core.SeedNoop, Seeded: 0, SkippedSystem: 1}); !reflect.DeepEqual(res.Seed, want) {
		t.Fatalf("second seed = %+v, want %+v", res.Seed, want)
	}
	reqs = model.Requests()
	got := reqs[1].Messages
	if len(got) != 7 {
		t.Fatalf("second turn: model saw %d messages %v, want 7", len(got), contents(got))
	}
	seen := map[string]int{}
	for _, m := range got {
		seen[string(m.Role)+m.Content]++
	}
	for k, n := range seen {
		if n > 1 {
			t.Fatalf("message %q sent %d times", k, n)
		}
	}
	if n := len(messagesOf(rt, "conv-1")); n != 8 || res.MessageCount != 8 {
		t.Fatalf("session holds %d messages (result says %d), want 8", n, res.MessageCount)
	}
}

func TestRuntime_Start_SeedModes(t *testing.T) {
	base := []core.SeedMessage{user("u1"), assistant("a1"), user("u2"), assistant("a2")}
	tests := []struct {
		name      string
		session   []core.SeedMessage // seeded first, cold
		history   []core.SeedMessage
		mode      core.SeedMode
		want      core.SeedReport
		wantAfter []core.SeedMessage // session before this turn's input
	}{
		{
			// Ensure an empty history on an empty session is a noop.
			name: "OK_EmptyHistoryCold", history: []core.SeedMessage{},
			want: core.SeedReport{Mode: core.SeedNoop},
		},
		{
			// Ensure a system-only history on an empty session is a noop that counts the system message.
			name: "OK_SystemOnlyCold", history: []core.SeedMessage{system("s")},
			want: core.SeedReport{Mode: core.SeedNoop, SkippedSystem: 1},
		},
		{
			// Ensure if-empty never touches a warm session, even when the history differs.
			name: "OK_IfEmptyWarmDiffers", session: base[:2], history: base,
			want: core.SeedReport{Mode: core.SeedNoop}, wantAfter: base[:2],
		},
		{
			// Ensure reconcile with the same history is a noop.
			name: "OK_ReconcileEqual", session: base, history: base, mode: core.SeedReconcile,
			want: core.SeedReport{Mode: core.SeedNoop}, wantAfter: base,
		},
		{
			// Ensure reconcile with a prefix of the session is a noop.
			name: "OK_ReconcilePrefix", session: base, history: base[:2], mode: core.SeedReconcile,
			want: core.SeedReport{Mode: core.SeedNoop}, wantAfter: base,
		},
		{
			// Ensure reconcile appends only the missing tail.
			name: "OK_ReconcileAppend", session: base[:2], history: base, mode: core.SeedReconcile,
			want: core.SeedReport{Mode: core.SeedAppended, Seeded: 2}, wantAfter: base,
		},
		{
			// Ensure reconcile replaces a diverged session.
			name: "OK_ReconcileReplace", session: base,
			history: []core.SeedMessage{user("u1"), assistant("other")}, mode: core.SeedReconcile,
			want:      core.SeedReport{Mode: core.SeedReplaced, Seeded: 2},
			wantAfter: []core.SeedMessage{user("u1"), assistant("other")},
		},
		{
			// Ensure reconcile compares host ids only when both sides have one.
			name:    "OK_ReconcileIDsOneSided",
			session: base[:2],
			history: []core.SeedMessage{{ID: "m1", Role: core.RoleUser, Content: "u1"}, base[1], base[2], base[3]},
			mode:    core.SeedReconcile,
			want:    core.SeedReport{Mode: core.SeedAppended, Seeded: 2}, wantAfter: base,
		},
		{
			// Ensure differing host ids on both sides count as divergence.
			name:      "OK_ReconcileIDsDiffer",
			session:   []core.SeedMessage{{ID: "m1", Role: core.RoleUser, Content: "u1"}},
			history:   []core.SeedMessage{{ID: "m2", Role: core.RoleUser, Content: "u1"}},
			mode:      core.SeedReconcile,
			want:      core.SeedReport{Mode: core.SeedReplaced, Seeded: 1},
			wantAfter: []core.SeedMessage{{ID: "m2", Role: core.RoleUser, Content: "u1"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := mustRuntime(t, core.Config{Model: newSeedableModel()})
			if tc.session != nil {
				mustSeedExactly(t, rt, "s", tc.session)
			}
			res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "now", History: tc.history, WithHistory: true, Policy: core.Policy{SeedMode: tc.mode}})
			if !reflect.DeepEqual(res.Seed, tc.want) {
				t.Fatalf("seed = %+v, want %+v", res.Seed, tc.want)
			}
			got := messagesOf(rt, "s")
			want := append(asMessages(tc.wantAfter), core.Message{Role: core.RoleUser, Content: "now"}, core.Message{Role: core.RoleAssistant, Content: "ok"})
			if !reflect.DeepEqual(contents(got), contents(want)) {
				t.Fatalf("session = %v, want %v", contents(got), contents(want))
			}
		})
	}
}

// seedInput is the input of the setup runs of mustSeedExactly; the
// models of newSeedableModel fail on it.
const seedInput = "\x00seed"

// newSeedableModel answers "ok", except to a setup run of mustSeedExactly.
func newSeedableModel() *mock.Model {
	return &mock.Model{CompleteFn: func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		if req.Messages[len(req.Messages)-1].Content == seedInput {
			return nil, errors.New("setup run")
		}
		return &core.ModelReply{Content: "ok"}, nil
	}}
}

// mustSeedExactly makes session id hold exactly msgs: it seeds them with a
// run whose model fails, so that rollback leaves what seeding left.
func mustSeedExactly(t *testing.T, rt *core.Runtime, id string, msgs []core.SeedMessage) {
	t.Helper()
	rt.DeleteSession(id)
	run, err := rt.Start(bg, core.RunRequest{SessionID: id, Input: seedInput, History: msgs, WithHistory: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := waitRun(t, run); core.ErrorCode(err) != core.CodeModelError {
		t.Fatalf("setup run: %v", err)
	}
	if got, want := contents(messagesOf(rt, id)), contents(asMessages(msgs)); !reflect.DeepEqual(got, want) {
		t.Fatalf("setup: session = %v, want %v", got, want)
	}
}

func TestRuntime_Start_SkipsSystemAndCounts(t *testing.T) {
	model := &mock.Model{}
	rt := mustRuntime(t, core.Config{Model: model})
	h := []core.SeedMessage{system("a"), user("u"), system("b"), assistant("x"), system("c")}
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "in", History: h, WithHistory: true})
	if want := (core.SeedReport{Mode: core.SeedCold, Seeded: 2, SkippedSystem: 3}); !reflect.DeepEqual(res.Seed, want) {
		t.Fatalf("seed = %+v, want %+v", res.Seed, want)
	}
	for _, m := range messagesOf(rt, "s") {
		if m.Role == core.RoleSystem {
			t.Fatalf("a system message was stored: %+v", m)
		}
	}
}

func TestRuntime_Start_InputEqualToLastSeededTurnAppendedOnce(t *testing.T) {
	model := &mock.Model{}
	rt := mustRuntime(t, core.Config{Model: model})
	h := []core.SeedMessage{user("u1"), assistant("a1"), user("same")}
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "same", History: h, WithHistory: true})
	got := contents(model.Requests()[0].Messages)
	want := []string{"user:u1", "assistant:a1", "user:same"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("model saw %v, want %v", got, want)
	}
	if len(res.Appended) != 1 || res.Appended[0].Role != core.RoleAssistant {
		t.Fatalf("appended = %v, want only the reply", contents(res.Appended))
	}
	if n := len(messagesOf(rt, "s")); n != 4 {
		t.Fatalf("session holds %d messages, want 4", n)
	}
	// A different input is appended as usual.
	res = mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "other", History: h, WithHistory: true})
	if len(res.Appended) != 2 || res.Appended[0].Content != "other" {
		t.Fatalf("appended = %v", contents(res.Appended))
	}
}

func TestRuntime_Start_SeedsToolCalls(t *testing.T) {
	model := &mock.Model{}
	rt := mustRuntime(t, core.Config{Model: model})
	h := []core.SeedMessage{user("u"), calling("c1", "c2"), toolResult("c2", "two"), system("s"), toolResult("c1", "one"), assistant("done")}
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "next", History: h, WithHistory: true})
	got := messagesOf(rt, "s")
	if len(got) != 7 || len(got[1].ToolCalls) != 2 || got[1].ToolCalls[1].Arguments != `{"q":1}` || got[2].ToolCallID != "c2" {
		t.Fatalf("session = %+v", got)
	}
	// The session does not share the host's slices.
	h[1].ToolCalls[0].Name = "changed"
	if messagesOf(rt, "s")[1].ToolCalls[0].Name != "lookup" {
		t.Fatal("the session shares the host's tool calls")
	}
}

func TestRuntime_Start_ErrRefusals(t *testing.T) {
	big := strings.Repeat("x", 200)
	limits := core.Limits{MaxSeedMessages: 6, MaxMessageBytes: 300, MaxSeedBytes: 700}
	tests := []struct {
		name    string
		history []core.SeedMessage
		code    core.Code
		index   int
	}{
		// Ensure an unknown role is refused, not coerced.
		{"ErrUnknownRole", []core.SeedMessage{user("a"), {Role: "developer", Content: "x"}}, core.CodeInvalidHistory, 1},
		// Ensure an empty role is refused.
		{"ErrEmptyRole", []core.SeedMessage{{Content: "x"}}, core.CodeInvalidHistory, 0},
		// Ensure missing content is refused on a user message.
		{"ErrMissingContent", []core.SeedMessage{user("a"), assistant("b"), {Role: core.RoleUser, ContentMissing: true}}, core.CodeInvalidHistory, 2},
		// Ensure missing content is refused on an assistant message without tool calls.
		{"ErrMissingContentAssistant", []core.SeedMessage{user("a"), {Role: core.RoleAssistant, ContentMissing: true}}, core.CodeInvalidHistory, 1},
		// Ensure missing content is refused on a system message.
		{"ErrMissingContentSystem", []core.SeedMessage{{Role: core.RoleSystem, ContentMissing: true}}, core.CodeInvalidHistory, 0},
		// Ensure a tool message needs a tool_call_id.
		{"ErrToolWithoutID", []core.SeedMessage{user("a"), calling("c1"), {Role: core.RoleTool, Content: "r"}}, core.CodeInvalidHistory, 2},
		// Ensure a tool result answering no call is refused.
		{"ErrOrphanToolResult", []core.SeedMessage{user("a"), toolResult("c1", "r")}, core.CodeInvalidHistory, 1},
		// Ensure a tool result for another call of an earlier block is an orphan.
		{"ErrOrphanAfterOtherBlock", []core.SeedMessage{calling("c1"), toolResult("c1", "r"), assistant("x"), toolResult("c1", "r")}, core.CodeInvalidHistory, 3},
		// Ensure a result whose id is not among the calls is an orphan.
		{"ErrOrphanWrongID", []core.SeedMessage{calling("c1"), toolResult("c2", "r")}, core.CodeInvalidHistory, 1},
		// Ensure a call id used twice in one message is refused.
		{"ErrDuplicateCallID", []core.SeedMessage{user("a"), calling("c1", "c1"), toolResult("c1", "r")}, core.CodeInvalidHistory, 1},
		// Ensure a call answered twice is refused.
		{"ErrAnsweredTwice", []core.SeedMessage{calling("c1"), toolResult("c1", "r"), toolResult("c1", "r")}, core.CodeInvalidHistory, 2},
		// Ensure a result after the next user turn is refused as answered twice.
		{"ErrAnsweredAfterUser", []core.SeedMessage{calling("c1"), toolResult("c1", "r"), user("u"), toolResult("c1", "r")}, core.CodeInvalidHistory, 3},
		// Ensure an unanswered call before the next user message is refused at the assistant message.
		{"ErrUnansweredCall", []core.SeedMessage{user("a"), calling("c1", "c2"), toolResult("c1", "r"), user("b")}, core.CodeInvalidHistory, 1},
		// Ensure an unanswered call before the next assistant message is refused.
		{"ErrUnansweredBeforeAssistant", []core.SeedMessage{calling("c1"), assistant("b")}, core.CodeInvalidHistory, 0},
		// Ensure an unanswered call at the very end is refused.
		{"ErrUnansweredAtEnd", []core.SeedMessage{user("a"), assistant("b"), user("c"), calling("c1")}, core.CodeInvalidHistory, 3},
		// Ensure tool calls on a user message are refused.
		{"ErrToolCallsOnUser", []core.SeedMessage{{Role: core.RoleUser, Content: "a", ToolCalls: []core.ToolCall{{ID: "c", Name: "n"}}}}, core.CodeInvalidHistory, 0},
		// Ensure tool_call_id on a user message is refused.
		{"ErrToolCallIDOnUser", []core.SeedMessage{{Role: core.RoleUser, Content: "a", ToolCallID: "c"}}, core.CodeInvalidHistory, 0},
		// Ensure a tool call needs an id and a name.
		{"ErrCallWithoutID", []core.SeedMessage{{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{Name: "n"}}}}, core.CodeInvalidHistory, 0},
		{"ErrCallWithoutName", []core.SeedMessage{{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "c"}}}}, core.CodeInvalidHistory, 0},
		// Ensure a history longer than maxSeedMessages is refused at the first message over.
		{"ErrTooManyMessages", []core.SeedMessage{user("1"), assistant("2"), user("3"), assistant("4"), user("5"), assistant("6"), user("7")}, core.CodeLimitExceeded, 6},
		// Ensure a message over maxMessageBytes is refused at its index.
		{"ErrMessageTooBig", []core.SeedMessage{user("a"), assistant(strings.Repeat("y", 301))}, core.CodeLimitExceeded, 1},
		// Ensure a history over maxSeedBytes is refused at the first message over.
		{"ErrHistoryTooBig", []core.SeedMessage{user(big), assistant(big), user(big), assistant(big)}, core.CodeLimitExceeded, 3},
		// Ensure system messages count against the limits too.
		{"ErrSystemTooBig", []core.SeedMessage{system(strings.Repeat("s", 400))}, core.CodeLimitExceeded, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			model := &mock.Model{}
			rt := mustRuntime(t, core.Config{Model: model, Limits: limits})
			mustComplete(t, rt, core.RunRequest{SessionID: "warm", Input: "hello", History: []core.SeedMessage{user("a"), assistant("b")}, WithHistory: true})
			before := stateOf(rt)
			for _, id := range []string{"warm", "cold"} {
				for _, mode := range []core.SeedMode{core.SeedIfEmpty, core.SeedReconcile} {
					var events int
					run, err := rt.Start(bg, core.RunRequest{SessionID: id, Input: "in", History: tc.history, WithHistory: true,
						Policy: core.Policy{SeedMode: mode}, OnEvent: func(core.Event) { events++ }})
					if run != nil {
						t.Fatalf("%s/%s: the run started", id, mode)
					}
					var e *core.Error
					if !errors.As(err, &e) {
						t.Fatalf("%s/%s: err = %v, want *core.Error", id, mode, err)
					}
					if e.Code != tc.code || e.Index != tc.index {
						t.Fatalf("%s/%s: got code %s index %d (%v), want %s index %d", id, mode, e.Code, e.Index, e, tc.code, tc.index)
					}
					if events != 0 {
						t.Fatalf("a refused run emitted %d events", events)
					}
					requireSameState(t, stateOf(rt), before)
				}
			}
			if n := len(model.Requests()); n != 1 {
				t.Fatalf("the model was called %d times, want 1", n)
			}
			// The runtime still serves.
			mustComplete(t, rt, core.RunRequest{SessionID: "cold", Input: "fine"})
		})
	}
}

func TestRuntime_Start_ErrInvalidArguments(t *testing.T) {
	tests := []struct {
		name string
		req  core.RunRequest
		code core.Code
	}{
		// Ensure an empty session id is refused.
		{"ErrEmptySessionID", core.RunRequest{Input: "x"}, core.CodeInvalidArgument},
		// Ensure a huge session id is refused.
		{"ErrHugeSessionID", core.RunRequest{SessionID: strings.Repeat("s", core.MaxIDBytes+1)}, core.CodeInvalidArgument},
		// Ensure an unknown seed mode is refused.
		{"ErrSeedMode", core.RunRequest{SessionID: "s", Policy: core.Policy{SeedMode: "always"}}, core.CodeInvalidArgument},
		// Ensure an unknown busy mode is refused.
		{"ErrOnBusy", core.RunRequest{SessionID: "s", Policy: core.Policy{OnBusy: "drop"}}, core.CodeInvalidArgument},
		// Ensure negative numbers are refused.
		{"ErrMaxSteps", core.RunRequest{SessionID: "s", Policy: core.Policy{MaxSteps: -1}}, core.CodeInvalidArgument},
		{"ErrTimeout", core.RunRequest{SessionID: "s", Policy: core.Policy{TimeoutMs: -1}}, core.CodeInvalidArgument},
		// Ensure an input over maxMessageBytes is refused.
		{"ErrHugeInput", core.RunRequest{SessionID: "s", Input: strings.Repeat("x", 2<<20)}, core.CodeLimitExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := mustRuntime(t, core.Config{})
			before := stateOf(rt)
			_, err := rt.Start(bg, tc.req)
			if got := core.ErrorCode(err); got != tc.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tc.code)
			}
			requireSameState(t, stateOf(rt), before)
		})
	}
}

// Ensure a cold seed keeps its own copy of the history's tool calls: the
// host may change its slices once the run has started, and the session
// (and its later turns) keep what was seeded.
func TestRuntime_Execute_ColdSeedSharesNoToolCalls(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	history := []core.SeedMessage{
		user("weather?"), calling("c1", "c2"), toolResult("c1", "sun"), toolResult("c2", "wind"),
		assistant("sunny"), user("and tomorrow?"), calling("c3"), toolResult("c3", "rain"), assistant("rain"),
	}
	want := asMessages(history)
	for i := range want {
		want[i] = want[i].Clone()
	}
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "thanks", History: history, WithHistory: true})
	for i := range history {
		for j := range history[i].ToolCalls {
			history[i].ToolCalls[j] = core.ToolCall{ID: "changed", Name: "changed", Arguments: "{}"}
		}
	}
	mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "again"})
	got := messagesOf(rt, "s")
	if len(got) != len(want)+4 {
		t.Fatalf("session has %d messages, want %d", len(got), len(want)+4)
	}
	if !reflect.DeepEqual(got[:len(want)], want) {
		t.Fatalf("seeded messages changed: got %+v, want %+v", got[:len(want)], want)
	}
	// Each message's tool calls are capped at its own: appending to one
	// cannot write over the next message's calls.
	for i := range got {
		if c := got[i].ToolCalls; cap(c) != len(c) {
			t.Fatalf("message %d: tool calls have cap %d, len %d", i, cap(c), len(c))
		}
	}
}
