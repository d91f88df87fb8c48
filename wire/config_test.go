package wire

import (
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// Ensure a config frame reads back as it was written.
func TestDecodeConfig_OK(t *testing.T) {
	want := &Config{
		SystemPrompt: "Be brief.",
		Echo:         true,
		Tools:        []core.ToolSpec{{Name: "clock", Description: "the time", Parameters: `{"type":"object"}`}, {Name: "x"}},
		Limits:       core.Limits{MaxSessions: 3, MaxMessagesPerSession: 4, MaxSessionBytes: 5, MaxSeedMessages: 6, MaxSeedBytes: 7, MaxMessageBytes: 8},
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

// Ensure malformed frames are refused with invalid_argument.
func TestDecodeConfig_Errors(t *testing.T) {
	good := AppendConfig(nil, &Config{SystemPrompt: "s", Tools: []core.ToolSpec{{Name: "t"}}})
	tests := []struct {
		name  string
		frame []byte
	}{
		{"ErrEmpty", nil},
		{"ErrMagic", append([]byte("ARW"), good[3:]...)},
		{"ErrVersion", append([]byte("ARC\x02"), good[4:]...)},
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
