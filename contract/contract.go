// Package contract loads the host-message corpus in testdata/contract/
// and checks one edge's outcome against it. Every edge's contract test
// (core/hostmsg, httpapi, the worker on workerd, the module under wazero
// on each of its history paths) runs the same cases through this package;
// js/test/contract.test.mjs reads the same files for the glue.
//
//	for _, c := range contract.MustLoad(t) {
//		t.Run(c.Name, func(t *testing.T) {
//			session, skipped, err := runOnMyEdge(c.History)
//			c.Check(t, session, skipped, err)
//		})
//	}
//
// A case holds a history in one of the host shapes and either the
// messages the session holds after seeding it (system messages left out)
// or the refusal: code, index and message. It may also hold the problems
// checkHistory lists, and what a seed with policy.repair does: the
// repairs it reports and the model's request, the fix in place. See
// testdata/contract/README.md.
//
// It is a package for tests, public so that a host's own edge (a Go
// program that serves agentrt's API its own way) can run the same tables,
// as net/http/httptest serves net/http's users. The API is unstable until
// version 1.0.
package contract

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// Case is one corpus case.
type Case struct {
	// Name is "file/name", unique in the corpus.
	Name string
	// History is the host's history as JSON text: pass it to the edge as
	// it is (HTTP), parse it in the host's engine (JavaScript), or parse
	// it with hostjson.
	History json.RawMessage
	// Session is what the session holds after seeding, in the canonical
	// shape Canonical returns; nil when the case is a refusal.
	Session []map[string]any
	// SkippedSystem is the number of system messages seeding skips.
	SkippedSystem int
	// Error is the refusal, or nil.
	Error *Refusal
	// Problems is what checkHistory lists, when the case says; see
	// CheckProblems for what is checked when it does not.
	Problems []Problem
	// Repaired is what a seed with policy.repair does, or nil when the
	// case does not say.
	Repaired *Repaired
	// Limits are the seed limits the case runs under (zero fields meaning
	// the defaults): every seed and check of the case is made by a
	// runtime created with them. See HasLimits.
	Limits Limits
}

// Limits are a case's seed limits, named as in the module's config.
type Limits struct {
	MaxSeedMessages int   `json:"maxSeedMessages,omitempty"`
	MaxSeedBytes    int64 `json:"maxSeedBytes,omitempty"`
	MaxMessageBytes int64 `json:"maxMessageBytes,omitempty"`
}

// HasLimits reports whether the case sets a limit, and so needs a
// runtime of its own.
func (c *Case) HasLimits() bool { return c.Limits != Limits{} }

// Core returns the case's limits as core.Limits.
func (l Limits) Core() core.Limits {
	return core.Limits{MaxSeedMessages: l.MaxSeedMessages, MaxSeedBytes: l.MaxSeedBytes, MaxMessageBytes: l.MaxMessageBytes}
}

// Config returns the case's limits as the "limits" object of a module
// config (only the fields set).
func (l Limits) Config() map[string]any {
	out := map[string]any{}
	if l.MaxSeedMessages != 0 {
		out["maxSeedMessages"] = l.MaxSeedMessages
	}
	if l.MaxSeedBytes != 0 {
		out["maxSeedBytes"] = l.MaxSeedBytes
	}
	if l.MaxMessageBytes != 0 {
		out["maxMessageBytes"] = l.MaxMessageBytes
	}
	return out
}

// Problem is one problem checkHistory lists; Repair is "" for null.
type Problem struct {
	Code    string `json:"code"`
	Index   int    `json:"index"`
	Message string `json:"message"`
	Repair  string `json:"repair"`
}

// RepairRecord is one repair a seed reports.
type RepairRecord struct {
	Kind       string `json:"kind"`
	Index      int    `json:"index"`
	ToolCallID string `json:"toolCallId,omitempty"`
}

// Repaired is what a seed of the case's history with policy.repair does
// (with the input "next"): the repairs it reports and the messages of the
// model's first request (system prompt left out), the repaired history
// then the input; the session holds the same before the reply. Or its
// refusal, when Error is set.
type Repaired struct {
	Repairs []RepairRecord   `json:"repairs"`
	Request []map[string]any `json:"request"`
	Error   *Refusal         `json:"error"`
	// Healed is the host's history with the repairs applied, in its own
	// shape: what the result's seed.repaired must be (as JSON values;
	// absent when nothing was repaired). See CheckHealed.
	Healed json.RawMessage `json:"healed"`
}

// Refusal is an expected error.
type Refusal struct {
	Code    string `json:"code"`
	Index   int    `json:"index"`
	Message string `json:"message"`
}

