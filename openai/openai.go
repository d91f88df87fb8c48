// Package openai is a core.Model for OpenAI-compatible chat completion
// endpoints (POST {BaseURL}/chat/completions): OpenAI itself and the many
// servers that speak the same protocol.
//
//	m := &openai.Model{BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini", Key: key}
//	rt, _ := core.New(core.Config{Model: m})
//
// The request carries the system prompt first, then the session's
// messages; tools are sent as function tools, and tool calls are mapped
// both ways. With Stream set the reply is read as Server-Sent Events and
// each text delta is reported through ModelRequest.Delta.
//
// Every failure (a non-2xx answer, an unreadable body, a network error)
// is a *core.Error with CodeModelError and a short message that never
// contains the key. The API is unstable until version 1.0.
package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentrt/agentrt/core"
)

// DefaultMaxResponseBytes (8 MiB) bounds an upstream answer when
// Model.MaxResponseBytes is zero.
const DefaultMaxResponseBytes = 8 << 20

// Model calls an OpenAI-compatible chat completions endpoint. Its fields
// must not change while runs use it; it is safe for concurrent use.
type Model struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1"; the
	// request goes to BaseURL + "/chat/completions".
	BaseURL string
	// Model is the model name sent upstream.
	Model string
	// Key is sent as "Authorization: Bearer <Key>"; empty sends none.
	Key string
	// Client makes the requests: an *http.Client, or anything with its Do
	// method. nil means http.DefaultClient (on GOOS=js, nil fails every
	// request: set a Client). The worker passes one that calls the
	// Workers fetch.
	Client Doer
	// Stream asks for a streamed answer (stream: true).
	Stream bool
	// MaxResponseBytes bounds the answer, streamed or not; 0 means
	// DefaultMaxResponseBytes. The answer is read only up to the bound:
	// one larger fails with CodeModelError naming the bound.
	MaxResponseBytes int64
}

var _ core.Model = (*Model)(nil)

// Doer sends one HTTP request. *http.Client is a Doer.
//
// # Notes
//
// The field is an interface rather than *http.Client so that a GOOS=js
// build that supplies its own Doer does not link net/http's client and
// transport (TLS, HTTP/2): about 5 MB of the worker module.
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

var _ Doer = (*http.Client)(nil)

type chatMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
}

type chatToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string  `json:"name,omitempty"`
	Arguments argText `json:"arguments"`
}

// argText is a tool call's arguments: sent as a JSON string, read from a
// string or, as some servers send them, from any other JSON value, which
// stands for its compact JSON text (null for none). js/openai.js reads
// them the same way.
type argText string

func (a *argText) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, (*string)(a))
	}
	if string(b) == "null" {
		*a = ""
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*a = argText(buf.String())
	return nil
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatToolSpec `json:"function"`
}

type chatToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Tools    []chatTool    `json:"tools,omitempty"`
	Stream   bool          `json:"stream,omitempty"`
}

