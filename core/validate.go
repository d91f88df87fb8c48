package core

// historyInfo is what validation learns about a history that it accepts.
type historyInfo struct {
	skippedSystem int
	bytes         int64
}

// ValidateHistory checks a whole history against the seeding rules and the
// seed limits, without changing anything. It returns nil or an *Error with
// CodeInvalidHistory or CodeLimitExceeded whose Index is the position of
// the message at fault in the array the host passed (see
// SeedMessage.Continues).
//
// The rules (docs/contract.md, "Seeding rules"): every role is known;
// content is present (an assistant message with tool calls may have
// none); only assistant messages carry tool calls, each with a unique,
// non-empty id and a name; only tool messages carry tool_call_id, and
// they must; each tool result answers, exactly once, a call of the
// nearest preceding assistant message; every call is answered before the
// next user or assistant message and before the end (else the assistant
// message is at fault); no host message repeats the id of an earlier one
// (ids are compared only when present). System messages are dropped
// before linkage is checked.
//
// The problems Policy.Repair fixes are refused here as the others; see
// CheckHistory.
func ValidateHistory(history []SeedMessage, limits Limits) error {
	_, err := validateHistory(history, limits.withDefaults())
	if err != nil {
		return err
	}
	return nil
}

func validateHistory(history []SeedMessage, limits Limits) (historyInfo, *Error) {
	info, err := checkHistory(history, limits, nil)
	if err != nil && err.Index >= 0 {
		err.Index = HostIndex(history, err.Index)
	}
	return info, err
}

// checkHistory checks history against the seeding rules and the seed
// limits, and returns the error with the index of the message at fault in
// history. rep is nil, or the repair history is the output of: the
// markers it inserted then count against no seed limit (they count in
// info.bytes, which the run reserves), and an earlier message named in an
// error is named by its index in the host's history.
func checkHistory(history []SeedMessage, limits Limits, rep *repaired) (historyInfo, *Error) {
	var hostIDs idTable // the host ids met, from the first one on
	info, err := checkLinks(history, limits, rep, &hostIDs)
	// Released here, not deferred in checkLinks: its many returns made
	// that defer a heap-style one, whose runtime code the module carried
	// for it alone. A panic in checkLinks only leaves the spare unset.
	hostIDs.release()
	return info, err
}

// checkLinks is checkHistory with the table of host ids it fills.
func checkLinks(history []SeedMessage, limits Limits, rep *repaired, hostIDs *idTable) (historyInfo, *Error) {
	var info historyInfo
	var seedBytes int64 // the bytes that count against MaxSeedBytes
	if len(history) > limits.MaxSeedMessages {
		return info, NewIndexError(CodeLimitExceeded, limits.MaxSeedMessages,
			"history has "+itoa(len(history))+" messages, more than maxSeedMessages ("+itoa(limits.MaxSeedMessages)+")")
	}
	// The open tool-call block: the index of the assistant message whose
	// calls are being answered, its call ids, which are answered and how
	// many are not. ids maps the ids to their place when the block has
	// more than a few calls, so that a message of many calls is checked
	// in linear time, not quadratic.
	open := -1
	var calls []ToolCall
	var answered []bool
	var ids map[string]int
	left := 0
	for i := range history {
		m := &history[i]
		if m.ID != "" && startsHostMessage(history, i) {
			if first := hostIDs.add(history, i); first >= 0 {
				if !sameHostMessage(history, first, i) {
					return info, NewIndexError(CodeInvalidHistory, i, editedText(m.ID, rep.hostIndex(history, first)))
				}
				return info, NewIndexError(CodeInvalidHistory, i, duplicateText(m.ID, rep.hostIndex(history, first)))
			}
		}
		if !m.Role.Valid() {
			return info, NewIndexError(CodeInvalidHistory, i, "unknown role "+quote(string(m.Role)))
		}
		size := textSize(m.ID, m.Content, m.ToolCallID, m.ToolCalls)
		info.bytes += size
		if rep == nil || !rep.inserted(i) {
			if size > limits.MaxMessageBytes {
				return info, NewIndexError(CodeLimitExceeded, i,
					"message is "+itoa(int(size))+" bytes, more than maxMessageBytes ("+itoa(int(limits.MaxMessageBytes))+")")
			}
			seedBytes += size
			if seedBytes > limits.MaxSeedBytes {
				return info, NewIndexError(CodeLimitExceeded, i,
					"history exceeds maxSeedBytes ("+itoa(int(limits.MaxSeedBytes))+") at this message")
			}
		}
		if m.ContentMissing && !(m.Role == RoleAssistant && len(m.ToolCalls) > 0) {
			return info, NewIndexError(CodeInvalidHistory, i, m.Role.String()+" message has no content")
		}
		if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
			return info, NewIndexError(CodeInvalidHistory, i, "only assistant messages may carry tool_calls")
		}
		if m.ToolCallID != "" && m.Role != RoleTool {
			return info, NewIndexError(CodeInvalidHistory, i, "only tool messages may carry tool_call_id")
		}
		switch m.Role {
		case RoleSystem:
			info.skippedSystem++
		case RoleUser:
			// The block stays open, fully answered: a later result for one
			// of its calls is then "answered twice".
			if err := unanswered(open, calls, answered, left); err != nil {
				return info, err
			}
		case RoleAssistant:
			if err := unanswered(open, calls, answered, left); err != nil {
				return info, err
			}
			open, calls, answered, left, ids = i, m.ToolCalls, answered[:0], len(m.ToolCalls), nil
			if len(calls) > indexCalls {
				ids = make(map[string]int, len(calls))
			}
			for j := range calls {
				c := &calls[j]
				if c.ID == "" {
					return info, NewIndexError(CodeInvalidHistory, i, "tool call "+itoa(j)+" has no id")
				}
				if c.Name == "" {
					return info, NewIndexError(CodeInvalidHistory, i, "tool call "+quote(c.ID)+" has no name")
				}
				if callIndex(calls[:j], ids, c.ID) >= 0 {
					return info, NewIndexError(CodeInvalidHistory, i, "tool call id "+quote(c.ID)+" is used twice")
				}
				if ids != nil {
					ids[c.ID] = j + 1
				}
				answered = append(answered, false)
			}
		case RoleTool:
			if m.ToolCallID == "" {
				return info, NewIndexError(CodeInvalidHistory, i, "tool message has no tool_call_id")
			}
			k := -1
			if open >= 0 {
				k = callIndex(calls, ids, m.ToolCallID)
			}
			if k < 0 {
				return info, NewIndexError(CodeInvalidHistory, i, orphanText(m.ToolCallID))
			}
			if answered[k] {
				return info, NewIndexError(CodeInvalidHistory, i, twiceText(m.ToolCallID))
			}
			answered[k] = true
			left--
		}
	}
	if err := unanswered(open, calls, answered, left); err != nil {
		return info, err
	}
	return info, nil
}

