package wazero_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/jshost"
)

// Tool approvals through the module's syscall/js API
// (docs/adr/0019-tool-approvals.md): a tool's needsApproval, asked by the
// adapter on core's approval action; options.approvals, or a UIMessage
// history's decisions, with the input omitted; the Result's status and
// pendingApprovals and the run.awaiting_approval event. Counting tools
// prove that an approved call runs exactly once and a denied one never.

// counts counts each tool's runs; the tools run on the instance's loop,
// the test reads them from its own goroutine.
type counts struct {
	mu   sync.Mutex
	runs map[string]int
}

func (c *counts) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs[name]++
}

// get returns the runs so far, without the tools that ran zero times.
func (c *counts) get() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.runs {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func (c *counts) want(t *testing.T, what string, want map[string]int) {
	t.Helper()
	got, _ := json.Marshal(c.get())
	w, _ := json.Marshal(want)
	if string(got) != string(w) {
		t.Errorf("%s: tool runs %s, want %s", what, got, w)
	}
}

// approvalTools returns the tools pay (needsApproval as given, answers
// "paid") and look (needs none, answers "looked") of the corpus's
// approval cases, counting their runs.
func approvalTools(needsApproval any) ([]any, *counts) {
	c := &counts{runs: map[string]int{}}
	tool := func(name, answer string) jshost.Func {
		return func(jshost.Value, []jshost.Value) (any, error) {
			c.add(name)
			return answer, nil
		}
	}
	pay := map[string]any{"name": "pay", "call": tool("pay", "paid")}
	if needsApproval != nil {
		pay["needsApproval"] = needsApproval
	}
	return []any{pay, map[string]any{"name": "look", "call": tool("look", "looked")}}, c
}

// payAndLook is a model that answers each user message with a call of pay
// (id "pay-" and the message) and one of look in the same reply, and tool
// results with "done: " and their contents.
var payAndLook jshost.Func = func(_ jshost.Value, args []jshost.Value) (any, error) {
	msgs, _ := jshost.Export(jshost.Get(args[0], "messages")).([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	if last["role"] == "user" {
		text, _ := last["content"].(string)
		return map[string]any{"content": "", "toolCalls": []any{
			map[string]any{"id": "pay-" + text, "name": "pay", "arguments": `{"amount":5}`},
			map[string]any{"id": "look-" + text, "name": "look", "arguments": "{}"},
		}}, nil
	}
	var seen []string
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] != "tool" {
			break
		}
		s, _ := m["content"].(string)
		seen = append([]string{s}, seen...)
	}
	return "done: " + strings.Join(seen, " | "), nil
}

// approve returns the run options { approvals: [{ toolCallId, approved,
// reason? }] } for one decision.
func approve(id string, approved bool, reason string) map[string]any {
	a := map[string]any{"toolCallId": id, "approved": approved}
	if reason != "" {
		a["reason"] = reason
	}
	return map[string]any{"approvals": []any{a}}
}

// contents returns "role:content" of each message of a list.
func contents(list any) []string {
	msgs, _ := list.([]any)
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = get(m, "role").(string) + ":" + get(m, "content").(string)
	}
	return out
}

// sessionContents returns contents of the session's messages (nil for
// none).
func sessionContents(t *testing.T, in *jshost.Instance, rt jshost.Value, id string) []string {
	t.Helper()
	s := callSession(t, in, rt, id)
	if s == nil {
		return nil
	}
	return contents(get(s, "messages"))
}

