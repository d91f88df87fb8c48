package httpapi_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// counter counts the runs of each tool, across runtimes.
type counter struct {
	mu   sync.Mutex
	runs map[string]int
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[name]
}

// approvalRuntime serves tools "pay" (needs approval), "look" (needs
// none) and "boom" (whose approval predicate errors), each counted in c.
// Its model is Echo, but a user message "mix" gets one reply calling pay
// and look.
func approvalRuntime(t *testing.T, c *counter) *httpapi.Handler {
	t.Helper()
	return signedRuntime(t, c, nil)
}

// signedRuntime is approvalRuntime whose runtime signs the calls it
// pauses on with secret (httpapi.ApprovalSigner; nil: none).
func signedRuntime(t *testing.T, c *counter, secret []byte) *httpapi.Handler {
	t.Helper()
	tool := func(name, out string, needs func(core.ToolInvocation) (bool, error)) core.Tool {
		return core.Tool{ToolSpec: core.ToolSpec{Name: name}, NeedsApproval: needs,
			Call: func(core.Context, core.ToolInvocation) (string, error) {
				c.mu.Lock()
				c.runs[name]++
				c.mu.Unlock()
				return out, nil
			}}
	}
	yes := func(core.ToolInvocation) (bool, error) { return true, nil }
	fails := func(core.ToolInvocation) (bool, error) { return false, errors.New("the rule book is closed") }
	model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Role == core.RoleUser && last.Content == "mix" {
			return &core.ModelReply{ToolCalls: []core.ToolCall{
				{ID: "m1", Name: "pay", Arguments: `{"amount":5}`}, {ID: "m2", Name: "look", Arguments: `{}`}}}, nil
		}
		return core.Echo{}.Complete(ctx, req)
	})
	rt := mustRuntime(t, core.Config{Model: model, SignApproval: httpapi.ApprovalSigner(secret), Tools: []core.Tool{
		tool("pay", "paid", yes), tool("look", "looked", nil), tool("boom", "boomed", fails)}})
	return httpapi.New(httpapi.Config{Runtime: rt})
}

type pendingResult struct {
	Status           string           `json:"status"`
	Appended         []map[string]any `json:"appended"`
	MessageCount     int              `json:"messageCount"`
	PendingApprovals []struct {
		ToolCallID string `json:"toolCallId"`
		Name       string `json:"name"`
		Arguments  string `json:"arguments"`
		Signature  string `json:"signature"`
	} `json:"pendingApprovals"`
	Reply struct {
		Content string `json:"content"`
	} `json:"reply"`
}

type sessionBody struct {
	MessageCount int              `json:"messageCount"`
	Messages     []map[string]any `json:"messages"`
}

