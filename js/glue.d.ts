/// <reference lib="es2018.asynciterable" />
// Types of agentrt's glue (glue.js). Hand-written; keep in sync with
// glue.js and with the module's contract (docs/contract.md, docs/glue.md).
//
// The messages the runtime hands out (result.appended, result.reply,
// session().messages, events, model requests) are frozen objects: their
// types are readonly. Every one of them, and arrays of them, can be passed
// back as history: store them as they are.
//
// The reference to TypeScript's es2018.asynciterable lib above declares
// AsyncIterableIterator (what stream() returns) for a program compiled
// with TypeScript's default lib (ES5), which does not have it; a program
// whose lib has it already is unchanged. js/package-test/types.test.mjs
// compiles a program using the package both ways.

/** A stable error code. */
export type ErrorCode =
  | "invalid_argument"
  | "invalid_history"
  | "session_busy"
  | "limit_exceeded"
  | "model_error"
  | "tool_error"
  | "cancelled"
  | "timeout"
  | "internal"
  | "load_failed";

/**
 * The error of every failed call. Bad arguments are TypeErrors with code
 * "invalid_argument", and `instanceof AgentrtError` is true for them too.
 * Code "internal" with a message saying the Go program exited means the
 * instance died (a fatal error in Go); the next call gets a fresh one.
 *
 * @example
 * try { await rt.run({ sessionId: "s", input: "hi", history }); }
 * catch (e) { if (e instanceof AgentrtError && e.code === "invalid_history") console.log(e.index); }
 */
export declare class AgentrtError extends Error {
  constructor(code: string, message: string, options?: { index?: number; cause?: unknown; name?: string; appended?: Message[]; head?: string; missing?: Message[] });
  /** The stable code. */
  readonly code: ErrorCode | (string & {});
  /** The position of the message at fault in the history the host passed, when one is. */
  readonly index?: number;
  /**
   * The messages a failed or cancelled resume keeps in its session: the
   * results of the calls a person approved that ran (and the answers of
   * that reply's other calls), which no later failure of the run rolls
   * back. Store them as `result.appended` is stored. Absent for other failures.
   */
  readonly appended?: Message[];
  /** On history_diverged: the head of the conversation the run would have run on. */
  readonly head?: string;
  /**
   * On history_diverged, when the run's ifHead names an earlier state of
   * the conversation: the messages the caller lacks, in order. Append them
   * and retry with `head`.
   */
  readonly missing?: Message[];
  /** "AgentrtError", or "AbortError" for a run cancelled by its AbortSignal. */
  name: string;
}

/** A tool call in the module's shape. `arguments` is JSON text. Frozen when the runtime hands it out. */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** A message role the runtime knows. */
export type Role = "user" | "assistant" | "tool" | "system";

/**
 * A message in the module's shape, as sessions hold it. The runtime hands
 * out frozen objects (writing to one throws in strict code): copy one to
 * change it. A Message is a HistoryMessage, so stored messages go back as
 * history unchanged.
 */
export interface Message {
  readonly role: Role;
  readonly content: string;
  readonly tool_call_id?: string;
  readonly tool_calls?: readonly ToolCall[];
  readonly id?: string;
}

/** A tool call as a host may pass it in history: the module's shape (arguments may be an object). */
export interface HistoryToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments?: string | Readonly<Record<string, unknown>> | undefined;
}

/** A tool call in OpenAI's chat shape. */
export interface OpenAIToolCall {
  readonly id: string;
  readonly type?: "function" | undefined;
  readonly function: { readonly name: string; readonly arguments?: string | Readonly<Record<string, unknown>> | undefined };
}

/**
 * A part of OpenAI's array `content`: text (and refusal) parts are read;
 * image_url, input_audio and file parts are skipped (docs/contract.md).
 */
export interface ContentPart {
  readonly type: "text" | "refusal" | "image_url" | "input_audio" | "file" | (string & {});
  readonly text?: string | undefined;
  readonly refusal?: string | undefined;
  readonly [extra: string]: unknown;
}

/**
 * A part of a Vercel AI SDK UIMessage: text parts are read; tool parts
 * ("tool-NAME", "dynamic-tool") with a result become a call and its
 * result; reasoning, file, source, step-start and data-* parts are skipped
 * (docs/contract.md).
 */