func wantList(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

// refusedRun checks that the run method's call is refused with code and
// a message holding text, and changes neither session id nor the runs.
func refusedRun(t *testing.T, in *jshost.Instance, rt jshost.Value, c *counts, id, code, text, method string, args ...any) {
	t.Helper()
	before := sessionContents(t, in, rt, id)
	runs := c.get()
	_, err := in.CallAsync(context.Background(), rt, method, append([]any{id}, args...)...)
	wantCode(t, method, err, code, text)
	wantList(t, "the session after a refused run", sessionContents(t, in, rt, id), before...)
	c.want(t, "after a refused run", runs)
}

// pauseRun runs "q" on session id and checks that it stops for pay-q after
// look-q ran, with run.awaiting_approval as its last event; it returns
// the Result.
func pauseRun(t *testing.T, in *jshost.Instance, rt jshost.Value, id string) map[string]any {
	t.Helper()
	var mu sync.Mutex
	var events []any
	onEvent := jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		mu.Lock()
		events = append(events, jshost.Export(args[0]))
		mu.Unlock()
		return nil, nil
	})
	v, err := in.CallAsync(context.Background(), rt, "startRun", id, "q", map[string]any{"onEvent": onEvent})
	if err != nil {
		t.Fatalf("the run to pause: %v", err)
	}
	res := in.Export(v).(map[string]any)
	if res["status"] != "awaiting_approval" {
		t.Fatalf("status %v, want awaiting_approval", res["status"])
	}
	pending, _ := json.Marshal(res["pendingApprovals"])
	if want := `[{"arguments":"{\"amount\":5}","name":"pay","toolCallId":"pay-q"}]`; string(pending) != want {
		t.Errorf("pendingApprovals %s, want %s", pending, want)
	}
	if calls, _ := get(res, "reply", "tool_calls").([]any); get(res, "reply", "role") != "assistant" || len(calls) != 2 {
		t.Errorf("reply %v, want the assistant's two calls", res["reply"])
	}
	wantList(t, "appended", contents(res["appended"]), "user:q", "assistant:", "tool:looked")
	wantList(t, "session", sessionContents(t, in, rt, id), "user:q", "assistant:", "tool:looked")
	mu.Lock()
	defer mu.Unlock()
	last := events[len(events)-1]
	if get(last, "type") != "run.awaiting_approval" || get(last, "result", "status") != "awaiting_approval" ||
		get(last, "result", "runId") != res["runId"] {
		t.Errorf("last event %v, want run.awaiting_approval with the result", last)
	}
	for _, ev := range events {
		if get(ev, "type") == "run.completed" {
			t.Error("a paused run emitted run.completed")
		}
	}
	return res
}

// Ensure the corpus's approval cases (testdata/contract/approval.json) on
// the module's syscall/js API: checkHistory lists the calls awaiting
// approval, a fresh runtime resumes the history with the case's
// approvals (or the decisions the history carries) and the input
// omitted, the tools run as the case says, and the same run again is
// refused and runs nothing.
func TestApproval_Contract(t *testing.T) {
	ctx := context.Background()
	in := mustInstance(t, nil)
	for _, c := range contract.MustLoadApprovals(t) {
		t.Run(c.Name, func(t *testing.T) {
			tools, runs := approvalTools(true)
			rt := mustRuntime(t, in, "agentrt", map[string]any{"tools": tools})
			defer in.Call(ctx, rt, "close")
			hist, err := in.Call(ctx, in.Global("JSON"), "parse", string(c.History))
			if err != nil {
				t.Fatal(err)
			}
			check := in.Export(mustCall(t, in, rt, "checkHistory", hist))
			var awaiting []map[string]any
			for _, a := range c.Awaiting {
				awaiting = append(awaiting, map[string]any{"index": float64(a.Index), "toolCallId": a.ToolCallID, "name": a.Name, "arguments": a.Arguments})
			}
			got, _ := json.Marshal(get(check, "awaiting"))
			want, _ := json.Marshal(awaiting)
			if string(got) != string(want) {
				t.Errorf("checkHistory awaiting %s, want %s", got, want)
			}
			if paused, _ := get(check, "paused").(bool); paused != c.Paused {
				t.Errorf("checkHistory paused %v, want %v", get(check, "paused"), c.Paused)
			}
			var opts any // the history's decisions
			if c.Approvals != nil {
				list := make([]any, len(c.Approvals))
				for i, a := range c.Approvals {
					list[i] = approve(a.ToolCallID, a.Approved, a.Reason)["approvals"].([]any)[0]
				}
				opts = map[string]any{"approvals": list}
			}
			_, err = in.CallAsync(ctx, rt, "startRunWithHistory", "s", jshost.Undefined, hist, opts)
			switch {
			case c.Error != nil:
				var ex *jshost.Exception
				if !errors.As(err, &ex) || ex.Code != c.Error.Code || ex.Message != c.Error.Message {
					t.Errorf("resume = %v, want %s: %s", err, c.Error.Code, c.Error.Message)
				}
				if s := callSession(t, in, rt, "s"); s != nil {
					t.Errorf("a refused resume left a session behind: %v", s)
				}
			case err != nil:
				t.Fatalf("resume: %v", err)
			default:
				list, _ := get(callSession(t, in, rt, "s"), "messages").([]any)
				session := make([]map[string]any, len(list))
				for i, m := range list {
					session[i] = contract.CanonicalMap(m.(map[string]any))
				}
				got, _ := json.Marshal(session)
				want, _ := json.Marshal(c.Session)
				if string(got) != string(want) {
					t.Errorf("session\n got %s\nwant %s", got, want)
				}
			}
			runs.want(t, "after the resume", c.ToolRuns)
			// Exactly once: the same run again is refused and runs nothing.
			if _, err := in.CallAsync(ctx, rt, "startRunWithHistory", "s", jshost.Undefined, hist, opts); err == nil {
				t.Error("the same resume again was not refused")
			}
			runs.want(t, "after the same resume again", c.ToolRuns)
		})
	}
	mustServe(t, in, mustRuntime(t, in, "agentrt", nil), "after")
}

