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

// AppendCommitted appends a committed frame: the session's message
// count after a commit, or stale when the session was not the host's
// mirror and nothing was stored.
func AppendCommitted(dst []byte, count int, stale bool) []byte {
	dst = appendHeader(dst, KindCommitted)
	dst = appendBool(dst, stale)
	return AppendUvarint(dst, uint64(count))
}

// DecodeCommitted decodes a committed frame.
func DecodeCommitted(b []byte) (count int, stale bool, err error) {
	r := newReader(b, KindCommitted)
	stale = r.bool("stale")
	count = r.int("message count", maxInt32)
	return count, stale, r.end()
}