export interface UIMessagePart {
  readonly type: string;
  readonly text?: string | undefined;
  readonly toolCallId?: string | undefined;
  readonly toolName?: string | undefined;
  readonly state?: string | undefined;
  readonly input?: unknown;
  readonly output?: unknown;
  readonly errorText?: string | undefined;
  readonly [extra: string]: unknown;
}

/**
 * One prior turn, in any shape the glue accepts (docs/contract.md): the
 * module's (snake_case or camelCase, as Message, Result.appended and
 * Session.messages are), OpenAI chat messages (content parts, the
 * developer role) and Vercel AI SDK UIMessages ({ id, role, parts }).
 * Content may be null or absent only on an assistant message with tool
 * calls, or on a UIMessage. Other fields of a stored object (timestamps,
 * metadata, ...) are ignored; a fresh object literal with unknown fields
 * is a type error, to catch typos.
 */
export interface HistoryMessage {
  readonly role: Role | "developer";
  readonly content?: string | null | ReadonlyArray<ContentPart> | undefined;
  readonly parts?: ReadonlyArray<UIMessagePart> | null | undefined;
  readonly id?: string | null | undefined;
  readonly tool_call_id?: string | null | undefined;
  readonly toolCallId?: string | null | undefined;
  readonly tool_calls?: ReadonlyArray<HistoryToolCall | OpenAIToolCall> | null | undefined;
  readonly toolCalls?: ReadonlyArray<HistoryToolCall | OpenAIToolCall> | null | undefined;
}

/**
 * History: messages (any array of HistoryMessage, Message included, such
 * as stored `result.appended` or `session().messages`), or a Uint8Array
 * already in the packed format.
 */
export type History = ReadonlyArray<HistoryMessage> | Uint8Array;

/** How a run's history is applied. */
export interface Policy {
  seedMode?: "if-empty" | "reconcile" | undefined;
  onBusy?: "queue" | "reject" | undefined;
  maxSteps?: number | undefined;
  maxContextMessages?: number | undefined;
  maxContextBytes?: number | undefined;
  allowedTools?: string[] | undefined;
  toolErrors?: "fail" | "report" | undefined;
  timeoutMs?: number | undefined;
  /**
   * Repair a history refused for a missing, orphan or duplicate tool
   * result or a repeated message id, by a fixed rule, instead of refusing
   * it; the repairs are listed in `seed.repairs`. Default false.
   */
  repair?: boolean | undefined;
  /**
   * The budget, in tokens, of one model call: the system prompt, the tool
   * specs and the messages sent (by the estimate of docs/contract.md).
   * The oldest messages are left out in chunks, a tool call with its
   * results; an input that cannot fit is refused with limit_exceeded.
   * Default 0: none.
   */
  maxContextTokens?: number | undefined;
  /** How far the token window moves at once; default half of maxContextTokens. */
  contextChunkTokens?: number | undefined;
}

/** The kinds of defect `policy.repair` fixes. */
export type RepairKind = "missing_tool_result" | "orphan_tool_result" | "duplicate_tool_result" | "duplicate_message";

/** One repair applied to a history; `index` is the host's position of the message concerned. */
export interface Repair {
  kind: RepairKind;
  index: number;
  toolCallId?: string;
}

/** What seeding did: counts and repairs, and on a result the healed history. */
export interface SeedReport {
  mode: "cold" | "noop" | "appended" | "replaced" | "none";
  seeded: number;
  skippedSystem: number;
  /** The repairs `policy.repair` applied; absent when there were none. */
  repairs?: Repair[];
  /**
   * On a result whose seed repaired the history (an array): that history
   * with the repairs applied, in its own shape (kept messages are the
   * same objects). Store it in place of your copy, then append
   * `appended`: the stored history then needs no repair. Absent when
   * nothing was repaired, and on the `session.seeded` event.
   */
  repaired?: HistoryMessage[];
}

/** One problem of a history, as `checkHistory` lists it. */
export interface HistoryProblem {
  code: "invalid_history" | "limit_exceeded";
  index: number;
  message: string;
  /** The kind `policy.repair` applies, or null when none does. */
  repair: RepairKind | null;
}