// Ensure a run pauses before a call whose needsApproval answers true
// (after the reply's plain call ran), resumes once approved (the tool
// runs once; approving again, an unknown call or an input on the paused
// session is refused and runs nothing), and a denial with a reason never
// runs the tool and lets the model continue.
func TestApproval_PauseApproveDeny(t *testing.T) {
	in := mustInstance(t, nil)
	var mu sync.Mutex
	var asked []any
	predicate := jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
		mu.Lock()
		asked = append(asked, jshost.Export(args[0]), get(jshost.Export(args[1]), "toolCallId"))
		mu.Unlock()
		return true, nil
	})
	tools, runs := approvalTools(predicate)
	rt := mustRuntime(t, in, "agentrt", map[string]any{"model": payAndLook, "tools": tools})

	pauseRun(t, in, rt, "s")
	runs.want(t, "paused", map[string]int{"look": 1})
	mu.Lock()
	if got, _ := json.Marshal(asked); string(got) != `[{"amount":5},"pay-q"]` {
		t.Errorf("needsApproval was asked %s, want once with the call's args and ctx", got)
	}
	mu.Unlock()
	refusedRun(t, in, rt, runs, "s", "invalid_argument", `tool call "nope" is not awaiting approval in session "s"`,
		"startRun", jshost.Undefined, approve("nope", true, ""))
	refusedRun(t, in, rt, runs, "s", "invalid_argument", `session "s" awaits approval of tool call "pay-q"`, "startRun", "other")
	refusedRun(t, in, rt, runs, "s", "invalid_argument", "a run with approvals takes no input",
		"startRun", "other", approve("pay-q", true, ""))

	v, err := in.CallAsync(context.Background(), rt, "startRunWithPolicy", "s", jshost.Undefined, map[string]any{"maxSteps": 5}, approve("pay-q", true, ""))
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	res := in.Export(v).(map[string]any)
	if _, ok := res["pendingApprovals"]; res["status"] != "completed" || ok {
		t.Errorf("approved: status %v, pendingApprovals %v; want completed and none", res["status"], res["pendingApprovals"])
	}
	wantList(t, "approved, appended", contents(res["appended"]), "tool:paid", "assistant:done: looked | paid")
	runs.want(t, "approved", map[string]int{"look": 1, "pay": 1})
	for i := 0; i < 2; i++ {
		refusedRun(t, in, rt, runs, "s", "invalid_argument", `tool call "pay-q" is not awaiting approval`,
			"startRun", jshost.Undefined, approve("pay-q", true, ""))
	}

	pauseRun(t, in, rt, "d")
	v, err = in.CallAsync(context.Background(), rt, "startRun", "d", nil, approve("pay-q", false, "too much"))
	if err != nil {
		t.Fatalf("deny: %v", err)
	}
	wantList(t, "denied, appended", contents(get(in.Export(v), "appended")),
		"tool:Tool call denied: too much", "assistant:done: looked | Tool call denied: too much")
	runs.want(t, "denied", map[string]int{"look": 2, "pay": 1})
	mustCleanState(t, in, rt, "d", 5)

	// needsApproval answering false (here through a Promise) runs the tool.
	no := jshost.Func(func(jshost.Value, []jshost.Value) (any, error) {
		p, resolve, _ := in.NewPromise()
		go resolve(false)
		return p, nil
	})
	tools, runs = approvalTools(no)
	rt = mustRuntime(t, in, "agentrt", map[string]any{"model": payAndLook, "tools": tools})
	v, err = in.CallAsync(context.Background(), rt, "startRun", "n", "q")
	if err != nil {
		t.Fatal(err)
	}
	if r := asResult(t, in, v); r.raw["status"] != "completed" || r.reply != "done: paid | looked" {
		t.Errorf("needsApproval false: status %v, reply %q", r.raw["status"], r.reply)
	}
	runs.want(t, "needsApproval false", map[string]int{"look": 1, "pay": 1})
}

