package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// onceServer is an API over a runtime whose model asks, for each user
// message, for a "pay" and a "mail" call, both needing approval, and
// whose answer to tool results fails as fail says; pays counts pay's
// runs. fail is read by model calls a cancelled run left going in their
// goroutine, so it is set through setFail.
type onceServer struct {
	h    *httpapi.Handler
	pays *atomic.Int32
	fail atomic.Pointer[func(context.Context) error]
}

// setFail sets (nil: clears) how the model's answer to tool results fails.
func (s *onceServer) setFail(f func(context.Context) error) {
	if f == nil {
		s.fail.Store(nil)
		return
	}
	s.fail.Store(&f)
}

func newOnceServer(t *testing.T, pays *atomic.Int32, cfg core.Config) *onceServer {
	s := &onceServer{pays: pays}
	need := func(core.ToolInvocation) (bool, error) { return true, nil }
	cfg.Model = core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == core.RoleUser {
			return &core.ModelReply{ToolCalls: []core.ToolCall{
				{ID: "pay-" + last.Content, Name: "pay", Arguments: `{}`}, {ID: "mail-" + last.Content, Name: "mail", Arguments: `{}`}}}, nil
		}
		if fail := s.fail.Load(); fail != nil {
			if err := (*fail)(ctx); err != nil {
				return nil, err
			}
		}
		return &core.ModelReply{Content: "done"}, nil
	})
	cfg.Tools = []core.Tool{
		{ToolSpec: core.ToolSpec{Name: "pay"}, NeedsApproval: need, Call: func(core.Context, core.ToolInvocation) (string, error) {
			s.pays.Add(1)
			return "paid", nil
		}},
		{ToolSpec: core.ToolSpec{Name: "mail"}, NeedsApproval: need, Call: func(core.Context, core.ToolInvocation) (string, error) { return "mailed", nil }},
	}
	s.h = httpapi.New(httpapi.Config{Runtime: mustRuntime(t, cfg)})
	return s
}

type keptError struct {
	Error struct {
		Code     string           `json:"code"`
		Appended []map[string]any `json:"appended"`
	} `json:"error"`
}

func contentsOfWire(msgs []map[string]any) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m["role"].(string) + ":" + m["content"].(string)
	}
	return out
}

// Ensure over HTTP a resume that fails after its approved tool ran keeps
// the result in the session and answers it in error.appended (and in the
// streamed run.failed event); the approval sent again is refused three
// times warm and once cold, with the history the client stored from the
// error; pay ran once (docs/adr/0019-tool-approvals.md, "Amendment:
// nothing paid twice"). Before, each retry ran pay again. And a denial
// reason's size counts its whole result message.
func TestHandler_Approvals_NothingPaidTwice(t *testing.T) {
	const approvals = `"approvals":[{"toolCallId":"pay-q","approved":true},{"toolCallId":"mail-q","approved":false,"reason":"no"}]`
	counter := func(m core.Message) (int, error) {
		if m.Role == core.RoleTool && m.Content == "paid" {
			return 0, errors.New("counter down")
		}
		return core.EstimateTokens(m)
	}
	cases := []struct {
		name   string
		cfg    core.Config
		policy string
		arm    func(s *onceServer)
		stream bool
		code   string
	}{
		{name: "model error", code: "model_error", arm: func(s *onceServer) {
			s.setFail(func(context.Context) error { return errors.New("upstream 500") })
		}},
		{name: "model error streamed", code: "model_error", stream: true, arm: func(s *onceServer) {
			s.setFail(func(context.Context) error { return errors.New("upstream 500") })
		}},
		{name: "timeout in the continuation", code: "timeout", policy: `{"timeoutMs":50}`, arm: func(s *onceServer) {
			s.setFail(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		}},
		{name: "maxContextTokens too small", code: "limit_exceeded", policy: `{"maxContextTokens":20}`},
		{name: "counter fails after the tool", code: "invalid_argument", policy: `{"maxContextTokens":10000}`, cfg: core.Config{CountTokens: counter}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pays := new(atomic.Int32)
			s := newOnceServer(t, pays, tc.cfg)
			r := do(t, s.h, "POST", "/v1/sessions/s/runs", `{"input":"q"}`)
			paused := decode[pendingResult](t, r.body)
			if r.status != 200 || paused.Status != core.StatusAwaitingApproval {
				t.Fatalf("pause: %d %s", r.status, r.body)
			}
			if tc.arm != nil {
				tc.arm(s)
			}
			body := "{" + approvals
			if tc.policy != "" {
				body += `,"policy":` + tc.policy
			}
			body += "}"
			var kept keptError
			if tc.stream {
				r = do(t, s.h, "POST", "/v1/sessions/s/runs", body, "Accept", "text/event-stream")
				frames := strings.Split(strings.TrimSpace(string(r.body)), "\n\n")
				last := frames[len(frames)-1]
				if !strings.HasPrefix(last, "event: run.failed\ndata: ") {
					t.Fatalf("last frame %q", last)
				}
				if err := json.Unmarshal([]byte(strings.TrimPrefix(last, "event: run.failed\ndata: ")), &kept); err != nil {
					t.Fatal(err)
				}
			} else {
				r = do(t, s.h, "POST", "/v1/sessions/s/runs", body)
				kept = decode[keptError](t, r.body)
			}
			want := []string{"tool:paid", "tool:Tool call denied: no"}
			if kept.Error.Code != tc.code || strings.Join(contentsOfWire(kept.Error.Appended), "|") != strings.Join(want, "|") {
				t.Fatalf("resume: %d %s, want %s with appended %q (pay ran %d times)", r.status, r.body, tc.code, want, pays.Load())
			}
			s.setFail(nil)
			for range 3 {
				r = do(t, s.h, "POST", "/v1/sessions/s/runs", body)
				if e := decode[errorBody](t, r.body); r.status != 400 || e.Error.Code != "invalid_argument" {
					t.Fatalf("approving again: %d %s", r.status, r.body)
				}
			}
			stored, _ := json.Marshal(append(paused.Appended, kept.Error.Appended...))
			cold := newOnceServer(t, pays, tc.cfg)
			r = do(t, cold.h, "POST", "/v1/sessions/s/runs", "{"+approvals+`,"history":`+string(stored)+"}")
			if e := decode[errorBody](t, r.body); r.status != 400 || e.Error.Code != "invalid_argument" {
				t.Fatalf("approving cold: %d %s", r.status, r.body)
			}
			if pays.Load() != 1 {
				t.Fatalf("pay ran %d times", pays.Load())
			}
		})
	}
}

