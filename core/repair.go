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
	if _, err := validateHistory(history, limits); err == nil {
		return HistoryCheck{OK: true}
	} else if err.Code != CodeInvalidHistory {
		return HistoryCheck{Problems: []Problem{{Code: err.Code, Index: err.Index, Message: err.Message}}}
	}
	rep := repairHistory(history)
	problems := rep.problems
	if _, err, at := rep.validateAt(history, limits); err != nil {
		// Checking stops there, as seeding does: the repairs met later
		// are not listed. At that message, the calls a well-formed
		// message leaves unanswered are met before its tool calls are
		// checked (see checkHistory).
		n := 0
		for n < len(problems) && (rep.at[n] < at || rep.at[n] == at && problems[n].Repair == RepairMissingToolResult &&
			at < len(history) && wellFormed(&history[at]) && err.Code == CodeInvalidHistory) {
			n++
		}
		problems = append(problems[:n:n], Problem{Code: err.Code, Index: err.Index, Message: err.Message})
	}
	return HistoryCheck{Problems: problems}
}

// CheckHistory is the function CheckHistory with the runtime's limits.
func (rt *Runtime) CheckHistory(history []SeedMessage) HistoryCheck {
	return CheckHistory(history, rt.limits)
}

// repaired is a history with the repairable problems fixed.
type repaired struct {
	// out is the repaired history; origin[i] is the position in the
	// host's history of out[i] (of the calling assistant message for an
	// inserted result).
	out    []SeedMessage
	origin []int
	// repairs and problems describe each repair, in order; at[i] is the
	// position in the host's history of the message at which repair i
	// was found (len(history) at the end).
	repairs  []Repair
	problems []Problem
	at       []int
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
		// do not make it refused.
		limits.MaxSeedMessages = len(r.out)
	}
	info, err := checkHistory(r.out, limits)
	at := -1
	if err != nil && err.Index >= 0 && err.Index < len(r.origin) {
		at = r.origin[err.Index]
		err.Index = HostIndex(history, at)
	}
	return info, err, at
}

// repairHistory applies the repair rules to history in one pass, with the
// linkage rules of checkHistory: it drops duplicate host messages, orphan
// and duplicate tool results, and inserts InterruptedToolResult results
// for the calls a block leaves unanswered. Everything else, valid or not,
// is kept as it is, for validation to accept or refuse.
func repairHistory(history []SeedMessage) repaired {
	var r repaired
	r.out = make([]SeedMessage, 0, len(history)+1)
	r.origin = make([]int, 0, len(history)+1)
	var seen map[string]int // host id -> host index of its first message
	open, openHost := -1, -1
	var calls []ToolCall
	var answered []bool
	host := -1
	dropping := false
	pos := 0 // the message being read
	closeBlock := func() {
		for k := range answered {
			if answered[k] {
				continue
			}
			answered[k] = true
			id := calls[k].ID
			marker := SeedMessage{Role: RoleTool, Content: InterruptedToolResult, ToolCallID: id}
			if owner := history[open].ID; owner != "" && r.out[len(r.out)-1].ID == owner {
				// Inside the host message of the calls (a UIMessage): the
				// marker is part of it, as its other results are.
				marker.ID = owner
			}
			r.out = append(r.out, marker)
			r.origin = append(r.origin, open)
			r.add(pos, RepairMissingToolResult, openHost, id,
				"tool call "+quote(id)+" has no tool result before the next user or assistant message")
		}
	}
	for i := range history {
		m := &history[i]
		pos = i
		if i == 0 || !m.Continues {
			host++
		}
		if startsHostMessage(history, i) {
			dropping = false
			if m.ID != "" {
				if _, ok := seen[m.ID]; ok {
					dropping = true
				} else {
					if seen == nil {
						seen = make(map[string]int)
					}
					seen[m.ID] = host
				}
			}
		}
		if dropping {
			if i == 0 || !m.Continues {
				r.add(i, RepairDuplicateMessage, host, "", duplicateText(m.ID, seen[m.ID]))
			}
			continue
		}
		switch {
		case m.Role == RoleUser && wellFormed(m):
			closeBlock()
		case m.Role == RoleAssistant && wellFormed(m):
			closeBlock()
			open, openHost, calls = i, host, m.ToolCalls
			answered = answered[:0]
			for range calls {
				answered = append(answered, false)
			}
		case m.Role == RoleTool && m.ToolCallID != "" && wellFormed(m):
			k := -1
			if open >= 0 {
				k = callIndex(calls, nil, m.ToolCallID)
			}
			if k < 0 {
				r.add(i, RepairOrphanToolResult, host, m.ToolCallID,
					"tool result "+quote(m.ToolCallID)+" answers no call of the preceding assistant message")
				continue
			}
			if answered[k] {
				r.add(i, RepairDuplicateToolResult, host, m.ToolCallID, "tool call "+quote(m.ToolCallID)+" is answered twice")
				continue
			}
			answered[k] = true
		}
		r.out = append(r.out, *m)
		r.origin = append(r.origin, i)
	}
	pos = len(history)
	closeBlock()
	return r
}

// add records one repair, found at message at, and the problem it fixes.
func (r *repaired) add(at int, kind RepairKind, index int, callID, message string) {
	r.repairs = append(r.repairs, Repair{Kind: kind, Index: index, ToolCallID: callID})
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
func inTurn(r Role) bool { return r == RoleAssistant || r == RoleTool }

// duplicateText is the refusal message of a host message whose id
// already appeared at host index first.
func duplicateText(id string, first int) string {
	return "message id " + quote(id) + " already appeared at index " + itoa(first)
}

// seedHistory validates a run's history and, when the policy asks for it
// and the history is refused for a problem repair fixes, repairs it. It
// returns the history to seed (history itself, or its repaired copy), what
// validation learned, and the repairs applied.
func seedHistory(history []SeedMessage, limits Limits, repair bool) ([]SeedMessage, historyInfo, []Repair, *Error) {
	info, err := validateHistory(history, limits)
	if err == nil {
		return history, info, nil, nil
	}
	if !repair || err.Code != CodeInvalidHistory {
		return nil, info, nil, err
	}
	rep := repairHistory(history)
	if len(rep.repairs) == 0 {
		return nil, info, nil, err
	}
	if info, err = rep.validate(history, limits); err != nil {
		return nil, info, nil, err
	}
	return rep.out, info, rep.repairs, nil
}

// UnreadableCheck is the HistoryCheck of a history that an edge could not
// read into seed messages (a message of the wrong shape, refused with err
// while decoding): its one problem is err, which no repair fixes.
func UnreadableCheck(err error) HistoryCheck {
	e := AsError(err)
	return HistoryCheck{Problems: []Problem{{Code: e.Code, Index: e.Index, Message: e.Message}}}
}