// Ensure a fresh module instance (a cold start) given the stored history
// alone, which ends with the unanswered call, and the approval resumes
// the run exactly as the warm runtime would: the approved tool runs once,
// the call that ran before the pause does not run again.
func TestApproval_ColdStart(t *testing.T) {
	in := mustInstance(t, nil)
	tools, _ := approvalTools(true)
	rt := mustRuntime(t, in, "agentrt", map[string]any{"model": payAndLook, "tools": tools})
	stored := pauseRun(t, in, rt, "s")["appended"]

	fresh := mustInstance(t, nil)
	tools, runs := approvalTools(true)
	rt = mustRuntime(t, fresh, "agentrt", map[string]any{"model": payAndLook, "tools": tools})
	// An input is refused as on the warm session, with or without repair.
	refusedRun(t, fresh, rt, runs, "s", "invalid_argument", `session "s" awaits approval of tool call "pay-q": answer it with approvals`,
		"startRunWithHistory", "again", stored)
	refusedRun(t, fresh, rt, runs, "s", "invalid_argument", `session "s" awaits approval of tool call "pay-q": answer it with approvals`,
		"startRunWithHistory", "again", stored, map[string]any{"policy": map[string]any{"repair": true}})
	v, err := fresh.CallAsync(context.Background(), rt, "startRunWithHistory", "s", jshost.Undefined, stored, approve("pay-q", true, ""))
	if err != nil {
		t.Fatalf("resume after the cold start: %v", err)
	}
	res := asResult(t, fresh, v)
	if res.raw["status"] != "completed" || res.seedMode != "cold" || res.seeded != 3 {
		t.Errorf("resume: status %v, seed %s of %d messages; want completed, cold of 3", res.raw["status"], res.seedMode, res.seeded)
	}
	wantList(t, "session", sessionContents(t, fresh, rt, "s"),
		"user:q", "assistant:", "tool:looked", "tool:paid", "assistant:done: looked | paid")
	runs.want(t, "resumed", map[string]int{"pay": 1})
	refusedRun(t, fresh, rt, runs, "s", "invalid_argument", "is not awaiting approval",
		"startRunWithHistory", jshost.Undefined, stored, approve("pay-q", true, ""))
}