type chatResponse struct {
	Choices []struct {
		Message chatMessage `json:"message"`
		Delta   chatMessage `json:"delta"`
		// FinishReason is set on a stream's last chunk of the choice
		// ("stop", "tool_calls", ...): the answer is whole.
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	// Error is set when the server reports a failure inside a 2xx answer
	// or in the middle of a stream.
	Error json.RawMessage `json:"error"`
}

// errorText is the text of a chatResponse's error: its message, or else
// the error's JSON (as js/openai.js words it); "" when there is none.
func (cr *chatResponse) errorText() string {
	if len(cr.Error) == 0 || string(cr.Error) == "null" {
		return ""
	}
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(cr.Error, &e) == nil && e.Message != "" {
		return e.Message
	}
	var buf bytes.Buffer
	if json.Compact(&buf, cr.Error) != nil {
		return string(cr.Error)
	}
	return buf.String()
}

type errorResponse struct {
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

func modelError(msg string) *core.Error { return core.NewError(core.CodeModelError, msg) }

// BuildRequest returns the JSON body Complete sends for req.
func (m *Model) BuildRequest(req *core.ModelRequest) ([]byte, error) {
	body := chatRequest{Model: m.Model, Stream: m.Stream}
	body.Messages = make([]chatMessage, 0, len(req.Messages)+1)
	if req.System != "" {
		s := req.System
		body.Messages = append(body.Messages, chatMessage{Role: "system", Content: &s})
	}
	for i := range req.Messages {
		msg := &req.Messages[i]
		c := msg.Content
		cm := chatMessage{Role: string(msg.Role), Content: &c, ToolCallID: msg.ToolCallID}
		if len(msg.ToolCalls) > 0 {
			if c == "" {
				cm.Content = nil
			}
			cm.ToolCalls = make([]chatToolCall, len(msg.ToolCalls))
			for j, tc := range msg.ToolCalls {
				cm.ToolCalls[j] = chatToolCall{ID: tc.ID, Type: "function", Function: chatFunction{Name: tc.Name, Arguments: argText(tc.Arguments)}}
			}
		}
		body.Messages = append(body.Messages, cm)
	}
	for _, t := range req.Tools {
		params := json.RawMessage(t.Parameters)
		if strings.TrimSpace(t.Parameters) == "" {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		} else if !json.Valid(params) {
			return nil, modelError("tool " + strconv.Quote(t.Name) + " has parameters that are not valid JSON")
		}
		body.Tools = append(body.Tools, chatTool{Type: "function", Function: chatToolSpec{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return json.Marshal(body)
}

// Complete implements core.Model. It returns ctx's error when ctx ends
// first, and a CodeModelError *core.Error for every upstream failure.
func (m *Model) Complete(ctx core.Context, req *core.ModelRequest) (*core.ModelReply, error) {
	body, err := m.BuildRequest(req)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(m.BaseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, modelError("the model's base URL is not valid")
	}
	hreq.Header.Set("Content-Type", "application/json")
	if m.Stream {
		hreq.Header.Set("Accept", "text/event-stream")
	} else {
		hreq.Header.Set("Accept", "application/json")
	}
	if m.Key != "" {
		hreq.Header.Set("Authorization", "Bearer "+m.Key)
	}
	client := m.Client
	if client == nil {
		client = defaultClient()
	}
	res, err := client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, modelError("the model request failed: " + m.clean(networkReason(err)))
	}
	defer res.Body.Close()
	limit := m.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	r := &boundedReader{r: res.Body, left: limit}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		msg := "the model answered " + strconv.Itoa(res.StatusCode)
		var e errorResponse
		if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
			msg += ": " + m.clean(e.Error.Message)
		}
		return nil, modelError(msg)
	}
	if m.Stream && strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return m.readStream(ctx, r, limit, req.Delta)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, errTooLarge) {
			return nil, tooLarge(limit)
		}
		return nil, modelError("the model's answer could not be read")
	}
	var cr chatResponse
	if err := json.Unmarshal(b, &cr); err != nil {
		return nil, modelError("the model's answer is not valid JSON")
	}
	if e := cr.errorText(); e != "" {
		return nil, modelError("the model answered an error: " + m.clean(e))
	}
	if len(cr.Choices) == 0 {
		return nil, modelError("the model's answer has no choices")
	}
	msg := &cr.Choices[0].Message
	reply := &core.ModelReply{}
	if msg.Content != nil {
		reply.Content = *msg.Content
	}
	for _, tc := range msg.ToolCalls {
		reply.ToolCalls = append(reply.ToolCalls, core.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: argsOrEmpty(string(tc.Function.Arguments))})
	}
	if reply.Content != "" && req.Delta != nil {
		req.Delta(reply.Content)
	}
	return reply, nil
}

// readStream reads "data: {...}" lines until "data: [DONE]" or the end,
// reporting text deltas and assembling tool calls by their index.
//
// A stream that ends without [DONE] and without a choice's finish_reason
// was cut (a dropped connection, a server that died): it fails
// model_error rather than standing as a complete, shorter reply.
//
// Every whole line within the bound is read: an answer whose [DONE] is
// within it stands, whatever follows (it is not the answer, and is not
// read); any other answer that goes past the bound fails whole.
func (m *Model) readStream(ctx context.Context, r *boundedReader, limit int64, delta func(string)) (*core.ModelReply, error) {
	sc := bufio.NewScanner(r)
	// One byte over the bound, so that an event as large as the whole
	// bound fails on the bound, not on the buffer.
	sc.Buffer(make([]byte, 0, 64<<10), int(min(limit, 16<<20))+1)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		n, line, err := bufio.ScanLines(data, atEOF)
		if atEOF && r.over() && (n == 0 || data[n-1] != '\n') {
			// Not a whole line: the rest was cut at the bound.
			return 0, nil, errTooLarge
		}
		return n, line, err
	})
	st := streamState{m: m, delta: delta}
	// An event is its data lines, joined by "\n", up to a blank line
	// (the Server-Sent Events rule, as js/openai.js reads it); comments
	// and other fields carry nothing here.
	var data []byte
	pending := false
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if pending {
				done, err := st.event(data)
				if err != nil {
					return nil, err
				}
				if done {
					return st.reply(), nil
				}
			}
			data, pending = data[:0], false
			continue
		}
		v, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		if pending {
			data = append(data, '\n')
		}
		data, pending = append(data, bytes.TrimPrefix(v, []byte(" "))...), true
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, errTooLarge) {
			return nil, tooLarge(limit)
		}
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, modelError("the model's stream has an event that is too large")
		}
		return nil, modelError("the model's stream could not be read")
	}
	if pending {
		// The stream ended without the blank line after its last event.
		done, err := st.event(data)
		if err != nil {
			return nil, err
		}
		if done {
			return st.reply(), nil
		}
	}
	if !st.finished {
		return nil, modelError("the model's stream ended before [DONE] or a finish_reason: the answer was cut")
	}
	return st.reply(), nil
}

