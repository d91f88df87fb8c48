// Package jsedge is the edge of the GOOS=js module's syscall/js API
// (docs/module.md). It converts between JavaScript values and agentrt's
// core types: host histories (arrays of message objects in every shape
// package hostmsg reads, or packed Uint8Arrays), policies, limits,
// configs and tools in; results, events, sessions, stats, history checks
// and errors out; model requests and replies, tool arguments and outputs
// for the JavaScript functions that answer a turn's calls. Beside the
// conversions it holds what they need to be cheap or asynchronous:
//
//   - Cache, per runtime: the frozen JavaScript objects of each session's
//     messages, and an Array of them that later model requests extend and
//     slice, so that a message crosses into JavaScript once;
//   - Async, Await and Rejected: Promises of Go work (on a pool of
//     goroutines), and a wait for a JavaScript thenable that lets the
//     event loop run;
//   - AfterFunc: run timeouts on the host's setTimeout;
//   - SetRepaired, a repaired history's healed copy;
//   - the names of every global, method and field that crosses
//     (names.go).
//
// It drives no turn and defines no method of the Runtime object: the
// module's methods (wasm/runtime) convert their arguments here, call the
// handlers of wasm/internal/hostturn that the wire's exports call too,
// and convert the answers here; its run methods answer the actions of
// the turns hostturn drives. PolicyJSON is the reader of a begin frame's
// policy as JSON text (JSON.parse, then Policy) that the module hands
// each hostturn.Driver, so that package wire calls no JavaScript. It has
// no init, and the globals it uses are looked up on first use (package
// jsutil, which it imports, reads four at init).
//
//	cfg, model, tools, err := jsedge.Config(args[0]) // JS config -> core.Config
//	return jsedge.Async(func() (js.Value, error) {
//		// core.Turn: Begin, Next, and for a model action:
//		r, end := jsedge.Request(a.Request, system, cache)
//		v, err := jsedge.Invoke(model, r)
//		v, err = jsedge.Await(tn.Context(), v, core.CodeModelError)
//		reply, err := jsedge.Reply(v) // then FeedModel
//		...
//		return cache.Result(res, ifHead != ""), nil
//	})
//
// Wrong JavaScript types are refused with the same typed errors as core:
// invalid_history with the index of the message for histories,
// invalid_argument naming the field for everything else. Errors reach
// JavaScript as real Error objects with code, message and (when one
// message is at fault) index.
//
// The conversion code builds only for GOOS=js GOARCH=wasm. On other
// platforms the package holds only the names below and ErrNotJS.
//
// The API is unstable until version 1.0.
package jsedge

import (
	"github.com/agentrt/agentrt/core/hostmsg"
	"github.com/agentrt/agentrt/internal/envvar"
)

// Every name that crosses the Go/JavaScript line. Keep in sync with
// docs/contract.md, js/glue.js, js/history.js and js/glue.d.ts.

// JavaScript globals the edge uses, besides those package jsutil reads
// (Object, Array, Uint8Array, Error).
const (
	GlobalPromise = "Promise"
	GlobalJSON    = "JSON"
	GlobalString  = "String"
	GlobalReflect = "Reflect"
	// The host's timers, used for run timeouts (see AfterFunc).
	GlobalSetTimeout   = "setTimeout"
	GlobalClearTimeout = "clearTimeout"
)

// JavaScript methods the edge calls.
const (
	MethodIsArray   = "isArray"   // Array.isArray
	MethodParse     = "parse"     // JSON.parse
	MethodStringify = "stringify" // JSON.stringify
	MethodThen      = "then"      // Promise.prototype.then
	MethodGet       = "get"       // Reflect.get
	MethodFreeze    = "freeze"    // Object.freeze
	MethodKeys      = "keys"      // Object.keys
	MethodOf        = "of"        // Array.of
	MethodPush      = "push"      // Array.prototype.push
	MethodSlice     = "slice"     // Array.prototype.slice
	MethodBind      = "bind"      // Function.prototype.bind
	MethodForEach   = "forEach"   // Array.prototype.forEach
	MethodReject    = "reject"    // Promise.reject
	MethodResolve   = "resolve"   // Promise.resolve
)

// Message fields, and the camelCase spellings also accepted in histories:
// hostmsg's names, which reads every shape of host message.
const (
	FieldRole            = hostmsg.FieldRole
	FieldContent         = hostmsg.FieldContent
	FieldToolCallID      = hostmsg.FieldToolCallID
	FieldToolCallIDCamel = hostmsg.FieldToolCallIDCamel
	FieldToolCalls       = hostmsg.FieldToolCalls
	FieldToolCallsCamel  = hostmsg.FieldToolCallsCamel
	FieldID              = hostmsg.FieldID
	FieldName            = hostmsg.FieldName
	FieldArguments       = hostmsg.FieldArguments
)

