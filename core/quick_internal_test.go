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
