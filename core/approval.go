package core

// This file holds tool approvals (docs/adr/0019-tool-approvals.md): a run
// stops before a tool that needs a person's approval runs, and a later
// run carrying the decisions resumes it. The pending state is the
// session's history itself: the calls of its last assistant message that
// have no result.

// StatusAwaitingApproval is the Result.Status of a run that stopped
// before calls that need approval (see Result.PendingApprovals).
const StatusAwaitingApproval = "awaiting_approval"

// EventRunAwaitingApproval ends a run that stopped for approvals, in
// place of run.completed; its Result is set.
const EventRunAwaitingApproval EventType = "run.awaiting_approval"

// DeniedToolResult starts the content of the tool result appended for a
// denied call: "Tool call denied." or "Tool call denied: " and the
// reason. It is fixed: hosts and models may recognise it.
const DeniedToolResult = "Tool call denied"

// PendingApproval is a tool call that awaits approval.
type PendingApproval struct {
	ToolCallID string
	Name       string
	// Arguments is the JSON text the model gave.
	Arguments string
	// Signature is Config.SignApproval's signature of the call, or ""
	// without one: an approval of the call carries it back.
	Signature string
}

// Approval is a person's decision on a pending tool call: approved, the
// tool runs; denied, the call gets a DeniedToolResult result with Reason.
type Approval struct {
	ToolCallID string
	Approved   bool
	Reason     string
	// Signature is the call's PendingApproval.Signature; a runtime with
	// Config.SignApproval requires it on a cold resume.
	Signature string
}

// AwaitingCall is a call pending at the end of a history, as CheckHistory
// reports it: Index is the host index of the assistant message that made
// it, Name and Arguments (JSON text) what the call asks, for a host that
// shows the decision after a restart.
type AwaitingCall struct {
	Index      int
	ToolCallID string
	Name       string
	Arguments  string
}

// DeniedContent is the content of the tool result of a call denied with
// reason (which may be empty): DeniedToolResult, then "." or ": reason".
func DeniedContent(reason string) string { return deniedText(reason) }

// deniedText is the content of a denied call's result.
func deniedText(reason string) string {
	if reason == "" {
		return DeniedToolResult + "."
	}
	return DeniedToolResult + ": " + reason
}

// callMode is what the tool loop does with a call of the reply.
type callMode uint8

const (
	callRun  callMode = iota // run it (approved, or needing no approval)
	callWait                 // leave it: it awaits approval, or is answered
	callDeny                 // answer it with a DeniedToolResult
)

// approvals is a turn's approval state for the reply whose calls run:
// one mode (and denial reason) per call, and the calls left pending.
type approvals struct {
	modes   []callMode
	reasons []string
	pending []PendingApproval
}