// FieldCountByAction (true) has the host count tokens
// (core.Config.CountByAction): the glue's countTokens answers the wire's
// count actions.
const FieldCountByAction = "countByAction"

// Config and tool fields (the limits' are hostmsg's, which Limits reads).
const (
	FieldSystemPrompt  = "systemPrompt"
	FieldModel         = "model"
	FieldTools         = "tools"
	FieldLimits        = "limits"
	FieldDescription   = "description"
	FieldParameters    = "parameters"
	FieldCall          = "call"
	FieldNeedsApproval = "needsApproval"
	// ModelEcho selects the built-in model (as does an omitted model).
	ModelEcho = "echo"
	// ModelHost, in a config frame's JSON text only, has the host answer
	// model calls (createRuntime takes the model function instead).
	ModelHost = "host"
)

// Run options, model request and tool context fields.
const (
	FieldRunID         = "runId"
	FieldSessionID     = "sessionId"
	FieldOnEvent       = "onEvent"
	FieldInspect       = "inspect"
	FieldSystem        = "system"
	FieldMessages      = "messages"
	FieldDelta         = "delta"
	FieldStep          = "step"
	FieldCtxToolCallID = "toolCallId" // ctx.toolCallId of a tool call
)

// Result, seed report, model call, event, session and error fields.
const (
	FieldStatus        = "status"
	FieldReply         = "reply"
	FieldAppended      = "appended"
	FieldSeed          = "seed"
	FieldMode          = "mode"
	FieldSeeded        = "seeded"
	FieldSkippedSystem = "skippedSystem"
	FieldMessageCount  = "messageCount"
	FieldModelCalls    = "modelCalls"
	FieldType          = "type"
	FieldSeq           = "seq"
	FieldMessage       = "message"
	FieldToolCall      = "toolCall"
	FieldResult        = "result"
	FieldError         = "error"
	FieldCode          = "code"
	FieldIndex         = "index"
	FieldLength        = "length"
	// History repair (docs/adr/0013-history-repair.md): seed.repairs
	// [{kind, index, toolCallId?}], policy.repair, and checkHistory's
	// {ok, problems: [{code, index, message, repair}]}.
	FieldRepairs          = "repairs"
	FieldKind             = "kind"
	FieldRepair           = "repair"
	FieldOK               = "ok"
	FieldProblems         = "problems"
	FieldAwaiting         = "awaiting"
	FieldPaused           = "paused"
	FieldRepairToolCallID = "toolCallId"
	// Tool approvals (docs/adr/0019-tool-approvals.md): the run option
	// approvals [{toolCallId, approved, reason?}] and the Result's
	// pendingApprovals [{toolCallId, name, arguments}].
	FieldApprovals = "approvals"
	// Conversation heads (docs/adr/0025-conversation-heads.md): the run
	// option ifHead; head on a run's result (with ifHead), a session, a
	// history check and a history_diverged error, with missing, the
	// messages a caller that is only behind lacks.
	FieldIfHead           = "ifHead"
	FieldHead             = "head"
	FieldMissing          = "missing"
	FieldPendingApprovals = "pendingApprovals"
)

// Stats fields.
const (
	FieldSessions      = "sessions"
	FieldMessagesCount = "messages"
	FieldBytes         = "bytes"
	FieldActiveRuns    = "activeRuns"
	FieldEvictions     = "evictions"
	FieldRunsCompleted = "runsCompleted"
	FieldRunsFailed    = "runsFailed"
	FieldRunsCancelled = "runsCancelled"
	// FieldBudgetUsed and FieldBudgetBytes are core.Stats.BudgetUsed and
	// BudgetBytes: the memory budget in use and its limit.
	FieldBudgetUsed  = "budgetUsed"
	FieldBudgetBytes = "budgetBytes"
	// FieldHeapAlloc is the Go heap in use (runtime.MemStats.HeapAlloc),
	// set by the module's stats().
	FieldHeapAlloc = "heapAlloc"
	// FieldGC, in the options of stats(), asks for a garbage collection
	// before heapAlloc is read.
	FieldGC = "gc"
)

// The object a module publishes, and the Runtime's methods.
const (
	// DefaultGlobal is the global name when AGENTRT_GLOBAL is unset.
	DefaultGlobal = "agentrt"
	// EnvGlobal names the environment variable that overrides it.
	EnvGlobal = envvar.Global

	ExportVersion       = "version"
	ExportCreateRuntime = "createRuntime"

	MethodStartRun                     = "startRun"
	MethodStartRunWithPolicy           = "startRunWithPolicy"
	MethodStartRunWithHistory          = "startRunWithHistory"
	MethodStartRunWithPolicyAndHistory = "startRunWithPolicyAndHistory"
	MethodGetSession                   = "getSession"
	MethodListSessions                 = "listSessions"
	MethodStats                        = "stats"
	MethodCheckHistory                 = "checkHistory"
	MethodClose                        = "close"
)
