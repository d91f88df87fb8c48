package httpapi

import (
	"encoding/json"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// Tool approvals on the HTTP edge (docs/adr/0019-tool-approvals.md): the
// body's "approvals" and the decisions of a UIMessage history are read
// here; core decides whether they answer the calls the session awaits.

// decodeApprovals reads "approvals" with the reader every edge shares
// (hostmsg.ReadApprovals): an array of {toolCallId (a non-empty string),
// approved (a boolean), reason? (a string), signature? (a string: the
// call's, from pendingApprovals)}. Anything else is refused with
// CodeInvalidArgument naming the entry.
func decodeApprovals(r json.RawMessage) ([]core.Approval, *core.Error) {
	v, err := hostjson.Parse(r)
	if err != nil {
		return nil, invalidArg("approvals must be a non-empty array")
	}
	a, msg := hostmsg.ReadApprovals(v, "approvals", true)
	if msg != "" {
		return nil, invalidArg(msg)
	}
	return a, nil
}

// historyApprovals reads the decisions a UIMessage history carries (the
// tool parts of its last message in state approval-responded), as every
// edge reads them (hostmsg.Approvals).
func historyApprovals(r json.RawMessage) ([]core.Approval, *core.Error) {
	v, err := hostjson.Parse(r)
	if err != nil {
		return nil, invalidArg("history must be an array")
	}
	a, err := hostmsg.Approvals(v)
	if err != nil {
		return nil, core.AsError(err)
	}
	return a, nil
}

// storedSignatures gives each approval without a signature the one its
// call carries in the history's last message, when that message holds
// the call with a "signature" (a tool call of the history's own or
// OpenAI shape, as a result's appended messages render a paused call:
// the client stores the signature with the message). A history that is
// not JSON an array of objects leaves them as they are.
func storedSignatures(approvals []core.Approval, history json.RawMessage) {
	var msgs []json.RawMessage
	if len(approvals) == 0 || json.Unmarshal(history, &msgs) != nil || len(msgs) == 0 {
		return
	}
	var last struct {
		ToolCalls []struct {
			ID        string `json:"id"`
			Signature string `json:"signature"`
		} `json:"tool_calls"`
		ToolCallsCamel []struct {
			ID        string `json:"id"`
			Signature string `json:"signature"`
		} `json:"toolCalls"`
	}
	if json.Unmarshal(msgs[len(msgs)-1], &last) != nil {
		return
	}
	calls := append(last.ToolCalls, last.ToolCallsCamel...)
	for i := range approvals {
		a := &approvals[i]
		for _, c := range calls {
			if a.Signature == "" && c.ID == a.ToolCallID {
				a.Signature = c.Signature
			}
		}
	}
}
