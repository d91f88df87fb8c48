package httpapi

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/agentrt/agentrt/core"
)

// The JSON shapes of the API. They match the module's JavaScript contract
// (DESIGN section 4): camelCase fields, except the message fields
// tool_call_id and tool_calls, which are snake_case as hosts store them.

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
}

type wireSeed struct {
	Mode          core.SeedOutcome `json:"mode"`
	Seeded        int              `json:"seeded"`
	SkippedSystem int              `json:"skippedSystem"`
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
	ModelCalls   []wireModelCall `json:"modelCalls"`
}

type wireError struct {
	Code    core.Code `json:"code"`
	Message string    `json:"message"`
	Index   *int      `json:"index,omitempty"`
}

type wireErrorBody struct {
	Error wireError `json:"error"`
}

type wireSession struct {
	ID           string        `json:"id"`
	MessageCount int           `json:"messageCount"`
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
}

func toWireMessage(m *core.Message) wireMessage {
	w := wireMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ID: m.ID}
	if len(m.ToolCalls) > 0 {
		w.ToolCalls = make([]wireToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			w.ToolCalls[i] = wireToolCall(c)
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
		Seed:         wireSeed(r.Seed),
		MessageCount: r.MessageCount,
		ModelCalls:   make([]wireModelCall, len(r.ModelCalls)),
	}
	for i, c := range r.ModelCalls {
		w.ModelCalls[i] = wireModelCall{Step: c.Step, MessageCount: c.MessageCount}
		if c.Messages != nil {
			w.ModelCalls[i].Messages = toWireMessages(c.Messages)
		}
	}
	return w
}

func toWireError(e *core.Error) *wireError {
	w := &wireError{Code: e.Code, Message: e.Message}
	if e.Index >= 0 {
		i := e.Index
		w.Index = &i
	}
	return w
}

func toWireEvent(ev *core.Event) *wireEvent {
	w := &wireEvent{Type: ev.Type, RunID: ev.RunID, SessionID: ev.SessionID, Seq: ev.Seq, Delta: ev.Delta, Step: ev.Step}
	if ev.Seed != nil {
		s := wireSeed(*ev.Seed)
		w.Seed = &s
	}
	if ev.Message != nil {
		m := toWireMessage(ev.Message)
		w.Message = &m
	}
	if ev.ToolCall != nil {
		c := wireToolCall(*ev.ToolCall)
		w.ToolCall = &c
	}
	if ev.Result != nil {
		w.Result = toWireResult(ev.Result)
	}
	if ev.Err != nil {
		w.Error = toWireError(ev.Err)
	}
	return w
}

// RunBody is the decoded body of POST /v1/sessions/{id}/runs.
type RunBody struct {
	Input string
	// History is applied when WithHistory is set: the body had a
	// "history" array (an explicit null is no history).
	History     []core.SeedMessage
	WithHistory bool
	Policy      core.Policy
	RunID       string
	// Inspect asks for the messages of each model call in the result.
	Inspect bool
}

// rawRun is the first decoding pass: field types are checked one by one
// afterwards, so that every mistake gets a message that names the field.
type rawRun struct {
	Input   json.RawMessage `json:"input"`
	History json.RawMessage `json:"history"`
	Policy  json.RawMessage `json:"policy"`
	RunID   json.RawMessage `json:"runId"`
	Inspect json.RawMessage `json:"inspect"`
}

type rawPolicy struct {
	SeedMode           json.RawMessage `json:"seedMode"`
	OnBusy             json.RawMessage `json:"onBusy"`
	MaxSteps           json.RawMessage `json:"maxSteps"`
	MaxContextMessages json.RawMessage `json:"maxContextMessages"`
	MaxContextBytes    json.RawMessage `json:"maxContextBytes"`
	AllowedTools       json.RawMessage `json:"allowedTools"`
	ToolErrors         json.RawMessage `json:"toolErrors"`
	TimeoutMs          json.RawMessage `json:"timeoutMs"`
}

type rawMessage struct {
	Role        json.RawMessage `json:"role"`
	Content     json.RawMessage `json:"content"`
	ToolCallID  json.RawMessage `json:"tool_call_id"`
	ToolCallID2 json.RawMessage `json:"toolCallId"`
	ToolCalls   json.RawMessage `json:"tool_calls"`
	ToolCalls2  json.RawMessage `json:"toolCalls"`
	ID          json.RawMessage `json:"id"`
}

