package httpapi_test

import (
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// Ensure the body's keys, and the policy's, are matched exactly, as the
// JavaScript edges read them: encoding/json alone would honour HISTORY
// and POLICY:{REPAIR:true}, and let "HISTORY": null drop a history given
// as "history". A key of another case, an unknown key and a repeated key
// are refused with invalid_argument naming the key, and change nothing.
func TestHandler_Runs_BodyKeysExact(t *testing.T) {
	h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{})})
	const hist = `[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]`
	broken := `[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","name":"f"}]}]`
	for _, tt := range []struct {
		name, body, key string
	}{
		{"UpperHistory", `{"input":"hi","HISTORY":` + hist + `}`, `"HISTORY"`},
		{"UpperPolicyAndRepair", `{"input":"hi","history":` + broken + `,"POLICY":{"REPAIR":true}}`, `"POLICY"`},
		{"UpperRepair", `{"input":"hi","history":` + broken + `,"policy":{"REPAIR":true}}`, `"REPAIR"`},
		{"HistoryThenNullUpper", `{"input":"hi","history":` + hist + `,"HISTORY":null}`, `"HISTORY"`},
		{"InputTwice", `{"input":"hi","input":"other"}`, `"input"`},
		{"CamelInput", `{"Input":"hi"}`, `"Input"`},
		{"UnknownKey", `{"input":"hi","sessionId":"s"}`, `"sessionId"`},
		{"PolicyKeyTwice", `{"input":"hi","policy":{"repair":true,"repair":false}}`, `"repair"`},
		{"PolicyUnknownKey", `{"input":"hi","policy":{"timeout":5}}`, `"timeout"`},
		{"EscapedKey", `{"input":"hi","hist\u006fry":` + hist + `,"history":null}`, `"history"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, h, "POST", "/v1/sessions/strict/runs", tt.body)
			e := decode[errorBody](t, r.body)
			if r.status != 400 || e.Error.Code != "invalid_argument" || !strings.Contains(e.Error.Message, tt.key) {
				t.Fatalf("status %d, body %s; want 400 invalid_argument naming %s", r.status, r.body, tt.key)
			}
			if s := do(t, h, "GET", "/v1/sessions/strict", ""); s.status != 404 {
				t.Fatalf("a refused body left a session: %d %s", s.status, s.body)
			}
		})
	}
	// The exact keys are still read: the history seeds, the policy holds.
	r := do(t, h, "POST", "/v1/sessions/strict/runs", `{"input":"hi","history":`+hist+`,"policy":{"seedMode":"reconcile"},"runId":"r1","inspect":false}`)
	if res := decode[result](t, r.body); r.status != 200 || res.Seed.Seeded != 2 {
		t.Fatalf("status %d, body %s", r.status, r.body)
	}
}

// Ensure DecodeRunBody refuses the same keys, for a host that decodes a
// body itself.
func TestDecodeRunBody_KeysExact(t *testing.T) {
	for _, body := range []string{
		`{"input":"hi","History":[]}`,
		`{"input":"hi","policy":{"SeedMode":"reconcile"}}`,
		`{"input":"hi","runId":"a","runId":"b"}`,
	} {
		if _, err := httpapi.DecodeRunBody([]byte(body)); err == nil || err.Code != core.CodeInvalidArgument {
			t.Errorf("DecodeRunBody(%s) = %v, want invalid_argument", body, err)
		}
	}
	b, err := httpapi.DecodeRunBody([]byte(` {"input":"hi","history":null,"policy":{"repair":true}} `))
	if err != nil || b.WithHistory || !b.Policy.Repair {
		t.Fatalf("DecodeRunBody = %+v, %v", b, err)
	}
}

// Ensure the history check's body is read as strictly.
func TestHandler_HistoryCheck_BodyKeysExact(t *testing.T) {
	h := httpapi.New(httpapi.Config{Runtime: mustRuntime(t, core.Config{})})
	for _, body := range []string{
		`{"History":[]}`,
		`{"history":[],"history":[]}`,
		`{"history":[],"repair":true}`,
	} {
		r := do(t, h, "POST", "/v1/history/check", body)
		if e := decode[errorBody](t, r.body); r.status != 400 || e.Error.Code != "invalid_argument" {
			t.Errorf("%s: status %d, body %s; want 400 invalid_argument", body, r.status, r.body)
		}
	}
	if r := do(t, h, "POST", "/v1/history/check", `{"history":[{"role":"user","content":"a"}]}`); r.status != 200 {
		t.Errorf("a valid check: status %d, body %s", r.status, r.body)
	}
}
