package httpapi

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/agentrt/agentrt/core"
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/core/hostmsg/hostjson"
)

// What the API reads: the body of POST /v1/sessions/{id}/runs. What it
// writes is in wire_encode.go.

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
	// Approvals answer the tool calls the session awaits (the body's
	// "approvals", or the decisions a UIMessage history carries when the
	// body has none); Input is then empty.
	Approvals []core.Approval
}

// rawRun is the first decoding pass: field types are checked one by one
// afterwards, so that every mistake gets a message that names the field.
type rawRun struct {
	Input   json.RawMessage `json:"input"`
	History json.RawMessage `json:"history"`
	Policy  json.RawMessage `json:"policy"`
	RunID   json.RawMessage `json:"runId"`
	Inspect json.RawMessage `json:"inspect"`
	// Approvals is read by decodeApprovals (approval_decode.go).
	Approvals json.RawMessage `json:"approvals"`
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
	Repair             json.RawMessage `json:"repair"`
	OnDisconnect       json.RawMessage `json:"onDisconnect"`
}

func invalidArg(msg string) *core.Error { return core.NewError(core.CodeInvalidArgument, msg) }

// The keys of each object the API reads. encoding/json matches keys
// case-insensitively and lets the last of a repeated key win, so that
// {"HISTORY": [...]} would be read as a history and {"history": [...],
// "HISTORY": null} would drop it; knownKeys refuses both first, as the
// JavaScript edges read only the exact names.
var (
	runKeys    = []string{"input", "history", "policy", "runId", "inspect", "approvals"}
	policyKeys = []string{"seedMode", "onBusy", "maxSteps", "maxContextMessages", "maxContextBytes",
		"allowedTools", "toolErrors", "timeoutMs", "repair"}
	checkKeys = []string{"history"}
)

// knownKeys refuses a JSON object r (already known to open with '{')
// that is not valid JSON, has a key that is not exactly one of names
// (what names the object in the error: "" for the body), or has a key
// twice.
func knownKeys(r []byte, what string, names []string) *core.Error {
	dec := json.NewDecoder(bytes.NewReader(r))
	dec.UseNumber()
	invalid := func() *core.Error {
		if what == "" {
			return invalidArg("the body is not valid JSON")
		}
		return invalidArg(what + " must be an object")
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return invalid()
	}
	prefix := "unknown field "
	if what != "" {
		prefix = "unknown " + what + " field "
	}
	seen := make([]bool, len(names))
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return invalid()
		}
		k, _ := t.(string)
		i := 0
		for i < len(names) && names[i] != k {
			i++
		}
		if i == len(names) {
			return invalidArg(prefix + quote(k))
		}
		if seen[i] {
			if what == "" {
				return invalidArg("duplicate field " + quote(k))
			}
			return invalidArg("duplicate " + what + " field " + quote(k))
		}
		seen[i] = true
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return invalid()
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return invalid()
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid()
	}
	return nil
}

// quote returns k as a JSON string, for an error message.
func quote(k string) string {
	b, _ := json.Marshal(k)
	return string(b)
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
// is not a JSON object, a key that is not exactly one of the body's or
// the policy's fields (case matters) or that is repeated, or a field of
// the wrong type, is refused with
// CodeInvalidArgument; a history entry of the wrong shape with
// CodeInvalidHistory and its index (read by hostmsg, in every shape of
// docs/contract.md). The values themselves (roles, linkage, limits,
// policy values) are checked by the runtime.
func DecodeRunBody(body []byte) (*RunBody, *core.Error) {
	return decodeRunBody(body, 0)
}

// decodeRunBody is DecodeRunBody with the runtime's maxSeedMessages (zero:
// the default), over which a history array is refused before it is read.
func decodeRunBody(body []byte, maxMessages int) (*RunBody, *core.Error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, invalidArg("the body must be a JSON object")
	}
	if err := knownKeys(body, "", runKeys); err != nil {
		return nil, err
	}
	var raw rawRun
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, invalidArg("the body is not valid JSON")
	}
	out := &RunBody{}
	var ok bool
	if !isNull(raw.Approvals) {
		a, err := decodeApprovals(raw.Approvals)
		if err != nil {
			return nil, err
		}
		out.Approvals = a
	}
	// A resume omits the input (core refuses an input next to
	// approvals); an absent input is refused below when no approval
	// came, in the body or in the history.
	if len(raw.Input) != 0 {
		if out.Input, ok = decodeString(raw.Input); !ok {
			return nil, invalidArg("input must be a string")
		}
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
		h, err := decodeHistory(raw.History, maxMessages)
		if err != nil {
			return nil, err
		}
		out.History, out.WithHistory = h, true
		// A body with neither input nor approvals resumes with the
		// decisions its UIMessage history carries; next to an input the
		// history is read as ever.
		if isNull(raw.Approvals) && len(raw.Input) == 0 {
			if out.Approvals, err = historyApprovals(raw.History); err != nil {
				return nil, err
			}
		}
	}
	if len(raw.Input) == 0 && len(out.Approvals) == 0 {
		return nil, invalidArg("input must be a string")
	}
	return out, nil
}