// pause runs "/tool pay" on session id and returns the paused result.
func pause(t *testing.T, h *httpapi.Handler, id string) pendingResult {
	t.Helper()
	r := do(t, h, "POST", "/v1/sessions/"+id+"/runs", `{"input":"/tool pay {\"amount\":5}"}`)
	if r.status != 200 {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	res := decode[pendingResult](t, r.body)
	if res.Status != core.StatusAwaitingApproval || len(res.PendingApprovals) != 1 {
		t.Fatalf("pause: %s", r.body)
	}
	return res
}

func session(t *testing.T, h *httpapi.Handler, id string) sessionBody {
	t.Helper()
	r := do(t, h, "GET", "/v1/sessions/"+id, "")
	if r.status != 200 {
		t.Fatalf("session: %d %s", r.status, r.body)
	}
	return decode[sessionBody](t, r.body)
}

// Ensure a call of a tool needing approval pauses the run before the tool
// runs, with the pending call in the result and the session.
func TestHandler_Approvals_Pause(t *testing.T) {
	c := &counter{runs: map[string]int{}}
	h := approvalRuntime(t, c)
	res := pause(t, h, "s")
	p := res.PendingApprovals[0]
	if p.Name != "pay" || p.Arguments != `{"amount":5}` || p.ToolCallID == "" {
		t.Fatalf("pending %+v", p)
	}
	if c.get("pay") != 0 {
		t.Fatal("the tool ran before its approval")
	}
	if len(res.Appended) != 2 || res.Appended[1]["role"] != "assistant" {
		t.Fatalf("appended %v", res.Appended)
	}
	s := session(t, h, "s")
	if s.MessageCount != 2 {
		t.Fatalf("session holds %d messages, want the input and the call", s.MessageCount)
	}
	// An input while the call is pending is refused and changes nothing.
	r := do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"never mind"}`)
	if e := decode[errorBody](t, r.body); r.status != 400 || e.Error.Code != "invalid_argument" {
		t.Fatalf("input on a pending session: %d %s", r.status, r.body)
	}
	if session(t, h, "s").MessageCount != 2 || c.get("pay") != 0 {
		t.Fatal("a refused input changed the session")
	}
}

// Ensure an approval runs the tool once and the model continues, and the
// same approval again is refused without running it twice.
func TestHandler_Approvals_ApproveOnceOnly(t *testing.T) {
	c := &counter{runs: map[string]int{}}
	h := approvalRuntime(t, c)
	id := pause(t, h, "s").PendingApprovals[0].ToolCallID
	body := `{"approvals":[{"toolCallId":"` + id + `","approved":true}]}`
	r := do(t, h, "POST", "/v1/sessions/s/runs", body)
	if r.status != 200 {
		t.Fatalf("approve: %d %s", r.status, r.body)
	}
	res := decode[pendingResult](t, r.body)
	if res.Status != "completed" || res.PendingApprovals != nil || c.get("pay") != 1 {
		t.Fatalf("approve: %s, pay ran %d times", r.body, c.get("pay"))
	}
	if len(res.Appended) != 2 || res.Appended[0]["role"] != "tool" || res.Appended[0]["content"] != "paid" {
		t.Fatalf("appended %v", res.Appended)
	}
	before := session(t, h, "s").MessageCount
	r = do(t, h, "POST", "/v1/sessions/s/runs", body)
	if e := decode[errorBody](t, r.body); r.status != 400 || e.Error.Code != "invalid_argument" {
		t.Fatalf("second approval: %d %s", r.status, r.body)
	}
	if c.get("pay") != 1 || session(t, h, "s").MessageCount != before {
		t.Fatalf("the second approval ran the tool (%d runs) or changed the session", c.get("pay"))
	}
}

// Ensure a denial never runs the tool and answers the call with the
// denied result and its reason.
func TestHandler_Approvals_DenyWithReason(t *testing.T) {
	c := &counter{runs: map[string]int{}}
	h := approvalRuntime(t, c)
	id := pause(t, h, "s").PendingApprovals[0].ToolCallID
	r := do(t, h, "POST", "/v1/sessions/s/runs", `{"approvals":[{"toolCallId":"`+id+`","approved":false,"reason":"too much"}]}`)
	if r.status != 200 {
		t.Fatalf("deny: %d %s", r.status, r.body)
	}
	res := decode[pendingResult](t, r.body)
	if res.Status != "completed" || c.get("pay") != 0 {
		t.Fatalf("deny: %s, pay ran %d times", r.body, c.get("pay"))
	}
	if got := res.Appended[0]["content"]; got != "Tool call denied: too much" {
		t.Fatalf("denied result %q", got)
	}
}

// Ensure a fresh runtime given the stored history (ending with the
// unanswered call) and the approval resumes exactly as a warm one.
func TestHandler_Approvals_ColdStartFromHistory(t *testing.T) {
	c := &counter{runs: map[string]int{}}
	res := pause(t, approvalRuntime(t, c), "s")
	stored, _ := json.Marshal(res.Appended)
	fresh := approvalRuntime(t, c)
	// An input on the stored history is refused as on the warm session,
	// with or without repair, and changes nothing.
	for _, policy := range []string{``, `,"policy":{"repair":true}`} {
		r := do(t, fresh, "POST", "/v1/sessions/s/runs", `{"input":"hi","history":`+string(stored)+policy+`}`)
		if e := decode[errorBody](t, r.body); r.status != 400 || e.Error.Code != "invalid_argument" ||
			e.Error.Message != `session "s" awaits approval of tool call "`+res.PendingApprovals[0].ToolCallID+`": answer it with approvals` {
			t.Fatalf("history without approvals: %d %s", r.status, r.body)
		}
		if r := do(t, fresh, "GET", "/v1/sessions/s", ""); r.status != 404 {
			t.Fatalf("a refused input left a session: %d %s", r.status, r.body)
		}
	}
	id := res.PendingApprovals[0].ToolCallID
	r := do(t, fresh, "POST", "/v1/sessions/s/runs", `{"approvals":[{"toolCallId":"`+id+`","approved":true}],"history":`+string(stored)+`}`)
	if r.status != 200 {
		t.Fatalf("cold approve: %d %s", r.status, r.body)
	}
	if got := decode[pendingResult](t, r.body); got.Status != "completed" || got.MessageCount != 4 || c.get("pay") != 1 {
		t.Fatalf("cold approve: %s, pay ran %d times", r.body, c.get("pay"))
	}
}

// Ensure a UIMessage history whose last message holds a part in
// approval-responded resumes with that decision, without input or
// approvals in the body.
func TestHandler_Approvals_UIMessageResponded(t *testing.T) {
	c := &counter{runs: map[string]int{}}
	h := approvalRuntime(t, c)
	history := `[{"id":"u1","role":"user","parts":[{"type":"text","text":"pay"}]},` +
		`{"id":"a1","role":"assistant","parts":[{"type":"tool-pay","toolCallId":"c1","state":"approval-responded","input":{"amount":5},"approval":{"id":"ap1","approved":true}}]}]`
	r := do(t, h, "POST", "/v1/sessions/s/runs", `{"history":`+history+`}`)
	if r.status != 200 {
		t.Fatalf("resume: %d %s", r.status, r.body)
	}
	if got := decode[pendingResult](t, r.body); got.Status != "completed" || c.get("pay") != 1 {
		t.Fatalf("resume: %s, pay ran %d times", r.body, c.get("pay"))
	}
	// The session now holds the result: the same history again is not
	// seeded (warm session), and its decision answers nothing pending.
	r = do(t, h, "POST", "/v1/sessions/s/runs", `{"history":`+history+`}`)
	if e := decode[errorBody](t, r.body); r.status != 400 || e.Error.Code != "invalid_argument" || c.get("pay") != 1 {
		t.Fatalf("second resume: %d %s, pay ran %d times", r.status, r.body, c.get("pay"))
	}
	// A malformed decision is refused with its message's index.
	bad := strings.Replace(history, `"approved":true`, `"approved":"yes"`, 1)
	r = do(t, approvalRuntime(t, c), "POST", "/v1/sessions/s/runs", `{"history":`+bad+`}`)
	if e := decode[errorBody](t, r.body); r.status != 400 || e.Error.Code != "invalid_history" || e.Error.Index == nil || *e.Error.Index != 1 {
		t.Fatalf("malformed decision: %d %s", r.status, r.body)
	}
}

// Ensure an approval for a call that is not pending is refused and
// changes nothing.
func TestHandler_Approvals_UnknownCall(t *testing.T) {
	c := &counter{runs: map[string]int{}}
	h := approvalRuntime(t, c)
	pause(t, h, "s")
	r := do(t, h, "POST", "/v1/sessions/s/runs", `{"approvals":[{"toolCallId":"nope","approved":true}]}`)
	if e := decode[errorBody](t, r.body); r.status != 400 || e.Error.Code != "invalid_argument" {
		t.Fatalf("unknown call: %d %s", r.status, r.body)
	}
	if c.get("pay") != 0 || session(t, h, "s").MessageCount != 2 {
		t.Fatal("a refused approval changed something")
	}
	// On a session that awaits nothing, as on one that does not exist.
	r = do(t, h, "POST", "/v1/sessions/other/runs", `{"approvals":[{"toolCallId":"nope","approved":true}]}`)
	if e := decode[errorBody](t, r.body); r.status != 400 || e.Error.Code != "invalid_argument" {
		t.Fatalf("approval on another session: %d %s", r.status, r.body)
	}
}

// Ensure an approval predicate that errors fails the run tool_error and
// leaves nothing waiting.
func TestHandler_Approvals_PredicateErrors(t *testing.T) {
	c := &counter{runs: map[string]int{}}
	h := approvalRuntime(t, c)
	r := do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"/tool boom {}"}`)
	if e := decode[errorBody](t, r.body); r.status != 502 || e.Error.Code != "tool_error" {
		t.Fatalf("predicate error: %d %s", r.status, r.body)
	}
	if c.get("boom") != 0 {
		t.Fatal("the tool ran although its predicate failed")
	}
	// The failed run is rolled back: the session takes an input.
	if r := do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"hi"}`); r.status != 200 {
		t.Fatalf("after the failure: %d %s", r.status, r.body)
	}
}

// Ensure a reply calling a plain tool and one needing approval runs the
// plain one first and pauses on the other; the approval runs it once.
func TestHandler_Approvals_MixedReply(t *testing.T) {
	c := &counter{runs: map[string]int{}}
	h := approvalRuntime(t, c)
	r := do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"mix"}`)
	res := decode[pendingResult](t, r.body)
	if r.status != 200 || res.Status != core.StatusAwaitingApproval || len(res.PendingApprovals) != 1 || res.PendingApprovals[0].ToolCallID != "m1" {
		t.Fatalf("mix: %d %s", r.status, r.body)
	}
	if c.get("look") != 1 || c.get("pay") != 0 {
		t.Fatalf("look ran %d, pay %d times before the approval", c.get("look"), c.get("pay"))
	}
	if len(res.Appended) != 3 || res.Appended[2]["content"] != "looked" {
		t.Fatalf("appended %v", res.Appended)
	}
	r = do(t, h, "POST", "/v1/sessions/s/runs", `{"approvals":[{"toolCallId":"m1","approved":true}]}`)
	if got := decode[pendingResult](t, r.body); r.status != 200 || got.Status != "completed" {
		t.Fatalf("approve: %d %s", r.status, r.body)
	}
	if c.get("look") != 1 || c.get("pay") != 1 {
		t.Fatalf("look ran %d, pay %d times, want once each", c.get("look"), c.get("pay"))
	}
}

