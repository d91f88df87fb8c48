package wire

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// Ensure a config frame reads back as it was written.
func TestDecodeConfig_OK(t *testing.T) {
	want := &Config{
		SystemPrompt: "Be brief.",
		Echo:         true,
		Tools:        []core.ToolSpec{{Name: "clock", Description: "the time", Parameters: `{"type":"object"}`}, {Name: "x"}},
		Limits:       core.Limits{MaxSessions: 3, MaxMessagesPerSession: 4, MaxSessionBytes: 5, MaxSeedMessages: 6, MaxSeedBytes: 7, MaxMessageBytes: 8, MaxTotalBytes: 9},
	}
	got, err := DecodeConfig(AppendConfig(nil, want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	zero, err := DecodeConfig(AppendConfig(nil, &Config{}))
	if err != nil || !reflect.DeepEqual(zero, &Config{}) {
		t.Fatalf("zero config: got %+v, %v", zero, err)
	}
}

// Ensure every field of core.Limits crosses a config frame: each one
// alone, and all at once. Walking the struct by reflection, a limit added
// to core.Limits and not to the frame fails here.
func TestDecodeConfig_EveryLimit(t *testing.T) {
	typ := reflect.TypeOf(core.Limits{})
	if typ.NumField() != len(configLimits) {
		t.Fatalf("core.Limits has %d fields, the config frame carries %d limits", typ.NumField(), len(configLimits))
	}
	var all core.Limits
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		var one core.Limits
		reflect.ValueOf(&one).Elem().Field(i).SetInt(int64(1000 + i))
		big := int64(1<<40 + i) // past 32 bits for the byte counts
		if f.Type.Kind() == reflect.Int {
			big = int64(1<<30 + i)
		}
		reflect.ValueOf(&all).Elem().Field(i).SetInt(big)
		got, err := DecodeConfig(AppendConfig(nil, &Config{Limits: one}))
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if got.Limits != one {
			t.Errorf("%s alone: got %+v, want %+v", f.Name, got.Limits, one)
		}
		if !strings.EqualFold(configLimits[i].name, f.Name) {
			t.Errorf("limit %d of the frame is %s, field %d of core.Limits is %s", i, configLimits[i].name, i, f.Name)
		}
	}
	got, err := DecodeConfig(AppendConfig(nil, &Config{Limits: all}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Limits != all {
		t.Fatalf("every limit: got %+v, want %+v", got.Limits, all)
	}
}

// Ensure a version 1 frame, which carried six limits and no count, still
// decodes, with MaxTotalBytes the default.
func TestDecodeConfig_Version1(t *testing.T) {
	v1 := []byte("ARC\x01\x01s\x01\x01\x01t\x00\x00\x03\x04\x05\x06\x07\x08")
	got, err := DecodeConfig(v1)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{SystemPrompt: "s", Echo: true, Tools: []core.ToolSpec{{Name: "t"}},
		Limits: core.Limits{MaxSessions: 3, MaxMessagesPerSession: 4, MaxSessionBytes: 5, MaxSeedMessages: 6, MaxSeedBytes: 7, MaxMessageBytes: 8}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if _, err := DecodeConfig(append(v1, 9)); core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Fatalf("a version 1 frame with a seventh limit: got %v, want invalid_argument", err)
	}
}

// Ensure a frame carries the limits up to the last one set, so that a
// module that knows fewer limits reads a frame that sets none of the
// others; and that a frame with more limits than this package knows is
// refused, naming the count, rather than read without them.
func TestDecodeConfig_LimitCount(t *testing.T) {
	zero := AppendConfig(nil, &Config{})
	if want := "ARC\x02\x00\x00\x00\x00"; string(zero) != want {
		t.Fatalf("zero config: got %q, want %q", zero, want)
	}
	first := AppendConfig(nil, &Config{Limits: core.Limits{MaxSessions: 5}})
	if want := "ARC\x02\x00\x00\x00\x01\x05"; string(first) != want {
		t.Fatalf("one limit: got %q, want %q", first, want)
	}
	short, err := DecodeConfig([]byte("ARC\x02\x00\x00\x00\x02\x05\x06"))
	if err != nil || short.Limits != (core.Limits{MaxSessions: 5, MaxMessagesPerSession: 6}) {
		t.Fatalf("two limits: got %+v, %v", short, err)
	}
	more := []byte("ARC\x02\x00\x00\x00\x08\x01\x01\x01\x01\x01\x01\x01\x01")
	_, err = DecodeConfig(more)
	if core.ErrorCode(err) != core.CodeInvalidArgument || !strings.Contains(err.Error(), "8 limits") {
		t.Fatalf("eight limits: got %v, want invalid_argument naming the count", err)
	}
}

// Ensure malformed frames are refused with invalid_argument.
func TestDecodeConfig_Errors(t *testing.T) {
	good := AppendConfig(nil, &Config{SystemPrompt: "s", Tools: []core.ToolSpec{{Name: "t"}}})
	tests := []struct {
		name  string
		frame []byte
	}{
		{"ErrEmpty", nil},
		{"ErrMagic", append([]byte("ARW"), good[3:]...)},
		{"ErrVersion", append([]byte("ARC\x03"), good[4:]...)},
		{"ErrVersion0", append([]byte("ARC\x00"), good[4:]...)},
		{"ErrLimitCount", []byte("ARC\x02\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")},
		{"ErrLimitMissing", []byte("ARC\x02\x00\x00\x00\x03\x01\x01")},
		{"ErrTotalBytes", []byte("ARC\x02\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff\x7f")},
		{"ErrTruncated", good[:len(good)-1]},
		{"ErrTrailing", append(append([]byte(nil), good...), 0)},
		{"ErrModel", append([]byte("ARC\x01\x00\x07"), good[6:]...)},
		{"ErrUTF8", []byte("ARC\x01\x01\xff\x00\x00\x00\x00\x00\x00\x00\x00")},
		{"ErrToolCount", []byte("ARC\x01\x00\x00\x7f\x00\x00\x00\x00\x00\x00")},
		{"ErrLimit", []byte("ARC\x01\x00\x00\x00\xff\xff\xff\xff\x7f\x00\x00\x00\x00\x00")},
		{"ErrVarint", []byte("ARC\x01\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeConfig(tt.frame)
			if core.ErrorCode(err) != core.CodeInvalidArgument {
				t.Fatalf("got %v, want code %s", err, core.CodeInvalidArgument)
			}
		})
	}
}

// FuzzDecodeConfig checks that DecodeConfig never panics and that what it accepts
// writes back to the same bytes.
func FuzzDecodeConfig(f *testing.F) {
	f.Add(AppendConfig(nil, &Config{}))
	f.Add(AppendConfig(nil, &Config{SystemPrompt: "s", Echo: true, Tools: []core.ToolSpec{{Name: "t", Description: "d"}},
		Limits: core.Limits{MaxSessions: 1 << 20}}))
	f.Add(AppendConfig(nil, &Config{Limits: core.Limits{MaxTotalBytes: 64 << 10}}))
	f.Add([]byte("ARC\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeConfig(b)
		if err != nil {
			if core.ErrorCode(err) != core.CodeInvalidArgument {
				t.Fatalf("code %s", core.ErrorCode(err))
			}
			return
		}
		if again := AppendConfig(nil, c); string(again) != string(b) {
			// Non-minimal varints read fine but write shorter; the
			// decoded value must still survive a second round.
			c2, err := DecodeConfig(again)
			if err != nil || !reflect.DeepEqual(c, c2) {
				t.Fatalf("round trip: %+v, %v", c2, err)
			}
		}
	})
}
