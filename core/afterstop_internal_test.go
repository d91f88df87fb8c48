package core

import "testing"

// AfterStop calls f once a run's context stops, at once when it stopped
// before, never when stop came first, and never for a context that is
// never done.
func TestAfterStop(t *testing.T) {
	var c runContext
	c.init(Background())
	calls := 0
	AfterStop(&c, func() { calls++ })
	cancelled := AfterStop(&c, func() { t.Error("a cancelled hook was called") })
	if !cancelled() {
		t.Fatal("stop before the context stopped did not report the cancel")
	}
	if calls != 0 {
		t.Fatal("the hook was called before the context stopped")
	}
	c.stop(errCancelled)
	if calls != 1 || len(c.hooks) != 0 {
		t.Fatalf("after the stop: %d calls, %d hooks kept", calls, len(c.hooks))
	}
	late := AfterStop(&c, func() { calls++ })
	if calls != 2 || late() {
		t.Fatalf("a hook on a stopped context: %d calls, its stop reported a cancel", calls)
	}
	c.stop(errCancelled)
	if calls != 2 {
		t.Fatal("a second stop called the hooks again")
	}
	if never := AfterStop(Background(), func() { t.Error("Background was done") }); !never() {
		t.Fatal("stop for a context never done did not report the cancel")
	}
}

// A run's context stops with its parent, a run's context too, and lets
// go of the parent when it stops first.
func TestRunContext_Parent(t *testing.T) {
	var parent, child, other runContext
	parent.init(Background())
	child.init(&parent)
	other.init(&parent)
	other.stop(nil)
	if len(parent.hooks) != 1 {
		t.Fatalf("the parent keeps %d hooks, want the live child's alone", len(parent.hooks))
	}
	parent.stop(errCancelled)
	if child.Err() == nil || child.stopCause() != errCancelled {
		t.Fatal("the child did not stop with its parent")
	}
	if other.stopCause() != nil {
		t.Fatal("the child that ended first was cancelled by its parent")
	}
	var late runContext
	late.init(&parent)
	if late.Err() == nil {
		t.Fatal("a context under a stopped parent goes on")
	}
}
