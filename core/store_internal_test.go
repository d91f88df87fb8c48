package core

import "testing"

// The store's shortcuts to the last session and lane never find one that
// was dropped or renamed.
func TestStore_LastSessionAndSpareLane(t *testing.T) {
	s := newStore(DefaultLimits)
	a := s.create("a")
	if s.lookup("a") != a || s.lookup("b") != nil || s.lookup("a") != a {
		t.Fatal("lookup missed a live session")
	}
	s.remove("a")
	if s.last != nil || s.lookup("a") != nil {
		t.Fatal("lookup found a removed session")
	}
	a2 := s.create("a")
	if s.lookup("a") != a2 {
		t.Fatal("lookup missed the new session")
	}
	ln, _, _ := s.join("a", false, 0)
	s.leave(ln, false)
	if s.spare != ln {
		t.Fatal("the left lane is not the spare")
	}
	lb, _, _ := s.join("b", false, 0)
	if lb != ln || lb.id != "b" || s.lanes["a"] != nil || s.lanes["b"] != lb {
		t.Fatal("another session's join did not take the spare over")
	}
	if _, busy, _ := s.join("b", true, 0); !busy {
		t.Fatal("a held lane is not busy")
	}
	s.leave(lb, false)
	if again, _, _ := s.join("b", false, 0); again != lb {
		t.Fatal("the same session's join did not find its lane")
	}
}

// A run blocked for its lane gets it when the holder leaves, and one
// whose context stops gives up; a turn's tryHold never blocks.
func TestStore_HoldLane(t *testing.T) {
	s := newStore(DefaultLimits)
	a, _, _ := s.join("s", false, 0)
	if !s.tryHold(a) {
		t.Fatal("a free lane was not held")
	}
	b, _, _ := s.join("s", false, 0)
	if s.tryHold(b) {
		t.Fatal("a held lane was held twice")
	}
	var stopped, live runContext
	stopped.init(Background())
	live.init(Background())
	gaveUp := make(chan bool)
	go func() { gaveUp <- !s.hold(b, &stopped) }()
	stopped.stop(errCancelled)
	if !<-gaveUp {
		t.Fatal("hold did not give up when its context stopped")
	}
	if len(stopped.hooks) != 0 {
		t.Fatalf("the stopped context keeps %d hooks", len(stopped.hooks))
	}
	got := make(chan bool)
	go func() { got <- s.hold(b, &live) }()
	s.leave(a, true)
	if !<-got {
		t.Fatal("hold did not get the lane its holder left")
	}
	if s.tryHold(b) {
		t.Fatal("the lane is not held after hold")
	}
	s.leave(b, true)
	if s.spare != b || b.held || b.wake != nil || b.refs != 0 {
		t.Fatalf("the left lane is not a clean spare: %+v", *b)
	}
}
