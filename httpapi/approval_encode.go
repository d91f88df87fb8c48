package httpapi

import "github.com/agentrt/agentrt/core"

// wirePending is a call awaiting approval in a result's
// "pendingApprovals".
type wirePending struct {
	ToolCallID string `json:"toolCallId"`
	Name       string `json:"name"`
	Arguments  string `json:"arguments"`
	Signature  string `json:"signature,omitempty"`
}

// wireAwaiting is a call pending at the end of a checked history, in
// "awaiting" of POST /v1/history/check.
type wireAwaiting struct {
	Index      int    `json:"index"`
	ToolCallID string `json:"toolCallId"`
	Name       string `json:"name"`
	Arguments  string `json:"arguments"`
}

func toWirePending(ps []core.PendingApproval) []wirePending {
	if len(ps) == 0 {
		return nil
	}
	out := make([]wirePending, len(ps))
	for i, p := range ps {
		out[i] = wirePending(p)
	}
	return out
}

func toWireAwaiting(as []core.AwaitingCall) []wireAwaiting {
	if len(as) == 0 {
		return nil
	}
	out := make([]wireAwaiting, len(as))
	for i, a := range as {
		out[i] = wireAwaiting(a)
	}
	return out
}

// signCalls sets, on the tool calls of w's reply and appended messages,
// the signature of each call the run paused on (Config.SignApproval of
// the runtime), so that a client that stores the messages stores it.
func signCalls(w *wireResult, ps []core.PendingApproval) {
	for _, p := range ps {
		if p.Signature == "" {
			continue
		}
		sign := func(m *wireMessage) {
			for k := range m.ToolCalls {
				if m.ToolCalls[k].ID == p.ToolCallID {
					m.ToolCalls[k].Signature = p.Signature
				}
			}
		}
		sign(&w.Reply)
		for i := range w.Appended {
			sign(&w.Appended[i])
		}
	}
}
