package core_test

import (
	"testing"
	"time"

	"github.com/agentrt/agentrt/core"
)

// Ensure Hold waits while another turn holds the session and returns
// once that turn ends, and that a cancel wakes both a held turn's
// Context and a waiting turn's Hold.
func TestTurn_Hold(t *testing.T) {
	rt, err := core.New(core.Config{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := rt.Begin(core.Background(), core.RunRequest{SessionID: "s", Input: "a", RunID: "first"})
	if err != nil {
		t.Fatal(err)
	}
	first.Hold()
	a := first.Next()
	if a.Kind != core.ActionModel {
		t.Fatalf("first turn: action %d, want a model call", a.Kind)
	}
	second, err := rt.Begin(core.Background(), core.RunRequest{SessionID: "s", Input: "b", RunID: "second"})
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan core.Action, 1)
	go func() {
		second.Hold()
		held <- second.Next()
	}()
	select {
	case a := <-held:
		t.Fatalf("the second turn held a busy session: action %d", a.Kind)
	case <-time.After(20 * time.Millisecond):
	}
	if a := first.FeedModel(&core.ModelReply{Content: "ok"}, nil); a.Kind != core.ActionDone {
		t.Fatalf("first turn: action %d, want done", a.Kind)
	}
	select {
	case a := <-held:
		if a.Kind != core.ActionModel {
			t.Fatalf("second turn: action %d, want a model call", a.Kind)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second turn still waits after the first ended")
	}

	// Cancel: the held turn's Context is done, and its next action fails.
	ctx := second.Context()
	if ctx.Err() != nil {
		t.Fatalf("context done before the cancel: %v", ctx.Err())
	}
	if !rt.CancelRun("second") {
		t.Fatal("CancelRun: false")
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the context is not done after the cancel")
	}
	if a := second.Next(); a.Kind != core.ActionFailed || a.Err.Code != core.CodeCancelled {
		t.Fatalf("after the cancel: %+v, want failed with code cancelled", a)
	}
}

// Ensure a turn waiting in Hold returns when its run is cancelled, and
// Next then fails it without the session.
func TestTurn_Hold_Cancelled(t *testing.T) {
	rt, err := core.New(core.Config{})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := rt.Begin(core.Background(), core.RunRequest{SessionID: "s", Input: "a"})
	first.Hold()
	first.Next()
	second, err := rt.Begin(core.Background(), core.RunRequest{SessionID: "s", Input: "b", RunID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan core.Action, 1)
	go func() {
		second.Hold()
		done <- second.Next()
	}()
	rt.CancelRun("w")
	select {
	case a := <-done:
		if a.Kind != core.ActionFailed || a.Err.Code != core.CodeCancelled {
			t.Fatalf("got %+v, want failed with code cancelled", a)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Hold still waits after the cancel")
	}
	if a := first.FeedModel(&core.ModelReply{Content: "ok"}, nil); a.Kind != core.ActionDone {
		t.Fatalf("first turn: action %d, want done", a.Kind)
	}
}
