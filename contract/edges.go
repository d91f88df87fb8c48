package contract

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// EdgeCase is one case of the edge table in testdata/edges/: a policy or
// a limits object, as JSON, and the error code every edge answers it
// with (the glue on both of its turn paths, the syscall/js API, WASI
// through wasihost, HTTP). Each edge's runner reads the same files; see
// testdata/edges/README.md.
type EdgeCase struct {
	// Name is "file/name", unique in the table.
	Name string
	// Policy is the policy of a run ("policy" cases), or nil.
	Policy json.RawMessage
	// Limits is the limits of a runtime ("limits" cases), or nil.
	Limits json.RawMessage
	// Config is a runtime's config ("config" cases), or nil: its
	// systemPrompt and tools. A runner gives each tool that is an object
	// a call function (JSON has none).
	Config json.RawMessage
	// Approvals is a resume's approvals ("approvals" cases: the run
	// resumes PendingHistory with them), or nil; History, for an
	// "approvals" case without them, a history whose decisions the run
	// resumes with (no input, no approvals).
	Approvals json.RawMessage
	History   json.RawMessage
	// Code is the error code the edge must answer with; "" when the
	// policy or the limits are valid and the run or the runtime must
	// work. Index, when set, is the index of the message at fault the
	// refusal names.
	Code  string
	Index *int
	// Message, when set, is how the refusal's message ends: the reader's
	// text after the name each edge gives the value (request.approvals in
	// the glue, options.approvals in the syscall/js API, approvals over
	// HTTP), which every edge's reader, Go's and JavaScript's, gives alike.
	Message string
}

// PendingHistory is the history an "approvals" case's approvals resume:
// a user message and an assistant message whose call "c1" of the tool
// "pay" (which asks approval on every edge's runtime) awaits approval.
const PendingHistory = `[{"role":"user","content":"pay"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","name":"pay","arguments":"{}"}]}]`

type rawEdgeCase struct {
	Name      string          `json:"name"`
	Policy    json.RawMessage `json:"policy"`
	Limits    json.RawMessage `json:"limits"`
	Config    json.RawMessage `json:"config"`
	Approvals json.RawMessage `json:"approvals"`
	History   json.RawMessage `json:"history"`
	Code      *string         `json:"code"`
	Index     *int            `json:"index"`
	Message   string          `json:"message"`
}

// EdgesDir returns the table's directory, testdata/edges/ at the
// repository's root.
func EdgesDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "edges")
}

// mustDecodeEdges decodes testdata/edges/<name> into v, failing t when it
// cannot read or parse it, and returns the file's path.
func mustDecodeEdges(t testing.TB, name string, v any) string {
	t.Helper()
	f := filepath.Join(EdgesDir(), name)
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("parsing %s: %v", f, err)
	}
	return f
}

// MustLoadEdges reads the cases of testdata/edges/<kind>.json, kind
// "policy", "limits", "config" or "approvals", failing t when it cannot.
func MustLoadEdges(t testing.TB, kind string) []EdgeCase {
	t.Helper()
	var raw []rawEdgeCase
	f := mustDecodeEdges(t, kind+".json", &raw)
	out := make([]EdgeCase, len(raw))
	for i, r := range raw {
		c := EdgeCase{Name: kind + "/" + r.Name, Policy: r.Policy, Limits: r.Limits, Config: r.Config,
			Approvals: r.Approvals, History: r.History, Index: r.Index, Message: r.Message}
		if r.Code != nil {
			c.Code = *r.Code
		}
		out[i] = c
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no case", f)
	}
	return out
}

// Check fails t unless err carries the case's code (nil for a case
// without one).
func (c EdgeCase) Check(t testing.TB, err error) {
	t.Helper()
	if c.Code == "" {
		if err != nil {
			t.Fatalf("%s: got %v, want no error", c.Name, err)
		}
		return
	}
	e := core.AsError(err)
	if e == nil || string(e.Code) != c.Code {
		t.Fatalf("%s: got %v, want code %s", c.Name, err, c.Code)
	}
}

// CheckCode is Check for an edge that reports a code as text ("" for
// none) and msg for people.
func (c EdgeCase) CheckCode(t testing.TB, code, msg string) {
	t.Helper()
	if code != c.Code {
		t.Fatalf("%s: got code %q (%s), want %q", c.Name, code, msg, c.Code)
	}
	if !strings.HasSuffix(msg, c.Message) {
		t.Fatalf("%s: got message %q, want one that ends %q", c.Name, msg, c.Message)
	}
}

// CheckIndex fails t when the case names the index of the message at
// fault and index (the refusal's, -1 for none) is another.
func (c EdgeCase) CheckIndex(t testing.TB, index int) {
	t.Helper()
	if c.Index != nil && index != *c.Index {
		t.Fatalf("%s: got index %d, want %d", c.Name, index, *c.Index)
	}
}

// ResumeBody is the HTTP body of an "approvals" case's run: the pending
// history and the approvals, or the case's history alone.
func (c EdgeCase) ResumeBody() string {
	if c.Approvals != nil {
		return `{"history":` + PendingHistory + `,"approvals":` + string(c.Approvals) + `}`
	}
	return `{"history":` + string(c.History) + `}`
}

