package wire_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

const testHead = "h1-g5foW_vpddqFPIhHk0erIg"

// A begin frame carries IfHead and WantHead; one without them is byte
// for byte the frame it was before heads.
func TestBegin_Heads(t *testing.T) {
	b := wire.Begin{SessionID: "s", Input: "hi", RunID: "r", IfHead: testHead, WantHead: true,
		Approvals: []core.Approval{{ToolCallID: "c", Approved: true}}}
	got, err := wire.DecodeBegin(wire.AppendBegin(nil, &b), 0)
	if err != nil || got.IfHead != testHead || !got.WantHead || len(got.Approvals) != 1 {
		t.Fatalf("got %+v, %v", got, err)
	}
	for _, b := range []wire.Begin{{SessionID: "s", WantHead: true}, {SessionID: "s", IfHead: testHead}} {
		got, err := wire.DecodeBegin(wire.AppendBegin(nil, &b), 0)
		if err != nil || got.IfHead != b.IfHead || got.WantHead != b.WantHead {
			t.Fatalf("%+v: got %+v, %v", b, got, err)
		}
	}
	plain := wire.AppendBegin(nil, &wire.Begin{SessionID: "s", Input: "hi"})
	if want := "ARW\x01\x01\x01s\x02hi\x00\x00" + "\x00\x00\x00\x00\x00\x00\x00\x00" + "\x00\x00"; string(plain) != want {
		t.Fatalf("plain begin %q", plain)
	}
	// The ifHead flag with an empty head is refused.
	f := wire.AppendBegin(nil, &wire.Begin{SessionID: "s", IfHead: "x"})
	f = append(f[:len(f)-2], 0)
	if _, err := wire.DecodeBegin(f, 0); core.ErrorCode(err) != core.CodeInvalidArgument {
		t.Fatalf("an empty ifHead: %v", err)
	}
}

// A history_diverged failure carries its head and missing messages (none
// and some are told apart); the frame of any other failure is as before.
func TestFailedAction_Heads(t *testing.T) {
	missing := []core.Message{{Role: core.RoleUser, Content: "two", ID: "m2"}, {Role: core.RoleAssistant, Content: "ok"}}
	for _, m := range [][]core.Message{nil, {}, missing} {
		e := core.NewError(core.CodeHistoryDiverged, "stale")
		e.Head, e.Missing = testHead, m
		a := wire.Action{Handle: 1, Kind: wire.ActFailed, Err: e, Events: []core.Event{{Type: core.EventRunFailed, Seq: 2, Err: e}}}
		got, err := wire.DecodeAction(wire.AppendAction(nil, &a))
		if err != nil || !reflect.DeepEqual(got.Err, e) || !reflect.DeepEqual(got.Events[0].Err, e) {
			t.Fatalf("missing %v: got %+v, %v", m, got, err)
		}
	}
	other := core.NewError(core.CodeTimeout, "late")
	other.Head = testHead
	f := wire.AppendAction(nil, &wire.Action{Handle: 1, Kind: wire.ActFailed, Err: other})
	if bytes.Contains(f, []byte(testHead)) {
		t.Fatal("a failure other than history_diverged wrote a head")
	}
}

// The frame that ends a turn carries the head when asked, and the result
// decoded from it returns it; without it the frame is as before.
func TestDoneAction_Head(t *testing.T) {
	res := &core.Result{RunID: "r", SessionID: "s", Status: "completed", MessageCount: 2,
		Appended: []core.Message{{Role: core.RoleUser, Content: "q"}, {Role: core.RoleAssistant, Content: "a"}}}
	plain := wire.AppendAction(nil, &wire.Action{Handle: 1, Kind: wire.ActDone, Result: res})
	withHead := wire.AppendAction(nil, &wire.Action{Handle: 1, Kind: wire.ActDone, Result: res, Head: testHead})
	if !bytes.Contains(withHead, append([]byte{byte(len(testHead))}, testHead...)) || len(withHead) != len(plain)+1+len(testHead) {
		t.Fatalf("with head %q, plain %q", withHead, plain)
	}
	got, err := wire.DecodeAction(withHead)
	if err != nil || got.Kind != wire.ActDone || got.Head != testHead || got.Result.Head() != testHead || got.Result.Reply.Content != "a" {
		t.Fatalf("got %+v, %v", got, err)
	}
	got, err = wire.DecodeAction(plain)
	if err != nil || got.Kind != wire.ActDone || got.Head != "" || got.Result.Head() != "" {
		t.Fatalf("plain: got %+v, %v", got, err)
	}
}

// A commit and a committed frame carry no head (the glue computes the
// head after a quick turn itself): a frame with anything after its last
// field is refused.
func TestCommit_NoHeads(t *testing.T) {
	c := core.Commit{SessionID: "s", RunID: "glue:1", Input: "x", MirrorGen: 3, MirrorLen: 200, Reply: "ok"}
	plain := wire.AppendCommit(nil, &c)
	if want := "ARW\x01\x05\x01s\x06glue:1\x01x\x03\xc8\x01\x02ok"; string(plain) != want {
		t.Fatalf("plain commit %q", plain)
	}
	var got core.Commit
	if err := wire.DecodeCommitInto(&got, plain); err != nil || got != c {
		t.Fatalf("got %+v, %v", got, err)
	}
	withHead := wire.AppendString(plain[:len(plain):len(plain)], testHead)
	for _, bad := range [][]byte{append(plain[:len(plain):len(plain)], 0), withHead, plain[:len(plain)-1]} {
		if err := wire.DecodeCommitInto(&got, bad); core.ErrorCode(err) != core.CodeInvalidArgument {
			t.Fatalf("%q: %v", bad, err)
		}
	}
	d := wire.Committed{Count: 4, Dropped: []string{"old"}}
	plain = wire.AppendCommitted(nil, &d)
	if want := "ARW\x01\x15\x00\x04\x03\x03old"; string(plain) != want {
		t.Fatalf("plain committed %q", plain)
	}
	if g, err := wire.DecodeCommitted(plain); err != nil || !reflect.DeepEqual(*g, d) {
		t.Fatalf("committed: %+v, %v", g, err)
	}
	withHead = wire.AppendString(plain[:len(plain):len(plain)], testHead)
	for _, bad := range [][]byte{append(plain[:len(plain):len(plain)], 0), withHead, plain[:len(plain)-1]} {
		if _, err := wire.DecodeCommitted(bad); core.ErrorCode(err) != core.CodeInvalidArgument {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}