// unanswered returns the error for the first call of the open block (at
// open) that has no result, or nil when left, the number of those, is 0.
//
//go:noinline
func unanswered(open int, calls []ToolCall, answered []bool, left int) *Error {
	if left == 0 {
		return nil
	}
	for i, done := range answered {
		if !done {
			return NewIndexError(CodeInvalidHistory, open, missingText(calls[i].ID))
		}
	}
	return nil
}

// String returns the role's name.
func (r Role) String() string { return string(r) }

// quote returns s in double quotes, cut to 64 bytes so that an error
// message never carries a huge string from the host. It is not inlined:
// it builds error texts only, at some twenty call sites.
//
//go:noinline
func quote(s string) string {
	const max = 64
	if len(s) > max {
		s = s[:max] + "..."
	}
	return "\"" + s + "\""
}

// indexCalls is the number of tool calls above which checkHistory finds
// calls by id through a map rather than a scan.
const indexCalls = 16

// callIndex returns the place of the call with id among calls, or -1.
// ids, when not nil, maps the ids of calls to their place plus one (0 is
// absent: the module then needs no comma-ok read of a string-keyed map,
// and no runtime code for one), and is read instead of calls. It is not inlined (neither are Role.Valid and
// inTurn): the module is smaller with one copy of each.
//
//go:noinline
func callIndex(calls []ToolCall, ids map[string]int, id string) int {
	if ids != nil {
		if k := ids[id]; k > 0 {
			return k - 1
		}
		return -1
	}
	for k := range calls {
		if calls[k].ID == id {
			return k
		}
	}
	return -1
}

// idTable finds a repeated host id in linear time: an open-addressing
// table of the positions (plus one; 0 is empty) of the messages whose ids
// it holds, found by an FNV-1a hash of the id and compared by the id
// itself. A Go map did the same at ten times the cost of validating a
// history with ids (0.9 ms at 10,000 messages, and 440 KB); the table is
// reused across calls.
type idTable struct {
	slots []int32
	mask  uint32
}

// spareIDs keeps one table for the next validation.
var spareIDs struct {
	mu    mutex
	slots []int32
}

// add records history[i]'s id, or returns the position of the earlier
// message that has it (-1 when there is none).
func (t *idTable) add(history []SeedMessage, i int) int {
	if t.slots == nil {
		t.init(len(history))
	}
	id := history[i].ID
	h := uint32(2166136261)
	for k := 0; k < len(id); k++ {
		h = (h ^ uint32(id[k])) * 16777619
	}
	for j := h & t.mask; ; j = (j + 1) & t.mask {
		s := t.slots[j]
		if s == 0 {
			t.slots[j] = int32(i + 1)
			return -1
		}
		if history[s-1].ID == id {
			return int(s - 1)
		}
	}
}

// init takes the spare table, or makes one, with at least twice n slots.
func (t *idTable) init(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	spareIDs.mu.Lock()
	slots := spareIDs.slots
	spareIDs.slots = nil
	spareIDs.mu.Unlock()
	if cap(slots) >= size {
		slots = slots[:size]
		clear(slots)
	} else {
		slots = make([]int32, size)
	}
	t.slots, t.mask = slots, uint32(size-1)
}

// release keeps t's table as the spare, unless it is larger than a
// default-limit history needs.
func (t *idTable) release() {
	if t.slots == nil || len(t.slots) > 1<<18 {
		return
	}
	spareIDs.mu.Lock()
	if cap(t.slots) > cap(spareIDs.slots) {
		spareIDs.slots = t.slots
	}
	spareIDs.mu.Unlock()
}