// Ensure a needsApproval that throws, rejects or answers anything but a
// boolean fails the run with tool_error, runs no tool and rolls the
// session back, and one that never answers ends with the run's timeout
// or its cancel; the instance keeps serving.
func TestApproval_PredicateFails(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	hung := make(chan struct{}, 2)
	for _, c := range []struct {
		name, text string
		fn         jshost.Func
	}{
		{"throws", `the approval check of tool "pay" failed: needsApproval threw: boom`, func(jshost.Value, []jshost.Value) (any, error) {
			return nil, errors.New("boom")
		}},
		{"rejects", `the approval check of tool "pay" failed: needsApproval rejected: no answer`, func(jshost.Value, []jshost.Value) (any, error) {
			p, _, reject := in.NewPromise()
			go reject(errors.New("no answer"))
			return p, nil
		}},
		{"answers a string", `the approval check of tool "pay" failed: needsApproval must answer a boolean`, func(jshost.Value, []jshost.Value) (any, error) {
			return "yes", nil
		}},
		{"hangs", "", func(jshost.Value, []jshost.Value) (any, error) {
			p, _, _ := in.NewPromise()
			hung <- struct{}{}
			return p, nil
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tools, runs := approvalTools(c.fn)
			rt := mustRuntime(t, in, "agentrt", map[string]any{"model": payAndLook, "tools": tools})
			if c.text != "" {
				_, err := in.CallAsync(ctx, rt, "startRun", "p", "q")
				var ex *jshost.Exception
				if !errors.As(err, &ex) || ex.Code != "tool_error" || ex.Message != c.text {
					t.Errorf("run = %v, want tool_error %q", err, c.text)
				}
			} else {
				_, err := in.CallAsync(ctx, rt, "startRunWithPolicy", "p", "q", map[string]any{"timeoutMs": 5})
				wantCode(t, "hung predicate", err, "timeout", "5 ms")
				<-hung
				p, err := in.Call(ctx, rt, "startRun", "p", "q", map[string]any{"runId": "r-hung"})
				if err != nil {
					t.Fatal(err)
				}
				<-hung
				if ok := mustCall(t, in, rt, "cancelRun", "r-hung"); ok != true {
					t.Fatalf("cancelRun = %v, want true", ok)
				}
				_, err = in.Await(ctx, p)
				wantCode(t, "hung predicate, cancelled", err, "cancelled", "")
			}
			mustCleanState(t, in, rt, "p", 0)
			runs.want(t, c.name, map[string]int{})
		})
	}
	mustServe(t, in, mustRuntime(t, in, "agentrt", nil), "after")
}