// Ensure a streamed run that pauses ends with run.awaiting_approval
// carrying the result and its pending approvals.
func TestHandler_Approvals_StreamEndsAwaiting(t *testing.T) {
	c := &counter{runs: map[string]int{}}
	h := approvalRuntime(t, c)
	r := do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"/tool pay {}"}`, "Accept", "text/event-stream")
	if r.status != 200 {
		t.Fatalf("stream: %d %s", r.status, r.body)
	}
	frames := strings.Split(strings.TrimSpace(string(r.body)), "\n\n")
	last := frames[len(frames)-1]
	if !strings.HasPrefix(last, "event: run.awaiting_approval\ndata: ") {
		t.Fatalf("last frame %q", last)
	}
	var ev struct {
		Type   string        `json:"type"`
		Result pendingResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(last, "event: run.awaiting_approval\ndata: ")), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "run.awaiting_approval" || ev.Result.Status != core.StatusAwaitingApproval || len(ev.Result.PendingApprovals) != 1 {
		t.Fatalf("event %s", last)
	}
	if strings.Contains(string(r.body), "run.completed") || c.get("pay") != 0 {
		t.Fatal("a paused stream completed or ran the tool")
	}
}

// Ensure bad approvals are refused invalid_argument naming the field,
// before anything runs.
func TestHandler_Approvals_BadBodies(t *testing.T) {
	c := &counter{runs: map[string]int{}}
	h := approvalRuntime(t, c)
	id := pause(t, h, "s").PendingApprovals[0].ToolCallID
	tests := []struct{ body, msg string }{
		{`{"approvals":{}}`, "approvals must be a non-empty array"},
		{`{"approvals":[]}`, "approvals must be a non-empty array"},
		{`{"approvals":[1]}`, "approvals[0] must be an object"},
		{`{"approvals":[{"approved":true}]}`, "approvals[0].toolCallId must be a non-empty string"},
		{`{"approvals":[{"toolCallId":"` + id + `"}]}`, "approvals[0].approved must be a boolean"},
		{`{"approvals":[{"toolCallId":"` + id + `","approved":1}]}`, "approvals[0].approved must be a boolean"},
		{`{"approvals":[{"toolCallId":"` + id + `","approved":false,"reason":7}]}`, "approvals[0].reason must be a string"},
		{`{"approvals":[{"toolCallId":"` + id + `","approved":true,"Approved":false}]}`, `approvals[0] has an unknown field "Approved"`},
		{`{"approvals":[{"toolCallId":"` + id + `","approved":true,"approved":false}]}`, `approvals[0] has the field "approved" twice`},
		{`{"approvals":[{"toolCallId":"` + id + `","approved":true,"signature":1}]}`, "approvals[0].signature must be a string"},
		{`{}`, "input must be a string"},
		{`{"input":"go","approvals":[{"toolCallId":"` + id + `","approved":true}]}`, ""},
		{`{"approvals":[{"toolCallId":"` + id + `","approved":true},{"toolCallId":"` + id + `","approved":false}]}`, ""},
	}
	for _, tt := range tests {
		r := do(t, h, "POST", "/v1/sessions/s/runs", tt.body)
		e := decode[errorBody](t, r.body)
		if r.status != 400 || e.Error.Code != "invalid_argument" || (tt.msg != "" && e.Error.Message != tt.msg) {
			t.Errorf("%s: %d %s, want 400 invalid_argument %q", tt.body, r.status, r.body, tt.msg)
		}
	}
	if c.get("pay") != 0 || session(t, h, "s").MessageCount != 2 {
		t.Fatal("a refused body changed something")
	}
}

// Ensure /v1/history/check says a history that ends with a call
// awaiting approval is paused, not broken, and lists the call with its
// name and arguments.
func TestHandler_Approvals_CheckAwaiting(t *testing.T) {
	h := approvalRuntime(t, &counter{runs: map[string]int{}})
	history := `[{"role":"user","content":"pay"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","name":"pay","arguments":"{}"}]}]`
	r := do(t, h, "POST", "/v1/history/check", `{"history":`+history+`}`)
	var got struct {
		OK       bool  `json:"ok"`
		Paused   bool  `json:"paused"`
		Problems []any `json:"problems"`
		Awaiting []struct {
			Index      int    `json:"index"`
			ToolCallID string `json:"toolCallId"`
			Name       string `json:"name"`
			Arguments  string `json:"arguments"`
		} `json:"awaiting"`
	}
	if err := json.Unmarshal(r.body, &got); err != nil || r.status != 200 {
		t.Fatalf("check: %d %s", r.status, r.body)
	}
	if !got.OK || !got.Paused || len(got.Problems) != 0 || len(got.Awaiting) != 1 || got.Awaiting[0].Index != 1 ||
		got.Awaiting[0].ToolCallID != "c1" || got.Awaiting[0].Name != "pay" || got.Awaiting[0].Arguments != "{}" {
		t.Fatalf("check: %s", r.body)
	}
}

// Ensure two approvals of one call sent at once run the tool once: one
// resumes the run, the other is refused (the call is answered, or the
// session busy).
func TestHandler_Approvals_ConcurrentApprovalsRunOnce(t *testing.T) {
	var mu sync.Mutex
	runs := 0
	release, started := make(chan struct{}), make(chan struct{}, 2)
	pay := core.Tool{ToolSpec: core.ToolSpec{Name: "pay"},
		NeedsApproval: func(core.ToolInvocation) (bool, error) { return true, nil },
		Call: func(core.Context, core.ToolInvocation) (string, error) {
			mu.Lock()
			runs++
			mu.Unlock()
			started <- struct{}{}
			<-release
			return "paid", nil
		}}
	h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{Tools: []core.Tool{pay}})})
	id := pause(t, h, "s").PendingApprovals[0].ToolCallID
	body := `{"approvals":[{"toolCallId":"` + id + `","approved":true}]}`
	statuses := make(chan int, 2)
	for range 2 {
		go func() { statuses <- do(t, h, "POST", "/v1/sessions/s/runs", body).status }()
	}
	// The other is refused at once or waits for the session while the
	// tool runs.
	<-started
	close(release)
	first, second := <-statuses, <-statuses
	if ok := (first == 200) != (second == 200); !ok || first == 502 || second == 502 {
		t.Fatalf("statuses %d and %d, want one 200 and one refusal", first, second)
	}
	mu.Lock()
	defer mu.Unlock()
	if runs != 1 {
		t.Fatalf("pay ran %d times, want once", runs)
	}
}

