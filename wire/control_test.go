package wire

import (
	"errors"
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
)

// Ensure a check report crosses the frame unchanged, NoIndex included.
func TestCheck_RoundTrip(t *testing.T) {
	for name, c := range map[string]core.HistoryCheck{
		"OK": {OK: true},
		"Problems": {Problems: []core.Problem{
			{Code: core.CodeInvalidHistory, Index: 2, Message: "orphan é", Repair: core.RepairOrphanToolResult},
			{Code: core.CodeLimitExceeded, Index: core.NoIndex, Message: "too big"},
		}},
		"Awaiting": {Problems: []core.Problem{{Code: core.CodeInvalidHistory, Index: 1, Message: "m", Repair: core.RepairMissingToolResult}},
			Awaiting: []core.AwaitingCall{{Index: 1, ToolCallID: "c1", Name: "clock"}, {Index: 1, ToolCallID: "c2", Name: "x"}}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeCheck(AppendCheck(nil, &c))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, c) {
				t.Fatalf("got %+v, want %+v", *got, c)
			}
		})
	}
}

// Ensure a revert input crosses unchanged and malformed ones are refused
// with invalid_argument.
func TestRevert_RoundTrip(t *testing.T) {
	s, r, err := DecodeRevert(AppendRevert(nil, "sé", "run-1"))
	if err != nil || s != "sé" || r != "run-1" {
		t.Fatalf("DecodeRevert = %q, %q, %v", s, r, err)
	}
	s, r, err = DecodeRevert(AppendRevert(nil, "", ""))
	if err != nil || s != "" || r != "" {
		t.Fatalf("DecodeRevert of empty ids = %q, %q, %v", s, r, err)
	}
}

// Ensure malformed control frames are refused with invalid_argument and
// never panic.
func TestControl_BadFrames(t *testing.T) {
	good := AppendCheck(nil, &core.HistoryCheck{Problems: []core.Problem{{Code: "x", Index: 1, Message: "m"}},
		Awaiting: []core.AwaitingCall{{Index: 0, ToolCallID: "c", Name: "n"}}})
	checks := map[string][]byte{
		"ErrEmpty":     nil,
		"ErrWrongKind": AppendSessions(nil, nil),
		"ErrTruncated": good[:len(good)-1],
		"ErrTrailing":  append(append([]byte(nil), good...), 0),
		"ErrOKByte":    append(appendHeader(nil, KindCheck), 2, 0, 0),
		"ErrCount":     append(appendHeader(nil, KindCheck), 0, 0x7f, 0),
	}
	for name, b := range checks {
		t.Run("Check"+name, func(t *testing.T) {
			var e *core.Error
			if _, err := DecodeCheck(b); !errors.As(err, &e) || e.Code != core.CodeInvalidArgument {
				t.Fatalf("DecodeCheck = %v, want invalid_argument", err)
			}
		})
	}
	good = AppendRevert(nil, "s", "r")
	reverts := map[string][]byte{
		"ErrEmpty":     nil,
		"ErrTruncated": good[:len(good)-1],
		"ErrTrailing":  append(append([]byte(nil), good...), 'x'),
		"ErrUTF8":      AppendRevert(nil, "s", "\xff"),
		"ErrLength":    {0xff, 0xff, 0xff, 0xff, 0x0f},
	}
	for name, b := range reverts {
		t.Run("Revert"+name, func(t *testing.T) {
			var e *core.Error
			if _, _, err := DecodeRevert(b); !errors.As(err, &e) || e.Code != core.CodeInvalidArgument {
				t.Fatalf("DecodeRevert = %v, want invalid_argument", err)
			}
		})
	}
}
