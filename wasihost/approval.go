package wasihost

import "github.com/agentrt/agentrt/core"

// Tool approvals (docs/adr/0019-tool-approvals.md) do not cross the wire
// yet: the begin frame carries no approvals and the module cannot ask a
// Go predicate. Rather than run a tool that needs approval without one,
// or drop a run's decisions, both are refused here, typed.

// errNoApprovalTool refuses a tool with NeedsApproval at NewRuntime.
func errNoApprovalTool(name string) *core.Error {
	return core.NewError(core.CodeInvalidArgument, "tool "+name+" needs approval, which the wasi module does not support yet: it would run without one")
}

// errNoApprovals refuses a run with approvals.
var errNoApprovals = core.NewError(core.CodeInvalidArgument, "approvals are not supported by the wasi module yet")
