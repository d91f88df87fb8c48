package wire

import "github.com/agentrt/agentrt/core"

// The token count over the wire (docs/wire.md, "Counts"): a runtime
// whose host counts tokens (Config.CountByAction) asks for the counts of
// the messages its caches lack with a count action, and the host answers
// with a counts frame, which DecodeAnswer reads. See
// docs/adr/0018-context-window-by-tokens.md.

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

// AppendCounts appends a counts frame: the handle, a status byte, then
// for status 0 a uvarint count and a uvarint per count, for status 1 the
// failure's code and message (strings).
func AppendCounts(dst []byte, c *Counts) []byte {
	dst = appendHeader(dst, KindCounts)
	dst = AppendUvarint(dst, c.Handle)
	if c.Err != nil {
		dst = append(dst, statusFailed)
		return AppendString(AppendString(dst, string(c.Err.Code)), c.Err.Message)
	}
	dst = append(dst, statusOK)
	dst = AppendUvarint(dst, uint64(len(c.Counts)))
	for _, n := range c.Counts {
		dst = AppendUvarint(dst, uint64(max(n, 0)))
	}
	return dst
}

// counts reads a counts frame's counts into a. A count may be as large
// as 2^53: core checks its range (core.MaxTokenCount), failing the run.
func (r *reader) counts(a *Answer) {
	n := r.count("token count count", 1)
	if r.err != nil {
		return
	}
	a.Counts = make([]int, n)
	for i := range a.Counts {
		a.Counts[i] = r.int("token count", maxInt53)
	}
}

// DecodeCounts decodes a counts frame (DecodeAnswer reads it too).
func DecodeCounts(b []byte) (*Counts, error) {
	if len(b) > header && Kind(b[header-1]) != KindCounts {
		return nil, newReader(b, KindCounts).end()
	}
	a, err := DecodeAnswer(b)
	if err != nil {
		return nil, err
	}
	c := &Counts{Handle: a.Handle, Counts: a.Counts}
	if a.Failed {
		c.Err = core.NewError(a.Code, a.Text)
	}
	return c, nil
}
