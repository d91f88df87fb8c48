package core

// Config configures a Runtime. The zero Config is usable: no system
// prompt, the built-in Echo model, no tools, DefaultLimits.
type Config struct {
	SystemPrompt string
	// Model answers runs; nil means Echo.
	Model Model
	Tools []Tool
	// Limits bound the store and the history a run may carry; zero fields
	// mean their defaults.
	Limits Limits
	// AfterFunc schedules run timeouts. nil means package time's timers,
	// except under GOOS=js, where the edge passes the host's setTimeout
	// (and a nil AfterFunc refuses runs with a timeout).
	AfterFunc AfterFunc
	// CountTokens counts a message's tokens for Policy.MaxContextTokens;
	// nil means EstimateTokens. See TokenCounter.
	CountTokens TokenCounter
	// CountByAction has the host count tokens through its Turn: under
	// Policy.MaxContextTokens, Next answers ActionCount with the
	// messages whose counts the caches lack, and FeedCounts takes them
	// (turn_count.go). It is for a host that drives its turns and whose
	// counter answers across a boundary (a wasm host); CountTokens must
	// then be nil, and runs started with Start or Execute fail under a
	// token budget (nothing can answer them).
	CountByAction bool
	// SignApproval, when set, signs each call a run pauses on
	// (PendingApproval.Signature: a server's HMAC of the session id and
	// the call, with a secret of its own), and a cold resume (the pending
	// calls came with the run's history, not from a run of this runtime)
	// is refused unless each of its approvals carries the signature of
	// its call: a server edge whose history comes from a client it does
	// not trust resumes only calls this runtime made. nil signs nothing.
	// See docs/adr/0023-approval-trust.md.
	SignApproval func(sessionID string, call ToolCall) string
}

// Runtime holds live sessions and runs turns on them. It is safe for
// concurrent use. Create it with New and Close it when done.
type Runtime struct {
	system string
	model  Model
	// directModel: model is ContextHonouring, called in the run's
	// goroutine.
	directModel bool
	tools       map[string]*Tool
	specs       []ToolSpec
	limits      Limits
	store       *store
	// afterFunc schedules timeouts; nil when none is available.
	afterFunc AfterFunc
	// countTokensFn is Config.CountTokens. systemTokens and specTokens
	// (one per spec, nil until counted) are the counts of the system
	// prompt and the tool specs, guarded by mu.
	countTokensFn TokenCounter
	countByAction bool
	signApproval  func(sessionID string, call ToolCall) string
	systemTokens  int64
	specTokens    []int64

	mu   mutex
	runs activeRuns
	// spare is a run whose turn ended and was recycled, for the next run.
	spare  *Run
	nextID uint64
	closed bool
}

// New returns a Runtime for cfg, or a CodeInvalidArgument error when a
// limit is negative or a tool has no name, a duplicate name or no Call.
func New(cfg Config) (*Runtime, error) {
	if err := cfg.Limits.Validate(); err != nil {
		return nil, err
	}
	rt := &Runtime{
		system: cfg.SystemPrompt,
		model:  cfg.Model,
		tools:  make(map[string]*Tool, len(cfg.Tools)),
		limits: cfg.Limits.withDefaults(),

		signApproval: cfg.SignApproval,
	}
	if rt.model == nil {
		rt.model = Echo{}
	}
	_, rt.directModel = rt.model.(ContextHonouring)
	rt.afterFunc = cfg.AfterFunc
	rt.countTokensFn = cfg.CountTokens
	if cfg.CountByAction {
		if cfg.CountTokens != nil {
			return nil, NewError(CodeInvalidArgument, "CountTokens and CountByAction are both set: one counter only")
		}
		rt.countByAction = true
	}
	if rt.afterFunc == nil {
		rt.afterFunc = defaultAfterFunc
	}
	for i := range cfg.Tools {
		t := &cfg.Tools[i]
		if t.Name == "" {
			return nil, NewError(CodeInvalidArgument, "tool "+itoa(i)+" has no name")
		}
		if t.Call == nil {
			return nil, NewError(CodeInvalidArgument, "tool "+quote(t.Name)+" has no call function")
		}
		if rt.tools[t.Name] != nil {
			return nil, NewError(CodeInvalidArgument, "tool name "+quote(t.Name)+" is used twice")
		}
		tc := *t
		rt.tools[t.Name] = &tc
		rt.specs = append(rt.specs, t.ToolSpec)
	}
	rt.store = newStore(rt.limits)
	return rt, nil
}

