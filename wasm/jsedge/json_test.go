package jsedge

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentrt/agentrt/core"
)

func TestAppendJSONString_ParsesBack(t *testing.T) {
	// Ensure every string the edge writes as JSON parses back to itself.
	var all strings.Builder
	for c := 0; c < 0x80; c++ {
		all.WriteByte(byte(c))
	}
	tests := []struct {
		name string
		in   string
	}{
		{"empty", ""},
		{"plain", "hello, world"},
		{"quotes and backslashes", `say "hi" \ \\ "`},
		{"controls", "a\nb\rc\td\x00e\x1f\x7f"},
		{"every ASCII byte", all.String()},
		{"unicode", "café 😀 \u2028 \u2029 世界"},
		{"huge", strings.Repeat("ab\"\n", 100000)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := appendJSONString([]byte("x"), tc.in)
			if b[0] != 'x' {
				t.Fatalf("prefix lost: %q", b[:1])
			}
			var got string
			if err := json.Unmarshal(b[1:], &got); err != nil {
				t.Fatalf("not JSON: %v: %q", err, b[1:min(len(b), 80)])
			}
			if got != tc.in {
				t.Errorf("got %q, want %q", got[:min(len(got), 80)], tc.in[:min(len(tc.in), 80)])
			}
		})
	}
}

func TestAppendJSONInt(t *testing.T) {
	for _, n := range []int{0, 1, -1, 9, 10, 123456789, -987654321, 1<<53 - 1} {
		var got int
		if err := json.Unmarshal(appendJSONInt(nil, n), &got); err != nil || got != n {
			t.Errorf("appendJSONInt(%d) parsed as %d, %v", n, got, err)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("hello")
	f.Add("\x00\"\\\n")
	f.Fuzz(func(t *testing.T, s string) {
		var got string
		if err := json.Unmarshal(appendJSONString(nil, s), &got); err != nil {
			t.Fatalf("not JSON for %q: %v", s, err)
		}
		if utf8.ValidString(s) && got != s {
			t.Errorf("got %q, want %q", got, s)
		}
	})
}

func TestAppendResultJSON_Shape(t *testing.T) {
	// Ensure the JSON text of a Result has the fields and order of the
	// field-by-field conversion, with null reply and appended.
	r := &core.Result{
		RunID: "run-\"1\"", SessionID: "s\n1", Status: "completed",
		Seed:         core.SeedReport{Mode: core.SeedCold, Seeded: 4, SkippedSystem: 1},
		MessageCount: 7,
		ModelCalls:   []core.ModelCall{{Step: 1, MessageCount: 5}, {Step: 2, MessageCount: 7}},
	}
	b := appendResultJSON(nil, r)
	const want = `{"runId":"run-\"1\"","sessionId":"s\n1","status":"completed","reply":null,"appended":null,` +
		`"seed":{"mode":"cold","seeded":4,"skippedSystem":1},"messageCount":7,` +
		`"modelCalls":[{"step":1,"messageCount":5},{"step":2,"messageCount":7}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if v["sessionId"] != "s\n1" || v["runId"] != `run-"1"` {
		t.Errorf("ids parsed as %v, %v", v["runId"], v["sessionId"])
	}
	if got := string(appendResultJSON(nil, &core.Result{})); !strings.Contains(got, `"modelCalls":[]}`) {
		t.Errorf("zero Result: %s", got)
	}
	if inspected(r) {
		t.Error("inspected = true without messages")
	}
	r.ModelCalls[1].Messages = []core.Message{}
	if !inspected(r) {
		t.Error("inspected = false with messages")
	}
}
