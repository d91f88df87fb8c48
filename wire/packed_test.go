package wire

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// sample is a history with every feature of the format: system messages,
// tool calls with and without content, ids, an unknown-looking but valid
// set of roles, and non-ASCII text.
func historySample() []core.SeedMessage {
	return []core.SeedMessage{
		{Role: core.RoleSystem, Content: "be brief"},
		{ID: "m1", Role: core.RoleUser, Content: "héllo, 世界 👋"},
		{ID: "m2", Role: core.RoleAssistant, ContentMissing: true, ToolCalls: []core.ToolCall{
			{ID: "c1", Name: "lookup", Arguments: `{"q":"ünï"}`},
			{ID: "c2", Name: "clock", Arguments: "{}"},
		}},
		{Role: core.RoleTool, ToolCallID: "c2", Content: "12:00"},
		{ID: "m4", Role: core.RoleTool, ToolCallID: "c1", Content: "found \u0000 nul"},
		{Role: core.RoleAssistant, Content: "done", ToolCalls: []core.ToolCall{}},
		{Role: core.RoleSystem, Content: ""},
		{Role: core.RoleUser, Content: ""},
	}
}

func TestDecodeHistoryBytes_RoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		history []core.SeedMessage
	}{
		{name: "OK_empty", history: []core.SeedMessage{}},
		{name: "OK_sample", history: historySample()},
		{name: "OK_unknownRole", history: []core.SeedMessage{{Role: "wizard", Content: "x"}}},
		{name: "OK_emptyRole", history: []core.SeedMessage{{Role: "", Content: "x"}}},
		{name: "OK_long", history: []core.SeedMessage{{Role: core.RoleUser, Content: strings.Repeat("ab", 70000)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Ensure decode(encode(h)) == h, field for field.
			got, err := DecodeHistoryBytes(EncodeHistory(tc.history), 0)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, tc.history) {
				t.Fatalf("round trip:\ngot  %#v\nwant %#v", got, tc.history)
			}
		})
	}
}