/** What `checkHistory` finds: ok, or the problems. */
export interface HistoryCheck {
  ok: boolean;
  problems: HistoryProblem[];
  /**
   * The head of the history as a run seeds it (docs/adr/0025): the
   * ifHead of a run on a session seeded from it. Absent when the history
   * could not be read.
   */
  head?: string;
  /**
   * True when the history waits for a person: it ends with calls of
   * tools that ask approval (needsApproval). Those calls are then no
   * problem (ok is true when nothing else is wrong): resume them with
   * `approvals`; an input is refused until then. Present only when true.
   */
  paused?: true;
  /**
   * The calls pending at the end of the history (present only when there
   * are some). When the history is not paused (a pending call's tool asks
   * no approval: a run was cut off), they are also missing_tool_result
   * problems.
   */
  awaiting?: AwaitingCall[];
}

/** A call pending at the end of a history; index is the assistant message's. */
export interface AwaitingCall {
  index: number;
  toolCallId: string;
  name: string;
  /** The call's arguments, JSON text as the model gave them. */
  arguments: string;
}

/** A tool call a paused run waits on (Result.pendingApprovals). */
export interface PendingApproval {
  toolCallId: string;
  name: string;
  /** The JSON text the model gave. */
  arguments: string;
}

/**
 * A person's decision on a pending call: approved, the tool runs;
 * denied, the call's result is "Tool call denied." or "Tool call denied: REASON".
 */
export interface Approval {
  toolCallId: string;
  approved: boolean;
  reason?: string | null | undefined;
}

/** The result of a completed run, or of one paused for approvals. */
export interface Result {
  runId: string;
  sessionId: string;
  /**
   * The session's head after the run: the ifHead of the next turn.
   * Present on a run with ifHead (a run without one asks for no head).
   */
  head?: string;
  /** "awaiting_approval": the run stopped before calls that need approval (pendingApprovals). */
  status: "completed" | "awaiting_approval";
  /**
   * The final assistant message (frozen: see ModelRequest.messages); for
   * a paused run, the one whose calls wait.
   */
  reply: Message;
  /** The calls awaiting approval (status "awaiting_approval" only). */
  pendingApprovals?: PendingApproval[];
  /**
   * The messages this turn added, in order (frozen objects in a new
   * array). Append them to the host's store and pass the store back as
   * the next turn's history.
   */
  appended: Message[];
  seed: SeedReport;
  messageCount: number;
  /** Each model call of the run: how many messages it was sent, and them when `inspect` was set. */
  modelCalls?: Array<{ step: number; messageCount: number; messages?: Message[] }>;
  /** What the last model call was sent, under policy.maxContextTokens only. */
  context?: ContextReport;
}

/**
 * The window of a model call under policy.maxContextTokens: the messages
 * sent, their tokens with the system prompt's and the tool specs', and
 * the session's messages left out before them.
 */
export interface ContextReport {
  messages: number;
  tokens: number;
  dropped: number;
}

interface EventBase {
  runId: string;
  sessionId: string;
  /** Starts at 1 and grows by one within a run. */
  seq: number;
}

/** An event of a run. */
export type RunEvent =
  | (EventBase & { type: "run.started" })
  | (EventBase & { type: "session.seeded"; seed: SeedReport })
  | (EventBase & { type: "message.appended"; message: Message })
  | (EventBase & { type: "model.delta"; delta: string; step?: number })
  | (EventBase & { type: "model.context"; context: ContextReport; step: number })
  | (EventBase & { type: "tool.started"; toolCall: ToolCall })
  | (EventBase & { type: "tool.finished"; toolCall: ToolCall; message?: Message; error?: AgentrtError })
  | (EventBase & { type: "run.completed"; result: Result })
  | (EventBase & { type: "run.awaiting_approval"; result: Result })
  | (EventBase & { type: "run.failed"; error: AgentrtError })
  | (EventBase & { type: "run.cancelled"; error?: AgentrtError });

/**
 * What rt.reconnect yields first when the events after `after` were
 * trimmed from the run's log: `dropped` events are missing, `next` is the
 * seq of the event that follows.
 */
export interface RunGapEvent {
  type: "run.gap";
  runId: string;
  sessionId: string;
  after: number;
  next: number;
  dropped: number;
}

