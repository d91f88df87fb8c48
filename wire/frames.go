package wire

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
)

// Begin is a begin-turn frame: everything one run needs, as the four
// entry points of the JavaScript API carry it, plus the state of the
// host's mirror of the session (see docs/wire.md, "Mirrors").
type Begin struct {
	SessionID string
	Input     string
	// RunID is the run's id; empty lets the runtime choose one.
	RunID string
	// WithHistory says History is applied (a nil History is then empty).
	WithHistory bool
	Inspect     bool
	// Events asks for the run's events in every action frame.
	Events bool
	// HistoryMirror says the host built a mirror of the session from
	// History (its non-system messages, in order): when seeding makes the
	// session exactly that history, the module adopts it.
	HistoryMirror bool
	// HistoryValid says the host vouches that every string of the packed
	// history is valid UTF-8 (it encoded them from strings of its own, as
	// the glue does), so the module does not check them. A host that sets
	// it over other bytes gets them back as they are.
	HistoryValid bool
	Policy       core.Policy
	// PolicyJSON, when not empty, is the policy as its JSON text (the
	// glue sends it so). AppendBegin writes it, or else Policy's JSON text
	// (hostmsg.AppendPolicyJSON) when Policy is not the zero Policy: a
	// policy that is not the default crosses as its JSON text only.
	// DecodeBegin reads the text into Policy with hostmsg.Policy, the
	// reader every edge shares, and sets PolicyJSON to it.
	PolicyJSON string
	// MirrorGen and MirrorLen describe the host's mirror of the session
	// before the turn: its generation and length (0, 0: none).
	MirrorGen uint64
	MirrorLen int
	History   []core.SeedMessage
	// Approvals answer the calls awaiting approval in the session (a
	// run that resumes them; Input is then empty).
	Approvals []core.Approval
	// IfHead, when set, runs the turn only if the conversation it would
	// run on has that head (core.RunRequest.IfHead): further flag bit 2,
	// the head's string at the frame's end.
	IfHead string
	// WantHead asks for the session's head after the turn in the action
	// frame that ends it (Action.Head): further flag bit 3. A host that
	// never reads the head leaves it unset, and the module computes none.
	WantHead bool
	// Packed is the history as it came, a packed history (set by
	// DecodeBegin; AppendBegin writes it when History is nil).
	Packed []byte
}

// Begin flag bits.
const (
	beginHistory       = 1 << 0
	beginInspect       = 1 << 1
	beginEvents        = 1 << 2
	beginHistoryMirror = 1 << 3
	beginHistoryValid  = 1 << 4
	// beginRetired are the bits that once said Policy.Repair and the
	// token fields followed a binary policy; a policy that is not the
	// default is its JSON text now, and a frame with them is refused.
	beginRetired = 1<<5 | 1<<6
	// beginMore says a uvarint of further flags follows the flags byte.
	beginMore = 1 << 7
)

// Further begin flag bits (after beginMore).
const (
	// beginPolicyJSON says the policy is one string, its JSON text, in
	// place of the default policy's bytes.
	beginPolicyJSON = 1 << 0
	// beginIfHead says the frame ends with the run's IfHead, a string.
	beginIfHead = 1 << 2
	// beginWantHead asks for the head in the frame that ends the turn.
	beginWantHead        = 1 << 3
	beginReservedFurther = ^uint64(beginPolicyJSON | beginApprovals | beginIfHead | beginWantHead)
)