func TestEncodeHistory_Layout(t *testing.T) {
	// Ensure the bytes are those of docs/packed-history.md, so that other
	// encoders (js/glue.js) can be checked against this one.
	got := EncodeHistory([]core.SeedMessage{
		{Role: core.RoleUser, Content: "hi", ID: "a"},
		{Role: "x", ContentMissing: true, ToolCallID: "t"},
		{Role: core.RoleAssistant, Content: "", ToolCalls: []core.ToolCall{{ID: "c", Name: "n", Arguments: "{}"}}},
	})
	want := []byte{'A', 'R', 'H', 1, 3,
		0, FlagContent | FlagID, 2, 'h', 'i', 1, 'a',
		255, FlagToolCallID, 1, 'x', 1, 't',
		1, FlagContent | FlagToolCalls, 0, 1, 1, 'c', 1, 'n', 2, '{', '}',
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
}

func TestDecodeHistoryBytes_Continues(t *testing.T) {
	// Ensure FlagContinues round-trips and makes core name the host's
	// message: the third packed message is the second host message.
	h := []core.SeedMessage{
		{Role: core.RoleAssistant, ID: "m1", ToolCalls: []core.ToolCall{{ID: "c", Name: "f", Arguments: "{}"}}},
		{Role: core.RoleTool, ID: "m1", ToolCallID: "c", Continues: true},
		{Role: "robot", Content: "x"},
	}
	buf := EncodeHistory(h)
	const toolFlags = 20 // header 5, the assistant message 14, the role byte 1
	if buf[toolFlags]&FlagContinues == 0 {
		t.Fatalf("the tool message's flags lack FlagContinues: % x", buf)
	}
	got, err := DecodeHistoryBytes(buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !got[1].Continues || got[0].Continues || got[2].Continues {
		t.Fatalf("Continues got %v %v %v, want false true false", got[0].Continues, got[1].Continues, got[2].Continues)
	}
	err = core.ValidateHistory(got, core.Limits{})
	if e, ok := err.(*core.Error); !ok || e.Index != 1 {
		t.Fatalf("got %v, want invalid_history at index 1", err)
	}
}

func TestDecodeHistoryBytes_Errors(t *testing.T) {
	header := []byte{'A', 'R', 'H', 1}
	with := func(b ...byte) []byte { return append(append([]byte(nil), header...), b...) }
	tests := []struct {
		name  string
		buf   []byte
		max   int
		code  core.Code
		index int
	}{
		{name: "ErrNil", buf: nil, code: core.CodeInvalidHistory, index: core.NoIndex},
		{name: "ErrShort", buf: []byte("AR"), code: core.CodeInvalidHistory, index: core.NoIndex},
		{name: "ErrMagic", buf: []byte("XRH\x01\x00"), code: core.CodeInvalidHistory, index: core.NoIndex},
		{name: "ErrVersion", buf: []byte("ARH\x02\x00"), code: core.CodeInvalidHistory, index: core.NoIndex},
		{name: "ErrNoCount", buf: with(), code: core.CodeInvalidHistory, index: core.NoIndex},
		{name: "ErrOverlongVarint", buf: with(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), code: core.CodeInvalidHistory, index: core.NoIndex},
		{name: "ErrVarintOverflow", buf: with(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02), code: core.CodeInvalidHistory, index: core.NoIndex},
		{name: "ErrCountOverLimit", buf: with(3, 0, 1, 0, 0, 1, 0, 0, 1, 0), max: 2, code: core.CodeLimitExceeded, index: 2},
		{name: "ErrCountHuge", buf: with(0xff, 0xff, 0xff, 0xff, 0x0f), max: 1 << 40, code: core.CodeInvalidHistory, index: core.NoIndex},
		{name: "ErrCountPastEnd", buf: with(2, 0, 1, 0), code: core.CodeInvalidHistory, index: core.NoIndex},
		{name: "ErrTruncatedMessage", buf: with(1, 0, 1, 5, 'a'), code: core.CodeInvalidHistory, index: 0},
		{name: "ErrReservedFlags", buf: with(1, 0, 0x21, 0), code: core.CodeInvalidHistory, index: 0},
		{name: "ErrRoleByte", buf: with(1, 7, 1, 0), code: core.CodeInvalidHistory, index: 0},
		{name: "ErrBadUTF8", buf: with(2, 0, 1, 1, 'a', 0, 1, 2, 0xc3, 0x28), code: core.CodeInvalidHistory, index: 1},
		{name: "ErrBadUTF8Role", buf: with(1, 255, 0, 1, 0xff), code: core.CodeInvalidHistory, index: 0},
		{name: "ErrTrailing", buf: with(1, 0, 1, 0, 0), code: core.CodeInvalidHistory, index: core.NoIndex},
		{name: "ErrToolCallsPastEnd", buf: with(1, 1, FlagToolCalls, 5, 0, 0, 0), code: core.CodeInvalidHistory, index: 0},
		{name: "ErrToolCallTruncated", buf: with(1, 1, FlagToolCalls, 1, 1, 'c', 1, 'n', 9), code: core.CodeInvalidHistory, index: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Ensure the buffer is refused with a typed error and its index.
			got, err := DecodeHistoryBytes(tc.buf, tc.max)
			if err == nil {
				t.Fatalf("got %#v, want an error", got)
			}
			e, ok := err.(*core.Error)
			if !ok {
				t.Fatalf("got %T %v, want *core.Error", err, err)
			}
			if e.Code != tc.code || e.Index != tc.index {
				t.Fatalf("got code %q index %d (%v), want %q index %d", e.Code, e.Index, e, tc.code, tc.index)
			}
		})
	}
}

func TestDecodeHistoryBytes_SharesOneCopy(t *testing.T) {
	// Ensure the decoded strings do not alias the caller's buffer.
	buf := EncodeHistory([]core.SeedMessage{{Role: core.RoleUser, Content: "abc"}})
	h, err := DecodeHistoryBytes(buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = 'z'
	}
	if h[0].Content != "abc" {
		t.Fatalf("content changed with the buffer: %q", h[0].Content)
	}
}

// TestDecodeHistoryBytes_SameSessionAsArray seeds two runtimes with one history, once
// as decoded from the packed form and once as given, and compares the
// sessions, results and model inputs.
func TestDecodeHistoryBytes_SameSessionAsArray(t *testing.T) {
	history := historySample()[:6] // a valid history: linkage complete
	history = append(history, core.SeedMessage{Role: core.RoleSystem, Content: "late system"},
		core.SeedMessage{ID: "u9", Role: core.RoleUser, Content: "ça va? ✓"},
		core.SeedMessage{Role: core.RoleAssistant, Content: "oui"})
	decoded, err := DecodeHistoryBytes(EncodeHistory(history), 0)
	if err != nil {
		t.Fatal(err)
	}
	run := func(h []core.SeedMessage) (*core.Result, core.Session) {
		rt, err := core.New(core.Config{})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		r, err := rt.Start(ctx, core.RunRequest{SessionID: "s", Input: "next", History: h, WithHistory: true, RunID: "r", Inspect: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := rt.Session("s")
		return res, s
	}
	resA, sessA := run(history)
	resP, sessP := run(decoded)
	if !reflect.DeepEqual(sessA, sessP) {
		t.Fatalf("sessions differ:\narray  %#v\npacked %#v", sessA, sessP)
	}
	if !reflect.DeepEqual(resA, resP) {
		t.Fatalf("results differ:\narray  %#v\npacked %#v", resA, resP)
	}
	if resA.Seed.Mode != core.SeedCold || resA.Seed.Seeded != 7 || resA.Seed.SkippedSystem != 2 {
		t.Fatalf("seed = %+v, want cold, 7 seeded, 2 system skipped", resA.Seed)
	}
}

func FuzzDecodeHistoryBytes(f *testing.F) {
	f.Add(EncodeHistory(historySample()))
	f.Add(EncodeHistory(nil))
	f.Add([]byte("ARH\x01\x01\xff\x00\x03abc"))
	f.Add([]byte("ARH\x01\x02\x00\x01\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeHistoryBytes(b, 1000)
		if err != nil {
			// Refused input is a typed error, never anything else.
			e, ok := err.(*core.Error)
			if !ok {
				t.Fatalf("error %T %v is not *core.Error", err, err)
			}
			if e.Code != core.CodeInvalidHistory && e.Code != core.CodeLimitExceeded {
				t.Fatalf("unexpected code %q", e.Code)
			}
			if e.Index >= len(b) && e.Code == core.CodeInvalidHistory {
				t.Fatalf("index %d past a %d-byte buffer", e.Index, len(b))
			}
			return
		}
		again, err := DecodeHistoryBytes(EncodeHistory(h), 1000)
		if err != nil {
			t.Fatalf("re-decoding the encoding of a decoded history: %v", err)
		}
		if !reflect.DeepEqual(again, h) {
			t.Fatalf("decode(encode(x)) != x:\n%#v\n%#v", again, h)
		}
	})
}

// history10k is 10,000 messages of about 250 bytes, with a tool call
// every 50 messages.
func history10k() []core.SeedMessage {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 6)[:240]
	h := make([]core.SeedMessage, 0, 10000)
	for len(h) < 10000 {
		switch {
		case len(h)%50 == 48:
			h = append(h, core.SeedMessage{Role: core.RoleAssistant, ContentMissing: true,
				ToolCalls: []core.ToolCall{{ID: "c" + itoa(len(h)), Name: "search", Arguments: `{"q":"fox"}`}}})
			h = append(h, core.SeedMessage{Role: core.RoleTool, ToolCallID: "c" + itoa(len(h)-1), Content: text})
		case len(h)%2 == 0:
			h = append(h, core.SeedMessage{ID: "u" + itoa(len(h)), Role: core.RoleUser, Content: text})
		default:
			h = append(h, core.SeedMessage{ID: "a" + itoa(len(h)), Role: core.RoleAssistant, Content: text})
		}
	}
	return h
}

func BenchmarkDecodeHistoryBytes_10k(b *testing.B) {
	buf := EncodeHistory(history10k())
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeHistoryBytes(buf, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeHistory_10k(b *testing.B) {
	h := history10k()
	b.ReportAllocs()
	for b.Loop() {
		_ = EncodeHistory(h)
	}
}

func BenchmarkDecodeHistoryBytesAndValidate_10k(b *testing.B) {
	buf := EncodeHistory(history10k())
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		h, err := DecodeHistoryBytes(buf, 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := core.ValidateHistory(h, core.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