type rawCase struct {
	Name          string           `json:"name"`
	History       json.RawMessage  `json:"history"`
	Session       []map[string]any `json:"session"`
	SkippedSystem int              `json:"skippedSystem"`
	Error         *Refusal         `json:"error"`
	Problems      []Problem        `json:"problems"`
	Repaired      *Repaired        `json:"repaired"`
	Limits        Limits           `json:"limits"`
}

// Dir returns the corpus directory, testdata/contract/ at the
// repository's root.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "contract")
}

// Load reads every *.json file of the corpus, in name order.
func Load() ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(Dir(), "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Case
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var raw []rawCase
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, &os.PathError{Op: "parse", Path: f, Err: err}
		}
		base := strings.TrimSuffix(filepath.Base(f), ".json")
		for _, r := range raw {
			c := Case{Name: base + "/" + r.Name, History: r.History, SkippedSystem: r.SkippedSystem, Error: r.Error,
				Problems: r.Problems, Repaired: r.Repaired, Limits: r.Limits}
			if c.Repaired != nil {
				for i, m := range c.Repaired.Request {
					c.Repaired.Request[i] = CanonicalMap(m)
				}
			}
			if r.Error == nil {
				c.Session = make([]map[string]any, len(r.Session))
				for i, m := range r.Session {
					c.Session[i] = CanonicalMap(m)
				}
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// MustLoad is Load that fails t at once on an error or an empty corpus.
func MustLoad(t testing.TB) []Case {
	t.Helper()
	cs, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) == 0 {
		t.Fatal("the contract corpus is empty")
	}
	return cs
}

// Canonical returns a session message in the corpus's shape: role and
// content always; id and tool_call_id when not empty; tool_calls when
// there are any, each {id, name, arguments}.
func Canonical(m *core.Message) map[string]any {
	out := map[string]any{"role": string(m.Role), "content": m.Content}
	if m.ID != "" {
		out["id"] = m.ID
	}
	if m.ToolCallID != "" {
		out["tool_call_id"] = m.ToolCallID
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]any, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			calls[i] = map[string]any{"id": c.ID, "name": c.Name, "arguments": c.Arguments}
		}
		out["tool_calls"] = calls
	}
	return out
}

// CanonicalMap is Canonical for a message an edge returned as decoded
// JSON or exported JavaScript (snake_case or camelCase fields).
func CanonicalMap(m map[string]any) map[string]any {
	str := func(k, alt string) string {
		s, _ := m[k].(string)
		if s == "" && alt != "" {
			s, _ = m[alt].(string)
		}
		return s
	}
	msg := core.Message{Role: core.Role(str("role", "")), Content: str("content", ""),
		ID: str("id", ""), ToolCallID: str("tool_call_id", "toolCallId")}
	calls, _ := m["tool_calls"].([]any)
	if calls == nil {
		calls, _ = m["toolCalls"].([]any)
	}
	for _, c := range calls {
		cm, _ := c.(map[string]any)
		id, _ := cm["id"].(string)
		name, _ := cm["name"].(string)
		args, _ := cm["arguments"].(string)
		msg.ToolCalls = append(msg.ToolCalls, core.ToolCall{ID: id, Name: name, Arguments: args})
	}
	return Canonical(&msg)
}

// CanonicalMessages is Canonical for each message.
func CanonicalMessages(ms []core.Message) []map[string]any {
	out := make([]map[string]any, len(ms))
	for i := range ms {
		out[i] = Canonical(&ms[i])
	}
	return out
}

// Check fails t unless the outcome matches the case: err is nil and
// session (canonical messages the session holds, the new turn left out)
// and skippedSystem are as expected, or err is the expected refusal. A
// nil err with an expected refusal, or the reverse, fails too.
func (c *Case) Check(t testing.TB, session []map[string]any, skippedSystem int, err *Refusal) {
	t.Helper()
	if c.Error != nil {
		if err == nil {
			t.Fatalf("accepted; want %s", show(c.Error))
		}
		if *err != *c.Error {
			t.Fatalf("refused with %s\nwant %s", show(err), show(c.Error))
		}
		return
	}
	if err != nil {
		t.Fatalf("refused with %s; want the session %s", show(err), show(c.Session))
	}
	if got, want := show(session), show(c.Session); got != want {
		t.Fatalf("session\n got %s\nwant %s", got, want)
	}
	if skippedSystem != c.SkippedSystem {
		t.Fatalf("skippedSystem %d, want %d", skippedSystem, c.SkippedSystem)
	}
}

