package wire

import "github.com/agentrt/agentrt/core"

// The token count over the wire (docs/wire.md, "Counts"): a runtime
// whose host counts tokens (Config.CountByAction) asks for the counts of
// the messages its caches lack with a count action, and the host answers
// with a counts frame. See docs/adr/0018-context-window-by-tokens.md.

// ActCount: count the tokens of each of Action.Count, in order, and feed
// a counts frame.
const ActCount ActionKind = 6

// KindCounts is the host's counts frame: the answer to a count action.
const KindCounts Kind = 0x07

// configCountByAction is the model byte's bit that says the host counts
// tokens (Config.CountByAction).
const configCountByAction = 0x02

// Counts is a counts frame: the token count of each message of the
// count action of the turn with Handle, in order, or the failure of the
// host's counter (Err; its code is the run's).
type Counts struct {
	Handle uint64
	Counts []int
	Err    *core.Error
}

// AppendCounts appends a counts frame: the handle, a status byte (0: the
// counts follow, as a uvarint count and a uvarint each; 1: an error
// follows).
func AppendCounts(dst []byte, c *Counts) []byte {
	dst = appendHeader(dst, KindCounts)
	dst = AppendUvarint(dst, c.Handle)
	if c.Err != nil {
		return AppendError(append(dst, statusFailed), c.Err)
	}
	dst = append(dst, statusOK)
	dst = AppendUvarint(dst, uint64(len(c.Counts)))
	for _, n := range c.Counts {
		dst = AppendUvarint(dst, uint64(max(n, 0)))
	}
	return dst
}

// DecodeCounts decodes a counts frame. A count may be as large as 2^53:
// core checks its range (core.MaxTokenCount), failing the run.
func DecodeCounts(b []byte) (*Counts, error) {
	r := newReader(b, KindCounts)
	var c Counts
	c.Handle = r.uvarint()
	switch r.byte() {
	case statusOK:
		n := r.count("token count count", 1)
		if r.err == nil {
			c.Counts = make([]int, n)
			for i := range c.Counts {
				c.Counts[i] = r.int("token count", maxInt53)
			}
		}
	case statusFailed:
		c.Err = r.error()
	default:
		r.fail("counts status must be 0 or 1")
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	return &c, nil
}
