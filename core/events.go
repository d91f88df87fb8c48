package core

// EventType names an event. The set is closed: hosts may switch on it.
type EventType string

// The events of a run, in the order they can occur.
const (
	EventRunStarted      EventType = "run.started"
	EventSessionSeeded   EventType = "session.seeded"
	EventMessageAppended EventType = "message.appended"
	EventModelDelta      EventType = "model.delta"
	EventToolStarted     EventType = "tool.started"
	EventToolFinished    EventType = "tool.finished"
	EventRunCompleted    EventType = "run.completed"
	EventRunFailed       EventType = "run.failed"
	EventRunCancelled    EventType = "run.cancelled"
	// EventModelContext reports the window of a model call under
	// Policy.MaxContextTokens, before the call; runs without that
	// budget emit none.
	EventModelContext EventType = "model.context"
)

// Event is one thing that happened in a run. Seq starts at 1 and grows by
// one within the run. Only the fields of its type are set:
//
//	session.seeded    Seed (counts and repairs, never content)
//	message.appended  Message
//	model.delta       Delta, Step
//	tool.started      ToolCall
//	tool.finished     ToolCall, Message (the tool result), Err if it failed
//	run.completed     Result
//	run.awaiting_approval Result (Status StatusAwaitingApproval)
//	run.failed        Err
//	run.cancelled     Err (CodeCancelled)
//	model.context     Context, Step (only under Policy.MaxContextTokens)
type Event struct {
	Type      EventType
	RunID     string
	SessionID string
	Seq       int
	Seed      *SeedReport
	Message   *Message
	Delta     string
	Step      int
	ToolCall  *ToolCall
	Result    *Result
	Err       *Error
	// Context is the window of a model.context event.
	Context *ContextReport
}

// SeedOutcome says what seeding did.
type SeedOutcome string

// Seed outcomes.
const (
	// SeedNone: the run carried no history.
	SeedNone SeedOutcome = "none"
	// SeedCold: an empty session was seeded.
	SeedCold SeedOutcome = "cold"
	// SeedNoop: history was passed and nothing changed (a warm session, or
	// an empty or system-only history).
	SeedNoop SeedOutcome = "noop"
	// SeedAppended: reconcile appended the missing tail.
	SeedAppended SeedOutcome = "appended"
	// SeedReplaced: reconcile replaced a diverged session.
	SeedReplaced SeedOutcome = "replaced"
)

// SeedReport is the outcome of seeding: the mode, how many messages were
// added to the session, how many system messages were skipped, and the
// repairs applied to the history (Policy.Repair): nil when there were
// none, or when the session held messages and the seed stored nothing
// (an earlier run stored the repaired history).
//
// When Repairs is set, Repaired is the host's history with the repairs
// applied (docs/adr/0016-the-host-copy-heals.md): the messages the run
// was given, less the ones dropped, with the markers inserted, in order;
// a host stores it in place of its copy before it appends the result's
// Appended, and its stored history then seeds without repair. Edits are
// the same changes in the host's indexes, one per repair and in the same
// order, for an edge that renders the healed copy in the host's own
// shape. Both are nil when Repairs is. The session.seeded event carries
// Edits but not Repaired (events carry no content).
type SeedReport struct {
	Mode          SeedOutcome
	Seeded        int
	SkippedSystem int
	Repairs       []Repair
	Repaired      []SeedMessage
	Edits         []HistoryEdit
}

// Result is what a completed run returns.
type Result struct {
	RunID     string
	SessionID string
	// Status is "completed", or StatusAwaitingApproval for a run that
	// stopped before tool calls that need approval: failed runs return
	// an *Error instead.
	Status string
	// Reply is the final assistant message.
	Reply Message
	// Appended are the messages this turn added, in order: the user
	// message (unless the history already ended with it), tool calls and
	// results, the final reply.
	Appended []Message
	Seed     SeedReport
	// MessageCount is the number of messages in the session afterwards.
	MessageCount int
	// head, or the session and its messages the head is computed from
	// when asked (see Result.Head).
	head      string
	headSess  *session
	headMsgs  []Message
	headStore *store
	// ModelCalls describes each model call of the run, in order.
	ModelCalls []ModelCall
	// Context is what the last model call was sent under
	// Policy.MaxContextTokens; nil when the policy sets no token budget.
	Context *ContextReport
	// PendingApprovals are the calls awaiting approval when Status is
	// StatusAwaitingApproval (Reply is then the assistant message that
	// made them).
	PendingApprovals []PendingApproval
}

// ModelCall describes one model call: how many messages the model was
// sent (the system prompt not counted), and, when the run asked for
// inspection, the messages themselves.
type ModelCall struct {
	Step         int
	MessageCount int
	Messages     []Message
}