type rawToolCall struct {
	ID        json.RawMessage `json:"id"`
	Name      json.RawMessage `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func invalidArg(msg string) *core.Error { return core.NewError(core.CodeInvalidArgument, msg) }

func invalidHistory(i int, msg string) *core.Error {
	return core.NewIndexError(core.CodeInvalidHistory, i, "history["+strconv.Itoa(i)+"]: "+msg)
}

// isNull reports whether a raw field is absent or JSON null.
func isNull(r json.RawMessage) bool {
	return len(r) == 0 || string(r) == "null"
}

func decodeString(r json.RawMessage) (string, bool) {
	if len(r) == 0 || r[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(r, &s) != nil {
		return "", false
	}
	return s, true
}

// decodeInt accepts a JSON integer (no fraction) in [0, max].
func decodeInt(r json.RawMessage, max int64) (int64, bool) {
	var f float64
	if len(r) == 0 || json.Unmarshal(r, &f) != nil {
		return 0, false
	}
	if f != float64(int64(f)) || f < 0 || f > float64(max) {
		return 0, false
	}
	return int64(f), true
}

// DecodeRunBody decodes and type-checks a run request body. A body that
// is not a JSON object, or a field of the wrong type, is refused with
// CodeInvalidArgument; a history entry of the wrong shape with
// CodeInvalidHistory and its index. The values themselves (roles,
// linkage, limits, policy values) are checked by the runtime.
func DecodeRunBody(body []byte) (*RunBody, *core.Error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, invalidArg("the body must be a JSON object")
	}
	var raw rawRun
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, invalidArg("the body is not valid JSON")
	}
	out := &RunBody{}
	var ok bool
	if out.Input, ok = decodeString(raw.Input); !ok {
		return nil, invalidArg("input must be a string")
	}
	if !isNull(raw.RunID) {
		if out.RunID, ok = decodeString(raw.RunID); !ok {
			return nil, invalidArg("runId must be a string")
		}
	}
	if !isNull(raw.Inspect) {
		switch string(raw.Inspect) {
		case "true":
			out.Inspect = true
		case "false":
		default:
			return nil, invalidArg("inspect must be a boolean")
		}
	}
	if !isNull(raw.Policy) {
		p, err := decodePolicy(raw.Policy)
		if err != nil {
			return nil, err
		}
		out.Policy = p
	}
	if !isNull(raw.History) {
		h, err := decodeHistory(raw.History)
		if err != nil {
			return nil, err
		}
		out.History, out.WithHistory = h, true
	}
	return out, nil
}

func decodePolicy(r json.RawMessage) (core.Policy, *core.Error) {
	var p core.Policy
	if r[0] != '{' {
		return p, invalidArg("policy must be an object")
	}
	var raw rawPolicy
	if json.Unmarshal(r, &raw) != nil {
		return p, invalidArg("policy must be an object")
	}
	str := func(f json.RawMessage, name string) (string, *core.Error) {
		if isNull(f) {
			return "", nil
		}
		s, ok := decodeString(f)
		if !ok {
			return "", invalidArg("policy." + name + " must be a string")
		}
		return s, nil
	}
	num := func(f json.RawMessage, name string, max int64) (int64, *core.Error) {
		if isNull(f) {
			return 0, nil
		}
		n, ok := decodeInt(f, max)
		if !ok {
			return 0, invalidArg("policy." + name + " must be a non-negative integer")
		}
		return n, nil
	}
	var s string
	var n int64
	var err *core.Error
	if s, err = str(raw.SeedMode, "seedMode"); err != nil {
		return p, err
	}
	p.SeedMode = core.SeedMode(s)
	if s, err = str(raw.OnBusy, "onBusy"); err != nil {
		return p, err
	}
	p.OnBusy = core.BusyMode(s)
	if s, err = str(raw.ToolErrors, "toolErrors"); err != nil {
		return p, err
	}
	p.ToolErrors = core.ToolErrorMode(s)
	const maxInt32 = 1<<31 - 1
	if n, err = num(raw.MaxSteps, "maxSteps", maxInt32); err != nil {
		return p, err
	}
	p.MaxSteps = int(n)
	if n, err = num(raw.MaxContextMessages, "maxContextMessages", maxInt32); err != nil {
		return p, err
	}
	p.MaxContextMessages = int(n)
	if n, err = num(raw.MaxContextBytes, "maxContextBytes", 1<<53); err != nil {
		return p, err
	}
	p.MaxContextBytes = n
	// A timeout longer than a year is refused rather than overflowing.
	if n, err = num(raw.TimeoutMs, "timeoutMs", 365*24*3600*1000); err != nil {
		return p, err
	}
	p.TimeoutMs = n
	if !isNull(raw.AllowedTools) {
		var names []string
		if raw.AllowedTools[0] != '[' || json.Unmarshal(raw.AllowedTools, &names) != nil {
			return p, invalidArg("policy.allowedTools must be an array of strings")
		}
		if names == nil {
			names = []string{}
		}
		p.AllowedTools = names
	}
	return p, nil
}

func decodeHistory(r json.RawMessage) ([]core.SeedMessage, *core.Error) {
	if r[0] != '[' {
		return nil, invalidArg("history must be an array")
	}
	var items []json.RawMessage
	if json.Unmarshal(r, &items) != nil {
		return nil, invalidArg("history must be an array")
	}
	out := make([]core.SeedMessage, len(items))
	for i, item := range items {
		if err := decodeMessage(i, item, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func decodeMessage(i int, r json.RawMessage, m *core.SeedMessage) *core.Error {
	if len(r) == 0 || r[0] != '{' {
		return invalidHistory(i, "must be an object")
	}
	var raw rawMessage
	if json.Unmarshal(r, &raw) != nil {
		return invalidHistory(i, "must be an object")
	}
	role, ok := decodeString(raw.Role)
	if !ok {
		return invalidHistory(i, "role must be a string")
	}
	m.Role = core.Role(role)
	if isNull(raw.Content) {
		m.ContentMissing = true
	} else if m.Content, ok = decodeString(raw.Content); !ok {
		return invalidHistory(i, "content must be a string")
	}
	if !isNull(raw.ID) {
		if m.ID, ok = decodeString(raw.ID); !ok {
			return invalidHistory(i, "id must be a string")
		}
	}
	tcid := raw.ToolCallID
	if isNull(tcid) {
		tcid = raw.ToolCallID2
	}
	if !isNull(tcid) {
		if m.ToolCallID, ok = decodeString(tcid); !ok {
			return invalidHistory(i, "tool_call_id must be a string")
		}
	}
	calls := raw.ToolCalls
	if isNull(calls) {
		calls = raw.ToolCalls2
	}
	if isNull(calls) {
		return nil
	}
	var items []json.RawMessage
	if calls[0] != '[' || json.Unmarshal(calls, &items) != nil {
		return invalidHistory(i, "tool_calls must be an array")
	}
	m.ToolCalls = make([]core.ToolCall, len(items))
	for j, item := range items {
		var c rawToolCall
		if len(item) == 0 || item[0] != '{' || json.Unmarshal(item, &c) != nil {
			return invalidHistory(i, "tool_calls["+strconv.Itoa(j)+"] must be an object")
		}
		tc := &m.ToolCalls[j]
		if tc.ID, ok = decodeString(c.ID); !ok {
			return invalidHistory(i, "tool_calls["+strconv.Itoa(j)+"].id must be a string")
		}
		if tc.Name, ok = decodeString(c.Name); !ok {
			return invalidHistory(i, "tool_calls["+strconv.Itoa(j)+"].name must be a string")
		}
		switch {
		case isNull(c.Arguments):
			tc.Arguments = "{}"
		case c.Arguments[0] == '"':
			tc.Arguments, _ = decodeString(c.Arguments)
		case c.Arguments[0] == '{':
			// An object is accepted and kept as compact JSON text.
			var buf bytes.Buffer
			if json.Compact(&buf, c.Arguments) != nil {
				return invalidHistory(i, "tool_calls["+strconv.Itoa(j)+"].arguments must be JSON text or an object")
			}
			tc.Arguments = buf.String()
		default:
			return invalidHistory(i, "tool_calls["+strconv.Itoa(j)+"].arguments must be JSON text or an object")
		}
	}
	return nil
}
