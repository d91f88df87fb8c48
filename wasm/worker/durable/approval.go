package durable

import (
	"encoding/json"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/httpapi"
)

// Tool approvals in the durable deployment
// (docs/adr/0019-tool-approvals.md): a paused run's state is the stored
// conversation, whose last message holds the calls awaiting approval. A
// resume ({approvals} without history) seeds an evicted object's session
// from storage as any turn does; these helpers keep a resume that brings
// its own history on the same rule as any other request.

// awaitsOnly reports whether approvals answer what c finds wrong: every
// problem is a missing result of a call pending at the history's end,
// which a run with approvals resumes instead of refusing.
func awaitsOnly(c core.HistoryCheck, approvals []core.Approval) bool {
	if len(approvals) == 0 || len(c.Awaiting) == 0 {
		return false
	}
	for _, p := range c.Problems {
		if p.Repair != core.RepairMissingToolResult || p.Index != c.Awaiting[0].Index {
			return false
		}
	}
	return true
}

// carriedApprovals returns the "approvals" field of a body whose decisions
// were carried by its UIMessage history (a body with neither input nor
// approvals), for a body whose history the stored messages replace;
// nil when there are none.
func carriedApprovals(fields map[string]json.RawMessage) json.RawMessage {
	if _, ok := fields["approvals"]; ok {
		return nil
	}
	if _, ok := fields["input"]; ok {
		return nil
	}
	h, ok := fields["history"]
	if !ok {
		return nil
	}
	rb, derr := httpapi.DecodeRunBody(append(append([]byte(`{"history":`), h...), '}'))
	if derr != nil || len(rb.Approvals) == 0 {
		return nil
	}
	out := make([]map[string]any, len(rb.Approvals))
	for i, a := range rb.Approvals {
		out[i] = map[string]any{"toolCallId": a.ToolCallID, "approved": a.Approved}
		if a.Reason != "" {
			out[i]["reason"] = a.Reason
		}
	}
	b, _ := json.Marshal(out)
	return b
}
