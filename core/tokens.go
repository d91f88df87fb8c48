package core

// This file and tokens_window.go hold the window of what the model is
// sent by tokens (Policy.MaxContextTokens): the count (Config.CountTokens
// or EstimateTokens), its cache, and the chunked, pair-safe window. See
// docs/adr/0018-context-window-by-tokens.md.

// TokenCounter counts the tokens of one message as the model will see
// it. It must return a count from 0 to MaxTokenCount; an error, or any
// other count, fails the run with CodeInvalidArgument (or the code of a
// returned *Error). It is called at most once per stored message and
// session generation (the counts are cached), for the system prompt and
// for each tool spec (as system messages, see EstimateTokens), and
// never concurrently for one session.
type TokenCounter func(Message) (int, error)

// MaxTokenCount is the largest count a TokenCounter may return.
const MaxTokenCount = 1<<31 - 1

// TokenOverhead is what EstimateTokens adds to each message: the role
// and the separators a chat format wraps a message in.
const TokenOverhead = 4

// EstimateTokens is the built-in count, used when Config.CountTokens is
// nil: the message's bytes divided by 4, rounded up, plus TokenOverhead.
// Its bytes are the UTF-8 lengths of its content, its tool_call_id and
// each tool call's id, name and arguments (Message.Size without the host
// id, which no model is sent). The system prompt counts as a system
// message of the prompt; each tool spec as a system message whose
// content is its name, description and parameters joined by newlines.
// The same formula is documented in docs/contract.md for every edge.
func EstimateTokens(m Message) (int, error) {
	n := textSize("", m.Content, m.ToolCallID, m.ToolCalls)
	return int((n+3)/4) + TokenOverhead, nil
}

// DefaultContextChunk is the fraction of Policy.MaxContextTokens the
// window moves by when Policy.ContextChunkTokens is 0: one half, so that
// the first message the model is sent changes once every half budget of
// new messages, and the messages sent fill between half the budget and
// all of it.
const DefaultContextChunk = 2 // the budget divided by this

// ContextReport describes what the last model call of a run was sent
// under Policy.MaxContextTokens: Messages sent (the system prompt not
// counted), their Tokens with the system prompt's and the tool specs',
// and the session's messages Dropped before them (not sent).
type ContextReport struct {
	Messages int
	Tokens   int64
	Dropped  int
}

// tokenCache holds the running sums of the token counts of a session's
// messages of one generation: sums[i] counts msgs[:i], for the first
// len(sums)-1 messages. Only the run that holds the session's lane reads
// or changes it (as messagesOf): no lock. A generation changes whenever
// the messages change other than by appending, so the sums of a
// generation stay true.
type tokenCache struct {
	gen  uint64
	sums []int64
}
