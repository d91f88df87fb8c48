package hostmsg_test

import (
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

func parse(t *testing.T, text string) hostjson.Value {
	t.Helper()
	v, err := hostjson.Parse([]byte(text))
	if err != nil {
		t.Fatalf("parsing %s: %v", text, err)
	}
	return v
}

// The edge table through the readers every edge calls: each case gives
// its code here as at the edges.
func TestPolicy_EdgeTable(t *testing.T) {
	for _, c := range contract.MustLoadEdges(t, "policy") {
		_, err := hostmsg.Policy(parse(t, string(c.Policy)))
		c.Check(t, err)
	}
	for _, c := range contract.MustLoadEdges(t, "limits") {
		_, err := hostmsg.Limits(parse(t, string(c.Limits)))
		c.Check(t, err)
	}
}

// Each refusal has one text: the reader's for a key or a type, core's
// Validate's for a bound (a negative or too large integer is passed on
// to it, whatever its size).
func TestPolicy_Texts(t *testing.T) {
	for _, c := range []struct{ policy, want string }{
		{`[]`, "policy must be an object, not an Array"},
		{`"x"`, "policy must be an object"},
		{`{"timeoutMS": 1}`, `unknown policy field "timeoutMS"`},
		{`{"REPAIR": true}`, `unknown policy field "REPAIR"`},
		{`{"maxSteps": 1, "maxSteps": 2}`, `duplicate policy field "maxSteps"`},
		{`{"maxSteps": 1.5}`, "policy.maxSteps must be a non-negative integer"},
		{`{"maxSteps": "1"}`, "policy.maxSteps must be a non-negative integer"},
		{`{"maxSteps": -1}`, "policy.maxSteps must not be negative"},
		{`{"maxSteps": -1e300}`, "policy.maxSteps must not be negative"},
		{`{"maxSteps": 2147483648}`, "policy.maxSteps is too large (at most 2147483647)"},
		{`{"maxContextBytes": 1e300}`, "policy.maxContextBytes is too large (at most 9007199254740991)"},
		{`{"timeoutMs": 31536000000}`, "policy.timeoutMs is too large (at most 2147483647)"},
		{`{"seedMode": 1}`, "policy.seedMode must be a string"},
		{`{"seedMode": "Reconcile"}`, `policy.seedMode must be "if-empty" or "reconcile"`},
		{`{"repair": "yes"}`, "policy.repair must be a boolean"},
		{`{"allowedTools": "a"}`, "policy.allowedTools must be an array of strings"},
		{`{"allowedTools": ["a", 1]}`, "policy.allowedTools[1] must be a string"},
		{`{"maxContextTokens": 4, "contextChunkTokens": 5}`, "policy.contextChunkTokens must be from 0 to policy.maxContextTokens"},
	} {
		_, err := hostmsg.Policy(parse(t, c.policy))
		if e := core.AsError(err); e == nil || e.Code != core.CodeInvalidArgument || e.Message != c.want {
			t.Errorf("Policy(%s) = %v, want invalid_argument %q", c.policy, err, c.want)
		}
	}
	for _, c := range []struct{ limits, want string }{
		{`{"maxSessions": -1}`, "limits must not be negative"},
		{`{"maxSeedBytes": 1e20}`, "limits are too large: counts at most 2147483647, bytes at most 9007199254740991"},
		{`{"maxsessions": 1}`, `unknown limits field "maxsessions"`},
		{`{"maxSessions": true}`, "limits.maxSessions must be a non-negative integer"},
	} {
		_, err := hostmsg.Limits(parse(t, c.limits))
		if e := core.AsError(err); e == nil || e.Code != core.CodeInvalidArgument || e.Message != c.want {
			t.Errorf("Limits(%s) = %v, want invalid_argument %q", c.limits, err, c.want)
		}
	}
}

func TestPolicy_Values(t *testing.T) {
	p, err := hostmsg.Policy(parse(t, `{"seedMode": "reconcile", "onBusy": "reject", "toolErrors": "report",
		"maxSteps": 3, "maxContextMessages": 4, "maxContextBytes": 5e3, "timeoutMs": 6.0,
		"maxContextTokens": 70, "contextChunkTokens": 7, "allowedTools": [], "repair": true, "extra": 1}`), "extra")
	if err != nil {
		t.Fatal(err)
	}
	want := core.Policy{SeedMode: core.SeedReconcile, OnBusy: core.BusyReject, ToolErrors: core.ToolErrorsReport,
		MaxSteps: 3, MaxContextMessages: 4, MaxContextBytes: 5000, TimeoutMs: 6,
		MaxContextTokens: 70, ContextChunkTokens: 7, Repair: true}
	if p.AllowedTools == nil || len(p.AllowedTools) != 0 {
		t.Errorf("AllowedTools = %#v, want empty, not nil", p.AllowedTools)
	}
	p.AllowedTools = nil
	if p.SeedMode != want.SeedMode || p.OnBusy != want.OnBusy || p.ToolErrors != want.ToolErrors ||
		p.MaxSteps != want.MaxSteps || p.MaxContextMessages != want.MaxContextMessages ||
		p.MaxContextBytes != want.MaxContextBytes || p.TimeoutMs != want.TimeoutMs ||
		p.MaxContextTokens != want.MaxContextTokens || p.ContextChunkTokens != want.ContextChunkTokens || !p.Repair {
		t.Errorf("Policy = %+v, want %+v", p, want)
	}
	for _, absent := range []string{`null`, `{}`, `{"maxSteps": null, "allowedTools": null}`} {
		if p, err := hostmsg.Policy(parse(t, absent)); err != nil || p.AllowedTools != nil || p.MaxSteps != 0 {
			t.Errorf("Policy(%s) = %+v, %v, want the zero Policy", absent, p, err)
		}
	}
	l, err := hostmsg.Limits(parse(t, `{"maxSessions": 2, "maxTotalBytes": 1048576}`))
	if err != nil || l.MaxSessions != 2 || l.MaxTotalBytes != 1<<20 {
		t.Errorf("Limits = %+v, %v", l, err)
	}
}