// Ensure bad approvals are refused with invalid_argument naming the
// field (the texts of the glue's and the HTTP API's checks), a
// malformed decision in a UIMessage history with invalid_history at its
// index, and an omitted input without approvals as an input that is not
// a string; none of them changes anything.
func TestApproval_BadArguments(t *testing.T) {
	in := mustInstance(t, nil)
	tools, runs := approvalTools(true)
	rt := mustRuntime(t, in, "agentrt", map[string]any{"model": payAndLook, "tools": tools})
	pauseRun(t, in, rt, "s")
	runs.want(t, "paused", map[string]int{"look": 1})
	for _, c := range []struct {
		approvals any
		text      string
	}{
		{"yes", "options.approvals must be a non-empty array"},
		{[]any{}, "options.approvals must be a non-empty array"},
		{map[string]any{"toolCallId": "pay-q", "approved": true}, "options.approvals must be a non-empty array"},
		{[]any{"pay-q"}, "options.approvals[0] must be an object"},
		{[]any{map[string]any{"approved": true}}, "options.approvals[0].toolCallId must be a non-empty string"},
		{[]any{map[string]any{"toolCallId": "", "approved": true}}, "options.approvals[0].toolCallId must be a non-empty string"},
		{[]any{map[string]any{"toolCallId": 7, "approved": true}}, "options.approvals[0].toolCallId must be a non-empty string"},
		{[]any{map[string]any{"toolCallId": "pay-q"}}, "options.approvals[0].approved must be a boolean"},
		{[]any{map[string]any{"toolCallId": "pay-q", "approved": "yes"}}, "options.approvals[0].approved must be a boolean"},
		{[]any{map[string]any{"toolCallId": "pay-q", "approved": true, "reason": 3}}, "options.approvals[0].reason must be a string"},
		{[]any{map[string]any{"toolCallId": "pay-q", "approved": true}, map[string]any{"toolCallId": "pay-q", "approved": false}},
			`tool call "pay-q" is answered twice in approvals`},
	} {
		refusedRun(t, in, rt, runs, "s", "invalid_argument", c.text, "startRun", jshost.Undefined, map[string]any{"approvals": c.approvals})
	}
	refusedRun(t, in, rt, runs, "s", "invalid_argument", "input must be a string", "startRun", jshost.Undefined)
	refusedRun(t, in, rt, runs, "s", "invalid_argument", "input must be a string", "startRun", nil, map[string]any{"approvals": nil})

	// A UIMessage history: its last message's approval-responded part is
	// the decision, read with the texts of hostmsg.Approvals.
	part := map[string]any{"type": "tool-pay", "toolCallId": "c1", "state": "approval-responded", "input": map[string]any{}}
	history := func(approval any) []any {
		p := map[string]any{}
		for k, v := range part {
			p[k] = v
		}
		if approval != nil {
			p["approval"] = approval
		}
		return []any{
			map[string]any{"id": "u1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "pay"}}},
			map[string]any{"id": "a1", "role": "assistant", "parts": []any{p}},
		}
	}
	for _, c := range []struct {
		approval any
		text     string
	}{
		{nil, "parts[0].approval must be an object"},
		{map[string]any{"id": "x", "approved": "yes"}, "parts[0].approval.approved must be a boolean"},
		{map[string]any{"id": "x", "approved": true, "reason": 1}, "parts[0].approval.reason must be a string"},
	} {
		_, err := in.CallAsync(context.Background(), rt, "startRunWithHistory", "h", jshost.Undefined, history(c.approval))
		var ex *jshost.Exception
		if !errors.As(err, &ex) || ex.Code != "invalid_history" || ex.Index != 1 || ex.Message != c.text {
			t.Errorf("history decision %v: %v, want invalid_history at 1: %s", c.approval, err, c.text)
		}
	}
	mustCleanState(t, in, rt, "h", 0)
	// With an input, the history is read as ever: its decision is not
	// one, and the call awaits approval.
	_, err := in.CallAsync(context.Background(), rt, "startRunWithHistory", "h", "next", history(map[string]any{"id": "x", "approved": true}))
	wantCode(t, "an input after an approval-responded part", err, "invalid_argument", `session "h" awaits approval of tool call "c1"`)
	v, err := in.CallAsync(context.Background(), rt, "startRunWithHistory", "h", jshost.Undefined, history(map[string]any{"id": "x", "approved": false, "reason": "no"}))
	if err != nil {
		t.Fatalf("the history's decision: %v", err)
	}
	wantList(t, "denied by the history, appended", contents(get(in.Export(v), "appended")),
		"tool:Tool call denied: no", "assistant:done: Tool call denied: no")
	runs.want(t, "after the history's decisions", map[string]int{"look": 1})
	mustServe(t, in, mustRuntime(t, in, "agentrt", nil), "after")
}

// Ensure a needsApproval whose answer is a hostile thenable is read as
// a Promise settles: the first settlement wins (a resolve then a reject,
// a reject then a resolve, two resolves), a then that calls back before
// it throws has answered, a then that throws first fails the run; a
// number, an object or a Promise of undefined is not a boolean. A run
// that fails runs no tool and leaves nothing; the instance keeps serving
// the same session.
func TestApproval_HostileThenables(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	thenable := func(then func(ok, bad *jshost.Function) error) map[string]any {
		return map[string]any{"then": jshost.Func(func(_ jshost.Value, args []jshost.Value) (any, error) {
			ok, _ := args[0].(*jshost.Function)
			bad, _ := args[1].(*jshost.Function)
			return nil, then(ok, bad)
		})}
	}
	for _, c := range []struct {
		name   string
		answer func() any
		want   string // "paused", "completed", or the text of the tool_error
	}{
		{"resolves true, then rejects", func() any {
			return thenable(func(ok, bad *jshost.Function) error { ok.Invoke(true); bad.Invoke("late"); return nil })
		}, "paused"},
		{"rejects, then resolves true", func() any {
			return thenable(func(ok, bad *jshost.Function) error { bad.Invoke("no ledger"); ok.Invoke(true); return nil })
		}, "needsApproval rejected: no ledger"},
		{"resolves false, then true", func() any {
			return thenable(func(ok, _ *jshost.Function) error { ok.Invoke(false); ok.Invoke(true); return nil })
		}, "completed"},
		{"resolves true, then throws", func() any {
			return thenable(func(ok, _ *jshost.Function) error { ok.Invoke(true); return errors.New("after") })
		}, "paused"},
		{"throws in then", func() any {
			return thenable(func(*jshost.Function, *jshost.Function) error { return errors.New("no then") })
		}, "needsApproval rejected: no then"},
		{"answers a number", func() any { return 1 }, "needsApproval must answer a boolean"},
		{"answers an object", func() any { return map[string]any{"need": true} }, "needsApproval must answer a boolean"},
		{"answers a Promise of undefined", func() any {
			p, resolve, _ := in.NewPromise()
			resolve(jshost.Undefined)
			return p
		}, "needsApproval must answer a boolean"},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := 0
			tools, runs := approvalTools(jshost.Func(func(jshost.Value, []jshost.Value) (any, error) {
				asked++
				if asked == 1 {
					return c.answer(), nil
				}
				return false, nil
			}))
			rt := mustRuntime(t, in, "agentrt", map[string]any{"model": payAndLook, "tools": tools})
			v, err := in.CallAsync(ctx, rt, "startRun", "p", "q")
			switch c.want {
			case "paused", "completed":
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				want := map[string]string{"paused": "awaiting_approval", "completed": "completed"}[c.want]
				if status := get(in.Export(v), "status"); status != want {
					t.Fatalf("status %v, want %s", status, want)
				}
				if c.want == "paused" {
					runs.want(t, "paused", map[string]int{"look": 1})
					if _, err := in.CallAsync(ctx, rt, "startRun", "p", jshost.Undefined, approve("pay-q", true, "")); err != nil {
						t.Fatalf("the approval: %v", err)
					}
				}
				runs.want(t, c.want, map[string]int{"pay": 1, "look": 1})
				mustCleanState(t, in, rt, "p", 5)
			default:
				wantCode(t, c.name, err, "tool_error", `the approval check of tool "pay" failed: `+c.want)
				mustCleanState(t, in, rt, "p", 0)
				runs.want(t, c.name, map[string]int{})
			}
			// The predicate answers false from now on: the same session runs on.
			if _, err := in.CallAsync(ctx, rt, "startRun", "p", "r"); err != nil {
				t.Fatalf("the next run: %v", err)
			}
		})
	}
	mustServe(t, in, mustRuntime(t, in, "agentrt", nil), "after")
}

