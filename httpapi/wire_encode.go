package httpapi

import (
	"encoding/json"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// The JSON shapes the API writes. They match the module's JavaScript
// contract (docs/contract.md): camelCase fields, except the message fields
// tool_call_id and tool_calls, which are snake_case as hosts store them.
// What the API reads is in wire_decode.go.

// wireMessage is a session message as the API writes it.
type wireMessage struct {
	Role       core.Role      `json:"role"`
	Content    string         `json:"content"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ID         string         `json:"id,omitempty"`
}

type wireToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Signature is set on a call a paused run waits on, on a runtime
	// that signs them (core.Config.SignApproval).
	Signature string `json:"signature,omitempty"`
}

type wireSeed struct {
	Mode          core.SeedOutcome `json:"mode"`
	Seeded        int              `json:"seeded"`
	SkippedSystem int              `json:"skippedSystem"`
	Repairs       []wireRepair     `json:"repairs,omitempty"`
	// Repaired is the host's history with the repairs applied, in the
	// shape the request sent it (docs/adr/0016-the-host-copy-heals.md):
	// set on a result whose seed repaired the history.
	Repaired json.RawMessage `json:"repaired,omitempty"`
}

// healedHistory renders s's repaired history in the shape of the
// history of the request body, or returns nil when s has none.
func healedHistory(body []byte, s *core.SeedReport) json.RawMessage {
	if s.Repaired == nil {
		return nil
	}
	v, err := hostjson.Parse(body)
	if err != nil {
		return nil
	}
	h := v.Get("history")
	if h.Kind() != hostmsg.Array {
		return nil
	}
	return hostjson.AppendHealed(nil, h, s.Edits)
}

type wireRepair struct {
	Kind       core.RepairKind `json:"kind"`
	Index      int             `json:"index"`
	ToolCallID string          `json:"toolCallId,omitempty"`
}

type wireCheck struct {
	OK       bool          `json:"ok"`
	Problems []wireProblem `json:"problems"`
	// Paused is set when the history ends with calls awaiting approval.
	Paused bool `json:"paused,omitempty"`
	// Awaiting lists the calls pending at the history's end, if any.
	Awaiting []wireAwaiting `json:"awaiting,omitempty"`
	// Head is the head of the history as sent (core.HistoryHead).
	Head string `json:"head,omitempty"`
}

type wireProblem struct {
	Code    core.Code        `json:"code"`
	Index   int              `json:"index"`
	Message string           `json:"message"`
	Repair  *core.RepairKind `json:"repair"`
}

func toWireCheck(c core.HistoryCheck) wireCheck {
	w := wireCheck{OK: c.OK, Paused: c.Paused, Problems: make([]wireProblem, len(c.Problems))}
	for i, p := range c.Problems {
		w.Problems[i] = wireProblem{Code: p.Code, Index: p.Index, Message: p.Message}
		if p.Repair != "" {
			kind := p.Repair
			w.Problems[i].Repair = &kind
		}
	}
	w.Awaiting = toWireAwaiting(c.Awaiting)
	w.Head = c.Head
	return w
}

func toWireSeed(s *core.SeedReport) wireSeed {
	w := wireSeed{Mode: s.Mode, Seeded: s.Seeded, SkippedSystem: s.SkippedSystem}
	if len(s.Repairs) > 0 {
		w.Repairs = make([]wireRepair, len(s.Repairs))
		for i, r := range s.Repairs {
			w.Repairs[i] = wireRepair(r)
		}
	}
	return w
}

type wireModelCall struct {
	Step         int           `json:"step"`
	MessageCount int           `json:"messageCount"`
	Messages     []wireMessage `json:"messages,omitempty"`
}

type wireResult struct {
	RunID        string          `json:"runId"`
	SessionID    string          `json:"sessionId"`
	Status       string          `json:"status"`
	Reply        wireMessage     `json:"reply"`
	Appended     []wireMessage   `json:"appended"`
	Seed         wireSeed        `json:"seed"`
	MessageCount int             `json:"messageCount"`
	Head         string          `json:"head"`
	ModelCalls   []wireModelCall `json:"modelCalls"`
	Context      *wireContext    `json:"context,omitempty"`
	// PendingApprovals is set when Status is "awaiting_approval".
	PendingApprovals []wirePending `json:"pendingApprovals,omitempty"`
}

// wireContext is a core.ContextReport: what a model call was sent under
// policy.maxContextTokens (result.context, the model.context event's
// context).
type wireContext struct {
	Messages int   `json:"messages"`
	Tokens   int64 `json:"tokens"`
	Dropped  int   `json:"dropped"`
}

func toWireContext(c *core.ContextReport) *wireContext {
	if c == nil {
		return nil
	}
	return &wireContext{Messages: c.Messages, Tokens: c.Tokens, Dropped: c.Dropped}
}

type wireError struct {
	Code    core.Code `json:"code"`
	Message string    `json:"message"`
	Index   *int      `json:"index,omitempty"`
	// Appended are the messages a failed run keeps in its session
	// (core.Error.Appended): the host stores them as a result's appended.
	Appended []wireMessage `json:"appended,omitempty"`
	// Head and Missing are history_diverged's: the conversation's head,
	// and the messages the caller's head lacks when it names an earlier
	// state of it.
	Head    string        `json:"head,omitempty"`
	Missing []wireMessage `json:"missing,omitempty"`
}

type wireErrorBody struct {
	Error wireError `json:"error"`
}

type wireSession struct {
	ID           string        `json:"id"`
	MessageCount int           `json:"messageCount"`
	Head         string        `json:"head"`
	Messages     []wireMessage `json:"messages"`
}

type wireEvent struct {
	Type      core.EventType `json:"type"`
	RunID     string         `json:"runId"`
	SessionID string         `json:"sessionId"`
	Seq       int            `json:"seq"`
	Seed      *wireSeed      `json:"seed,omitempty"`
	Message   *wireMessage   `json:"message,omitempty"`
	Delta     string         `json:"delta,omitempty"`
	Step      int            `json:"step,omitempty"`
	ToolCall  *wireToolCall  `json:"toolCall,omitempty"`
	Result    *wireResult    `json:"result,omitempty"`
	Error     *wireError     `json:"error,omitempty"`
	Context   *wireContext   `json:"context,omitempty"`
}

func toWireMessage(m *core.Message) wireMessage {
	w := wireMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ID: m.ID}
	if len(m.ToolCalls) > 0 {
		w.ToolCalls = make([]wireToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			w.ToolCalls[i] = wireToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		}
	}
	return w
}

func toWireMessages(ms []core.Message) []wireMessage {
	out := make([]wireMessage, len(ms))
	for i := range ms {
		out[i] = toWireMessage(&ms[i])
	}
	return out
}

func toWireResult(r *core.Result) *wireResult {
	w := &wireResult{
		RunID:        r.RunID,
		SessionID:    r.SessionID,
		Status:       r.Status,
		Reply:        toWireMessage(&r.Reply),
		Appended:     toWireMessages(r.Appended),
		Seed:         toWireSeed(&r.Seed),
		MessageCount: r.MessageCount,
		Head:         r.Head(),
		ModelCalls:   make([]wireModelCall, len(r.ModelCalls)),
		Context:      toWireContext(r.Context),
	}
	for i, c := range r.ModelCalls {
		w.ModelCalls[i] = wireModelCall{Step: c.Step, MessageCount: c.MessageCount}
		if c.Messages != nil {
			w.ModelCalls[i].Messages = toWireMessages(c.Messages)
		}
	}
	w.PendingApprovals = toWirePending(r.PendingApprovals)
	signCalls(w, r.PendingApprovals)
	return w
}

func toWireError(e *core.Error) *wireError {
	w := &wireError{Code: e.Code, Message: e.Message}
	if e.Index >= 0 {
		i := e.Index
		w.Index = &i
	}
	if len(e.Appended) > 0 {
		w.Appended = toWireMessages(e.Appended)
	}
	w.Head = e.Head
	if e.Missing != nil {
		w.Missing = toWireMessages(e.Missing)
	}
	return w
}

func toWireEvent(ev *core.Event) *wireEvent {
	w := &wireEvent{Type: ev.Type, RunID: ev.RunID, SessionID: ev.SessionID, Seq: ev.Seq, Delta: ev.Delta, Step: ev.Step}
	if ev.Seed != nil {
		s := toWireSeed(ev.Seed)
		w.Seed = &s
	}
	if ev.Message != nil {
		m := toWireMessage(ev.Message)
		w.Message = &m
	}
	if ev.ToolCall != nil {
		c := wireToolCall{ID: ev.ToolCall.ID, Name: ev.ToolCall.Name, Arguments: ev.ToolCall.Arguments}
		w.ToolCall = &c
	}
	if ev.Result != nil {
		w.Result = toWireResult(ev.Result)
	}
	if ev.Err != nil {
		w.Error = toWireError(ev.Err)
	}
	w.Context = toWireContext(ev.Context)
	return w
}
