package httpapi_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

func mustRuntime(t testing.TB, cfg core.Config) *core.Runtime {
	t.Helper()
	rt, err := core.New(cfg)
	if err != nil {
		t.Fatalf("core.New: %v", err)
	}
	t.Cleanup(rt.Close)
	return rt
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func do(t testing.TB, h http.Handler, method, path, body string, headers ...string) response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return response{rec.Code, rec.Header(), rec.Body.Bytes()}
}

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Index   *int   `json:"index"`
	} `json:"error"`
}

type result struct {
	RunID     string `json:"runId"`
	SessionID string `json:"sessionId"`
	Status    string `json:"status"`
	Reply     struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"reply"`
	Appended []map[string]any `json:"appended"`
	Seed     struct {
		Mode          string `json:"mode"`
		Seeded        int    `json:"seeded"`
		SkippedSystem int    `json:"skippedSystem"`
	} `json:"seed"`
	MessageCount int `json:"messageCount"`
	ModelCalls   []struct {
		Step         int `json:"step"`
		MessageCount int `json:"messageCount"`
	} `json:"modelCalls"`
}

func decode[T any](t testing.TB, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decoding %q: %v", b, err)
	}
	return v
}

const history3 = `[{"role":"system","content":"old prompt"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`

// Ensure a cold session is seeded from history and a warm one is not
// re-seeded: the reference test of the ADR, over HTTP.
func TestHandler_Runs_ColdSessionSeedsWarmSessionDoesNot(t *testing.T) {
	h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{})})
	r1 := do(t, h, "POST", "/v1/sessions/s1/runs", `{"input":"and now?","history":`+history3+`}`)
	if r1.status != 200 {
		t.Fatalf("turn 1: status %d, body %s", r1.status, r1.body)
	}
	res := decode[result](t, r1.body)
	if res.Seed.Mode != "cold" || res.Seed.Seeded != 2 || res.Seed.SkippedSystem != 1 {
		t.Errorf("turn 1 seed: got %+v, want cold/2/1", res.Seed)
	}
	if want := "echo: and now? (model received 3 messages)"; res.Reply.Content != want {
		t.Errorf("turn 1 reply: got %q, want %q", res.Reply.Content, want)
	}
	if res.MessageCount != 4 || res.Status != "completed" || res.SessionID != "s1" || res.RunID == "" {
		t.Errorf("turn 1: got %+v", res)
	}
	hist2 := strings.TrimSuffix(history3, "]") + `,{"role":"user","content":"and now?"},{"role":"assistant","content":"` + res.Reply.Content + `"}]`
	r2 := do(t, h, "POST", "/v1/sessions/s1/runs", `{"input":"more","history":`+hist2+`}`)
	res2 := decode[result](t, r2.body)
	if r2.status != 200 || res2.Seed.Mode != "noop" || res2.Seed.Seeded != 0 {
		t.Fatalf("turn 2: status %d, seed %+v", r2.status, res2.Seed)
	}
	if want := "echo: more (model received 5 messages)"; res2.Reply.Content != want {
		t.Errorf("turn 2 reply: got %q, want %q", res2.Reply.Content, want)
	}
	if len(res2.ModelCalls) != 1 || res2.ModelCalls[0].MessageCount != 5 {
		t.Errorf("turn 2 model calls: got %+v", res2.ModelCalls)
	}
}

// Ensure history is accepted in snake_case and camelCase, with tool calls
// whose arguments are JSON text or an object.
func TestHandler_Runs_HistoryShapes(t *testing.T) {
	tests := []struct {
		name    string
		history string
	}{
		{"OK/snake_case", `[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","name":"f","arguments":"{\"a\":1}"}]},{"role":"tool","content":"42","tool_call_id":"c1"},{"role":"assistant","content":"done","id":"m4"}]`},
		{"OK/camelCase", `[{"role":"user","content":"x"},{"role":"assistant","content":"","toolCalls":[{"id":"c1","name":"f","arguments":{"a":1}}]},{"role":"tool","content":"42","toolCallId":"c1"},{"role":"assistant","content":"done"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := mustRuntime(t, core.Config{})
			h := httpapi.New(httpapi.Config{Runtime: rt})
			r := do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"next","history":`+tc.history+`}`)
			if r.status != 200 {
				t.Fatalf("status %d, body %s", r.status, r.body)
			}
			s, _ := rt.Session("s")
			if len(s.Messages) != 6 {
				t.Fatalf("got %d messages, want 6", len(s.Messages))
			}
			if got := s.Messages[1].ToolCalls; len(got) != 1 || got[0].Arguments != `{"a":1}` || got[0].Name != "f" {
				t.Errorf("tool calls: got %+v", got)
			}
			if got := s.Messages[2].ToolCallID; got != "c1" {
				t.Errorf("tool_call_id: got %q, want c1", got)
			}
		})
	}
}

// Ensure every refusal has the status of the table and the typed error,
// and that the handler keeps serving afterwards.
func TestHandler_Errors_StatusAndCode(t *testing.T) {
	rt := mustRuntime(t, core.Config{Limits: core.Limits{MaxSeedMessages: 3}})
	h := httpapi.New(httpapi.Config{Runtime: rt, MaxBodyBytes: 4096})
	big := strings.Repeat("x", 5000)
	tests := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		code                     string
		index                    int // -1: none
	}{
		{"ErrInvalidJSON", "POST", "/v1/sessions/a/runs", `{"input":`, nil, 400, "invalid_argument", -1},
		{"ErrNotAnObject", "POST", "/v1/sessions/a/runs", `[1,2]`, nil, 400, "invalid_argument", -1},
		{"ErrEmptyBody", "POST", "/v1/sessions/a/runs", ``, nil, 400, "invalid_argument", -1},
		{"ErrInputWrongType", "POST", "/v1/sessions/a/runs", `{"input":42}`, nil, 400, "invalid_argument", -1},
		{"ErrInputMissing", "POST", "/v1/sessions/a/runs", `{}`, nil, 400, "invalid_argument", -1},
		{"ErrHistoryNotArray", "POST", "/v1/sessions/a/runs", `{"input":"x","history":{"role":"user"}}`, nil, 400, "invalid_argument", -1},
		{"ErrPolicyWrongType", "POST", "/v1/sessions/a/runs", `{"input":"x","policy":{"maxSteps":"8"}}`, nil, 400, "invalid_argument", -1},
		{"ErrPolicyFraction", "POST", "/v1/sessions/a/runs", `{"input":"x","policy":{"maxSteps":1.5}}`, nil, 400, "invalid_argument", -1},
		{"ErrPolicyUnknownSeedMode", "POST", "/v1/sessions/a/runs", `{"input":"x","policy":{"seedMode":"always"}}`, nil, 400, "invalid_argument", -1},
		{"ErrUnknownRole", "POST", "/v1/sessions/a/runs", `{"input":"x","history":[{"role":"user","content":"a"},{"role":"bot","content":"b"}]}`, nil, 400, "invalid_history", 1},
		{"ErrRoleWrongType", "POST", "/v1/sessions/a/runs", `{"input":"x","history":[{"role":7,"content":"a"}]}`, nil, 400, "invalid_history", 0},
		{"ErrContentWrongType", "POST", "/v1/sessions/a/runs", `{"input":"x","history":[{"role":"user","content":["a"]}]}`, nil, 400, "invalid_history", 0},
		{"ErrOrphanToolResult", "POST", "/v1/sessions/a/runs", `{"input":"x","history":[{"role":"user","content":"a"},{"role":"tool","content":"r","tool_call_id":"zz"}]}`, nil, 400, "invalid_history", 1},
		{"ErrHistoryOverLimit", "POST", "/v1/sessions/a/runs", `{"input":"x","history":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},{"role":"assistant","content":"d"}]}`, nil, 413, "limit_exceeded", 3},
		{"ErrBodyTooLarge", "POST", "/v1/sessions/a/runs", `{"input":"` + big + `"}`, nil, 413, "limit_exceeded", -1},
		{"ErrUnknownRoute", "GET", "/v2/whatever", ``, nil, 404, "not_found", -1},
		{"ErrUnknownSubroute", "GET", "/v1/sessions/a/other", ``, nil, 404, "not_found", -1},
		{"ErrUnknownSession", "GET", "/v1/sessions/nobody", ``, nil, 404, "not_found", -1},
		{"ErrMethodRuns", "GET", "/v1/sessions/a/runs", ``, nil, 405, "method_not_allowed", -1},
		{"ErrMethodSession", "PUT", "/v1/sessions/a", `{}`, nil, 405, "method_not_allowed", -1},
		{"ErrMethodHealthz", "POST", "/healthz", `{}`, nil, 405, "method_not_allowed", -1},
		{"ErrPolicyRepairWrongType", "POST", "/v1/sessions/a/runs", `{"input":"x","policy":{"repair":"yes"}}`, nil, 400, "invalid_argument", -1},
		{"ErrOnDisconnectContinue", "POST", "/v1/sessions/a/runs", `{"input":"x","policy":{"onDisconnect":"continue"}}`, []string{"Accept", "text/event-stream"}, 400, "invalid_argument", -1},
		{"ErrOnDisconnectUnknown", "POST", "/v1/sessions/a/runs", `{"input":"x","policy":{"onDisconnect":"later"}}`, nil, 400, "invalid_argument", -1},
		{"ErrDuplicateMessage", "POST", "/v1/sessions/a/runs", `{"input":"x","history":[{"id":"u","role":"user","content":"a"},{"id":"u","role":"user","content":"a"}]}`, nil, 400, "invalid_history", 1},
		{"ErrRepairDoesNotGuess", "POST", "/v1/sessions/a/runs", `{"input":"x","policy":{"repair":true},"history":[{"role":"tool","content":"r","tool_call_id":"zz"},{"role":"bot","content":"b"}]}`, nil, 400, "invalid_history", 1},
		{"ErrCheckNotAnObject", "POST", "/v1/history/check", `[1]`, nil, 400, "invalid_argument", -1},
		{"ErrCheckInvalidJSON", "POST", "/v1/history/check", `{"history":`, nil, 400, "invalid_argument", -1},
		{"ErrCheckHistoryMissing", "POST", "/v1/history/check", `{}`, nil, 400, "invalid_argument", -1},
		{"ErrCheckHistoryNotArray", "POST", "/v1/history/check", `{"history":{"role":"user"}}`, nil, 400, "invalid_argument", -1},
		{"ErrCheckBodyTooLarge", "POST", "/v1/history/check", `{"history":["` + big + `"]}`, nil, 413, "limit_exceeded", -1},
		{"ErrMethodCheck", "GET", "/v1/history/check", ``, nil, 405, "method_not_allowed", -1},
		{"ErrToolUnknown", "POST", "/v1/sessions/t/runs", `{"input":"/tool nothere {}"}`, nil, 502, "tool_error", -1},
		{"ErrMaxSteps", "POST", "/v1/sessions/t/runs", `{"input":"/tool nothere","policy":{"maxSteps":1}}`, nil, 413, "limit_exceeded", -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, h, tc.method, tc.path, tc.body, tc.headers...)
			if r.status != tc.status {
				t.Fatalf("status: got %d, want %d (body %s)", r.status, tc.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("content type: got %q", ct)
			}
			e := decode[errorBody](t, r.body)
			if e.Error.Code != tc.code || e.Error.Message == "" {
				t.Errorf("error: got %+v, want code %s", e.Error, tc.code)
			}
			if tc.index < 0 && e.Error.Index != nil {
				t.Errorf("index: got %d, want none", *e.Error.Index)
			}
			if tc.index >= 0 && (e.Error.Index == nil || *e.Error.Index != tc.index) {
				t.Errorf("index: got %v, want %d", e.Error.Index, tc.index)
			}
			if strings.Contains(string(r.body), "goroutine") || strings.Contains(string(r.body), ".go:") {
				t.Errorf("the body looks like a stack trace: %s", r.body)
			}
		})
	}
	// Refusals changed nothing, and the handler still serves.
	if ids := rt.ListSessions(); len(ids) != 0 {
		t.Errorf("sessions after refusals: got %v, want none", ids)
	}
	if r := do(t, h, "POST", "/v1/sessions/a/runs", `{"input":"still here"}`); r.status != 200 {
		t.Errorf("after refusals: status %d, body %s", r.status, r.body)
	}
}

// Ensure a declared Content-Length over the limit is refused before the
// body is read.
func TestHandler_Runs_ContentLengthCheckedFirst(t *testing.T) {
	h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{}), MaxBodyBytes: 100})
	body := &countingReader{r: strings.NewReader(strings.Repeat("x", 1000))}
	req := httptest.NewRequest("POST", "/v1/sessions/a/runs", body)
	req.ContentLength = 1000
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 413 {
		t.Fatalf("status: got %d, want 413", rec.Code)
	}
	if body.n != 0 {
		t.Errorf("read %d bytes of the body, want 0", body.n)
	}
	// A body without a Content-Length is cut by MaxBytesReader.
	req = httptest.NewRequest("POST", "/v1/sessions/a/runs", strings.NewReader(`{"input":"`+strings.Repeat("y", 200)+`"}`))
	req.ContentLength = -1
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 413 {
		t.Errorf("chunked: status got %d, want 413", rec.Code)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// Ensure the bearer token is required when configured, and /healthz stays open.
func TestHandler_Auth(t *testing.T) {
	h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{}), Token: "s3cret", Version: "1.2.3"})
	tests := []struct {
		name   string
		auth   string
		status int
	}{
		{"ErrMissing", "", 401},
		{"ErrWrong", "Bearer nope", 401},
		{"ErrPrefixOfToken", "Bearer s3cre", 401},
		{"ErrLonger", "Bearer s3cret!", 401},
		{"ErrScheme", "Basic s3cret", 401},
		{"OK", "Bearer s3cret", 200},
		{"OKCaseInsensitiveScheme", "bearer s3cret", 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var hd []string
			if tc.auth != "" {
				hd = []string{"Authorization", tc.auth}
			}
			r := do(t, h, "POST", "/v1/sessions/a/runs", `{"input":"x"}`, hd...)
			if r.status != tc.status {
				t.Fatalf("status: got %d, want %d (%s)", r.status, tc.status, r.body)
			}
			if tc.status == 401 {
				if e := decode[errorBody](t, r.body); e.Error.Code != "unauthorized" {
					t.Errorf("code: got %q", e.Error.Code)
				}
				if r.header.Get("WWW-Authenticate") == "" {
					t.Error("no WWW-Authenticate header")
				}
			}
		})
	}
	r := do(t, h, "GET", "/healthz", "")
	if r.status != 200 || !strings.Contains(string(r.body), `"version":"1.2.3"`) || !strings.Contains(string(r.body), `"ok":true`) {
		t.Errorf("healthz: %d %s", r.status, r.body)
	}
}

// Ensure GET returns the session, DELETE is idempotent, and ids are
// path-unescaped.
func TestHandler_Sessions(t *testing.T) {
	h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{})})
	if r := do(t, h, "POST", "/v1/sessions/a%2Fb/runs", `{"input":"hi"}`); r.status != 200 {
		t.Fatalf("run: %d %s", r.status, r.body)
	}
	r := do(t, h, "GET", "/v1/sessions/a%2Fb", "")
	if r.status != 200 {
		t.Fatalf("get: %d %s", r.status, r.body)
	}
	s := decode[struct {
		ID           string           `json:"id"`
		MessageCount int              `json:"messageCount"`
		Messages     []map[string]any `json:"messages"`
	}](t, r.body)
	if s.ID != "a/b" || s.MessageCount != 2 || len(s.Messages) != 2 || s.Messages[0]["role"] != "user" || s.Messages[0]["content"] != "hi" {
		t.Errorf("session: got %+v", s)
	}
	for i := 0; i < 2; i++ {
		if r := do(t, h, "DELETE", "/v1/sessions/a%2Fb", ""); r.status != 204 {
			t.Errorf("delete %d: got %d, want 204", i, r.status)
		}
	}
	if r := do(t, h, "GET", "/v1/sessions/a%2Fb", ""); r.status != 404 {
		t.Errorf("get after delete: got %d, want 404", r.status)
	}
}

// Ensure a run on a busy session with onBusy "reject" answers 409.
func TestHandler_Runs_SessionBusy(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	model := core.ModelFunc(func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &core.ModelReply{Content: "done"}, nil
	})
	h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{Model: model})})
	var wg sync.WaitGroup
	wg.Add(1)
	var first response
	go func() {
		defer wg.Done()
		first = do(t, h, "POST", "/v1/sessions/b/runs", `{"input":"one"}`)
	}()
	<-started
	r := do(t, h, "POST", "/v1/sessions/b/runs", `{"input":"two","policy":{"onBusy":"reject"}}`)
	close(release)
	wg.Wait()
	if r.status != 409 || decode[errorBody](t, r.body).Error.Code != "session_busy" {
		t.Errorf("busy: got %d %s, want 409 session_busy", r.status, r.body)
	}
	if first.status != 200 {
		t.Errorf("first: got %d %s", first.status, first.body)
	}
}

// Ensure model errors, timeouts and panics map to their statuses, without
// details of the panic.
func TestHandler_Runs_ModelFailures(t *testing.T) {
	tests := []struct {
		name   string
		model  core.ModelFunc
		policy string
		status int
		code   string
	}{
		{"ErrModel", func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
			return nil, core.NewError(core.CodeModelError, "upstream answered 500")
		}, `{}`, 502, "model_error"},
		{"ErrPanic", func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
			panic("secret internals")
		}, `{}`, 502, "model_error"},
		{"ErrTimeout", func(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, `{"timeoutMs":1}`, 504, "timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{Model: tc.model})})
			r := do(t, h, "POST", "/v1/sessions/m/runs", `{"input":"x","policy":`+tc.policy+`}`)
			if r.status != tc.status || decode[errorBody](t, r.body).Error.Code != tc.code {
				t.Errorf("got %d %s, want %d %s", r.status, r.body, tc.status, tc.code)
			}
			if strings.Contains(string(r.body), "secret internals") {
				t.Errorf("panic value leaked: %s", r.body)
			}
		})
	}
}

type sseEvent struct {
	name string
	data map[string]any
}

func readSSE(t testing.TB, r io.Reader) []sseEvent {
	t.Helper()
	var evs []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = decode[map[string]any](t, []byte(strings.TrimPrefix(line, "data: ")))
		case line == "":
			if cur.name != "" {
				evs = append(evs, cur)
			}
			cur = sseEvent{}
		}
	}
	return evs
}

// Ensure Accept: text/event-stream answers the events in order, ending
// with run.completed carrying the result; a refused run answers JSON.
func TestHandler_Runs_ServerSentEvents(t *testing.T) {
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{})}))
	defer srv.Close()
	post := func(body string) *http.Response {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/sessions/sse/runs", strings.NewReader(body))
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := post(`{"input":"hello there","history":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`)
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type: got %q", ct)
	}
	evs := readSSE(t, res.Body)
	if len(evs) < 5 {
		t.Fatalf("got %d events, want at least 5: %+v", len(evs), evs)
	}
	want := []string{"run.started", "session.seeded", "message.appended", "model.delta"}
	for i, w := range want {
		if evs[i].name != w || evs[i].data["type"] != w {
			t.Errorf("event %d: got %s, want %s", i, evs[i].name, w)
		}
	}
	for i, ev := range evs {
		if seq := ev.data["seq"]; seq != float64(i+1) {
			t.Errorf("event %d: seq %v, want %d", i, seq, i+1)
		}
	}
	last := evs[len(evs)-1]
	if last.name != "run.completed" {
		t.Fatalf("last event: got %s", last.name)
	}
	result, _ := last.data["result"].(map[string]any)
	reply, _ := result["reply"].(map[string]any)
	if reply["content"] != "echo: hello there (model received 3 messages)" {
		t.Errorf("result reply: got %v", reply)
	}
	// Refused: plain JSON and its status.
	res2 := post(`{"input":"x","history":[{"role":"nobody","content":"a"}]}`)
	defer res2.Body.Close()
	b, _ := io.ReadAll(res2.Body)
	if res2.StatusCode != 400 || !strings.HasPrefix(res2.Header.Get("Content-Type"), "application/json") {
		t.Errorf("refused: got %d %q %s", res2.StatusCode, res2.Header.Get("Content-Type"), b)
	}
	// Failed after the stream began: run.failed carrying the error.
	res3 := post(`{"input":"/tool missing"}`)
	defer res3.Body.Close()
	evs3 := readSSE(t, res3.Body)
	if n := len(evs3); n == 0 || evs3[n-1].name != "run.failed" {
		t.Fatalf("failed run: got %+v", evs3)
	}
	if e, _ := evs3[len(evs3)-1].data["error"].(map[string]any); e["code"] != "tool_error" {
		t.Errorf("failed run error: got %v", e)
	}
}

// Ensure concurrent runs on many sessions and on one session all complete
// and the one session holds every turn exactly once.
func TestHandler_Runs_Concurrent(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	h := httpapi.New(httpapi.Config{Runtime: rt})
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			path := "/v1/sessions/shared/runs"
			if i%2 == 0 {
				path = "/v1/sessions/own-" + string(rune('a'+i%26)) + "/runs"
			}
			if r := do(t, h, "POST", path, `{"input":"x"}`); r.status != 200 {
				errs <- string(r.body)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if s, _ := rt.Session("shared"); len(s.Messages) != 32 {
		t.Errorf("shared session: got %d messages, want 32", len(s.Messages))
	}
}

// Ensure a huge session id or input is refused cleanly.
func TestHandler_Runs_HugeValues(t *testing.T) {
	h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{Limits: core.Limits{MaxMessageBytes: 1000}}), MaxBodyBytes: 1 << 20})
	if r := do(t, h, "POST", "/v1/sessions/"+strings.Repeat("i", 600)+"/runs", `{"input":"x"}`); r.status != 400 {
		t.Errorf("huge id: got %d %s", r.status, r.body)
	}
	if r := do(t, h, "POST", "/v1/sessions/a/runs", `{"input":"`+strings.Repeat("x", 2000)+`"}`); r.status != 413 {
		t.Errorf("huge input: got %d %s", r.status, r.body)
	}
}

// Ensure POST /v1/history/check lists the problems, with the kind of
// repair or null, runs nothing, and that policy.repair seeds the same
// history and reports the repairs in the result and the seed event.
func TestHandler_HistoryCheck_AndRepair(t *testing.T) {
	rt := mustRuntime(t, core.Config{})
	h := httpapi.New(httpapi.Config{Runtime: rt})
	history := `[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","name":"f","arguments":"{}"}]},{"role":"user","content":"r"}]`
	r := do(t, h, "POST", "/v1/history/check", `{"history":`+history+`}`)
	want := `{"ok":false,"problems":[{"code":"invalid_history","index":1,"message":"tool call \"c1\" has no tool result before the next user or assistant message","repair":"missing_tool_result"}]}`
	if r.status != 200 || noHead(r.body) != want {
		t.Fatalf("check: %d %s\nwant %s", r.status, r.body, want)
	}
	r = do(t, h, "POST", "/v1/history/check", `{"history":[{"role":"user","content":"q"}]}`)
	if r.status != 200 || noHead(r.body) != `{"ok":true,"problems":[]}` {
		t.Fatalf("check of a valid history: %d %s", r.status, r.body)
	}
	r = do(t, h, "POST", "/v1/history/check", `{"history":[{"role":"user","content":"q"},"x"]}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"index":1,"message":"message must be an object","repair":null`) {
		t.Fatalf("check of an unreadable history: %d %s", r.status, r.body)
	}
	if ids := rt.ListSessions(); len(ids) != 0 {
		t.Fatalf("check made sessions %v", ids)
	}
	r = do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"x","policy":{"repair":true},"history":`+history+`}`,
		"Accept", "text/event-stream")
	wantRepairs := `"repairs":[{"kind":"missing_tool_result","index":1,"toolCallId":"c1"}]`
	body := string(r.body)
	seeded := body[strings.Index(body, "event: session.seeded"):]
	seeded = seeded[:strings.Index(seeded, "\n\n")]
	if r.status != 200 || !strings.Contains(seeded, wantRepairs) || strings.Count(body, wantRepairs) != 2 {
		t.Fatalf("repaired run: %d %s\nwant %s in the seed event and the result", r.status, body, wantRepairs)
	}
}

// Ensure the host's copy heals over HTTP (docs/adr/0016-the-host-copy-heals.md):
// a repaired run's seed.repaired is the request's history with the repairs
// applied, in its own shape, in the JSON answer and the streamed result
// alike; stored with the appended messages, POST /v1/history/check finds
// it ok and a fresh runtime seeds it without repair.
func TestHandler_RepairedCopyHeals(t *testing.T) {
	history := `[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c9","content":"lost"},{"role":"user","content":"r"}]`
	healed := `[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"Tool call interrupted: no result was recorded."},{"role":"user","content":"r"}]`
	for _, stream := range []bool{false, true} {
		h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{})})
		var headers []string
		if stream {
			headers = []string{"Accept", "text/event-stream"}
		}
		r := do(t, h, "POST", "/v1/sessions/s/runs", `{"input":"x","policy":{"repair":true},"history":`+history+`}`, headers...)
		body := r.body
		if stream {
			s := string(body)
			i := strings.Index(s, "event: run.completed\ndata: ")
			if i < 0 {
				t.Fatalf("no run.completed in %s", s)
			}
			s = s[i+len("event: run.completed\ndata: "):]
			var ev struct {
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal([]byte(s[:strings.Index(s, "\n")]), &ev); err != nil {
				t.Fatal(err)
			}
			body = ev.Result
			if seeded := string(r.body[strings.Index(string(r.body), "event: session.seeded"):]); strings.Contains(seeded[:strings.Index(seeded, "\n\n")], "repaired") {
				t.Fatalf("the session.seeded event carries the repaired history: %s", seeded)
			}
		}
		var res struct {
			Seed struct {
				Repaired json.RawMessage `json:"repaired"`
			} `json:"seed"`
			Appended []json.RawMessage `json:"appended"`
		}
		if err := json.Unmarshal(body, &res); err != nil || r.status != 200 {
			t.Fatalf("stream %v: %d %s: %v", stream, r.status, body, err)
		}
		if string(res.Seed.Repaired) != healed {
			t.Fatalf("stream %v: seed.repaired\n got %s\nwant %s", stream, res.Seed.Repaired, healed)
		}
		var stored []json.RawMessage
		if err := json.Unmarshal(res.Seed.Repaired, &stored); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, res.Appended...)
		sb, _ := json.Marshal(stored)
		fresh := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{})})
		if r := do(t, fresh, "POST", "/v1/history/check", `{"history":`+string(sb)+`}`); noHead(r.body) != `{"ok":true,"problems":[]}` {
			t.Fatalf("check of the stored copy: %d %s", r.status, r.body)
		}
		r = do(t, fresh, "POST", "/v1/sessions/s/runs", `{"input":"later","history":`+string(sb)+`}`)
		if r.status != 200 || !strings.Contains(string(r.body), `"seed":{"mode":"cold","seeded":6,"skippedSystem":0}`) {
			t.Fatalf("cold start from the stored copy without repair: %d %s", r.status, r.body)
		}
		// The same history again, without repairs: no repaired copy.
		r = do(t, fresh, "POST", "/v1/sessions/s2/runs", `{"input":"x","policy":{"repair":true},"history":[{"role":"user","content":"q"}]}`)
		if strings.Contains(string(r.body), "repaired") {
			t.Fatalf("a history without problems has a repaired copy: %s", r.body)
		}
	}
}

// noHead is a check's answer without its head, which heads_test.go checks.
func noHead(b []byte) string {
	return regexp.MustCompile(`,"head":"h1-[A-Za-z0-9_-]{22}"`).ReplaceAllString(strings.TrimSpace(string(b)), "")
}