// GoResume returns an "approvals" case as the run request a Go host
// makes (session "s", no input): the pending history read with hostmsg
// and the approvals, or the case's history and the decisions it carries
// (hostmsg.Approvals). ok is false when Go's types cannot hold the
// approvals (an unknown or missing key, a wrong type, an empty list:
// the compiler refuses them, and there is nothing to run); a history
// hostmsg refuses is returned as err, the edge's answer.
func (c EdgeCase) GoResume() (req core.RunRequest, ok bool, err error) {
	req = core.RunRequest{SessionID: "s", WithHistory: true}
	raw := c.History
	if c.Approvals != nil {
		raw = json.RawMessage(PendingHistory)
		var items []json.RawMessage
		if json.Unmarshal(c.Approvals, &items) != nil || len(items) == 0 {
			return req, false, nil
		}
		for _, item := range items {
			var a struct {
				ToolCallID *string `json:"toolCallId"`
				Approved   *bool   `json:"approved"`
				Reason     *string `json:"reason"`
			}
			if !strictDecode(item, &a) || a.ToolCallID == nil || a.Approved == nil {
				return req, false, nil
			}
			req.Approvals = append(req.Approvals, core.Approval{ToolCallID: *a.ToolCallID, Approved: *a.Approved, Reason: deref(a.Reason)})
		}
	}
	v, err := hostjson.Parse(raw)
	if err != nil {
		return req, false, nil
	}
	if req.History, err = hostmsg.Messages(v, 0); err != nil {
		return req, true, err
	}
	if c.Approvals == nil {
		req.Approvals, err = hostmsg.Approvals(v)
	}
	return req, true, err
}

// GoPolicy returns the case's policy as a core.Policy, for an edge whose
// API takes Go values (wasihost, core). ok is false when Go's types
// cannot hold it (a wrong type, a fraction, an unknown field, null for
// the whole policy): there the compiler refuses the case, and the edge
// has nothing to run. It reads the case with hostmsg.Policy, the reader
// of the other edges, so that a new policy field needs no change here: a
// policy the reader refuses only for a bound (core.Policy.Validate) is
// one Go holds, and is returned for the edge to refuse.
func (c EdgeCase) GoPolicy() (p core.Policy, ok bool) {
	v, err := hostjson.Parse(c.Policy)
	if err != nil || v.Kind() != hostmsg.Object {
		return p, false
	}
	p, err = hostmsg.Policy(v)
	return p, err == nil || p.Validate() != nil
}

// goLimits mirrors core.Limits with the JSON names of the other edges.
type goLimits struct {
	MaxSessions           *int   `json:"maxSessions"`
	MaxMessagesPerSession *int   `json:"maxMessagesPerSession"`
	MaxSessionBytes       *int64 `json:"maxSessionBytes"`
	MaxSeedMessages       *int   `json:"maxSeedMessages"`
	MaxSeedBytes          *int64 `json:"maxSeedBytes"`
	MaxMessageBytes       *int64 `json:"maxMessageBytes"`
	MaxTotalBytes         *int64 `json:"maxTotalBytes"`
}

// GoLimits returns the case's limits as a core.Limits; ok as for
// GoPolicy.
func (c EdgeCase) GoLimits() (l core.Limits, ok bool) {
	var g goLimits
	if !strictDecode(c.Limits, &g) {
		return l, false
	}
	l.MaxSessions = deref(g.MaxSessions)
	l.MaxMessagesPerSession = deref(g.MaxMessagesPerSession)
	l.MaxSessionBytes = deref(g.MaxSessionBytes)
	l.MaxSeedMessages = deref(g.MaxSeedMessages)
	l.MaxSeedBytes = deref(g.MaxSeedBytes)
	l.MaxMessageBytes = deref(g.MaxMessageBytes)
	l.MaxTotalBytes = deref(g.MaxTotalBytes)
	return l, true
}

// goConfig mirrors what a config case holds, with the JSON names of the
// other edges.
type goConfig struct {
	SystemPrompt *string `json:"systemPrompt"`
	Tools        *[]struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"tools"`
}

// GoConfig returns the case's system prompt and tool specs, for an edge
// whose API takes Go values; ok as for GoPolicy.
func (c EdgeCase) GoConfig() (system string, tools []core.ToolSpec, ok bool) {
	var g goConfig
	if !strictDecode(c.Config, &g) {
		return "", nil, false
	}
	if g.Tools != nil {
		for _, t := range *g.Tools {
			tools = append(tools, core.ToolSpec{Name: t.Name, Description: t.Description})
		}
	}
	return deref(g.SystemPrompt), tools, true
}

// strictDecode decodes the JSON object r into v, refusing what a Go
// struct field cannot hold, an unknown field and a key whose case
// differs from the field's.
func strictDecode(r json.RawMessage, v any) bool {
	r = bytes.TrimSpace(r)
	if len(r) == 0 || r[0] != '{' {
		return false
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(r, &keys) != nil {
		return false
	}
	b, _ := json.Marshal(v)
	var names map[string]any
	_ = json.Unmarshal(b, &names)
	for k := range keys {
		if _, ok := names[k]; !ok {
			return false
		}
	}
	dec := json.NewDecoder(bytes.NewReader(r))
	dec.DisallowUnknownFields()
	return dec.Decode(v) == nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
