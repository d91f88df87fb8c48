package wasihost

import (
	"context"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// Tool approvals (docs/adr/0019-tool-approvals.md) cross the wire: a
// tool with NeedsApproval is declared to the module with the approval
// mode "ask" (the config frame's byte), the module asks this host about
// each call with an approval action, answered here by the Go predicate,
// and a run's approvals travel in its begin frame. The rules (what is
// pending, what an approval may answer, exactly once) stay in core,
// inside the module.

// approve answers an approval action: the tool's NeedsApproval for the
// call, bounded by the run's context and timeout as a tool call is. An
// error or a panic of the predicate fails the run with tool_error.
func (t *turn) approve(a *wire.Action) (*wire.Action, error) {
	need, err := t.call(func(ctx context.Context) (any, error) { return t.needs(a) })
	if err == errStopped {
		return t.stop()
	}
	r := wire.ApprovalAnswer{Handle: t.handle}
	if err != nil {
		r.Failed, r.Error = true, errText(err)
	} else {
		r.Need, _ = need.(bool)
	}
	return t.rt.feed(t, wire.AppendApproval(nil, &r))
}

// needs calls the NeedsApproval of the action's tool.
func (t *turn) needs(a *wire.Action) (bool, error) {
	tool := t.rt.tools[a.Call.Name]
	if tool == nil || tool.NeedsApproval == nil {
		return false, core.NewError(core.CodeToolError, "the host has no approval check for tool "+a.Call.Name)
	}
	return tool.NeedsApproval(core.ToolInvocation{RunID: t.req.RunID, SessionID: t.req.SessionID,
		ToolCallID: a.Call.ID, Name: a.Call.Name, Arguments: a.Call.Arguments})
}
