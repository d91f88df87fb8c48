package core_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/mock"
)

func headConversation() []core.Message {
	return []core.Message{
		{Role: core.RoleUser, Content: "weather in Paris?", ID: "u1"},
		{Role: core.RoleAssistant, ToolCalls: []core.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Paris"}`}}},
		{Role: core.RoleTool, ToolCallID: "c1", Content: "sunny"},
		{Role: core.RoleAssistant, Content: "It is sunny."},
	}
}

func TestHead_FormAndIDs(t *testing.T) {
	msgs := headConversation()
	h := core.Head(msgs)
	if !core.ValidHead(h) || !strings.HasPrefix(h, "h1-") || len(h) != 25 {
		t.Fatalf("head %q is not of the form h1- and 22 characters", h)
	}
	if h != core.Head(headConversation()) {
		t.Fatal("the head is not a function of the messages")
	}
	noIDs := headConversation()
	noIDs[0].ID = ""
	if core.Head(noIDs) != h {
		t.Fatal("a host id changed the head; ids are left out")
	}
	// A history with system messages seeds the same conversation.
	hist := []core.SeedMessage{system("be brief")}
	for i := range msgs {
		m := msgs[i]
		hist = append(hist, core.SeedMessage{ID: m.ID, Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolCalls: m.ToolCalls})
	}
	if core.HistoryHead(hist) != h {
		t.Fatal("HistoryHead of the history differs from Head of the messages it seeds")
	}
	if c := core.CheckHistory(hist, core.Limits{}); c.Head != h {
		t.Fatalf("CheckHistory head %q, want %q", c.Head, h)
	}
	if core.Head(nil) == h || !core.ValidHead(core.Head(nil)) {
		t.Fatal("the empty conversation's head")
	}
	for _, bad := range []string{"", "h1-", "h2-AAAAAAAAAAAAAAAAAAAAAA", "h1-AAAAAAAAAAAAAAAAAAAAA!", h + "A", h[:len(h)-1] + "B"} {
		if core.ValidHead(bad) {
			t.Errorf("ValidHead(%q) = true", bad)
		}
	}
}

func TestHead_EveryFieldTheModelSeesCounts(t *testing.T) {
	base := core.Head(headConversation())
	edits := map[string]func(m []core.Message){
		"role":         func(m []core.Message) { m[3].Role = core.RoleUser },
		"content":      func(m []core.Message) { m[0].Content += "!" },
		"tool_call_id": func(m []core.Message) { m[2].ToolCallID = "c2" },
		"call id":      func(m []core.Message) { m[1].ToolCalls[0].ID = "c2" },
		"call name":    func(m []core.Message) { m[1].ToolCalls[0].Name = "weathr" },
		"arguments":    func(m []core.Message) { m[1].ToolCalls[0].Arguments = `{"city":"Rome"}` },
		"boundary": func(m []core.Message) {
			m[0].Content, m[3].Content = "weather in Paris", "?It is sunny."
		},
	}
	for name, edit := range edits {
		m := headConversation()
		edit(m)
		if core.Head(m) == base {
			t.Errorf("an edit of %s left the head as it was", name)
		}
	}
	if core.Head(headConversation()[:3]) == base {
		t.Error("a prefix has the whole conversation's head")
	}
}

func TestHead_ResultSessionAndIfHead(t *testing.T) {
	rt := mustRuntime(t, core.Config{Model: &mock.Model{}})
	res := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "hi", IfHead: core.Head(nil)})
	s, _ := rt.Session("s")
	if res.Head() != core.Head(s.Messages) || s.Head != res.Head() {
		t.Fatalf("result head %q, session head %q, head of its messages %q", res.Head(), s.Head, core.Head(s.Messages))
	}
	// Client A runs on the head it holds; client B, still on it, is refused.
	stale := res.Head()
	a := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "from A", IfHead: stale})
	before := stateOf(rt)
	_, err := rt.Execute(nil, core.RunRequest{SessionID: "s", Input: "from B", IfHead: stale})
	var e *core.Error
	if !asError(err, &e) || e.Code != core.CodeHistoryDiverged {
		t.Fatalf("err = %v, want history_diverged", err)
	}
	requireSameState(t, stateOf(rt), before)
	if e.Head != a.Head() {
		t.Fatalf("error head %q, want %q", e.Head, a.Head())
	}
	if !reflect.DeepEqual(e.Missing, a.Appended) {
		t.Fatalf("missing %v, want A's turn %v", contents(e.Missing), contents(a.Appended))
	}
	// B appends what it lacks and retries on the head it was given.
	b := mustComplete(t, rt, core.RunRequest{SessionID: "s", Input: "from B", IfHead: e.Head})
	s, _ = rt.Session("s")
	if got := contents(s.Messages); strings.Join(got, "|") != "user:hi|assistant:ok|user:from A|assistant:ok|user:from B|assistant:ok" {
		t.Fatalf("session %v", got)
	}
	if b.Head() != core.Head(s.Messages) {
		t.Fatal("result head after the retry")
	}
	// A head of another conversation: no missing.
	_, err = rt.Execute(nil, core.RunRequest{SessionID: "s", Input: "x", IfHead: core.Head(headConversation())})
	if !asError(err, &e) || e.Code != core.CodeHistoryDiverged || e.Missing != nil || e.Head != b.Head() {
		t.Fatalf("foreign head: err %v missing %v", err, e.Missing)
	}
	// Not a head at all.
	_, err = rt.Execute(nil, core.RunRequest{SessionID: "s", Input: "x", IfHead: "etag-1"})
	if core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Fatalf("malformed ifHead: %v", err)
	}
}

