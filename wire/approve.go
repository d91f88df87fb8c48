package wire

import "github.com/agentrt/agentrt/core"

// Tool approvals on the wire (docs/wire.md, "Approvals";
// docs/adr/0019-tool-approvals.md): a begin frame's approvals, a config
// frame's per-tool approval mode, the approval action that asks the host
// whether a call needs approval, the approval frame that answers it, and
// a done action's pending calls.

// KindApproval is the host's answer to an approval action: whether the
// call needs approval, or the failure of its predicate.
const KindApproval Kind = 0x08

// ActApprove: ask the host whether the call needs approval (its tool's
// predicate) and answer with an approval frame. The call is in Call.
const ActApprove ActionKind = 7

// ApprovalMode says whether a tool's calls need approval: a config
// frame's byte per tool (version ConfigVersionApprovals).
type ApprovalMode byte

// Approval modes.
const (
	// ApprovalNever: the calls run without approval.
	ApprovalNever ApprovalMode = 0
	// ApprovalAlways: every call needs approval; the host is not asked.
	ApprovalAlways ApprovalMode = 1
	// ApprovalAsk: the module asks the host about each call (ActApprove).
	ApprovalAsk ApprovalMode = 2
)

// ConfigVersionApprovals is the config frame version that follows each
// tool's parameters with its ApprovalMode byte. AppendConfig writes it
// only when a tool's mode is not ApprovalNever, so that a module that
// knows no approvals refuses such a frame rather than run those tools
// without one.
const ConfigVersionApprovals = 4

// beginApprovals is the further begin flag that says the frame ends
// with the run's approvals (Begin.Approvals).
const beginApprovals = 1 << 1

// appendApprovals appends a count and each approval: its call id, a byte
// 1 for approved or 0 for denied, and the reason.
func appendApprovals(dst []byte, list []core.Approval) []byte {
	dst = AppendUvarint(dst, uint64(len(list)))
	for i := range list {
		a := &list[i]
		dst = AppendString(dst, a.ToolCallID)
		dst = appendBool(dst, a.Approved)
		dst = AppendString(dst, a.Reason)
	}
	return dst
}

func (r *reader) approvals() []core.Approval {
	n := r.count("approval count", 3)
	if r.err != nil {
		return nil
	}
	list := make([]core.Approval, n)
	for i := range list {
		list[i] = core.Approval{ToolCallID: r.str("approval toolCallId"), Approved: r.bool("approval approved flag"), Reason: r.str("approval reason")}
	}
	return list
}

// appendPending appends a result's pending approvals: a count and each
// call (id, name, arguments).
func appendPending(dst []byte, list []core.PendingApproval) []byte {
	dst = AppendUvarint(dst, uint64(len(list)))
	for i := range list {
		p := &list[i]
		dst = appendCall(dst, &core.ToolCall{ID: p.ToolCallID, Name: p.Name, Arguments: p.Arguments})
	}
	return dst
}

// pending reads a result's pending approvals: with any, the result is
// awaiting approval and its reply is the last assistant message it
// appended, the one whose calls wait.
func (r *reader) pending(res *core.Result) {
	calls := r.calls()
	if r.err != nil || calls == nil {
		return
	}
	res.Status = core.StatusAwaitingApproval
	res.PendingApprovals = make([]core.PendingApproval, len(calls))
	for i, c := range calls {
		res.PendingApprovals[i] = core.PendingApproval{ToolCallID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	for i := len(res.Appended) - 1; i >= 0; i-- {
		if res.Appended[i].Role == core.RoleAssistant {
			res.Reply = res.Appended[i]
			return
		}
	}
	r.fail("a result awaiting approval appends the reply whose calls wait")
}

// ApprovalAnswer is an approval frame: the host's answer to the approval
// action of the turn with Handle.
type ApprovalAnswer struct {
	Handle uint64
	// Need says the call needs approval.
	Need bool
	// Failed says the predicate threw or rejected; Error is its text
	// (the run fails with tool_error).
	Failed bool
	Error  string
}

// AppendApproval appends an approval frame: the handle, a status byte
// (0, or 1 for failed), then the need byte (0 or 1) or the error text.
func AppendApproval(dst []byte, a *ApprovalAnswer) []byte {
	dst = appendHeader(dst, KindApproval)
	dst = AppendUvarint(dst, a.Handle)
	dst = appendStatus(dst, a.Failed, false)
	if a.Failed {
		return AppendString(dst, a.Error)
	}
	return appendBool(dst, a.Need)
}

// DecodeApproval decodes an approval frame.
func DecodeApproval(b []byte) (*ApprovalAnswer, error) {
	var a Answer
	if err := DecodeAnswerInto(&a, b); err != nil {
		return nil, err
	}
	if a.Kind != KindApproval {
		return nil, core.NewError(core.CodeInvalidArgument, "wire: not a version 1 frame of kind "+itoa(int(KindApproval)))
	}
	return &ApprovalAnswer{Handle: a.Handle, Need: a.Need, Failed: a.Failed, Error: a.Text}, nil
}
