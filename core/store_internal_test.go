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
	ln, _ := s.join("a", false)
	s.leave(ln)
	if s.spare != ln {
		t.Fatal("the left lane is not the spare")
	}
	lb, _ := s.join("b", false)
	if lb != ln || lb.id != "b" || s.lanes["a"] != nil || s.lanes["b"] != lb {
		t.Fatal("another session's join did not take the spare over")
	}
	if _, busy := s.join("b", true); !busy {
		t.Fatal("a held lane is not busy")
	}
	s.leave(lb)
	if again, _ := s.join("b", false); again != lb {
		t.Fatal("the same session's join did not find its lane")
	}
}
