package core

// This file holds the history doctor: the repairs Policy.Repair applies to
// a history the seeding rules refuse, and CheckHistory, which lists a
// history's problems without running anything. The rules are those of
// docs/adr/0013-history-repair.md.

// RepairKind names a defect of a history that Policy.Repair fixes. The
// set is closed: hosts may switch on it.
type RepairKind string

// The repair kinds.
const (
	// RepairMissingToolResult: a tool call has no result before the next
	// user or assistant message or the end. A tool message holding
	// InterruptedToolResult is inserted after the results its block has;
	// it has no id, or the calling message's when the message before it
	// has that id (it is then part of that host message).
	RepairMissingToolResult RepairKind = "missing_tool_result"
	// RepairOrphanToolResult: a tool result answers no call of the
	// preceding assistant message. It is dropped.
	RepairOrphanToolResult RepairKind = "orphan_tool_result"
	// RepairDuplicateToolResult: a call is answered a second time. The
	// later answer is dropped.
	RepairDuplicateToolResult RepairKind = "duplicate_tool_result"
	// RepairDuplicateMessage: a host message's id already appeared. The
	// host message (every seed message it yields) is dropped.
	RepairDuplicateMessage RepairKind = "duplicate_message"
)

// InterruptedToolResult is the content of the tool result that repair
// inserts for a call that has none. It is fixed: hosts and models may
// recognise it.
const InterruptedToolResult = "Tool call interrupted: no result was recorded."

// Repair is one repair applied to a history: its kind, the position of
// the host message concerned in the array the host passed (the calling
// assistant message for RepairMissingToolResult, the dropped message
// otherwise), and, for the three tool kinds, the id of the call.
type Repair struct {
	Kind       RepairKind
	Index      int
	ToolCallID string
}

// Problem is one problem of a history, as CheckHistory reports it: the
// error code and message a seed without repair refuses the history with
// for it, the host index of the message at fault, and the kind of repair
// Policy.Repair applies, or "" when none does (the history is then
// refused even with repair).
type Problem struct {
	Code    Code
	Index   int
	Message string
	Repair  RepairKind
}

// HistoryCheck is what CheckHistory finds. OK is true when the history
// seeds as it is; Problems is then empty.
type HistoryCheck struct {
	OK       bool
	Problems []Problem
	// Paused is true when the history ends with calls awaiting approval
	// (Runtime.CheckHistory, which knows the tools: each pending call is
	// of a tool that asks approval): it is waiting for a person, not
	// broken. Its pending calls are then no problem; OK says whether
	// the rest seeds as it is. A run with approvals resumes it; a run
	// with an input is refused, as on the paused session.
	Paused bool
	// Awaiting are the tool calls pending at the end of the history,
	// which a run with approvals answers (see
	// docs/adr/0019-tool-approvals.md). Where the history is not Paused
	// (CheckHistory knows no tools, or a pending call's tool asks no
	// approval), a seed meets them as missing tool results: Problems
	// lists them so.
	Awaiting []AwaitingCall
	// Head is the head of the history as the host stores it, its system
	// messages left out (see HistoryHead): the IfHead of a run that seeds
	// it. It is set whatever the problems.
	Head string
}

// CheckHistory returns the problems of history under limits (zero fields
// meaning the defaults), without changing or running anything: every
// problem that Policy.Repair fixes, in the order seeding meets them, and
// then the first problem it does not fix, if any, where checking stops as
// seeding does. A history without problems is OK.
//
// # Notes
//
//   - A history whose problems all have a Repair seeds with
//     Policy.Repair; one with a problem whose Repair is "" does not.
func CheckHistory(history []SeedMessage, limits Limits) HistoryCheck {
	limits = limits.withDefaults()
	c := checkAll(history, limits)
	c.Awaiting = awaiting(history)
	c.Head = HistoryHead(history)
	return c
}

// checkAll is CheckHistory without the calls awaiting approval.
func checkAll(history []SeedMessage, limits Limits) HistoryCheck {
	if _, err := validateHistory(history, limits); err == nil {
		return HistoryCheck{OK: true}
	} else if err.Code != CodeInvalidHistory {
		return UnreadableCheck(err)
	}
	rep := repairHistory(history)
	problems := rep.problems
	if _, err, at := rep.validateAt(history, limits); err != nil {
		// Checking stops there, as seeding does: the repairs met later
		// are not listed. At that message, the calls a well-formed
		// message leaves unanswered are met before its tool calls are
		// checked, but after its id (see checkHistory).
		n := 0
		for n < len(problems) && (rep.at[n] < at || rep.at[n] == at && problems[n].Repair == RepairMissingToolResult &&
			at < len(history) && at != rep.edited && wellFormed(&history[at]) && err.Code == CodeInvalidHistory) {
			n++
		}
		problems = append(problems[:n:n], Problem{Code: err.Code, Index: err.Index, Message: err.Message})
	}
	return HistoryCheck{Problems: problems}
}

