package wire

import "github.com/agentrt/agentrt/core"

// ActionKind says what the host must do next for a turn.
type ActionKind byte

// Actions. See docs/wire.md, "Action frames".
const (
	// ActWait: the turn waits for its session's previous run; ask again
	// (next) when a run on the same session has ended.
	ActWait ActionKind = 0
	// ActModel: call the model and feed its reply.
	ActModel ActionKind = 1
	// ActTool: call the tool and feed its result.
	ActTool ActionKind = 2
	// ActDone: the turn completed; Result is set.
	ActDone ActionKind = 3
	// ActFailed: the turn failed or was cancelled; Err is set.
	ActFailed ActionKind = 4
	// ActPending: nothing new to do: the call that is out is still
	// awaited (the answer to a delta frame, which may carry events).
	ActPending ActionKind = 5
	// actDoneHead is ActDone on the wire when the frame ends with the
	// session's head (Action.Head): a turn whose begin frame asked for it.
	// The kind of every other frame is as it was before heads.
	actDoneHead ActionKind = 8
)

// Action is an action frame: the turn's handle, the events emitted since
// the previous frame of the turn, and what the host does next.
type Action struct {
	Handle uint64
	Events []core.Event
	Kind   ActionKind

	// Model call (ActModel). The model is sent the session's messages
	// [Start, End) of mirror generation Generation. The host's mirror must
	// hold that generation's messages [0, From); Tail are the messages
	// [From, End), to be appended to it after cutting it to From. From is
	// 0 when the host's mirror is stale: Tail is then the whole session.
	// Adopt says the host adopts the mirror it built from the turn's
	// history (see Begin.HistoryMirror) as generation Generation before
	// cutting and appending.
	Step       int
	Generation uint64
	Adopt      bool
	From       int
	Tail       []core.Message
	Start      int
	End        int

	// Tool call (ActTool, ActApprove).
	Call core.ToolCall

	// Count are the messages to count (ActCount; wire/count.go).
	Count []core.Message

	// Outcome (ActDone, ActFailed).
	Result *core.Result
	Err    *core.Error
	// Head is, on ActDone for a turn whose begin frame had WantHead, the
	// session's head after the run (DecodeAction sets Result's head to
	// it). Empty: none is written.
	Head string

	// Dropped are the ids of the sessions the module removed (evicted or
	// deleted) since its last action or committed frame, of any turn;
	// DroppedAll says more were removed than it kept: every mirror is
	// stale. A host drops the mirrors of those sessions.
	Dropped    []string
	DroppedAll bool
}

// appendDropped appends the dropped field of an action or committed
// frame: uvarint 0 for none, 1 for all, k+2 for k ids that follow.
func appendDropped(dst []byte, ids []string, all bool) []byte {
	if all || len(ids) == 0 {
		return append(dst, boolByte(all))
	}
	return appendStrings(dst, ids, 2)
}