/** What a model function is asked. */
export interface ModelRequest {
  runId: string;
  sessionId: string;
  /** The agent's system prompt. */
  system: string;
  /**
   * The windowed session messages; the last is the current input or the
   * latest tool results. The message objects (and their tool_calls) are
   * frozen: the module converts each message once and hands the same
   * object to every later request of the session, so writing to one
   * throws in strict code. The array itself is new on every call.
   */
  messages: Message[];
  tools: Array<{ name: string; description?: string; parameters?: unknown }>;
  /** Which model call of the run this is, from 1. */
  step: number;
  /**
   * Aborts when the run stops before the model answered: cancelled
   * (reason: AgentrtError "cancelled", name "AbortError"), timed out by
   * `policy.timeoutMs` ("timeout") or lost with its instance ("internal").
   * Pass it to fetch so the upstream request ends with the run. It is a
   * getter (made when first read), so a copy made by spreading the
   * request leaves it out: read `req.signal` itself.
   */
  readonly signal: AbortSignal;
  /** Streams text as a model.delta event; it may be called detached. */
  delta(text: string): void;
}

/** A model's answer. */
export interface ModelReply {
  content?: string | null | undefined;
  toolCalls?: ReadonlyArray<HistoryToolCall> | undefined;
  tool_calls?: ReadonlyArray<HistoryToolCall> | undefined;
}

/** A model: the built-in "echo", or a function (see openAIModel in "agentrt/openai"). */
export type Model = "echo" | ((request: ModelRequest) => string | ModelReply | Promise<string | ModelReply>);

/** What a tool's call receives besides its arguments. */
export interface ToolContext {
  runId: string;
  sessionId: string;
  toolCallId: string;
}

/** A tool the model may call. */
export interface Tool {
  name: string;
  description?: string | undefined;
  /** A JSON Schema of the arguments. */
  parameters?: unknown;
  /** Returns a string, or a JSON-able value (stringified), or a Promise of one. */
  call(args: any, ctx: ToolContext): unknown;
  /**
   * Whether a call needs a person's approval before it runs: true for
   * every call, or asked once per call when the model's reply arrives. A
   * throw, a rejection or an answer that is not a boolean fails the run
   * with "tool_error". Omitted or false: never.
   */
  needsApproval?: boolean | ((args: any, ctx: ToolContext) => boolean | PromiseLike<boolean>) | null | undefined;
}

/** Store and history limits; omitted fields use the defaults. */
export interface Limits {
  maxSessions?: number | undefined;
  maxMessagesPerSession?: number | undefined;
  maxSessionBytes?: number | undefined;
  maxSeedMessages?: number | undefined;
  maxSeedBytes?: number | undefined;
  maxMessageBytes?: number | undefined;
  /**
   * The memory budget of all sessions together, in bytes (default 16 MiB):
   * message bytes plus a fixed overhead per message, and what runs in
   * flight carry. Idle sessions used longest ago are evicted to stay
   * within it; a turn that cannot fit is refused with "limit_exceeded".
   */
  maxTotalBytes?: number | undefined;
}

/** What loadRuntime needs. */
export interface LoadOptions {
  /**
   * The module: a URL (string or URL), its bytes, a fetch Response, or a
   * compiled module. Default: the agentrt.wasm next to glue.js, where the
   * npm package ships it.
   */
  wasm?: string | URL | ArrayBuffer | ArrayBufferView | Response | WebAssembly.Module | undefined;
  /**
   * wasm_exec.js, loaded only when no `Go` class is defined yet. Default:
   * the one shipped beside glue.js, imported as a module (bundlers emit it
   * with the app).
   */
  wasmExec?: string | URL | undefined;
  /**
   * Called as the module downloads and compiles, and last with phase
   * "done" once the runtime is ready. Exceptions it throws are ignored.
   * @example
   * await loadRuntime({ onProgress: ({ phase, loaded, total }) => show(phase, loaded, total) });
   */
  onProgress?: ((progress: LoadProgress) => void) | undefined;
  systemPrompt?: string | undefined;
  model?: Model | undefined;
  tools?: Tool[] | undefined;
  limits?: Limits | undefined;
  /**
   * Counts a message's tokens for `policy.maxContextTokens`, in place of
   * the built-in estimate (docs/contract.md). Synchronous: it must return
   * an integer from 0 to 2^31-1. A throw, a non-number (a Promise
   * included), a non-finite, fractional, negative or larger number fails
   * the run with "invalid_argument" and changes nothing. The runtime
   * caches the counts: each stored message is counted once, the system
   * prompt and each tool spec once (as system messages). In worker mode
   * it stays in the caller's thread, asked by message.
   * @example
   * await loadRuntime({ model, countTokens: (m) => encode(m.content ?? "").length + 4 });
   */
  countTokens?: ((message: Message) => number) | undefined;
  /**
   * Worker mode (docs/adr/0021-worker-mode.md): `true` runs the glue and
   * the module in a dedicated Web Worker started from the worker.js
   * shipped beside glue.js; a URL or string names a worker entry served
   * elsewhere. The model and tools stay functions in the caller's thread.
   * `wasm` must then be a URL, a string, bytes (copied once and
   * transferred: the worker compiles them, the caller's bytes stay) or a
   * WebAssembly.Module. Where
   * there is no Web Worker (Node, Deno, Bun, workerd) it is refused with
   * "invalid_argument". `false` or omitted: the caller's thread.
   * @example
   * const rt = await loadRuntime({ worker: true, model: openAIModel(options) });
   */
  worker?: boolean | string | URL | undefined;
}