// AppendBegin appends a begin frame for b.
func AppendBegin(dst []byte, b *Begin) []byte {
	dst = appendHeader(dst, KindBegin)
	dst = AppendString(dst, b.SessionID)
	dst = AppendString(dst, b.Input)
	dst = AppendString(dst, b.RunID)
	var flags byte
	if b.WithHistory {
		flags |= beginHistory
	}
	if b.Inspect {
		flags |= beginInspect
	}
	if b.Events {
		flags |= beginEvents
	}
	if b.HistoryMirror {
		flags |= beginHistoryMirror
	}
	if b.HistoryValid {
		flags |= beginHistoryValid
	}
	var further uint64
	if len(b.Approvals) > 0 {
		further |= beginApprovals
	}
	if b.IfHead != "" {
		further |= beginIfHead
	}
	if b.WantHead {
		further |= beginWantHead
	}
	text := b.PolicyJSON
	if text == "" {
		if j := hostmsg.AppendPolicyJSON(nil, &b.Policy); len(j) > len("{}") {
			text = string(j)
		}
	}
	if text != "" {
		further |= beginPolicyJSON
	}
	if further != 0 {
		dst = append(dst, flags|beginMore)
		dst = AppendUvarint(dst, further)
	} else {
		dst = append(dst, flags)
	}
	if text != "" {
		dst = AppendString(dst, text)
	} else {
		dst = append(dst, defaultPolicy...)
	}
	return appendBeginTail(dst, b)
}

// appendBeginTail appends what follows the policy in a begin frame.
func appendBeginTail(dst []byte, b *Begin) []byte {
	dst = AppendUvarint(dst, b.MirrorGen)
	dst = AppendUvarint(dst, uint64(b.MirrorLen))
	if b.WithHistory {
		h := b.Packed
		if b.History != nil || h == nil {
			h = AppendHistory(nil, b.History)
		}
		dst = AppendUvarint(dst, uint64(len(h)))
		dst = append(dst, h...)
	}
	if len(b.Approvals) > 0 {
		dst = appendApprovals(dst, b.Approvals)
	}
	if b.IfHead != "" {
		dst = AppendString(dst, b.IfHead)
	}
	return dst
}

// zigzag maps signed to unsigned varints (a check-report frame's
// problem index).
func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// maxInt32 bounds integers that become Go ints in the module (32 bits
// on wasm).
const maxInt32 = 1<<31 - 1

// sint reads a zigzag integer that a JavaScript number holds exactly
// (core.MaxBytes either way).
func (r *reader) sint(what string) int64 {
	v := unzigzag(r.uvarint())
	if v > core.MaxBytes || v < -core.MaxBytes {
		r.fail(what + " is out of range")
		return 0
	}
	return v
}

// defaultPolicy is the default policy's place in a begin frame without
// beginPolicyJSON: the bytes of the binary form a policy once had, for a
// policy of defaults (three empty strings, four zeros and no tool list),
// kept so that the frame of a turn with no policy is as it was.
const defaultPolicy = "\x00\x00\x00\x00\x00\x00\x00\x00"

// DecodeBegin decodes a begin frame. maxMessages bounds the history's
// message count as packed.Decode does (zero: the default limit).
//
// A malformed frame is refused with invalid_argument; a malformed
// history inside it with invalid_history (and limit_exceeded for too
// many messages), with the index of the message at fault, exactly as
// the packed history decoder reports it.
func DecodeBegin(b []byte, maxMessages int) (*Begin, error) {
	return DecodeBeginCached(b, maxMessages, nil)
}

// HistoryCache remembers the last history a begin frame carried, decoded:
// a host that passes its whole history on every turn sends the same bytes
// again, and they need not be decoded again. It serves the session of the
// last history only (a cold seed of another session decodes its history,
// as it would without a cache). The zero HistoryCache is empty; histories
// over 1 MB are not remembered.
type HistoryCache struct {
	session string
	packed  string
	max     int
	history []core.SeedMessage
	// unchecked: history was decoded without the UTF-8 check (a frame
	// with HistoryValid); only a frame with the same flag reuses it, so
	// the same bytes without the flag are checked.
	unchecked bool
}

// maxCachedHistory bounds what a HistoryCache keeps alive.
const maxCachedHistory = 1 << 20

// DecodeBeginCached is DecodeBegin with a cache of the last history
// decoded (nil: none). The History it returns may be the one an earlier
// call returned: callers must not change it (core copies what it keeps).
func DecodeBeginCached(b []byte, maxMessages int, cache *HistoryCache) (*Begin, error) {
	var out Begin
	if err := DecodeBeginInto(&out, b, maxMessages, cache, ReadPolicyJSON); err != nil {
		return nil, err
	}
	return &out, nil
}

