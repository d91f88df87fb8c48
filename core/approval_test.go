package core_test

import (
	"github.com/agentrt/agentrt/core"
)

// withoutApprovals is the check of a history as a seed without approvals
// meets it: the calls awaiting approval at its end are missing tool
// results, listed after the other problems unless checking stopped at
// one that no repair fixes.
func withoutApprovals(c core.HistoryCheck) core.HistoryCheck {
	if len(c.Awaiting) == 0 || len(c.Problems) > 0 && c.Problems[len(c.Problems)-1].Repair == "" {
		return c
	}
	for _, a := range c.Awaiting {
		c.Problems = append(c.Problems, core.Problem{Code: core.CodeInvalidHistory, Index: a.Index,
			Message: `tool call "` + a.ToolCallID + `" has no tool result before the next user or assistant message`,
			Repair:  core.RepairMissingToolResult})
	}
	c.OK, c.Awaiting = false, nil
	return c
}