// Ensure a client that leaves after pay ran (its request's context ends)
// leaves the result in the session: the approval sent again is refused
// and pay ran once.
func TestHandler_Approvals_ClientLeavesAfterTheTool(t *testing.T) {
	pays := new(atomic.Int32)
	s := newOnceServer(t, pays, core.Config{})
	do(t, s.h, "POST", "/v1/sessions/s/runs", `{"input":"q"}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The client leaves once the result is in: while the model is called
	// after it. Leaving while pay is still out is the documented "at
	// least once" (its result may be dropped), so it is not this case.
	s.setFail(func(ctx context.Context) error { cancel(); <-ctx.Done(); return ctx.Err() })
	body := `{"approvals":[{"toolCallId":"pay-q","approved":true},{"toolCallId":"mail-q","approved":true}]}`
	req := httptest.NewRequest("POST", "/v1/sessions/s/runs", strings.NewReader(body)).WithContext(ctx)
	req.Header.Set("Accept", "text/event-stream")
	s.h.ServeHTTP(httptest.NewRecorder(), req)
	s.setFail(nil)
	r := do(t, s.h, "POST", "/v1/sessions/s/runs", body)
	if e := decode[errorBody](t, r.body); r.status != 400 || e.Error.Code != "invalid_argument" || pays.Load() != 1 {
		t.Fatalf("approving again: %d %s, pay ran %d times", r.status, r.body, pays.Load())
	}
}

// Ensure a denial reason whose result message is one byte over
// maxMessageBytes with its tool_call_id is refused before pay runs.
func TestHandler_Approvals_DenialReasonCountsCallID(t *testing.T) {
	const limit = 200
	pays := new(atomic.Int32)
	s := newOnceServer(t, pays, core.Config{Limits: core.Limits{MaxMessageBytes: limit}})
	do(t, s.h, "POST", "/v1/sessions/s/runs", `{"input":"q"}`)
	fits := strings.Repeat("r", limit-len(core.DeniedContent(""))-len("mail-q")-1)
	body := func(reason string) string {
		return `{"approvals":[{"toolCallId":"pay-q","approved":true},{"toolCallId":"mail-q","approved":false,"reason":"` + reason + `"}]}`
	}
	r := do(t, s.h, "POST", "/v1/sessions/s/runs", body(fits+"x"))
	if e := decode[errorBody](t, r.body); e.Error.Code != "limit_exceeded" || pays.Load() != 0 {
		t.Fatalf("oversize reason: %d %s, pay ran %d times", r.status, r.body, pays.Load())
	}
	if r = do(t, s.h, "POST", "/v1/sessions/s/runs", body(fits)); r.status != 200 || pays.Load() != 1 {
		t.Fatalf("reason at the limit: %d %s, pay ran %d times", r.status, r.body, pays.Load())
	}
}
