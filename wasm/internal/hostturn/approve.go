package hostturn

import (
	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/wire"
)

// feedApproval hands an approval frame to its turn: whether the call
// needs approval, or its predicate's failure, which fails the run with
// tool_error.
func feedApproval(tn *core.Turn, a *wire.Answer) core.Action {
	if a.Failed {
		return tn.FeedApproval(false, core.NewError(core.CodeToolError, a.Text))
	}
	return tn.FeedApproval(a.Need, nil)
}