// Ensure an approval sent to a closed runtime, and one whose runtime is
// closed inside the approved tool, end typed (the tool's run is
// cancelled, and nothing stays of it), and a fresh runtime resumes the
// stored history once.
func TestApproval_ClosedRuntime(t *testing.T) {
	in := mustInstance(t, nil)
	ctx := context.Background()
	tools, runs := approvalTools(true)
	rt := mustRuntime(t, in, "agentrt", map[string]any{"model": payAndLook, "tools": tools})
	paused := pauseRun(t, in, rt, "s")
	stored := paused["appended"]
	mustCall(t, in, rt, "close")
	_, err := in.CallAsync(ctx, rt, "startRun", "s", jshost.Undefined, approve("pay-q", true, ""))
	var ex *jshost.Exception
	if !errors.As(err, &ex) || ex.Code == "" || ex.Code == "internal" {
		t.Fatalf("an approval to a closed runtime: %v, want a typed refusal", err)
	}
	runs.want(t, "after the refused approval", map[string]int{"look": 1})

	// The runtime closed inside the approved tool.
	var closing jshost.Value
	pays := 0
	pay := jshost.Func(func(jshost.Value, []jshost.Value) (any, error) {
		pays++
		if _, err := jshost.Get(closing, "close").(*jshost.Function).Invoke(); err != nil {
			return nil, err
		}
		return "paid", nil
	})
	closing = mustRuntime(t, in, "agentrt", map[string]any{"model": payAndLook, "tools": []any{
		map[string]any{"name": "pay", "needsApproval": true, "call": pay},
		map[string]any{"name": "look", "call": jshost.Func(func(jshost.Value, []jshost.Value) (any, error) { return "looked", nil })},
	}})
	_, err = in.CallAsync(ctx, closing, "startRunWithHistory", "s", jshost.Undefined, stored, approve("pay-q", true, ""))
	wantCode(t, "the runtime closed in the approved tool", err, "cancelled", "")
	if pays != 1 {
		t.Fatalf("the tool ran %d times, want once", pays)
	}

	fresh := mustRuntime(t, in, "agentrt", map[string]any{"model": payAndLook, "tools": tools})
	v, err := in.CallAsync(ctx, fresh, "startRunWithHistory", "s", jshost.Undefined, stored, approve("pay-q", true, ""))
	if err != nil {
		t.Fatalf("the cold resume: %v", err)
	}
	wantList(t, "the cold resume's appended", contents(get(in.Export(v), "appended")), "tool:paid", "assistant:done: looked | paid")
	runs.want(t, "after the cold resume", map[string]int{"pay": 1, "look": 1})
	mustServe(t, in, mustRuntime(t, in, "agentrt", nil), "after")
}