// CheckProblems fails t unless ok and problems are what checkHistory
// must list for the case: its Problems when it has them; else, for a
// refused case, a first problem that is the refusal; else none, and ok.
func (c *Case) CheckProblems(t testing.TB, ok bool, problems []Problem) {
	t.Helper()
	if problems == nil {
		problems = []Problem{}
	}
	switch {
	case c.Problems != nil:
		if got, want := show(problems), show(c.Problems); ok || got != want {
			t.Fatalf("checkHistory: ok %v, problems\n got %s\nwant %s", ok, got, want)
		}
	case c.Error != nil:
		if ok || len(problems) == 0 {
			t.Fatalf("checkHistory: ok %v, problems %s; want the refusal %s first", ok, show(problems), show(c.Error))
		}
		if p := problems[0]; p.Code != c.Error.Code || p.Index != c.Error.Index || p.Message != c.Error.Message {
			t.Fatalf("checkHistory: first problem %s; want the refusal %s", show(p), show(c.Error))
		}
	default:
		if !ok || len(problems) != 0 {
			t.Fatalf("checkHistory: ok %v, problems %s; want ok and none", ok, show(problems))
		}
	}
}

// CheckRepaired fails t unless a seed with policy.repair went as
// c.Repaired says: err is its refusal, or repairs are the repairs
// reported, request the messages of the model's first request and session
// the messages the session holds before the reply (all canonical). It
// does nothing when the case has no Repaired.
func (c *Case) CheckRepaired(t testing.TB, request, session []map[string]any, repairs []RepairRecord, err *Refusal) {
	t.Helper()
	r := c.Repaired
	if r == nil {
		return
	}
	if r.Error != nil || err != nil {
		if err == nil || r.Error == nil || *err != *r.Error {
			t.Fatalf("with repair: refused with %s; want %s", show(err), show(r.Error))
		}
		return
	}
	if repairs == nil {
		repairs = []RepairRecord{}
	}
	want := r.Repairs
	if want == nil {
		want = []RepairRecord{}
	}
	if got, w := show(repairs), show(want); got != w {
		t.Fatalf("with repair: repairs\n got %s\nwant %s", got, w)
	}
	if got, w := show(request), show(r.Request); got != w {
		t.Fatalf("with repair: the model's request\n got %s\nwant %s", got, w)
	}
	if got, w := show(session), show(r.Request); got != w {
		t.Fatalf("with repair: the session (before the reply)\n got %s\nwant %s", got, w)
	}
}

// CheckHealed fails t unless healed, the JSON text of the seed's
// repaired history an edge gave (nil for none), is the case's
// Repaired.Healed, compared as JSON values (fields in any order). It does
// nothing when the case has no Repaired or a refused one.
func (c *Case) CheckHealed(t testing.TB, healed []byte) {
	t.Helper()
	r := c.Repaired
	if r == nil || r.Error != nil {
		return
	}
	if len(r.Healed) == 0 || len(healed) == 0 {
		if len(r.Healed) != len(healed) {
			t.Fatalf("with repair: seed.repaired %s, want %s", healed, r.Healed)
		}
		return
	}
	var got, want any
	if err := json.Unmarshal(healed, &got); err != nil {
		t.Fatalf("with repair: seed.repaired is not JSON: %v: %s", err, healed)
	}
	if err := json.Unmarshal(r.Healed, &want); err != nil {
		t.Fatal(err)
	}
	if show(got) != show(want) {
		t.Fatalf("with repair: seed.repaired\n got %s\nwant %s", show(got), show(want))
	}
}

// ProblemsOf returns a core HistoryCheck's problems in the corpus's shape.
func ProblemsOf(c core.HistoryCheck) []Problem {
	out := make([]Problem, len(c.Problems))
	for i, p := range c.Problems {
		out[i] = Problem{Code: string(p.Code), Index: p.Index, Message: p.Message, Repair: string(p.Repair)}
	}
	return out
}

// RepairsOf returns a seed report's repairs in the corpus's shape.
func RepairsOf(rs []core.Repair) []RepairRecord {
	out := make([]RepairRecord, len(rs))
	for i, r := range rs {
		out[i] = RepairRecord{Kind: string(r.Kind), Index: r.Index, ToolCallID: r.ToolCallID}
	}
	return out
}

// RefusalOf returns err's code, index and message, or nil for nil.
func RefusalOf(err error) *Refusal {
	if err == nil {
		return nil
	}
	e := core.AsError(err)
	return &Refusal{Code: string(e.Code), Index: e.Index, Message: e.Message}
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