// RunRequest is everything one run needs. The four ADR entry points fill
// it in; Start takes it whole.
type RunRequest struct {
	SessionID string
	Input     string
	Policy    Policy
	// History is the host's prior turns. It is applied only when
	// WithHistory is set (then a nil History is an empty history, and the
	// seed outcome is at least "noop"); otherwise the outcome is "none".
	// Start copies it: the caller may reuse the slice once Start returns.
	History     []SeedMessage
	WithHistory bool
	// HistoryTrusted says History is the host's own record (a server's
	// storage of the conversation), not a client's: a cold resume of its
	// pending calls needs no signature (Config.SignApproval).
	HistoryTrusted bool
	// RunID names the run; empty means one is generated
	// (GeneratedRunIDPrefix and a number). It must not be the id of an
	// active run, nor start with GeneratedRunIDPrefix.
	RunID string
	// OnEvent, if set, is called for each event in order, from the run's
	// goroutine. It must not block for long; it may call CancelRun.
	OnEvent func(Event)
	// Inspect asks for the messages of each model call in
	// Result.ModelCalls.
	Inspect bool
	// Approvals, when set, resume the tool calls the session awaits
	// approval for, one decision per pending call, instead of appending
	// an input (Input must be empty). See docs/adr/0019-tool-approvals.md.
	Approvals []Approval
	// IfHead, when set, runs the turn only if the conversation it would
	// run on (the warm session, or what History seeds as the seed mode
	// says) has this head; otherwise the run fails CodeHistoryDiverged
	// before anything changes. A value that is not a head is refused
	// CodeInvalidArgument. See docs/adr/0025-conversation-heads.md.
	IfHead string
}

// StartRun starts a turn on sessionID with the default Policy and no
// history.
func (rt *Runtime) StartRun(ctx Context, sessionID, input string) (*Run, error) {
	return rt.Start(ctx, RunRequest{SessionID: sessionID, Input: input})
}

// StartRunWithPolicy starts a turn with policy and no history.
func (rt *Runtime) StartRunWithPolicy(ctx Context, sessionID, input string, policy Policy) (*Run, error) {
	return rt.Start(ctx, RunRequest{SessionID: sessionID, Input: input, Policy: policy})
}

// StartRunWithHistory starts a turn that seeds an empty session with
// history first (the default Policy: SeedIfEmpty).
func (rt *Runtime) StartRunWithHistory(ctx Context, sessionID, input string, history []SeedMessage) (*Run, error) {
	return rt.Start(ctx, RunRequest{SessionID: sessionID, Input: input, History: history, WithHistory: true})
}

// StartRunWithPolicyAndHistory starts a turn that seeds the session from
// history as policy.SeedMode says.
func (rt *Runtime) StartRunWithPolicyAndHistory(ctx Context, sessionID, input string, policy Policy, history []SeedMessage) (*Run, error) {
	return rt.Start(ctx, RunRequest{SessionID: sessionID, Input: input, Policy: policy, History: history, WithHistory: true})
}

// Limits returns the limits in force, defaults filled in.
func (rt *Runtime) Limits() Limits { return rt.limits }

// MaxIDBytes bounds session and run ids.
const MaxIDBytes = 512

// maxIDBytesText is MaxIDBytes in decimal, for the refusals' text.
const maxIDBytesText = "512"

// GeneratedRunIDPrefix starts every run id the runtime generates. Host
// run ids may not start with it, so a generated id never collides with
// one a host chose.
const GeneratedRunIDPrefix = "agentrt:"

// Start validates req and starts the run. A refused run returns an *Error
// (CodeInvalidArgument, CodeInvalidHistory, CodeLimitExceeded or
// CodeSessionBusy), emits no events and changes nothing. History is
// validated before the busy check. Otherwise the run goes on in its own
// goroutine; see Run.
func (rt *Runtime) Start(ctx Context, req RunRequest) (*Run, error) {
	r, err := rt.admit(ctx, req)
	if err != nil {
		return nil, err
	}
	go r.execute()
	return r, nil
}

// Execute runs req in the calling goroutine and returns its result or its
// *Error: what Start and then Wait on the run would return, without the
// goroutine Start starts. It refuses runs as Start does. While it runs,
// the run is active as any other: CancelRun, the policy's timeout and
// ctx stop it, and its events reach req.OnEvent from the calling
// goroutine.
//
// # Notes
//
//   - Execute blocks for the whole run: while the session's lane is busy,
//     then for every model and tool call. Use it from a goroutine that
//     may wait that long (an edge that answers through a callback or a
//     Promise); use Start to get a handle at once.
func (rt *Runtime) Execute(ctx Context, req RunRequest) (*Result, error) {
	r, err := rt.admit(ctx, req)
	if err != nil {
		return nil, err
	}
	r.execute()
	return r.outcome()
}