// DecodeBeginInto is DecodeBeginCached into out, which a caller that
// decodes a frame per turn keeps instead of allocating one, with
// readPolicy reading a policy's JSON text (DecodeBegin's is
// ReadPolicyJSON; nil refuses such a policy). On error out holds what was
// decoded before it.
func DecodeBeginInto(out *Begin, b []byte, maxMessages int, cache *HistoryCache, readPolicy PolicyReader) error {
	r := newReader(b, KindBegin)
	*out = Begin{}
	out.SessionID = r.str("sessionId")
	out.Input = r.str("input")
	out.RunID = r.str("runId")
	flags := r.byte()
	var further uint64
	if flags&beginMore != 0 {
		further = r.uvarint()
	}
	if further&beginReservedFurther != 0 {
		r.fail("reserved begin flag bits are set")
	}
	out.WithHistory = flags&beginHistory != 0
	out.Inspect = flags&beginInspect != 0
	out.Events = flags&beginEvents != 0
	out.HistoryMirror = flags&beginHistoryMirror != 0
	out.HistoryValid = flags&beginHistoryValid != 0
	out.WantHead = further&beginWantHead != 0
	if flags&beginRetired != 0 {
		r.fail("begin flag bits 5 and 6 are retired: a policy that is not the default comes as its JSON text")
	}
	if further&beginPolicyJSON != 0 {
		out.PolicyJSON = r.str("policy")
		if r.err == nil && readPolicy == nil {
			r.fail("this module reads no policy as JSON text")
		} else if r.err == nil {
			var err error
			if out.Policy, err = readPolicy(out.PolicyJSON); err != nil {
				r.err, r.pos = core.AsError(err), len(r.s)
			}
		}
	} else if r.err == nil {
		if len(r.s)-r.pos < len(defaultPolicy) || r.s[r.pos:r.pos+len(defaultPolicy)] != defaultPolicy {
			r.fail("a policy that is not the default comes as its JSON text (further flag bit 0)")
		}
		r.pos += len(defaultPolicy)
	}
	out.MirrorGen = r.uvarint()
	out.MirrorLen = r.int("mirror length", maxInt32)
	var h string
	if out.WithHistory {
		n := r.uvarint()
		if r.err == nil && n > uint64(len(r.s)-r.pos) {
			r.fail("history runs past the end")
		}
		if r.err == nil {
			h = r.s[r.pos : r.pos+int(n)]
			r.pos += int(n)
		}
	}
	if further&beginApprovals != 0 {
		if out.Approvals = r.approvals(); r.err == nil && len(out.Approvals) == 0 {
			r.fail("the approvals flag with no approval")
		}
	}
	if further&beginIfHead != 0 {
		if out.IfHead = r.str("ifHead"); r.err == nil && out.IfHead == "" {
			r.fail("the ifHead flag with an empty head")
		}
	}
	if err := r.end(); err != nil {
		return err
	}
	if out.WithHistory {
		if cache != nil && cache.history != nil && cache.session == out.SessionID && cache.max == maxMessages &&
			cache.unchecked == out.HistoryValid && h == cache.packed {
			out.History = cache.history
			return nil
		}
		var err error
		if out.History, err = decodeHistory(h, maxMessages, out.HistoryValid); err != nil {
			return err
		}
		if out.History == nil {
			out.History = []core.SeedMessage{}
		}
		if cache != nil && len(h) <= maxCachedHistory {
			cache.session, cache.packed, cache.max, cache.history, cache.unchecked = out.SessionID, h, maxMessages, out.History, out.HistoryValid
		}
	}
	return nil
}

// ModelReply is a model-reply frame: the model's answer to the action
// of the turn with Handle, or the text of its failure.
type ModelReply struct {
	Handle uint64
	// Failed says the model threw or rejected; Error is its text.
	Failed bool
	// Oversize, with Failed, says the host refused the reply unsent: it
	// is more than maxMessageBytes (the run fails with limit_exceeded).
	Oversize bool
	Error    string
	Reply    core.ModelReply
}