// CheckHistory is the function CheckHistory with the runtime's limits
// and tools: a history that ends with calls of tools that ask approval
// (Tool.NeedsApproval or Tool.ApprovalByHost; no policy is applied) is
// Paused, and is checked as a seed of a run with approvals meets it, its
// pending calls counted as answered. Such a history with no other
// problem is OK, Paused, and lists its calls in Awaiting.
func (rt *Runtime) CheckHistory(history []SeedMessage) HistoryCheck {
	_, calls := pendingSeed(history)
	if !rt.pausedTail(calls, nil) {
		return CheckHistory(history, rt.limits)
	}
	limits := rt.limits
	ext, _, size := answerPending(history)
	if len(history) <= limits.MaxSeedMessages {
		limits.MaxSeedMessages += len(calls)
	}
	limits.MaxSeedBytes += size
	c := checkAll(ext, limits)
	for i := range c.Problems {
		if c.Problems[i].Repair == "" {
			// Not seedable even with the calls answered: as a seed
			// meets it (seedAwaiting falls back to the history as it is).
			return CheckHistory(history, rt.limits)
		}
		c.Problems[i].Index = min(c.Problems[i].Index, len(history))
	}
	c.Paused, c.Awaiting = true, awaiting(history)
	c.Head = HistoryHead(history)
	return c
}

// repaired is a history with the repairable problems fixed.
type repaired struct {
	// out is the repaired history; origin[i] is the position in the
	// host's history of out[i] (of the calling assistant message for an
	// inserted result). history is the host's history, once validation
	// has begun.
	out     []SeedMessage
	origin  []int
	history []SeedMessage
	// repairs and problems describe each repair, in order; at[i] is the
	// position in the host's history of the message at which repair i
	// was found (len(history) at the end).
	repairs  []Repair
	problems []Problem
	at       []int
	// edits are the repairs as edits in host indexes, one per repair.
	edits []HistoryEdit
	// edited is the position in the host's history of the first message
	// that repeats an earlier id with other content (-1 for none).
	edited int
}

// validate checks the repaired history against the seeding rules and
// limits, and returns the error with the host's index of the message at
// fault in history, the history it was repaired from.
func (r *repaired) validate(history []SeedMessage, limits Limits) (historyInfo, *Error) {
	info, err, _ := r.validateAt(history, limits)
	return info, err
}

// validateAt is validate that also returns the position in history of
// the message at fault.
func (r *repaired) validateAt(history []SeedMessage, limits Limits) (historyInfo, *Error, int) {
	if len(r.out) > limits.MaxSeedMessages && len(history) <= limits.MaxSeedMessages {
		// The count limit is the host's history's: the markers inserted
		// do not make it refused. Nor do they count against the byte
		// limits (checkHistory leaves them out).
		limits.MaxSeedMessages = len(r.out)
	}
	r.history = history
	info, err := checkHistory(r.out, limits, r)
	at := -1
	if err != nil && err.Index >= 0 && err.Index < len(r.origin) {
		at = r.origin[err.Index]
		err.Index = HostIndex(history, at)
	}
	return info, err, at
}

// inserted reports whether out[i] is a marker repair inserted: a tool
// message whose origin is not a tool message (it is the calling one).
func (r *repaired) inserted(i int) bool {
	return r.out[i].Role == RoleTool && r.history[r.origin[i]].Role != RoleTool
}

// hostIndex returns the host index of the message at position i of out,
// the history being validated (see checkHistory); r may be nil, out then
// being the host's history itself.
func (r *repaired) hostIndex(out []SeedMessage, i int) int {
	if r == nil {
		return HostIndex(out, i)
	}
	return HostIndex(r.history, r.origin[i])
}