// admit validates req and registers its run, joined to its session's
// lane and ready to execute; a refused run returns an *Error and leaves
// nothing behind. See Start.
func (rt *Runtime) admit(ctx Context, req RunRequest) (*Run, error) {
	if ctx == nil {
		ctx = Background()
	}
	if req.SessionID == "" {
		return nil, NewError(CodeInvalidArgument, "sessionId must be a non-empty string")
	}
	if len(req.SessionID) > MaxIDBytes {
		return nil, NewError(CodeInvalidArgument, "sessionId is longer than "+maxIDBytesText+" bytes")
	}
	if len(req.RunID) > MaxIDBytes {
		return nil, NewError(CodeInvalidArgument, "runId is longer than "+maxIDBytesText+" bytes")
	}
	if hasPrefix(req.RunID, GeneratedRunIDPrefix) {
		return nil, NewError(CodeInvalidArgument, "runId must not start with "+quote(GeneratedRunIDPrefix)+": such ids are generated")
	}
	if err := req.Policy.Validate(); err != nil {
		return nil, err
	}
	if req.IfHead != "" && !ValidHead(req.IfHead) {
		return nil, NewError(CodeInvalidArgument, notAHead)
	}
	if req.Policy.TimeoutMs > 0 && rt.afterFunc == nil {
		return nil, NewError(CodeInvalidArgument, "policy.timeoutMs needs timers: set Config.AfterFunc")
	}
	if int64(len(req.Input)) > rt.limits.MaxMessageBytes {
		return nil, NewError(CodeLimitExceeded, "input is "+itoa(len(req.Input))+" bytes, more than maxMessageBytes ("+itoa(int(rt.limits.MaxMessageBytes))+")")
	}
	if err := checkApprovals(&req, &rt.limits); err != nil {
		return nil, err
	}
	var info historyInfo
	var seedMsgs []Message
	var repairs []Repair
	var healed []SeedMessage
	var edits []HistoryEdit
	if req.WithHistory {
		seedFn := seedHistory
		if len(req.Approvals) > 0 {
			seedFn = seedAwaiting
		} else if _, calls := pendingSeed(req.History); rt.pausedTail(calls, &req.Policy) {
			// A history paused for approvals is not damaged: repair
			// leaves its pending calls alone, and seeding refuses the
			// input as on the paused session (awaitingError).
			seedFn = seedAwaiting
		}
		history, hi, reps, eds, err := seedFn(req.History, rt.limits, req.Policy.Repair)
		if err != nil {
			return nil, err
		}
		info, repairs = hi, reps
		if reps != nil {
			healed, edits = history, eds
		}
		// Converted now, so the host may reuse its slice at once.
		seedMsgs = nonSystem(history, info.skippedSystem)
		req.History = nil
	}
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil, NewError(CodeInvalidArgument, "runtime is closed")
	}
	r := rt.spare
	rt.spare = nil
	if r == nil {
		r = new(Run)
	}
	// A recycled run keeps its event log's array and its first model
	// call's Delta function (bound to that call) for this run.
	*r = Run{rt: rt, req: req, info: info, seedMsgs: seedMsgs, repairs: repairs, healed: healed, edits: edits, events: r.events[:0],
		call: modelCall{req: ModelRequest{Delta: r.call.req.Delta}}}
	if req.RunID == "" {
		rt.nextID++
		r.id = GeneratedRunIDPrefix + "run-" + itoa(int(rt.nextID))
	} else {
		if rt.runs.get(req.RunID) != nil {
			rt.mu.Unlock()
			return nil, NewError(CodeInvalidArgument, "runId "+quote(req.RunID)+" is already running")
		}
		r.id = req.RunID
	}
	// Join the session's lane (or refuse) before the run is registered, so
	// that a refused run leaves no trace. The run's input and history
	// count against the memory budget from now until they are stored or
	// dropped: join reserves them last, so that a run refused for any
	// other reason evicts nothing.
	r.inputCost = int64(len(req.Input)) + MessageOverhead
	cost := r.inputCost + info.bytes + int64(len(r.seedMsgs))*MessageOverhead
	ln, busy, err := rt.store.join(req.SessionID, req.Policy.OnBusy == BusyReject, cost)
	if busy {
		rt.mu.Unlock()
		return nil, NewError(CodeSessionBusy, "session "+quote(req.SessionID)+" is running another run")
	}
	if err != nil {
		rt.mu.Unlock()
		return nil, err
	}
	r.reserved = cost
	// Ready before it is registered: CancelRun may reach it at once.
	r.lane = ln
	r.ctx = &r.ctxVal
	r.ctx.init(ctx)
	rt.runs.add(r)
	rt.mu.Unlock()
	return r, nil
}

