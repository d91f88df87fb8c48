package wire_test

import (
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/contract"
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// A policy sent as its JSON text is read by the reader every edge
// shares: the edge table gives its codes through a begin frame.
func TestBegin_PolicyJSON_EdgeTable(t *testing.T) {
	for _, c := range contract.MustLoadEdges(t, "policy") {
		b := wire.Begin{SessionID: "s", Input: "hi", PolicyJSON: string(c.Policy)}
		_, err := wire.DecodeBegin(wire.AppendBegin(nil, &b), 0)
		c.Check(t, err)
	}
}

func TestBegin_PolicyJSON(t *testing.T) {
	text := ` { "seedMode" : "reconcile", "maxSteps": 3e0, "maxContextBytes": 1.0E3, "timeoutMs": 10,
		"allowedTools": ["a", "\u00e9\ud83d\ude00", "\\\"\/\b\f\n\r\t"], "repair": true, "onBusy": null } `
	b := wire.Begin{SessionID: "s", Input: "hi", RunID: "r", Inspect: true, PolicyJSON: text, MirrorGen: 2, MirrorLen: 3,
		WithHistory: true, History: []core.SeedMessage{{Role: core.RoleUser, Content: "q"}}}
	got, err := wire.DecodeBegin(wire.AppendBegin(nil, &b), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := core.Policy{SeedMode: core.SeedReconcile, MaxSteps: 3, MaxContextBytes: 1000, TimeoutMs: 10,
		AllowedTools: []string{"a", "é😀", "\\\"/\b\f\n\r\t"}, Repair: true}
	if !reflect.DeepEqual(got.Policy, want) {
		t.Errorf("Policy = %#v, want %#v", got.Policy, want)
	}
	if got.PolicyJSON != text || got.RunID != "r" || !got.Inspect || got.MirrorGen != 2 || got.MirrorLen != 3 || len(got.History) != 1 {
		t.Errorf("DecodeBegin = %+v", got)
	}
	for _, c := range []struct{ text, want string }{
		{`{"maxSteps": 1`, "policy is not valid JSON"},
		{`{"maxSteps": 1} x`, "policy is not valid JSON"},
		{`{"maxSteps": 01}`, "policy is not valid JSON"},
		{`{"maxSteps": .5}`, "policy is not valid JSON"},
		{`{"repair": truefalse}`, "policy is not valid JSON"},
		{`{"seedMode": "\x"}`, "policy is not valid JSON"},
		{`{maxSteps: 1}`, "policy is not valid JSON"},
		{`{"maxSteps": 1, "maxSteps": 1}`, `duplicate policy field "maxSteps"`},
		{`{"maxsteps": 1}`, `unknown policy field "maxsteps"`},
		{`{"maxSteps": 0.5e1}`, ``},
		{`{"maxSteps": 1.25e1}`, "policy.maxSteps must be a non-negative integer"},
		{`{"maxSteps": -12345678901234567890}`, "policy.maxSteps must not be negative"},
		{`{"maxContextBytes": 9007199254740992}`, "policy.maxContextBytes is too large (at most 9007199254740991)"},
		{`{"maxContextBytes": 12345678901234567890}`, "policy.maxContextBytes is too large (at most 9007199254740991)"},
		{`[1]`, "policy must be an object, not an Array"},
	} {
		b := wire.Begin{SessionID: "s", Input: "hi", PolicyJSON: c.text}
		_, err := wire.DecodeBegin(wire.AppendBegin(nil, &b), 0)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want no error", c.text, err)
			}
			continue
		}
		if e, ok := err.(*core.Error); !ok || e.Code != core.CodeInvalidArgument || e.Message != c.want {
			t.Errorf("%s: got %v, want invalid_argument %q", c.text, err, c.want)
		}
	}
}

// A JSON policy comes without the binary form's repair and tokens flags,
// and further flag bits this version does not know are refused.
func TestBegin_PolicyJSONFlags(t *testing.T) {
	b := wire.Begin{SessionID: "s", Input: "hi", PolicyJSON: `{}`}
	f := wire.AppendBegin(nil, &b)
	at := len(wire.Magic) + 2 + 1 + len("s") + 1 + len("hi") + 1 // the flags byte, after the header and three strings
	if f[at] != 0x80 || f[at+1] != 1 {
		t.Fatalf("frame %x: no beginMore flag and beginPolicyJSON at %d", f, at)
	}
	for _, c := range []struct {
		flags, further byte
	}{{0x80 | 0x20, 1}, {0x80 | 0x40, 1}, {0x80, 3}, {0x80, 2}} {
		g := append([]byte(nil), f...)
		g[at], g[at+1] = c.flags, c.further
		if _, err := wire.DecodeBegin(g, 0); err == nil || err.(*core.Error).Code != core.CodeInvalidArgument {
			t.Errorf("flags %#x, further %#x: got %v, want invalid_argument", c.flags, c.further, err)
		}
	}
}
