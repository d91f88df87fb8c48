package httpapi

import (
	"encoding/json"
	"strconv"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// Tool approvals on the HTTP edge (docs/adr/0019-tool-approvals.md): the
// body's "approvals" and the decisions of a UIMessage history are read
// here; core decides whether they answer the calls the session awaits.

// approvalKeys are the keys of one entry of "approvals".
var approvalKeys = []string{"toolCallId", "approved", "reason", "signature"}

// rawApproval is one entry of "approvals" before its fields are checked.
type rawApproval struct {
	ToolCallID json.RawMessage `json:"toolCallId"`
	Approved   json.RawMessage `json:"approved"`
	Reason     json.RawMessage `json:"reason"`
	Signature  json.RawMessage `json:"signature"`
}

// decodeApprovals reads "approvals": an array of {toolCallId (a non-empty
// string), approved (a boolean), reason? (a string), signature? (a
// string: the call's, from pendingApprovals)}. Anything else is
// refused with CodeInvalidArgument naming the entry.
func decodeApprovals(r json.RawMessage) ([]core.Approval, *core.Error) {
	var items []json.RawMessage
	if r[0] != '[' || json.Unmarshal(r, &items) != nil {
		return nil, invalidArg("approvals must be an array")
	}
	if len(items) == 0 {
		return nil, invalidArg("approvals must not be empty")
	}
	out := make([]core.Approval, len(items))
	for i, item := range items {
		at := "approvals[" + strconv.Itoa(i) + "]"
		if len(item) == 0 || item[0] != '{' {
			return nil, invalidArg(at + " must be an object")
		}
		if err := knownKeys(item, at, approvalKeys); err != nil {
			return nil, err
		}
		var raw rawApproval
		if json.Unmarshal(item, &raw) != nil {
			return nil, invalidArg(at + " must be an object")
		}
		id, ok := decodeString(raw.ToolCallID)
		if !ok || id == "" {
			return nil, invalidArg(at + ".toolCallId must be a non-empty string")
		}
		out[i].ToolCallID = id
		switch string(raw.Approved) {
		case "true":
			out[i].Approved = true
		case "false":
		default:
			return nil, invalidArg(at + ".approved must be a boolean")
		}
		if !isNull(raw.Reason) {
			if out[i].Reason, ok = decodeString(raw.Reason); !ok {
				return nil, invalidArg(at + ".reason must be a string")
			}
		}
		if !isNull(raw.Signature) {
			if out[i].Signature, ok = decodeString(raw.Signature); !ok {
				return nil, invalidArg(at + ".signature must be a string")
			}
		}
	}
	return out, nil
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