// repairHistory applies the repair rules to history in one pass, with the
// linkage rules of checkHistory: it drops duplicate host messages, orphan
// and duplicate tool results, and inserts InterruptedToolResult results
// for the calls a block leaves unanswered. Everything else, valid or not,
// is kept as it is, for validation to accept or refuse.
func repairHistory(history []SeedMessage) repaired {
	d := doctor{history: history, open: -1, openHost: -1}
	r := &d.r
	r.edited = -1
	r.out = make([]SeedMessage, 0, len(history)+1)
	r.origin = make([]int, 0, len(history)+1)
	host := -1
	dropping, editing := false, false
	// kept is len(r.out) when the last message was kept, keptEditing
	// whether it was kept as an edit, and dupSince whether a duplicate
	// host message was dropped since (see rejoins).
	kept, keptEditing, dupSince := 0, false, false
	for i := range history {
		m := &history[i]
		if len(r.out) != kept {
			kept, keptEditing, dupSince = len(r.out), editing, false
		}
		if i == 0 || !m.Continues {
			host++
		}
		if !dupSince && r.rejoins(history, i) {
			// What parted it from its host message was dropped: it
			// continues that message, as it does in the repaired
			// history that validation reads.
			dropping, editing = false, keptEditing
		} else if startsHostMessage(history, i) {
			// A repeated id with other content is an edit, not a
			// duplicate: it is kept, for validation to refuse.
			repeated := d.seenBefore(m.ID, i)
			dropping = repeated && sameHostMessage(history, d.firstAt(m.ID), i)
			editing = repeated && !dropping
			if editing && r.edited < 0 {
				r.edited = i
			}
		}
		if editing {
			// No repair applies, and none is made to it: validation
			// refuses it there, first, as seeding without repair does.
			r.keep(m, i)
			continue
		}
		if dropping {
			dupSince = true
			if i == 0 || !m.Continues {
				r.add(i, RepairDuplicateMessage, host, "", duplicateText(m.ID, HostIndex(history, d.firstAt(m.ID))))
			}
			continue
		}
		if !wellFormed(m) {
			r.keep(m, i)
			continue
		}
		switch m.Role {
		case RoleUser:
			d.closeBlock(i)
		case RoleAssistant:
			d.closeBlock(i)
			d.openBlock(i, host)
		case RoleTool:
			if m.ToolCallID != "" && !d.answer(m.ToolCallID, i, host) {
				continue
			}
		}
		r.keep(m, i)
	}
	d.closeBlock(len(history))
	return d.r
}

// rejoins reports whether history[i], which starts a host message in
// history, continues the last message kept in the repaired history
// instead: the messages between them were dropped (as stray or repeated
// results: repairHistory does not ask when a repeated host message was
// dropped there), and it has that
// message's id as startsHostMessage joins them (an assistant or tool
// message with the id of the assistant or tool message before it). A
// result that carries its calling message's id after a stray result
// repair drops is then that message's result, not a repeated id.
func (r *repaired) rejoins(history []SeedMessage, i int) bool {
	n := len(r.out)
	if i == 0 || n == 0 || r.origin[n-1] >= i-1 || !startsHostMessage(history, i) {
		return false
	}
	m, last := &history[i], &r.out[n-1]
	return m.ID != "" && m.ID == last.ID && inTurn(m.Role) && inTurn(last.Role) &&
		!(last.Role == RoleTool && history[r.origin[n-1]].Role != RoleTool) // not a marker
}

// doctor is repairHistory's state: the repairs so far, the ids seen, and
// the open tool-call block (the assistant message whose calls are being
// answered: its position, host index, calls, and which are answered).
type doctor struct {
	history []SeedMessage
	r       repaired
	// first maps a host id to the position of its first message plus
	// one (0 is absent: no comma-ok read of a string-keyed map, whose
	// runtime code the module would carry for it alone); see firstAt.
	first    map[string]int
	open     int
	openHost int
	calls    []ToolCall
	answered []bool
}

// seenBefore reports whether id (when not empty) was seen at an earlier
// host message, and records it, met at message i, otherwise.
//
//go:noinline
func (d *doctor) seenBefore(id string, i int) bool {
	if id == "" {
		return false
	}
	if d.first[id] > 0 {
		return true
	}
	if d.first == nil {
		d.first = make(map[string]int)
	}
	d.first[id] = i + 1
	return false
}

// firstAt returns the position of the first message with host id id,
// which seenBefore recorded.
func (d *doctor) firstAt(id string) int { return d.first[id] - 1 }

// openBlock opens the block of history[i]'s calls.
//
//go:noinline
func (d *doctor) openBlock(i, host int) {
	d.open, d.openHost, d.calls = i, host, d.history[i].ToolCalls
	d.answered = d.answered[:0]
	for range d.calls {
		d.answered = append(d.answered, false)
	}
}