// Answer statuses: the byte after a model reply's or tool result's
// handle.
const (
	statusOK       = 0
	statusFailed   = 1
	statusOversize = 2
)

func appendStatus(dst []byte, failed, oversize bool) []byte {
	switch {
	case failed && oversize:
		return append(dst, statusOversize)
	case failed:
		return append(dst, statusFailed)
	}
	return append(dst, statusOK)
}

// status reads an answer's status: failed, and oversize.
func (r *reader) status(what string) (failed, oversize bool) {
	b := r.byte()
	if b > statusOversize {
		r.fail(what + " must be 0, 1 or 2")
	}
	return b != statusOK, b == statusOversize
}

// AppendModelReply appends a model-reply frame.
func AppendModelReply(dst []byte, m *ModelReply) []byte {
	dst = appendHeader(dst, KindModelReply)
	dst = AppendUvarint(dst, m.Handle)
	if m.Failed {
		dst = appendStatus(dst, true, m.Oversize)
		return AppendString(dst, m.Error)
	}
	dst = append(dst, 0)
	dst = AppendString(dst, m.Reply.Content)
	dst = AppendUvarint(dst, uint64(len(m.Reply.ToolCalls)))
	for i := range m.Reply.ToolCalls {
		dst = appendCall(dst, &m.Reply.ToolCalls[i])
	}
	return dst
}