// Ensure an approval and an input sent at once to a paused session run
// one at a time: the tool runs once, and the input is either refused
// (the session was paused) or answered after the resumed turn.
func TestHandler_Approvals_RaceWithInput(t *testing.T) {
	for range 4 {
		c := &counter{runs: map[string]int{}}
		h := approvalRuntime(t, c)
		id := pause(t, h, "s").PendingApprovals[0].ToolCallID
		resumed, input := make(chan response, 1), make(chan response, 1)
		go func() {
			resumed <- do(t, h, "POST", "/v1/sessions/s/runs", `{"approvals":[{"toolCallId":"`+id+`","approved":true}]}`)
		}()
		go func() { input <- do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"hello"}`) }()
		res, in := <-resumed, <-input
		if res.status != 200 || decode[pendingResult](t, res.body).Status != "completed" {
			t.Fatalf("the resume: %d %s", res.status, res.body)
		}
		want := 4
		switch {
		case in.status == 200:
			want = 6
		case in.status != 400 || decode[errorBody](t, in.body).Error.Code != "invalid_argument":
			t.Fatalf("the input: %d %s, want 200 or 400 invalid_argument", in.status, in.body)
		}
		if n := session(t, h, "s").MessageCount; n != want || c.get("pay") != 1 {
			t.Fatalf("%d messages, pay ran %d times; want %d and once", n, c.get("pay"), want)
		}
	}
}
