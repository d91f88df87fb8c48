package core

import "testing"

// A commit with IfHead checks the session's chain as it stands and
// extends it by the two messages it appends: it computes no head from
// the session's messages. A chain whose last link was changed here shows
// it: the changed link's head is the one the commit takes, and the head
// it sets is two links on from it.
func TestStore_CommitExtendsTheChain(t *testing.T) {
	s := newStore(DefaultLimits)
	ss := s.create("a")
	c := Commit{SessionID: "a", RunID: "glue:1", Input: "x", MirrorGen: ss.gen, Reply: "ok", IfHead: headSeed.text()}
	if n, stale, e := s.commit(&c); e != nil || stale || n != 2 {
		t.Fatalf("first commit: %v, stale %v, count %d", e, stale, n)
	}
	if len(ss.chain) != 2 || c.Head != Head(ss.msgs) {
		t.Fatalf("chain of %d links, head %q", len(ss.chain), c.Head)
	}
	fake := link{1, 2}
	ss.chain[1] = fake
	c = Commit{SessionID: "a", RunID: "glue:2", Input: "y", MirrorGen: ss.gen, MirrorLen: 2, Reply: "ok", IfHead: Head(ss.msgs)}
	if _, stale, e := s.commit(&c); e != nil || !stale {
		t.Fatalf("the messages' own head: %v, stale %v (the commit read the messages, not the chain)", e, stale)
	}
	c.IfHead = fake.text()
	if n, stale, e := s.commit(&c); e != nil || stale || n != 4 {
		t.Fatalf("the chain's head: %v, stale %v, count %d", e, stale, n)
	}
	want := next(next(fake, &ss.msgs[2]), &ss.msgs[3]).text()
	if c.Head != want || len(ss.chain) != 4 || ss.chain[1] != fake {
		t.Fatalf("head %q, want %q two links on from the chain's (%d links)", c.Head, want, len(ss.chain))
	}
}

// A session that grows by commits with IfHead copies its chain about as
// seldom as its messages: the chain takes the messages' room when it
// grows, where an eighth more than their count copied it every few turns.
func TestStore_CommitChainGrowsWithTheMessages(t *testing.T) {
	s := newStore(DefaultLimits)
	ss := s.create("a")
	head := headSeed.text()
	var msgsCopies, chainCopies int
	for i := 0; i < 1000; i++ {
		msgsCap, chainCap := cap(ss.msgs), cap(ss.chain)
		c := Commit{SessionID: "a", RunID: "glue:1", Input: "in", MirrorGen: ss.gen, MirrorLen: len(ss.msgs), Reply: "ok", IfHead: head}
		if _, stale, e := s.commit(&c); e != nil || stale {
			t.Fatalf("commit %d: %v, stale %v", i, e, stale)
		}
		head = c.Head
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
