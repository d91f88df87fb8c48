package core

import "testing"

// A session that grows by commits, its head asked after each, copies its
// chain about as seldom as its messages: the chain takes the messages'
// room when it grows, where an eighth more than their count copied it
// every few turns.
func TestStore_CommitChainGrowsWithTheMessages(t *testing.T) {
	s := newStore(DefaultLimits)
	ss := s.create("a")
	var head string
	var msgsCopies, chainCopies int
	for i := 0; i < 1000; i++ {
		msgsCap, chainCap := cap(ss.msgs), cap(ss.chain)
		c := Commit{SessionID: "a", RunID: "glue:1", Input: "in", MirrorGen: ss.gen, MirrorLen: len(ss.msgs), Reply: "ok"}
		if _, stale, e := s.commit(&c); e != nil || stale {
			t.Fatalf("commit %d: %v, stale %v", i, e, stale)
		}
		head = ss.lastLink().text()
		if cap(ss.msgs) != msgsCap {
			msgsCopies++
		}
		if cap(ss.chain) != chainCap {
			chainCopies++
		}
	}
	if chainCopies > msgsCopies+1 {
		t.Fatalf("the chain grew %d times, the messages %d", chainCopies, msgsCopies)
	}
	if head != Head(ss.msgs) {
		t.Fatal("the head is not the messages'")
	}
}