/** How far loading the module went: see LoadOptions.onProgress. */
export interface LoadProgress {
  /**
   * "download": bytes of the module received (repeated as they arrive);
   * "compile": every byte is in and the compile finishes (streamed with
   * WebAssembly.compileStreaming where the host has it and the server sends
   * application/wasm, so most of it ran during the download); "done": the
   * module is compiled (compile) or the runtime is ready (loadRuntime).
   */
  phase: "download" | "compile" | "done";
  /** Bytes of the module received so far (uncompressed). */
  loaded: number;
  /**
   * The module's size in bytes when known: from Content-Length, unless the
   * response is compressed; always known once the download is over.
   */
  total?: number | undefined;
}

/** Options of compile. */
export interface CompileOptions {
  onProgress?: ((progress: LoadProgress) => void) | undefined;
}

/** Options of the four ADR entry points. */
export interface RunOptions {
  /**
   * Names the run; by default the glue makes one up ("glue:" and a number).
   * Must not be empty, nor start with "glue:" or "agentrt:".
   */
  runId?: string | undefined;
  /** Called for each event in order. An exception it throws is reported, not propagated. */
  onEvent?: (event: RunEvent) => void | undefined;
  /** Aborting it cancels the run, which then rejects with code "cancelled" and name "AbortError". */
  signal?: AbortSignal | undefined;
  /** Asks for the messages of each model call in Result.modelCalls. */
  inspect?: boolean | undefined;
  /**
   * Runs the turn only if the conversation it would run on has this head
   * (a session's or a checked history's `head`); otherwise it is refused
   * with code "history_diverged", carrying `head` and, when the caller is
   * only behind, `missing`, and nothing changes.
   */
  ifHead?: string | null | undefined;
}

/** What every run request has. */
export interface RunRequestBase extends RunOptions {
  sessionId: string;
  /** Prior turns; omitted means none (seed mode "none"). */
  history?: History | null | undefined;
  policy?: Policy | null | undefined;
}

/**
 * One turn: a user's input; or a resume of the calls the session awaits
 * approval for, with approvals and no input, or with neither and a
 * UIMessage history whose last message carries the decisions (parts in
 * state approval-responded).
 */
export type RunRequest = RunRequestBase & (
  | { input: string; approvals?: undefined }
  | { input?: undefined; approvals: Approval[] }
  | { input?: undefined; approvals?: undefined; history: History });

/** A snapshot of a session. */
export interface Session {
  id: string;
  messageCount: number;
  /** Frozen message objects (see ModelRequest.messages). */
  messages: Message[];
  /** The conversation's head: the ifHead of a run that goes on from it. */
  head: string;
}

/** Counters of a runtime. */
export interface Stats {
  sessions: number;
  messages: number;
  bytes: number;
  activeRuns: number;
  evictions?: number;
  runsCompleted?: number;
  runsFailed?: number;
  runsCancelled?: number;
  /** What counts against limits.maxTotalBytes now, in bytes. */
  budgetUsed?: number;
  /** limits.maxTotalBytes in force, in bytes. */
  budgetBytes?: number;
  /**
   * Bytes of Go heap in use in the module (live objects and garbage not
   * yet collected), for measurements.
   */
  heapAlloc?: number;
}

