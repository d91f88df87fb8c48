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
	// IfHead is the body's "ifHead": the turn runs only on a conversation
	// with this head (core.RunRequest.IfHead).
	IfHead string
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
	IfHead    json.RawMessage `json:"ifHead"`
}

func invalidArg(msg string) *core.Error { return core.NewError(core.CodeInvalidArgument, msg) }

// The keys of each object the API reads. encoding/json matches keys
// case-insensitively and lets the last of a repeated key win, so that
// {"HISTORY": [...]} would be read as a history and {"history": [...],
// "HISTORY": null} would drop it; knownKeys refuses both first, as the
// JavaScript edges read only the exact names.
var (
	runKeys   = []string{"input", "history", "policy", "runId", "inspect", "approvals", "ifHead"}
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
	if !isNull(raw.IfHead) {
		if out.IfHead, ok = decodeString(raw.IfHead); !ok {
			return nil, invalidArg("ifHead must be a string")
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
	if out.WithHistory {
		storedSignatures(out.Approvals, raw.History)
	}
	return out, nil
}

// fieldOnDisconnect is the policy field only HTTP reads.
const fieldOnDisconnect = "onDisconnect"

// decodePolicy reads a policy with hostmsg.Policy, the reader every edge
// shares (exact keys, types, core's bounds), plus onDisconnect.
func decodePolicy(r json.RawMessage) (core.Policy, *core.Error) {
	v, err := hostjson.Parse(r)
	if err != nil {
		return core.Policy{}, invalidArg("policy must be an object")
	}
	p, err := hostmsg.Policy(v, fieldOnDisconnect)
	if err != nil {
		return p, core.AsError(err)
	}
	// policy.onDisconnect "continue" is the durable deployment's, which
	// takes it out of the body before the API reads it
	// (docs/adr/0020-resumable-runs.md); "cancel" is what the API does.
	switch d := v.Get(fieldOnDisconnect); {
	case d.Kind() == hostmsg.Undefined || d.Kind() == hostmsg.Null:
	case d.Kind() == hostmsg.String && d.Text() == "cancel":
	case d.Kind() == hostmsg.String && d.Text() == "continue":
		return p, invalidArg(`policy.onDisconnect "continue" needs the durable deployment, where the conversation is stored`)
	default:
		return p, invalidArg(`policy.onDisconnect must be "cancel" or "continue"`)
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
