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

// Ensure an op input and a value frame cross unchanged, an argument not
// given and a null alike, and malformed ones are refused with
// invalid_argument.
func TestOp_RoundTrip(t *testing.T) {
	args := []Value{Text("sé"), {}, Bool(true), Bool(false), Text("")}
	name, got, err := DecodeOp(AppendOp(nil, "tag", args...))
	if err != nil || name != "tag" || !sameValues(got, args) {
		t.Fatalf("DecodeOp = %q, %+v, %v", name, got, err)
	}
	if name, got, err := DecodeOp(AppendOp(nil, "listSessions")); err != nil || name != "listSessions" || len(got) != 0 {
		t.Fatalf("DecodeOp of no arguments = %q, %+v, %v", name, got, err)
	}
	for _, v := range args {
		got, err := DecodeValue(AppendValue(nil, v))
		if err != nil || !sameValues([]Value{got}, []Value{v}) {
			t.Fatalf("DecodeValue(%+v) = %+v, %v", v, got, err)
		}
	}
	for name, b := range map[string][]byte{
		"ErrEmpty":     nil,
		"ErrTruncated": AppendOp(nil, "tag", Text("s"))[:4],
		"ErrTrailing":  append(AppendOp(nil, "tag", Text("s")), 0),
		"ErrKind":      append(AppendOp(nil, "tag"), 1, 4),
		"ErrCount":     append(AppendString(nil, "tag"), 0x7f),
		"ErrUTF8":      AppendOp(nil, "tag", Text("\xff")),
	} {
		var e *core.Error
		if _, _, err := DecodeOp(b); !errors.As(err, &e) || e.Code != core.CodeInvalidArgument {
			t.Errorf("%s: DecodeOp = %v; want invalid_argument", name, err)
		}
	}
	if _, err := DecodeValue(append(appendHeader(nil, KindValue), 3, 1)); err == nil {
		t.Error("DecodeValue of a truncated text: no error")
	}
}

func sameValues(a, b []Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Kind != b[i].Kind || a[i].Text != b[i].Text {
			return false
		}
	}
	return true
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
}