/**
 * A runtime: one Go instance of the module. Methods that return a Promise
 * reject on errors; the others throw.
 */
export interface Runtime {
  /** The module's version. */
  readonly version: string;
  /** The global name this instance published its exports at. */
  readonly globalName: string;
  /** Whether close() was called. */
  readonly closed: boolean;
  /** Where the runtime runs: this thread ("main"), a dedicated worker, or a SharedWorker every tab shares. */
  readonly mode: "main" | "worker" | "shared";

  /**
   * Calls onEvent with every event of every run on sessionId as it
   * happens (in shared mode, from any tab); returns the function that
   * stops it. An onEvent that throws is reported and changes nothing.
   * @example
   * const stop = rt.watch("chat-1", (ev) => { if (ev.type === "model.delta") show(ev.delta); });
   */
  watch(sessionId: string, onEvent: (event: RunEvent) => void): () => void;
  /**
   * The run's events with seq > after (default 0), then each as it
   * comes, ending with its terminal event; run.gap first when the log
   * trimmed some; rejects with "run_lost" when the run is not known (each
   * run keeps its last 1,000 events, 32 ended runs are kept). In main and
   * worker mode the runs logged are those watched or with an onEvent.
   * @example
   * for await (const ev of rt.reconnect(runId, { after: lastSeq })) handle(ev);
   */
  reconnect(runId: string, options?: { after?: number }): AsyncIterableIterator<RunEvent | RunGapEvent>;
  /** The ids of the session's logged runs in flight. */
  activeRuns(sessionId: string): string[];

  /**
   * Runs one turn.
   * @returns the Result; rejects with an AgentrtError (or a TypeError for bad arguments).
   * @example
   * const result = await rt.run({ sessionId: "chat-1", input: "hello", history });
   */
  run(request: RunRequest): Promise<Result>;

  /**
   * Runs one turn and yields its events in order; the last is run.completed
   * with `result`. A refusal, failure or cancel makes the iterator throw;
   * leaving the loop early cancels the run. Throws a TypeError at once for
   * bad arguments.
   * @example
   * for await (const ev of rt.stream({ sessionId: "chat-1", input: "hi" })) {
   *   if (ev.type === "model.delta") show(ev.delta);
   * }
   */
  stream(request: RunRequest): AsyncIterableIterator<RunEvent>;

  /** The ADR entry point with the default policy and no history. */
  startRun(sessionId: string, input: string, options?: RunOptions): Promise<Result>;
  /** The ADR entry point with a policy and no history. */
  startRunWithPolicy(sessionId: string, input: string, policy: Policy, options?: RunOptions): Promise<Result>;
  /** The ADR entry point that seeds an empty session from history. */
  startRunWithHistory(sessionId: string, input: string, history: History, options?: RunOptions): Promise<Result>;
  /** The ADR entry point that seeds the session as policy.seedMode says. */
  startRunWithPolicyAndHistory(
    sessionId: string,
    input: string,
    policy: Policy,
    history: History,
    options?: RunOptions,
  ): Promise<Result>;

  /** Cancels the active run with runId; returns whether this call did. */
  cancelRun(runId: string): boolean;
  /** A snapshot of the session, or null when there is none. */
  session(id: string): Session | null;
  /** Removes the session; returns whether there was one. */
  deleteSession(id: string): boolean;
  /** The ids of all sessions, sorted. */
  listSessions(): string[];
  /** The runtime's counters. */
  stats(): Stats;
  /**
   * The problems of a history, found without running anything.
   * @param history host messages in any shape, or a packed history
   * @returns every problem `policy.repair` fixes, then the first it does not
   * @example
   * const { ok, problems } = rt.checkHistory(stored);
   * if (!ok && problems.every((p) => p.repair)) await rt.run({ sessionId, input, history: stored, policy: { repair: true } });
   */
  checkHistory(history: History): HistoryCheck;
  /** Cancels active runs and frees the instance. Idempotent; every later call fails. */
  close(): void;
}