// DecodeModelReply decodes a model-reply frame.
func DecodeModelReply(b []byte) (*ModelReply, error) {
	r := newReader(b, KindModelReply)
	var m ModelReply
	m.Handle = r.uvarint()
	if m.Failed, m.Oversize = r.status("model reply status"); m.Failed {
		m.Error = r.str("model error")
	} else {
		m.Reply.Content = r.str("content")
		m.Reply.ToolCalls = r.calls()
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	return &m, nil
}

// ToolResult is a tool-result frame: a tool's output for the action of
// the turn with Handle, or the text of its failure.
type ToolResult struct {
	Handle uint64
	Failed bool
	// Oversize, with Failed, says the host refused the output unsent: it
	// is more than maxMessageBytes (limit_exceeded).
	Oversize bool
	// Text is the output, or the error text when Failed.
	Text string
}

// AppendToolResult appends a tool-result frame.
func AppendToolResult(dst []byte, t *ToolResult) []byte {
	dst = appendHeader(dst, KindToolResult)
	dst = AppendUvarint(dst, t.Handle)
	dst = appendStatus(dst, t.Failed, t.Oversize)
	return AppendString(dst, t.Text)
}

// DecodeToolResult decodes a tool-result frame.
func DecodeToolResult(b []byte) (*ToolResult, error) {
	r := newReader(b, KindToolResult)
	var t ToolResult
	t.Handle = r.uvarint()
	t.Failed, t.Oversize = r.status("tool result status")
	t.Text = r.str("tool result")
	if err := r.end(); err != nil {
		return nil, err
	}
	return &t, nil
}

// Answer is any host frame that answers a turn: a model reply, a tool
// result, a delta or counts, as DecodeAnswer returns it.
type Answer struct {
	Kind   Kind // KindModelReply, KindToolResult, KindDelta, KindCounts or KindApproval
	Handle uint64
	Failed bool
	// Oversize, with Failed: the host refused the answer unsent, as more
	// than maxMessageBytes.
	Oversize bool
	// Text is the tool's output, the failure's text, or the delta.
	Text  string
	Reply core.ModelReply
	// Counts are a counts frame's counts; Code is its failure's code
	// (wire/count.go).
	Counts []int
	Code   core.Code
	// Need is an approval frame's answer: the call needs approval.
	Need bool
}

// DecodeAnswer decodes a model-reply, tool-result, approval, delta or
// counts frame.
func DecodeAnswer(b []byte) (*Answer, error) {
	var a Answer
	if err := DecodeAnswerInto(&a, b); err != nil {
		return nil, err
	}
	return &a, nil
}

// DecodeAnswerInto is DecodeAnswer into a, which a caller that decodes a
// frame per turn keeps instead of allocating one.
func DecodeAnswerInto(a *Answer, b []byte) error {
	*a = Answer{}
	k := KindDelta
	if len(b) >= header {
		k = Kind(b[header-1])
	}
	if k != KindModelReply && k != KindToolResult && k != KindCounts && k != KindApproval {
		k = KindDelta
	}
	r := newReader(b, k)
	a.Kind = k
	a.Handle = r.uvarint()
	if k != KindDelta {
		a.Failed, a.Oversize = r.status("status")
	}
	switch {
	case k == KindApproval && a.Oversize:
		r.fail("an approval's status must be 0 or 1")
	case k == KindApproval && !a.Failed:
		a.Need = r.bool("need flag")
	case k == KindModelReply && !a.Failed:
		a.Reply.Content = r.str("content")
		a.Reply.ToolCalls = r.calls()
	case k == KindCounts && !a.Failed:
		r.counts(a)
	default:
		if k == KindCounts {
			a.Code = core.Code(r.str("code"))
		}
		a.Text = r.str("text")
	}
	return r.end()
}

// Delta is a delta frame: text a model streamed for the turn with
// Handle.
type Delta struct {
	Handle uint64
	Text   string
}

// AppendDelta appends a delta frame.
func AppendDelta(dst []byte, d *Delta) []byte {
	dst = appendHeader(dst, KindDelta)
	dst = AppendUvarint(dst, d.Handle)
	return AppendString(dst, d.Text)
}

// DecodeDelta decodes a delta frame.
func DecodeDelta(b []byte) (*Delta, error) {
	r := newReader(b, KindDelta)
	var d Delta
	d.Handle = r.uvarint()
	d.Text = r.str("delta")
	if err := r.end(); err != nil {
		return nil, err
	}
	return &d, nil
}

// KindLimits is the limits query a host sends through agentrt_feed (a
// header alone), and KindLimitsOut the module's answer: the limits in
// force, so that a host checks sizes against them before it copies
// anything into the module's memory.
const (
	KindLimits    Kind = 0x06
	KindLimitsOut Kind = 0x16
)

// AppendLimitsQuery appends a limits query frame.
func AppendLimitsQuery(dst []byte) []byte { return appendHeader(dst, KindLimits) }

// IsLimitsQuery reports whether b is a limits query frame.
func IsLimitsQuery(b []byte) bool {
	return len(b) == header && Kind(b[header-1]) == KindLimits && b[len(Magic)] == Version && string(b[:len(Magic)]) == Magic
}

// AppendLimits appends a limits frame: maxSessions, maxMessagesPerSession,
// maxSessionBytes, maxSeedMessages, maxSeedBytes, maxMessageBytes and
// maxTotalBytes, each a uvarint.
func AppendLimits(dst []byte, l *core.Limits) []byte {
	dst = appendHeader(dst, KindLimitsOut)
	for _, v := range [...]int64{int64(l.MaxSessions), int64(l.MaxMessagesPerSession), l.MaxSessionBytes,
		int64(l.MaxSeedMessages), l.MaxSeedBytes, l.MaxMessageBytes, l.MaxTotalBytes} {
		dst = AppendUvarint(dst, uint64(v))
	}
	return dst
}

// DecodeLimits decodes a limits frame.
func DecodeLimits(b []byte) (*core.Limits, error) {
	r := newReader(b, KindLimitsOut)
	var l core.Limits
	l.MaxSessions = r.int("maxSessions", maxInt32)
	l.MaxMessagesPerSession = r.int("maxMessagesPerSession", maxInt32)
	l.MaxSessionBytes = int64(r.int("maxSessionBytes", 1<<62))
	l.MaxSeedMessages = r.int("maxSeedMessages", maxInt32)
	l.MaxSeedBytes = int64(r.int("maxSeedBytes", 1<<62))
	l.MaxMessageBytes = int64(r.int("maxMessageBytes", 1<<62))
	l.MaxTotalBytes = int64(r.int("maxTotalBytes", 1<<62))
	if err := r.end(); err != nil {
		return nil, err
	}
	return &l, nil
}
