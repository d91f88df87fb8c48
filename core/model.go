package core

// Model answers a conversation. Implementations: the built-in Echo, the
// JavaScript edge's function models, and OpenAI-compatible clients.
//
// Complete must return when ctx is done; the runtime stops waiting for it
// then in any case. An error that is not an *Error fails the run with
// CodeModelError.
type Model interface {
	Complete(ctx Context, req *ModelRequest) (*ModelReply, error)
}

// ContextHonouring is implemented by a Model whose Complete returns
// promptly once its ctx is done, and never otherwise waits long without
// watching ctx. The runtime calls such a model in the run's goroutine;
// any other model is called in a goroutine of its own, so that a run can
// stop waiting for it on cancel or timeout. Echo and the JavaScript
// edge's function models implement it.
//
// # Notes
//
//   - A model that implements it and then blocks without watching ctx
//     makes cancel and timeout wait for it: the run ends when Complete
//     returns.
//   - A panic in Complete fails the run with CodeModelError either way.
type ContextHonouring interface {
	Model
	// HonoursContext marks the model; it is never called.
	HonoursContext()
}

// ModelFunc adapts a function to Model.
type ModelFunc func(ctx Context, req *ModelRequest) (*ModelReply, error)

// Complete calls f.
func (f ModelFunc) Complete(ctx Context, req *ModelRequest) (*ModelReply, error) {
	return f(ctx, req)
}

// ModelRequest is what a model is asked to answer.
//
// Messages are the windowed session messages, without the system prompt
// (that is System); the last is the current user message or the latest
// tool result. They are shared with the session: read them, never change
// them, and do not keep them after Complete returns.
type ModelRequest struct {
	RunID     string
	SessionID string
	System    string
	Messages  []Message
	// Offset is the index of Messages[0] in the session: the window
	// leaves out the Offset oldest messages.
	Offset int
	// Generation names the session's messages as a host mirroring them
	// knows them: it changes whenever they change other than by
	// appending, so the session's first Offset+len(Messages) messages are
	// the same as long as it does not.
	Generation uint64
	Tools      []ToolSpec
	// Step counts model calls within the run, from 1.
	Step int
	// Delta reports streamed text as a model.delta event. It may be called
	// from any goroutine until Complete returns; later calls are ignored.
	// It is never nil.
	Delta func(text string)
}

// ModelReply is a model's answer: text, tool calls, or both. A reply with
// tool calls makes the runtime run them and ask again. A call with an
// empty ID is given one.
type ModelReply struct {
	Content   string
	ToolCalls []ToolCall
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is a JSON Schema as JSON text, or empty.
	Parameters string
}

// Tool is a function the model may call.
type Tool struct {
	ToolSpec
	// Call runs the tool. Its result text becomes the tool message's
	// content. An error fails the run with CodeToolError (or, under
	// ToolErrorsReport, is handed to the model as the result). Call must
	// return when ctx is done.
	Call func(ctx Context, call ToolInvocation) (string, error)
	// NeedsApproval, if set, says whether a call needs a person's
	// approval before it runs (nil: never). It is asked once per call,
	// when the model's reply arrives; an error or a panic fails the run
	// with CodeToolError. See docs/adr/0019-tool-approvals.md.
	NeedsApproval func(call ToolInvocation) (bool, error)
	// ApprovalByHost says the host of a Turn decides, for each call,
	// whether it needs approval: the turn yields an ActionApproval for
	// the call, answered with Turn.FeedApproval (an edge whose predicate
	// lives across a boundary, as a JavaScript needsApproval function or
	// a WASI host's Go func). It wins over NeedsApproval, which a run
	// with no host to ask (Runtime.Start, Execute) calls instead; with
	// neither, such a run fails with CodeToolError.
	ApprovalByHost bool
}

// ToolInvocation is one call of a tool.
type ToolInvocation struct {
	RunID      string
	SessionID  string
	ToolCallID string
	Name       string
	// Arguments is the JSON text the model gave.
	Arguments string
}