// answer records the tool result for id met at message i, and reports
// whether it is kept: a result for no call of the block, or for a call
// answered already, is dropped.
//
//go:noinline
func (d *doctor) answer(id string, i, host int) bool {
	k := -1
	if d.open >= 0 {
		k = callIndex(d.calls, nil, id)
	}
	switch {
	case k < 0:
		d.r.add(i, RepairOrphanToolResult, host, id, orphanText(id))
		return false
	case d.answered[k]:
		d.r.add(i, RepairDuplicateToolResult, host, id, twiceText(id))
		return false
	}
	d.answered[k] = true
	return true
}

// closeBlock inserts a marker result for each call of the open block
// left unanswered, at message pos.
//
//go:noinline
func (d *doctor) closeBlock(pos int) {
	r := &d.r
	for k := range d.answered {
		if d.answered[k] {
			continue
		}
		d.answered[k] = true
		id := d.calls[k].ID
		marker := SeedMessage{Role: RoleTool, Content: InterruptedToolResult, ToolCallID: id}
		if owner := d.history[d.open].ID; owner != "" && r.out[len(r.out)-1].ID == owner {
			// Inside the host message of the calls (a UIMessage): the
			// marker is part of it, as its other results are.
			marker.ID = owner
		}
		r.keep(&marker, d.open)
		r.add(pos, RepairMissingToolResult, d.openHost, id, missingText(id))
		r.edits[len(r.edits)-1] = HistoryEdit{Op: EditInsert, Index: hostStarts(d.history, pos), Call: d.openHost, Message: marker}
	}
}

// keep appends m, from the host's message at origin, to the repaired
// history.
//
//go:noinline
func (r *repaired) keep(m *SeedMessage, origin int) {
	r.out = append(r.out, *m)
	r.origin = append(r.origin, origin)
}

// add records one repair, found at message at, and the problem it fixes.
//
//go:noinline
func (r *repaired) add(at int, kind RepairKind, index int, callID, message string) {
	r.repairs = append(r.repairs, Repair{Kind: kind, Index: index, ToolCallID: callID})
	r.edits = append(r.edits, HistoryEdit{Op: EditDrop, Index: index})
	r.problems = append(r.problems, Problem{Code: CodeInvalidHistory, Index: index, Message: message, Repair: kind})
	r.at = append(r.at, at)
}

// wellFormed reports whether m breaks none of the rules checkHistory
// checks on a message alone (besides limits): repair only touches the
// linkage of such messages, and leaves the others to be refused.
func wellFormed(m *SeedMessage) bool {
	if !m.Role.Valid() {
		return false
	}
	if m.ContentMissing && !(m.Role == RoleAssistant && len(m.ToolCalls) > 0) {
		return false
	}
	if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
		return false
	}
	if m.ToolCallID != "" && m.Role != RoleTool {
		return false
	}
	return true
}

// startsHostMessage reports whether history[i] starts a host message for
// the duplicate rule: it does not continue the one before it, and is not
// an assistant or tool message with the id of the assistant or tool
// message before it. Such a run of messages is one host message: an
// assistant UIMessage split into several, or the session messages it
// became, passed back in the module's shape.
func startsHostMessage(history []SeedMessage, i int) bool {
	if i == 0 || history[i].Continues {
		return i == 0
	}
	m, prev := &history[i], &history[i-1]
	return m.ID == "" || m.ID != prev.ID || !inTurn(m.Role) || !inTurn(prev.Role)
}

// inTurn reports whether r is a role an assistant UIMessage splits into.
//
//go:noinline
func inTurn(r Role) bool { return r == RoleAssistant || r == RoleTool }

// The refusal messages of the kinds repair fixes, shared with checkHistory
// (not inlined: they build error texts only).

//go:noinline
func missingText(id string) string {
	return "tool call " + quote(id) + " has no tool result before the next user or assistant message"
}

//go:noinline
func orphanText(id string) string {
	return "tool result " + quote(id) + " answers no call of the preceding assistant message"
}

//go:noinline
func twiceText(id string) string { return "tool call " + quote(id) + " is answered twice" }