/**
 * Loads a new runtime with its own instance and global name.
 * @param options the module and the agent's configuration
 * @returns the runtime; rejects with a TypeError for bad options, or an
 * AgentrtError (code "load_failed" when the module or wasm_exec.js cannot
 * be loaded, "invalid_argument" when the module refuses the configuration).
 * @example
 * import { loadRuntime } from "agentrt";
 * const rt = await loadRuntime({ systemPrompt: "Be brief." }); // the packaged agentrt.wasm
 * const rt2 = await loadRuntime({ wasm: "/assets/agentrt.wasm" }); // or one you serve
 */
export declare function loadRuntime(options: SharedLoadOptions): Promise<WorkerRuntime>;
export declare function loadRuntime(options: LoadOptions & { worker: true | string | URL }): Promise<WorkerRuntime>;
export declare function loadRuntime(options?: LoadOptions): Promise<Runtime>;

/**
 * Shared mode (docs/adr/0026-shared-worker-mode.md): one runtime in a
 * module SharedWorker per origin and name, shared by every tab; the
 * worker imports `agent` once and runs its model and tools. Model, tools,
 * countTokens, systemPrompt, limits and onProgress are refused here with
 * "invalid_argument": the agent module exports them. Where SharedWorker
 * is missing, a dedicated worker runs the agent for this tab (mode
 * "worker").
 * @example
 * const rt = await loadRuntime({ worker: "shared", agent: new URL("./agent.js", import.meta.url) });
 */
export interface SharedLoadOptions {
  worker: "shared";
  /** The URL of a module exporting { model, tools?, systemPrompt?, countTokens?, limits? } (or a default export of them). */
  agent: string | URL;
  /** The SharedWorker's name: one runtime per origin and name. Default "agentrt". */
  name?: string | undefined;
  /** The module's URL (default: the agentrt.wasm beside the glue). */
  wasm?: string | URL | undefined;
  /** wasm_exec.js's URL, when the worker's realm has no Go class. */
  wasmExec?: string | URL | undefined;
}

/**
 * A Runtime's methods as worker mode forwards them: a method that answers
 * a Promise, an async iterator or nothing (close) is kept; one that
 * answers a value at once answers a Promise of it, as a value that lives
 * in another thread cannot be returned synchronously.
 */
export type Forwarded<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R
    ? R extends Promise<unknown> | AsyncIterableIterator<unknown> | void ? T[K] : (...args: A) => Promise<R>
    : T[K];
};

/**
 * A runtime in worker mode (loadRuntime with `worker`): the Runtime's
 * methods, forwarded to a dedicated Web Worker. The calls a Runtime answers
 * at once answer with a Promise here; errors are the same AgentrtErrors
 * (rejections instead of throws, except stream's bad arguments). If the
 * worker stops (`worker.terminate()`, an uncaught error), the calls in
 * flight and every later call reject with code "internal".
 */
export interface WorkerRuntime extends Omit<Forwarded<Runtime>, "watch"> {
  /** The dedicated Web Worker the runtime runs in (in shared mode, an object over the SharedWorker's port). */
  readonly worker: Worker;
  /** As Runtime's watch; resolves with the function that stops it (its Promise settles once the worker stopped it). */
  watch(sessionId: string, onEvent: (event: RunEvent) => void): Promise<() => Promise<void>>;
}

/**
 * Compiles the module once, so that many runtimes load without compiling again.
 * @example
 * const wasm = await compile("/agentrt.wasm");
 * const [a, b] = await Promise.all([loadRuntime({ wasm }), loadRuntime({ wasm })]);
 */
export declare function compile(wasm?: LoadOptions["wasm"], options?: CompileOptions): Promise<WebAssembly.Module>;

/**
 * Encodes history in the packed format (a Uint8Array is returned as it is).
 * Throws a TypeError when history is not an array, an AgentrtError
 * (invalid_history, with index) when a message has a field of the wrong type.
 */
export declare function packHistory(history: History): Uint8Array;

/**
 * Converts history in any accepted shape to the module's message shape:
 * the messages the session will hold, system messages included (a
 * UIMessage may yield several). Throws like packHistory.
 */
export declare function toModuleHistory(history: ReadonlyArray<HistoryMessage>): ModuleMessage[];

/** A history message converted to the module's shape (before validation: any role, null content). */
export interface ModuleMessage {
  role: string;
  content: string | null;
  id?: string;
  tool_call_id?: string;
  tool_calls?: ToolCall[];
}