func TestHead_IfHeadOnSeeds(t *testing.T) {
	rt := mustRuntime(t, core.Config{Model: &mock.Model{}})
	hist := []core.SeedMessage{user("a"), assistant("b")}
	// Cold: the conversation is what the history seeds.
	before := stateOf(rt)
	_, err := rt.Execute(nil, core.RunRequest{SessionID: "c", Input: "x", History: hist, WithHistory: true, IfHead: core.Head(nil)})
	var e *core.Error
	if !asError(err, &e) || e.Code != core.CodeHistoryDiverged || e.Head != core.HistoryHead(hist) {
		t.Fatalf("cold seed, wrong head: %v", err)
	}
	if len(e.Missing) != 2 {
		t.Fatalf("missing %v, want the two seeded messages", contents(e.Missing))
	}
	requireSameState(t, stateOf(rt), before)
	res := mustComplete(t, rt, core.RunRequest{SessionID: "c", Input: "x", History: hist, WithHistory: true, IfHead: core.HistoryHead(hist)})
	// Warm, if-empty: a stale copy runs on the warm session, and is told so.
	_, err = rt.Execute(nil, core.RunRequest{SessionID: "c", Input: "y", History: hist, WithHistory: true, IfHead: core.HistoryHead(hist)})
	if !asError(err, &e) || e.Code != core.CodeHistoryDiverged || e.Head != res.Head() || !reflect.DeepEqual(e.Missing, res.Appended) {
		t.Fatalf("warm if-empty, stale copy: %v", err)
	}
	// Reconcile: the same stale copy is a prefix of the session, which it
	// would run on.
	pol := core.Policy{SeedMode: core.SeedReconcile}
	_, err = rt.Execute(nil, core.RunRequest{SessionID: "c", Input: "y", Policy: pol, History: hist, WithHistory: true, IfHead: core.HistoryHead(hist)})
	if !asError(err, &e) || e.Code != core.CodeHistoryDiverged || !reflect.DeepEqual(e.Missing, res.Appended) {
		t.Fatalf("reconcile, stale prefix: %v", err)
	}
	// Reconcile with a longer copy: the head is the one of what it seeds.
	longer := append(append([]core.SeedMessage(nil), hist...), user("x"), assistant("ok"), user("more"), assistant("yes"))
	mustComplete(t, rt, core.RunRequest{SessionID: "c", Input: "z", Policy: pol, History: longer, WithHistory: true, IfHead: core.HistoryHead(longer)})
	// A revert keeps the chain right.
	r := mustComplete(t, rt, core.RunRequest{SessionID: "c", Input: "w", RunID: "r-w"})
	if !rt.RevertRun("c", "r-w") {
		t.Fatal("revert")
	}
	s, _ := rt.Session("c")
	if s.Head != core.Head(s.Messages) || s.Head == r.Head() {
		t.Fatal("session head after a revert")
	}
}

func benchMessages(n int) []core.Message {
	msgs := make([]core.Message, n)
	for i := range msgs {
		msgs[i] = core.Message{Role: core.RoleUser, Content: strings.Repeat("a few words of text ", 4)}
		if i%2 == 1 {
			msgs[i].Role = core.RoleAssistant
		}
	}
	return msgs
}

// BenchmarkHead10000 is the cost of a cold head: one link per message.
func BenchmarkHead10000(b *testing.B) {
	msgs := benchMessages(10000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		core.Head(msgs)
	}
}

// benchWarmIfHead runs turns on a warm session of about n messages,
// each with the previous result's head as IfHead when ifHead is set
// (and asking for the head either way, as a host that stores it does).
func benchWarmIfHead(b *testing.B, n int, ifHead bool) {
	rt := mustRuntime(b, core.Config{Model: core.ModelFunc(func(core.Context, *core.ModelRequest) (*core.ModelReply, error) {
		return &core.ModelReply{Content: "ok"}, nil
	})})
	hist := make([]core.SeedMessage, n)
	for i := range hist {
		hist[i] = user("a few words of text")
		if i%2 == 1 {
			hist[i] = assistant("a reply of a few words")
		}
	}
	res, err := rt.Execute(nil, core.RunRequest{SessionID: "s", Input: "warm up", History: hist[:n-2], WithHistory: true})
	if err != nil {
		b.Fatal(err)
	}
	head := res.Head()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := core.RunRequest{SessionID: "s", Input: "next"}
		if ifHead {
			req.IfHead = head
		}
		res, err := rt.Execute(nil, req)
		if err != nil {
			b.Fatal(err)
		}
		head = res.Head()
		if i%10 == 9 {
			// Keep the session near n messages.
			b.StopTimer()
			rt.DeleteSession("s")
			res, _ = rt.Execute(nil, core.RunRequest{SessionID: "s", Input: "warm up", History: hist[:n-2], WithHistory: true})
			head = res.Head()
			b.StartTimer()
		}
	}
}

func BenchmarkWarmTurnHead100(b *testing.B)    { benchWarmIfHead(b, 100, false) }
func BenchmarkWarmTurnIfHead100(b *testing.B)  { benchWarmIfHead(b, 100, true) }
func BenchmarkWarmTurnHead5000(b *testing.B)   { benchWarmIfHead(b, 5000, false) }
func BenchmarkWarmTurnIfHead5000(b *testing.B) { benchWarmIfHead(b, 5000, true) }