// sameHostMessage reports whether the host messages that start at
// history[a] and history[b] (a < b, both starting a host message, see
// startsHostMessage) have the same content: they yield as many seed
// messages, equal one by one in every field (id, role, content, whether
// content is missing, tool_call_id, tool calls, and whether each
// continues the one before it). A repeated id with other content is an
// edited message (the Vercel AI SDK keeps a message's id when it is
// edited), which repair does not drop.
func sameHostMessage(history []SeedMessage, a, b int) bool {
	for k := 0; ; k++ {
		i, j := a+k, b+k
		endA := i >= b || k > 0 && startsHostMessage(history, i)
		endB := j >= len(history) || k > 0 && startsHostMessage(history, j)
		if endA || endB {
			return endA && endB
		}
		m, o := &history[i], &history[j]
		if m.ID != o.ID || m.Role != o.Role || m.Content != o.Content || m.ContentMissing != o.ContentMissing ||
			m.ToolCallID != o.ToolCallID || m.Continues != o.Continues || len(m.ToolCalls) != len(o.ToolCalls) {
			return false
		}
		for c := range m.ToolCalls {
			if m.ToolCalls[c] != o.ToolCalls[c] {
				return false
			}
		}
	}
}

// editedText is the refusal message of a host message whose id already
// appeared at host index first with other content. No repair applies.
//
//go:noinline
func editedText(id string, first int) string {
	return "message id " + quote(id) + " already appeared at index " + itoa(first) + " with different content"
}

// duplicateText is the refusal message of a host message whose id
// already appeared at host index first.
func duplicateText(id string, first int) string {
	return "message id " + quote(id) + " already appeared at index " + itoa(first)
}

// seedHistory validates a run's history and, when the policy asks for it
// and the history is refused for a problem repair fixes, repairs it. It
// returns the history to seed (history itself, or its repaired copy), what
// validation learned, and the repairs applied with their edits.
func seedHistory(history []SeedMessage, limits Limits, repair bool) ([]SeedMessage, historyInfo, []Repair, []HistoryEdit, *Error) {
	info, err := validateHistory(history, limits)
	if err == nil {
		return history, info, nil, nil, nil
	}
	if !repair || err.Code != CodeInvalidHistory {
		return nil, info, nil, nil, err
	}
	rep := repairHistory(history)
	if len(rep.repairs) == 0 {
		return nil, info, nil, nil, err
	}
	if info, err = rep.validate(history, limits); err != nil {
		return nil, info, nil, nil, err
	}
	return rep.out, info, rep.repairs, rep.edits, nil
}

// RepairedHistory returns history with the repairs Policy.Repair applies
// to it, as SeedReport.Repaired holds them after a seed that repaired
// it, or nil when no repair applies. It does not validate: for an edge
// that runs the seed elsewhere (a module) and heals the host's copy
// itself once the seed reports repairs.
func RepairedHistory(history []SeedMessage) []SeedMessage {
	rep := repairHistory(history)
	if len(rep.repairs) == 0 {
		return nil
	}
	return rep.out
}

// EditOp names what a HistoryEdit does.
type EditOp string

// The edit operations.
const (
	// EditDrop leaves out the host message at Index.
	EditDrop EditOp = "drop"
	// EditInsert inserts Message, a marker (InterruptedToolResult),
	// before the host message at Index (at the end when Index is the
	// history's length).
	EditInsert EditOp = "insert"
)

// HistoryEdit is one repair as a change to the host's history, in the
// host's indexes (positions in the array the host passed, see
// SeedMessage.Continues): SeedReport.Edits lists them, one per repair.
// An edge renders them in the host's shape (docs/adr/0016-the-host-copy-heals.md):
// the kept host messages as they were, no dropped one, and each marker as
// a tool message before the host message at Index, or, when the calling
// host message (Call) holds the call as a part of its own (a Vercel AI
// SDK UIMessage), as that part's result.
type HistoryEdit struct {
	Op    EditOp
	Index int
	// Call is the host index of the calling message, for EditInsert.
	Call int
	// Message is the marker, for EditInsert: role tool, content
	// InterruptedToolResult, the call's id, and the calling message's
	// id when the marker is part of that host message.
	Message SeedMessage
}

// hostStarts returns the number of host messages that start before
// history[pos] (pos may be len(history)): the host index before which a
// message inserted at pos goes.
func hostStarts(history []SeedMessage, pos int) int {
	if pos == 0 {
		return 0
	}
	if pos < len(history) && !history[pos].Continues {
		return HostIndex(history, pos)
	}
	return HostIndex(history, pos-1) + 1
}

// UnreadableCheck is the HistoryCheck of a history that an edge could not
// read into seed messages (a message of the wrong shape, refused with err
// while decoding): its one problem is err, which no repair fixes.
func UnreadableCheck(err error) HistoryCheck {
	e := AsError(err)
	// append, not a one-element literal: the module then needs no
	// equality function for an array of one Problem.
	return HistoryCheck{Problems: append([]Problem(nil), Problem{Code: e.Code, Index: e.Index, Message: e.Message})}
}