// appendStrings appends uvarint len(ids)+plus and the strings.
func appendStrings(dst []byte, ids []string, plus uint64) []byte {
	dst = AppendUvarint(dst, uint64(len(ids))+plus)
	for _, id := range ids {
		dst = AppendString(dst, id)
	}
	return dst
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// dropped reads the dropped field.
func (r *reader) dropped() (ids []string, all bool) {
	k := r.uvarint()
	switch {
	case r.err != nil || k == 0:
		return nil, false
	case k == 1:
		return nil, true
	}
	n := k - 2
	if n > uint64(len(r.s)-r.pos) {
		r.fail("dropped count is more than the buffer can hold")
		return nil, false
	}
	ids = make([]string, n)
	for i := range ids {
		ids[i] = r.str("dropped session id")
	}
	return ids, false
}

// Event type bytes, in the order of the core's event types.
const (
	evStarted byte = iota
	evSeeded
	evAppended
	evDelta
	evToolStarted
	evToolFinished
	evCompleted
	evFailed
	evCancelled
	evContext
	evAwaiting
)

var eventTypes = [...]core.EventType{
	core.EventRunStarted, core.EventSessionSeeded, core.EventMessageAppended, core.EventModelDelta,
	core.EventToolStarted, core.EventToolFinished, core.EventRunCompleted, core.EventRunFailed,
	core.EventRunCancelled, core.EventModelContext, core.EventRunAwaitingApproval,
}

var seedModes = [...]core.SeedOutcome{core.SeedNone, core.SeedCold, core.SeedNoop, core.SeedAppended, core.SeedReplaced}

func seedByte(m core.SeedOutcome) byte {
	for i, s := range seedModes {
		if s == m {
			return byte(i)
		}
	}
	return 0
}

// seedRepairs is the bit of a seed's mode byte that says repairs follow
// its counts.
const seedRepairs = 0x80

var repairKinds = [...]core.RepairKind{core.RepairMissingToolResult, core.RepairOrphanToolResult,
	core.RepairDuplicateToolResult, core.RepairDuplicateMessage}

//go:noinline
func appendSeed(dst []byte, s *core.SeedReport) []byte {
	mode := seedByte(s.Mode)
	if len(s.Repairs) > 0 {
		mode |= seedRepairs
	}
	dst = append(dst, mode)
	dst = AppendUvarint(dst, uint64(s.Seeded))
	dst = AppendUvarint(dst, uint64(s.SkippedSystem))
	if len(s.Repairs) == 0 {
		return dst
	}
	dst = AppendUvarint(dst, uint64(len(s.Repairs)))
	for i := range s.Repairs {
		rp := &s.Repairs[i]
		var k byte
		for j := range repairKinds {
			if repairKinds[j] == rp.Kind {
				k = byte(j)
			}
		}
		dst = append(dst, k)
		dst = AppendUvarint(dst, uint64(rp.Index))
		dst = AppendString(dst, rp.ToolCallID)
		if rp.Kind == core.RepairMissingToolResult {
			// The marker's edit (core.HistoryEdit): the host index it
			// goes before, and its id. A drop's edit is the repair's
			// index.
			var e core.HistoryEdit
			if i < len(s.Edits) {
				e = s.Edits[i]
			}
			dst = AppendUvarint(dst, uint64(e.Index))
			dst = AppendString(dst, e.Message.ID)
		}
	}
	return dst
}

func (r *reader) seed(s *core.SeedReport) {
	b := r.byte()
	repairs := b&seedRepairs != 0
	b &^= seedRepairs
	if int(b) >= len(seedModes) {
		r.fail("unknown seed mode " + itoa(int(b)))
		return
	}
	s.Mode = seedModes[b]
	s.Seeded = r.int("seeded count", maxInt32)
	s.SkippedSystem = r.int("skipped count", maxInt32)
	if !repairs {
		return
	}
	n := r.count("repairs", 3)
	if r.err != nil || n == 0 {
		r.fail("a seed with repairs has at least one")
		return
	}
	s.Repairs = make([]core.Repair, n)
	s.Edits = make([]core.HistoryEdit, n)
	for i := range s.Repairs {
		k := r.byte()
		if int(k) >= len(repairKinds) {
			r.fail("unknown repair kind " + itoa(int(k)))
			return
		}
		rp := core.Repair{Kind: repairKinds[k], Index: r.int("repair index", maxInt32), ToolCallID: r.str("toolCallId")}
		s.Repairs[i] = rp
		s.Edits[i] = core.HistoryEdit{Op: core.EditDrop, Index: rp.Index}
		if rp.Kind == core.RepairMissingToolResult {
			s.Edits[i] = core.HistoryEdit{Op: core.EditInsert, Index: r.int("marker index", maxInt32), Call: rp.Index,
				Message: core.SeedMessage{ID: r.str("marker id"), Role: core.RoleTool, Content: core.InterruptedToolResult, ToolCallID: rp.ToolCallID}}
		}
	}
}

// AppendEvent appends one event (its type, seq and the fields of its
// type; run and session ids are the turn's and are not repeated; a
// run.completed event's result is the done action's).
func AppendEvent(dst []byte, ev *core.Event) []byte {
	var t byte
	for i := range eventTypes {
		if eventTypes[i] == ev.Type {
			t = byte(i)
			break
		}
	}
	dst = append(dst, t)
	dst = AppendUvarint(dst, uint64(ev.Seq))
	switch t {
	case evSeeded:
		var s core.SeedReport
		if ev.Seed != nil {
			s = *ev.Seed
		}
		dst = appendSeed(dst, &s)
	case evAppended:
		var m core.Message
		if ev.Message != nil {
			m = *ev.Message
		}
		dst = AppendMessage(dst, &m)
	case evDelta:
		dst = AppendUvarint(dst, uint64(ev.Step))
		dst = AppendString(dst, ev.Delta)
	case evToolStarted, evToolFinished:
		var c core.ToolCall
		if ev.ToolCall != nil {
			c = *ev.ToolCall
		}
		dst = appendCall(dst, &c)
		if t == evToolFinished {
			var flags byte
			if ev.Message != nil {
				flags |= 1
			}
			if ev.Err != nil {
				flags |= 2
			}
			dst = append(dst, flags)
			if ev.Message != nil {
				dst = AppendMessage(dst, ev.Message)
			}
			if ev.Err != nil {
				dst = AppendError(dst, ev.Err)
			}
		}
	case evFailed, evCancelled:
		e := ev.Err
		if e == nil {
			e = core.NewError(core.CodeInternal, "no error")
		}
		dst = appendFailure(dst, e)
	case evContext:
		var c core.ContextReport
		if ev.Context != nil {
			c = *ev.Context
		}
		dst = AppendUvarint(dst, uint64(ev.Step))
		dst = AppendUvarint(dst, uint64(c.Messages))
		dst = AppendUvarint(dst, uint64(c.Tokens))
		dst = AppendUvarint(dst, uint64(c.Dropped))
	}
	return dst
}

func (r *reader) event(ev *core.Event) {
	t := r.byte()
	if r.err != nil {
		return
	}
	if int(t) >= len(eventTypes) {
		r.fail("unknown event type " + itoa(int(t)))
		return
	}
	ev.Type = eventTypes[t]
	ev.Seq = r.int("event seq", maxInt32)
	switch t {
	case evSeeded:
		ev.Seed = new(core.SeedReport)
		r.seed(ev.Seed)
	case evAppended:
		ev.Message = new(core.Message)
		r.message(ev.Message)
	case evDelta:
		ev.Step = r.int("event step", maxInt32)
		ev.Delta = r.str("delta")
	case evToolStarted, evToolFinished:
		ev.ToolCall = new(core.ToolCall)
		r.call(ev.ToolCall)
		if t == evToolFinished {
			flags := r.byte()
			if flags&^3 != 0 {
				r.fail("reserved tool.finished flag bits are set")
			}
			if flags&1 != 0 {
				ev.Message = new(core.Message)
				r.message(ev.Message)
			}
			if flags&2 != 0 {
				ev.Err = r.error()
			}
		}
	case evFailed, evCancelled:
		ev.Err = r.failure()
	case evContext:
		ev.Step = r.int("event step", maxInt32)
		ev.Context = &core.ContextReport{Messages: r.int("context messages", maxInt32),
			Tokens: int64(r.int("context tokens", 1<<53)), Dropped: r.int("context dropped", maxInt32)}
	}
}

// AppendResult appends a completed run's result. The reply is not
// written: it is the last appended message, or for a run awaiting
// approval, whose pending calls end the result, the last assistant
// message appended.
func AppendResult(dst []byte, res *core.Result) []byte {
	dst = AppendString(dst, res.RunID)
	dst = AppendString(dst, res.SessionID)
	dst = appendSeed(dst, &res.Seed)
	dst = AppendUvarint(dst, uint64(res.MessageCount))
	dst = AppendMessages(dst, res.Appended)
	dst = AppendUvarint(dst, uint64(len(res.ModelCalls)))
	for i := range res.ModelCalls {
		c := &res.ModelCalls[i]
		dst = AppendUvarint(dst, uint64(c.Step))
		dst = AppendUvarint(dst, uint64(c.MessageCount))
		if c.Messages == nil {
			dst = append(dst, 0)
		} else {
			dst = append(dst, 1)
			dst = AppendMessages(dst, c.Messages)
		}
	}
	return appendPending(dst, res.PendingApprovals)
}

func (r *reader) result() *core.Result {
	res := &core.Result{Status: "completed"}
	res.RunID = r.str("runId")
	res.SessionID = r.str("sessionId")
	r.seed(&res.Seed)
	res.MessageCount = r.int("message count", maxInt32)
	res.Appended = r.messages()
	if r.err == nil && len(res.Appended) == 0 {
		r.fail("a result appends at least its reply")
	}
	if r.err == nil {
		res.Reply = res.Appended[len(res.Appended)-1]
	}
	n := r.count("model call count", 3)
	if r.err != nil {
		return nil
	}
	res.ModelCalls = make([]core.ModelCall, n)
	for i := range res.ModelCalls {
		c := &res.ModelCalls[i]
		c.Step = r.int("model call step", maxInt32)
		c.MessageCount = r.int("model call message count", maxInt32)
		if r.bool("model call inspect flag") {
			c.Messages = r.messages()
		}
	}
	r.pending(res)
	return res
}

// AppendAction appends an action frame for a. Events are written as they
// are in a.Events.
func AppendAction(dst []byte, a *Action) []byte {
	dst = appendHeader(dst, KindAction)
	dst = AppendUvarint(dst, a.Handle)
	dst = AppendUvarint(dst, uint64(len(a.Events)))
	for i := range a.Events {
		dst = AppendEvent(dst, &a.Events[i])
	}
	if a.Kind == ActDone && a.Head != "" {
		dst = append(dst, byte(actDoneHead))
	} else {
		dst = append(dst, byte(a.Kind))
	}
	switch a.Kind {
	case ActModel:
		dst = AppendUvarint(dst, uint64(a.Step))
		dst = AppendUvarint(dst, a.Generation)
		dst = appendBool(dst, a.Adopt)
		dst = AppendUvarint(dst, uint64(a.From))
		dst = AppendUvarint(dst, uint64(a.Start))
		dst = AppendUvarint(dst, uint64(a.End))
		dst = AppendMessages(dst, a.Tail)
	case ActTool, ActApprove:
		dst = appendCall(dst, &a.Call)
	case ActCount:
		dst = AppendMessages(dst, a.Count)
	case ActDone:
		dst = AppendResult(dst, a.Result)
		if a.Head != "" {
			dst = AppendString(dst, a.Head)
		}
	case ActFailed:
		dst = appendFailure(dst, a.Err)
	}
	return appendDropped(dst, a.Dropped, a.DroppedAll)
}

// DecodeAction decodes an action frame. Besides the format it checks the
// model window: Start <= End, From <= End and From + len(Tail) == End.
func DecodeAction(b []byte) (*Action, error) {
	r := newReader(b, KindAction)
	var a Action
	a.Handle = r.uvarint()
	n := r.count("event count", 2)
	if r.err == nil && n > 0 {
		a.Events = make([]core.Event, n)
		for i := range a.Events {
			r.event(&a.Events[i])
		}
	}
	a.Kind = ActionKind(r.byte())
	switch a.Kind {
	case ActWait, ActPending:
	case ActModel:
		a.Step = r.int("step", maxInt32)
		a.Generation = r.uvarint()
		a.Adopt = r.bool("adopt flag")
		a.From = r.int("from", maxInt32)
		a.Start = r.int("start", maxInt32)
		a.End = r.int("end", maxInt32)
		a.Tail = r.messages()
		if r.err == nil && (a.Start > a.End || a.From+len(a.Tail) != a.End) {
			r.fail("model window is inconsistent")
		}
	case ActTool, ActApprove:
		r.call(&a.Call)
	case ActCount:
		a.Count = r.messages()
	case ActDone:
		a.Result = r.result()
	case actDoneHead:
		a.Kind = ActDone
		a.Result = r.result()
		if a.Head = r.str("head"); r.err == nil {
			a.Result.SetHead(a.Head)
		}
	case ActFailed:
		a.Err = r.failure()
	default:
		r.fail("unknown action " + itoa(int(a.Kind)))
	}
	a.Dropped, a.DroppedAll = r.dropped()
	if err := r.end(); err != nil {
		return nil, err
	}
	return &a, nil
}

// AppendSession appends a session frame: the session's mirror generation,
// its messages and its head (core.Session.Head).
func AppendSession(dst []byte, gen uint64, msgs []core.Message, head string) []byte {
	dst = appendHeader(dst, KindSession)
	dst = AppendUvarint(dst, gen)
	return AppendString(AppendMessages(dst, msgs), head)
}

// DecodeSession decodes a session frame, its head aside (see
// DecodeSessionHead).
func DecodeSession(b []byte) (gen uint64, msgs []core.Message, err error) {
	gen, msgs, _, err = DecodeSessionHead(b)
	return gen, msgs, err
}

// DecodeSessionHead decodes a session frame with its head.
func DecodeSessionHead(b []byte) (gen uint64, msgs []core.Message, head string, err error) {
	r := newReader(b, KindSession)
	gen = r.uvarint()
	msgs = r.messages()
	head = r.str("head")
	if err := r.end(); err != nil {
		return 0, nil, "", err
	}
	return gen, msgs, head, nil
}

// Stats are the counters a stats frame carries: core.Stats and the
// module's heap in use. BudgetUsed and BudgetBytes come last, after
// HeapAlloc; a frame without them (an older module's) decodes with 0.
type Stats struct {
	core.Stats
	HeapAlloc uint64
}

// AppendStats appends a stats frame.
func AppendStats(dst []byte, s *Stats) []byte {
	dst = appendHeader(dst, KindStats)
	for _, v := range [...]int64{int64(s.Sessions), int64(s.Messages), s.Bytes, int64(s.ActiveRuns),
		int64(s.Evictions), int64(s.RunsCompleted), int64(s.RunsFailed), int64(s.RunsCancelled)} {
		dst = AppendUvarint(dst, uint64(v))
	}
	dst = AppendUvarint(dst, s.HeapAlloc)
	dst = AppendUvarint(dst, uint64(max(s.BudgetUsed, 0)))
	return AppendUvarint(dst, uint64(max(s.BudgetBytes, 0)))
}

// DecodeStats decodes a stats frame.
func DecodeStats(b []byte) (*Stats, error) {
	r := newReader(b, KindStats)
	var s Stats
	s.Sessions = r.int("sessions", maxInt32)
	s.Messages = r.int("messages", maxInt32)
	s.Bytes = int64(r.int("bytes", 1<<53))
	s.ActiveRuns = r.int("activeRuns", maxInt32)
	s.Evictions = r.int("evictions", maxInt32)
	s.RunsCompleted = r.int("runsCompleted", maxInt32)
	s.RunsFailed = r.int("runsFailed", maxInt32)
	s.RunsCancelled = r.int("runsCancelled", maxInt32)
	s.HeapAlloc = r.uvarint()
	if r.err == nil && r.pos < len(r.s) {
		s.BudgetUsed = int64(r.int("budgetUsed", 1<<53))
		s.BudgetBytes = int64(r.int("budgetBytes", 1<<53))
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	return &s, nil
}

// AppendSessions appends a session-ids frame.
func AppendSessions(dst []byte, ids []string) []byte {
	return appendStrings(appendHeader(dst, KindSessions), ids, 0)
}

// DecodeSessions decodes a session-ids frame.
func DecodeSessions(b []byte) ([]string, error) {
	r := newReader(b, KindSessions)
	n := r.count("session count", 1)
	var ids []string
	if r.err == nil {
		ids = make([]string, n)
		for i := range ids {
			ids[i] = r.str("session id")
		}
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	return ids, nil
}

// appendFailure appends how a run ended failed or cancelled: its error,
// then the messages it keeps in its session (core.Error.Appended: the
// results of calls a person approved, which outlive the failure). A
// history_diverged failure goes on with the conversation's head, a byte
// that says whether missing messages follow, and those messages
// (core.Error.Head and Missing); no other failure has them, so every
// other failure's bytes are as they were before heads.
func appendFailure(dst []byte, e *core.Error) []byte {
	dst = AppendMessages(AppendError(dst, e), e.Appended)
	if e.Code == core.CodeHistoryDiverged {
		dst = AppendString(dst, e.Head)
		dst = appendBool(dst, e.Missing != nil)
		if e.Missing != nil {
			dst = AppendMessages(dst, e.Missing)
		}
	}
	return dst
}

// failure reads what appendFailure wrote.
func (r *reader) failure() *core.Error {
	e := r.error()
	kept := r.messages()
	if e != nil && len(kept) > 0 {
		e.Appended = kept
	}
	if e != nil && e.Code == core.CodeHistoryDiverged {
		e.Head = r.str("head")
		if r.bool("missing flag") {
			e.Missing = r.messages()
			if e.Missing == nil && r.err == nil {
				e.Missing = []core.Message{}
			}
		}
	}
	return e
}
