//go:build js && agentrt_nocontext

package core

// The GOOS=js module has no tool approvals yet (see approval_run.go): no
// tool it runs can need approval, and a run carrying approvals is refused,
// never run without them.

// seedAwaiting is seedHistory: no history's calls can be approved here.
func seedAwaiting(history []SeedMessage, limits Limits, repair bool) ([]SeedMessage, historyInfo, []Repair, []HistoryEdit, *Error) {
	return seedHistory(history, limits, repair)
}

// checkApprovals refuses a run with approvals.
func checkApprovals(req *RunRequest, _ *Limits) *Error {
	if len(req.Approvals) == 0 {
		return nil
	}
	return NewError(CodeInvalidArgument, "approvals are not supported by this module yet")
}

// prepareResume is never reached: checkApprovals refused the run.
func (t *turn) prepareResume([]Message) *Error { return checkApprovals(&t.run.req, nil) }

// awaitingError accepts every input: no session here awaits approval.
func (t *turn) awaitingError([]Message) *Error { return nil }

// askApprovals leaves every call to run: no tool here needs approval.
func (t *turn) askApprovals(*Message) *Error {
	t.appr = nil
	return nil
}

// approvalStep is never reached: the turn has no approval state.
func (t *turn) approvalStep() bool { return false }

// pause is never reached: the turn has no approval state.
func (t *turn) pause() { t.complete() }

// awaiting lists nothing: CheckHistory reports pending calls as the
// problems they are without approvals.
func awaiting([]SeedMessage) []AwaitingCall { return nil }