// streamState is a stream's text and tool calls read so far.
type streamState struct {
	m       *Model
	delta   func(string)
	content strings.Builder
	calls   []streamCall
	// finished is set once a choice carried a finish_reason.
	finished bool
}

// event reads one event's data: done at [DONE], an error for data that
// is not a chunk or that reports an error.
func (st *streamState) event(data []byte) (done bool, err error) {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		return true, nil
	}
	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		return false, modelError("the model's stream has an event that is not valid JSON")
	}
	if e := cr.errorText(); e != "" {
		return false, modelError("the model's stream sent an error: " + st.m.clean(e))
	}
	for i := range cr.Choices {
		if r := cr.Choices[i].FinishReason; r != nil && *r != "" {
			st.finished = true
		}
	}
	if len(cr.Choices) == 0 {
		return false, nil
	}
	d := &cr.Choices[0].Delta
	if d.Content != nil && *d.Content != "" {
		st.content.WriteString(*d.Content)
		if st.delta != nil {
			st.delta(*d.Content)
		}
	}
	for _, tc := range d.ToolCalls {
		i := len(st.calls)
		if tc.Index != nil {
			i = *tc.Index
		}
		if i < 0 || i > 1024 {
			return false, modelError("the model's stream has a tool call index out of range")
		}
		for len(st.calls) <= i {
			st.calls = append(st.calls, streamCall{})
		}
		c := &st.calls[i]
		if tc.ID != "" {
			c.id = tc.ID
		}
		// OpenAI sends the name once; some servers repeat it whole
		// in later pieces (js/openai.js follows the same rule).
		if n := tc.Function.Name; n != "" && n != c.name.String() {
			c.name.WriteString(n)
		}
		c.args.WriteString(string(tc.Function.Arguments))
	}
	return false, nil
}

// reply is the reply the stream's text and tool calls make.
func (st *streamState) reply() *core.ModelReply {
	return streamReply(&st.content, st.calls)
}

// streamReply is the reply a stream's text and tool calls make.
func streamReply(content *strings.Builder, calls []streamCall) *core.ModelReply {
	reply := &core.ModelReply{Content: content.String()}
	for i := range calls {
		c := &calls[i]
		reply.ToolCalls = append(reply.ToolCalls, core.ToolCall{ID: c.id, Name: c.name.String(), Arguments: argsOrEmpty(c.args.String())})
	}
	return reply
}

// streamCall is a tool call being assembled from a stream's pieces; the
// builders keep many small pieces linear in their total size.
type streamCall struct {
	id   string
	name strings.Builder
	args strings.Builder
}

// errTooLarge is boundedReader's error past its bound.
var errTooLarge = errors.New("openai: the answer is over the size bound")

// boundedReader reads r up to left bytes and fails with errTooLarge when
// r has more: an answer over the bound is refused, never cut short
// (a stream cut at the bound would otherwise read as a complete, shorter
// reply).
type boundedReader struct {
	r    io.Reader
	left int64
}

// over reports whether the answer went past the bound.
func (b *boundedReader) over() bool { return b.left < 0 }

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errTooLarge
	}
	// One byte past the bound tells "exactly the bound" from "more".
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), errTooLarge
	}
	return n, err
}

func tooLarge(limit int64) *core.Error {
	return modelError("the model's answer is larger than " + strconv.FormatInt(limit, 10) + " bytes (the bound on an upstream answer)")
}

func argsOrEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}

// networkReason is the innermost error's text, without the URL that
// url.Error adds.
func networkReason(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// short cuts s to at most 200 bytes, at a character boundary.
func short(s string) string {
	max := 200
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max] + "..."
}

// clean makes text that came from elsewhere fit for an error message:
// the key redacted in every encoding (Redact), then cut short. In that
// order: a key that straddles the cut is redacted whole first.
func (m *Model) clean(s string) string {
	return short(Redact(s, m.Key))
}
