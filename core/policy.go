package core

// SeedMode says how a run's history is applied to its session.
type SeedMode string

// Seed modes. The zero value means SeedIfEmpty.
const (
	// SeedIfEmpty seeds only an empty session (the ADR's rule).
	SeedIfEmpty SeedMode = "if-empty"
	// SeedReconcile also repairs a warm session: a supplied history that
	// extends the session appends the missing tail; one that diverges
	// replaces it.
	SeedReconcile SeedMode = "reconcile"
)

// BusyMode says what a run does when its session is running another run.
type BusyMode string

// Busy modes. The zero value means BusyQueue.
const (
	BusyQueue  BusyMode = "queue"
	BusyReject BusyMode = "reject"
)

// ToolErrorMode says what a failing tool call does to the run.
type ToolErrorMode string

// Tool error modes. The zero value means ToolErrorsFail.
const (
	// ToolErrorsFail fails the run with CodeToolError.
	ToolErrorsFail ToolErrorMode = "fail"
	// ToolErrorsReport hands the error text to the model as the call's result.
	ToolErrorsReport ToolErrorMode = "report"
)

// DefaultMaxSteps is the number of model calls a run may make when
// Policy.MaxSteps is zero.
const DefaultMaxSteps = 8

// Policy tunes one run. The zero Policy is the default behaviour: seed
// only an empty session, queue behind a busy session, at most
// DefaultMaxSteps model calls, no context window, every tool allowed, a
// failing tool fails the run, no timeout, a broken history refused.
type Policy struct {
	SeedMode SeedMode
	OnBusy   BusyMode
	// MaxSteps caps model calls in one run; 0 means DefaultMaxSteps.
	MaxSteps int
	// MaxContextMessages and MaxContextBytes window what the model is sent;
	// 0 means no limit. The session itself keeps everything.
	MaxContextMessages int
	MaxContextBytes    int64
	// AllowedTools names the tools the model may call. nil allows every
	// configured tool; an empty non-nil slice allows none.
	AllowedTools []string
	ToolErrors   ToolErrorMode
	// TimeoutMs counts milliseconds from the moment the run starts
	// executing (after any wait in the queue); 0 means none.
	TimeoutMs int64
	// Repair, when true, repairs a history that the seeding rules refuse
	// for a problem of one of the RepairKinds, instead of refusing it, and
	// reports the repairs in SeedReport.Repairs. false refuses it with
	// CodeInvalidHistory. See docs/adr/0013-history-repair.md.
	Repair bool
	// MaxContextTokens is the budget, in tokens, of what one model call
	// is sent: the system prompt, the tool specs and the messages (counted
	// with Config.CountTokens, or EstimateTokens); 0 means none. The run's
	// own messages (its input on) are always sent: when they and the
	// system prompt and tool specs alone exceed it, the run fails with
	// CodeLimitExceeded, before seeding when the input is too much
	// (nothing changes), or at the step that outgrows it (rolled back as
	// any failure). It combines with
	// MaxContextMessages and MaxContextBytes: the tightest wins. See
	// docs/adr/0018-context-window-by-tokens.md.
	MaxContextTokens int64
	// ContextChunkTokens is how far the token window moves when the
	// messages outgrow MaxContextTokens: the tokens dropped are a multiple
	// of it, so the first message sent stays the same while the session
	// grows by that much (the providers' prompt caches keep working). 0
	// means MaxContextTokens / DefaultContextChunk; it may not exceed
	// MaxContextTokens.
	ContextChunkTokens int64
}

// Bounds of policy and limit fields, the same at every edge (the glue,
// the syscall/js API, the wire, WASI, HTTP): Policy.Validate and
// Limits.Validate refuse what is over them, so an edge that reads a
// number only checks that it is a non-negative integer it can carry.
const (
	// MaxTimeoutMs is the longest Policy.TimeoutMs, 2^31 - 1 ms (about
	// 24.8 days): the longest delay setTimeout keeps in every JavaScript
	// host (a longer one fires at once), and far from overflowing a
	// time.Duration.
	MaxTimeoutMs = 1<<31 - 1
	// MaxCount bounds the fields that count steps, messages or sessions
	// (the largest int32, so that a count is an int on every platform).
	MaxCount = 1<<31 - 1
	// MaxBytes bounds the fields that count bytes: the largest integer a
	// JavaScript number holds exactly (Number.MAX_SAFE_INTEGER).
	MaxBytes = 1<<53 - 1
)

