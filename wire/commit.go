package wire

import "github.com/agentrt/agentrt/core"

// AppendCommit appends a commit frame: a turn the host has run already
// on its mirror of the session, its input and the model's reply, to be
// stored as one (see core.Runtime.Commit).
func AppendCommit(dst []byte, c *core.Commit) []byte {
	dst = appendHeader(dst, KindCommit)
	dst = AppendString(dst, c.SessionID)
	dst = AppendString(dst, c.RunID)
	dst = AppendString(dst, c.Input)
	dst = AppendUvarint(dst, c.MirrorGen)
	dst = AppendUvarint(dst, uint64(c.MirrorLen))
	return AppendString(dst, c.Reply)
}

// DecodeCommitInto decodes a commit frame into c. A malformed frame is
// refused with invalid_argument.
func DecodeCommitInto(c *core.Commit, b []byte) error {
	r := newReader(b, KindCommit)
	c.SessionID = r.str("sessionId")
	c.RunID = r.str("runId")
	c.Input = r.str("input")
	c.MirrorGen = r.uvarint()
	c.MirrorLen = r.int("mirror length", maxInt32)
	c.Reply = r.str("reply")
	return r.end()
}

// Committed is a committed frame: the outcome of a commit.
type Committed struct {
	// Count is the session's message count after the commit; 0 when
	// Stale (the session was not the host's mirror: nothing was stored).
	Count int
	Stale bool
	// Dropped and DroppedAll are as in Action.
	Dropped    []string
	DroppedAll bool
}

// AppendCommitted appends a committed frame.
func AppendCommitted(dst []byte, c *Committed) []byte {
	dst = appendHeader(dst, KindCommitted)
	dst = appendBool(dst, c.Stale)
	dst = AppendUvarint(dst, uint64(c.Count))
	return appendDropped(dst, c.Dropped, c.DroppedAll)
}

// DecodeCommitted decodes a committed frame.
func DecodeCommitted(b []byte) (*Committed, error) {
	r := newReader(b, KindCommitted)
	var c Committed
	c.Stale = r.bool("stale")
	c.Count = r.int("message count", maxInt32)
	c.Dropped, c.DroppedAll = r.dropped()
	if err := r.end(); err != nil {
		return nil, err
	}
	return &c, nil
}