func decodePolicy(r json.RawMessage) (core.Policy, *core.Error) {
	var p core.Policy
	if r[0] != '{' {
		return p, invalidArg("policy must be an object")
	}
	if err := knownKeys(r, "policy", policyKeys); err != nil {
		return p, err
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
	// Each number is read as a non-negative integer a JavaScript number
	// holds exactly, as the JS edges read it; its bounds (core.MaxTimeoutMs,
	// ...) are core's: core.Policy.Validate answers for
	// every edge.
	if n, err = num(raw.MaxSteps, "maxSteps", core.MaxBytes); err != nil {
		return p, err
	}
	p.MaxSteps = int(n)
	if n, err = num(raw.MaxContextMessages, "maxContextMessages", core.MaxBytes); err != nil {
		return p, err
	}
	p.MaxContextMessages = int(n)
	if n, err = num(raw.MaxContextBytes, "maxContextBytes", core.MaxBytes); err != nil {
		return p, err
	}
	p.MaxContextBytes = n
	if n, err = num(raw.TimeoutMs, "timeoutMs", core.MaxBytes); err != nil {
		return p, err
	}
	p.TimeoutMs = n
	if !isNull(raw.Repair) {
		switch string(raw.Repair) {
		case "true":
			p.Repair = true
		case "false":
		default:
			return p, invalidArg("policy.repair must be a boolean")
		}
	}
	// policy.onDisconnect "continue" is the durable deployment's, which
	// takes it out of the body before the API reads it
	// (docs/adr/0020-resumable-runs.md); "cancel" is what the API does.
	if !isNull(raw.OnDisconnect) {
		switch s, _ := decodeString(raw.OnDisconnect); s {
		case "cancel":
		case "continue":
			return p, invalidArg(`policy.onDisconnect "continue" needs the durable deployment, where the conversation is stored`)
		default:
			return p, invalidArg(`policy.onDisconnect must be "cancel" or "continue"`)
		}
	}
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

// checkHistory answers the body of POST /v1/history/check,
// {history: [...]}, with rt's limits. A body that is not a JSON object,
// or a history that is not an array, is refused with CodeInvalidArgument.
// A history entry of the wrong shape is not an error of the request: it
// is the check's one problem, which no repair fixes.
func checkHistory(rt *core.Runtime, body []byte) (core.HistoryCheck, *core.Error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return core.HistoryCheck{}, invalidArg("the body must be a JSON object")
	}
	if err := knownKeys(body, "", checkKeys); err != nil {
		return core.HistoryCheck{}, err
	}
	var raw struct {
		History json.RawMessage `json:"history"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return core.HistoryCheck{}, invalidArg("the body is not valid JSON")
	}
	if isNull(raw.History) {
		return core.HistoryCheck{}, invalidArg("history must be an array")
	}
	h, err := decodeHistory(raw.History, rt.Limits().MaxSeedMessages)
	if err != nil {
		if err.Code == core.CodeInvalidArgument {
			return core.HistoryCheck{}, err
		}
		return core.UnreadableCheck(err), nil
	}
	return rt.CheckHistory(h), nil
}

// decodeHistory reads the history array with hostmsg, the rules every
// edge shares (docs/contract.md): a message of the wrong shape is refused
// with invalid_history, its index and the same message as at every other
// edge.
func decodeHistory(r json.RawMessage, maxMessages int) ([]core.SeedMessage, *core.Error) {
	if r[0] != '[' {
		return nil, invalidArg("history must be an array")
	}
	v, err := hostjson.Parse(r)
	if err != nil {
		return nil, invalidArg("history must be an array")
	}
	h, err := hostmsg.Messages(v, maxMessages)
	if err != nil {
		return nil, core.AsError(err)
	}
	return h, nil
}