// CancelRun cancels the active run with runID. It reports whether this
// call cancelled it: false for an unknown, finished or already cancelled
// run.
func (rt *Runtime) CancelRun(runID string) bool {
	// Cancelled under rt.mu: a run that ends meanwhile cannot be recycled
	// into another run (see Turn.Recycle) before Cancel reaches it.
	rt.mu.Lock()
	r := rt.runs.get(runID)
	ok := r != nil && r.Cancel()
	rt.mu.Unlock()
	return ok
}

// RevertRun takes the turn of the completed run runID off session
// sessionID, for a host that never received the run's result: after it,
// the session holds what it held before the run appended anything (what
// seeding added stays, as the host's history has it), and the next turn
// continues from the host's history, not from the lost turn.
//
// The turn is cut when it is still the session's tail and no run holds or
// waits for the session; RevertRun then reports true. Otherwise something
// newer was built on the turn (or is being built), and the session is
// removed instead, so that the next run seeds it from the host's history
// (a cold start); RevertRun then reports false, as it does when there is
// no such session. Either way the session no longer holds the turn. A run
// still active on a removed session finishes on it, as after
// DeleteSession.
//
// # Notes
//
//   - Call it only for a run that completed: a failed or cancelled run
//     has rolled its turn back already, and reverting it removes the
//     session (a cold start, harmless but not free).
func (rt *Runtime) RevertRun(sessionID, runID string) bool {
	return rt.store.revert(sessionID, runID)
}

func (rt *Runtime) finished(r *Run) {
	rt.mu.Lock()
	rt.runs.remove(r)
	rt.mu.Unlock()
}

// Session is a snapshot of one session.
type Session struct {
	ID string
	// Messages are the session's messages, oldest first. The slice is the
	// caller's; the ToolCalls inside are shared and must not be changed.
	Messages []Message
	// Generation names the messages for hosts that mirror them (see
	// ModelRequest.Generation).
	Generation uint64
	// Head names the messages as a run's IfHead does (see Head).
	Head string
}

// Session returns a snapshot of the session with id, or false if there
// is none.
func (rt *Runtime) Session(id string) (Session, bool) {
	msgs, gen, head, ok := rt.store.snapshot(id)
	return Session{ID: id, Messages: msgs, Generation: gen, Head: head}, ok
}

// DeleteSession removes the session with id and reports whether there was
// one. A run active on it finishes on the removed session; its messages
// are dropped with it.
func (rt *Runtime) DeleteSession(id string) bool {
	return rt.store.remove(id)
}

// ListSessions returns the ids of all sessions, sorted.
func (rt *Runtime) ListSessions() []string {
	ids := rt.store.ids()
	sortStrings(ids)
	return ids
}

// Stats are counters of a Runtime.
type Stats struct {
	Sessions   int
	Messages   int
	Bytes      int64
	ActiveRuns int
	Evictions  int
	// BudgetUsed is what counts against Limits.MaxTotalBytes now (stored
	// messages with their overhead, and what admitted runs carry), and
	// BudgetBytes is that limit: how close the runtime is to evicting.
	BudgetUsed    int64
	BudgetBytes   int64
	RunsCompleted int
	RunsFailed    int
	RunsCancelled int
}

// Stats returns the runtime's counters.
func (rt *Runtime) Stats() Stats {
	s := rt.store.stats()
	rt.mu.Lock()
	s.ActiveRuns = rt.runs.len()
	rt.mu.Unlock()
	return s
}

// Close cancels every active run and refuses new ones. The sessions stay
// readable. Close is idempotent.
func (rt *Runtime) Close() {
	rt.mu.Lock()
	rt.closed = true
	runs := rt.runs.all()
	rt.mu.Unlock()
	for _, r := range runs {
		r.Cancel()
	}
}

func hasPrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && s[:len(prefix)] == prefix
}

// sortStrings sorts ids in place (a shell sort): package sort would link
// the generic pdqsort into the module, about 19 KB of code for a list of
// at most MaxSessions ids.
func sortStrings(ids []string) {
	for gap := len(ids) / 2; gap > 0; gap /= 2 {
		for i := gap; i < len(ids); i++ {
			for j := i; j >= gap && ids[j] < ids[j-gap]; j -= gap {
				ids[j], ids[j-gap] = ids[j-gap], ids[j]
			}
		}
	}
}