// Validate reports the first invalid field as a CodeInvalidArgument
// error: an unknown mode, a negative number, or a number over its bound
// (MaxCount, MaxBytes, MaxTimeoutMs). Every edge calls it, through
// Runtime.Run, before a run changes anything.
func (p *Policy) Validate() error {
	// One error made at one place: a NewError per check cost the module
	// more gzip bytes than it has to spare (wasm/runtime/size_test.go).
	var msg string
	switch {
	case p.SeedMode != "" && p.SeedMode != SeedIfEmpty && p.SeedMode != SeedReconcile:
		msg = "policy.seedMode must be \"if-empty\" or \"reconcile\""
	case p.OnBusy != "" && p.OnBusy != BusyQueue && p.OnBusy != BusyReject:
		msg = "policy.onBusy must be \"queue\" or \"reject\""
	case p.ToolErrors != "" && p.ToolErrors != ToolErrorsFail && p.ToolErrors != ToolErrorsReport:
		msg = "policy.toolErrors must be \"fail\" or \"report\""
	case p.MaxSteps < 0:
		msg = "policy.maxSteps must not be negative"
	case p.MaxSteps > MaxCount:
		msg = "policy.maxSteps is too large (at most 2147483647)"
	case p.MaxContextMessages < 0:
		msg = "policy.maxContextMessages must not be negative"
	case p.MaxContextMessages > MaxCount:
		msg = "policy.maxContextMessages is too large (at most 2147483647)"
	case p.MaxContextBytes < 0:
		msg = "policy.maxContextBytes must not be negative"
	case p.MaxContextBytes > MaxBytes:
		msg = "policy.maxContextBytes is too large (at most 9007199254740991)"
	case p.TimeoutMs < 0:
		msg = "policy.timeoutMs must not be negative"
	case p.TimeoutMs > MaxTimeoutMs:
		msg = "policy.timeoutMs is too large (at most 2147483647)"
	case p.MaxContextTokens < 0:
		msg = "policy.maxContextTokens must not be negative"
	case p.MaxContextTokens > MaxBytes:
		msg = "policy.maxContextTokens is too large (at most 9007199254740991)"
	case p.ContextChunkTokens < 0 || (p.MaxContextTokens > 0 && p.ContextChunkTokens > p.MaxContextTokens):
		msg = "policy.contextChunkTokens must be from 0 to policy.maxContextTokens"
	default:
		return nil
	}
	return NewError(CodeInvalidArgument, msg)
}

func (p *Policy) maxSteps() int {
	if p.MaxSteps == 0 {
		return DefaultMaxSteps
	}
	return p.MaxSteps
}

func (p *Policy) toolAllowed(name string) bool {
	if p.AllowedTools == nil {
		return true
	}
	for _, n := range p.AllowedTools {
		if n == name {
			return true
		}
	}
	return false
}

// Limits bound what the runtime holds. A zero field means its default
// (see DefaultLimits); limits cannot be switched off.
type Limits struct {
	// MaxSessions is the number of sessions kept; the least recently used
	// idle session is evicted to make room (a cold start, which seeding
	// repairs).
	MaxSessions           int
	MaxMessagesPerSession int
	MaxSessionBytes       int64
	// MaxSeedMessages, MaxSeedBytes and MaxMessageBytes bound the history
	// a run may carry, and MaxMessageBytes every single message.
	MaxSeedMessages int
	MaxSeedBytes    int64
	MaxMessageBytes int64
	// MaxTotalBytes is the memory budget of the whole store: the bytes of
	// every session's messages plus MessageOverhead per message, plus what
	// admitted runs carry (their input and history) until it is stored or
	// dropped. It is enforced before bytes are taken: the least recently
	// used idle sessions are evicted to make room, and a run whose input,
	// history or reply cannot fit even then is refused (or fails) with
	// CodeLimitExceeded, changing nothing.
	MaxTotalBytes int64
}

// MessageOverhead is what each stored message counts against
// Limits.MaxTotalBytes on top of its Size: the Go value that holds it and
// the JavaScript object an edge caches for it.
const MessageOverhead = 256

// DefaultLimits are the limits used for zero fields.
//
// The budget (MaxTotalBytes, 16 MiB) is sized for the smallest host: a
// Cloudflare Workers isolate has 128 MB for everything (workerd, the
// JavaScript heap and the module's linear memory). Go's collector lets
// the heap grow to about twice what is live, and an edge keeps a
// JavaScript copy of each stored message, so 16 MiB of messages costs
// about 50 MB at peak, leaving room for the host. A phone's webview gives
// a page more, but the same figure keeps a tab cheap. Raise it where
// memory allows; see docs/adr/0004-memory-budget-and-no-divergence.md.
var DefaultLimits = Limits{
	MaxSessions:           1000,
	MaxMessagesPerSession: 100000,
	MaxSessionBytes:       8 << 20,
	MaxSeedMessages:       100000,
	MaxSeedBytes:          8 << 20,
	MaxMessageBytes:       1 << 20,
	MaxTotalBytes:         16 << 20,
}

// withDefaults returns l with zero fields replaced by the defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxSessions > 0 {
		d.MaxSessions = l.MaxSessions
	}
	if l.MaxMessagesPerSession > 0 {
		d.MaxMessagesPerSession = l.MaxMessagesPerSession
	}
	if l.MaxSessionBytes > 0 {
		d.MaxSessionBytes = l.MaxSessionBytes
	}
	if l.MaxSeedMessages > 0 {
		d.MaxSeedMessages = l.MaxSeedMessages
	}
	if l.MaxSeedBytes > 0 {
		d.MaxSeedBytes = l.MaxSeedBytes
	}
	if l.MaxMessageBytes > 0 {
		d.MaxMessageBytes = l.MaxMessageBytes
	}
	if l.MaxTotalBytes > 0 {
		d.MaxTotalBytes = l.MaxTotalBytes
	}
	return d
}

// Validate refuses negative limits, and limits over their bound
// (MaxCount for counts, MaxBytes for bytes), with CodeInvalidArgument.
// Every edge calls it, through New, before a runtime exists.
func (l *Limits) Validate() error {
	// MaxCount and MaxBytes are 2^n - 1: a bitwise or of the fields is
	// negative when one is, and over the bound when one is.
	counts := int64(l.MaxSessions | l.MaxMessagesPerSession | l.MaxSeedMessages)
	bytes := l.MaxSessionBytes | l.MaxSeedBytes | l.MaxMessageBytes | l.MaxTotalBytes
	if counts < 0 || bytes < 0 {
		return NewError(CodeInvalidArgument, "limits must not be negative")
	}
	if counts > MaxCount || bytes > MaxBytes {
		return NewError(CodeInvalidArgument, "limits are too large: counts at most 2147483647, bytes at most 9007199254740991")
	}
	return nil
}
