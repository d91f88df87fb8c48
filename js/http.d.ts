/// <reference lib="es2018.asyncgenerator" />
// Types of agentrt's HTTP client (http.js). Hand-written; keep in
// sync with http.js.
//
// The reference to TypeScript's es2018.asyncgenerator lib above declares
// AsyncGenerator (what streamRun and resumeRun return) for a program
// compiled with TypeScript's default lib (ES5), which does not have it;
// a program whose lib has it already is unchanged.
// js/package-test/types.test.mjs compiles the package's types both ways.
import type { HistoryMessage, Policy, Result, RunEvent } from "./glue.js";

/** How streamRun retries a dropped connection. */
export interface RetryOptions {
  /**
   * The most requests in a row (the start included) that receive no new
   * event before streamRun gives up with code "network_error"; default
   * 5. 0 never reconnects. A request that yields an event resets the count.
   */
  attempts?: number | undefined;
  /** The wait before the first retry, doubled on each one after; default 500. */
  delayMs?: number | undefined;
  /** The longest wait between attempts; default 8000. */
  maxDelayMs?: number | undefined;
}

/** What streamRun needs. */
export interface StreamRunOptions {
  /** The conversation (the durable object's name). */
  sessionId: string;
  input: string;
  history?: HistoryMessage[] | undefined;
  /** The run's policy; `onDisconnect` is always "continue". */
  policy?: (Policy & { onDisconnect?: "continue" }) | undefined;
  /** The run's id; default one made here (`r-` and 16 hex digits). */
  runId?: string | undefined;
  /** Extra request headers, e.g. `{ Authorization: "Bearer ..." }`. */
  headers?: Record<string, string> | undefined;
  /** The fetch to use; default globalThis.fetch. */
  fetch?: typeof fetch | undefined;
  /**
   * Stops the stream: the iteration rejects with code "cancelled" and
   * name "AbortError". The run goes on unless cancelOnAbort is set.
   */
  signal?: AbortSignal | undefined;
  /** When signal aborts, also stop the run (DELETE), rolling its turn back. */
  cancelOnAbort?: boolean | undefined;
  retry?: RetryOptions | undefined;
}

/** An event of a resumed run: a run's event, or the gap marker of events dropped from its log. */
export type StreamEvent = RunEvent | { type: "run.gap"; runId: string; from: number; to: number };

/** What the default retry is: 5 attempts in a row, 500 ms doubling up to 8 s. */
export declare const DEFAULT_RETRY: Readonly<Required<RetryOptions>>;

/**
 * Starts a streamed run with `policy.onDisconnect: "continue"` on the
 * durable deployment's HTTP API (`url` is its root) and yields its events,
 * each once, reconnecting with `Last-Event-ID` when the connection drops.
 * It ends after run.completed, run.failed or run.cancelled; its return
 * value is a completed run's Result. A refusal rejects as an AgentrtError
 * with the answer's code (`run_lost`, `invalid_argument`, ...) and
 * `status`; retries past `retry.attempts` reject with "network_error".
 * Bad options throw at once (TypeError, code "invalid_argument").
 */
export declare function streamRun(url: string | URL, options: StreamRunOptions): AsyncGenerator<StreamEvent, Result | undefined, undefined>;

/** What resumeRun needs. */
export interface ResumeRunOptions {
  sessionId: string;
  /** The run's id: every event's `runId`. */
  runId: string;
  /** The id of the last event already seen; default 0 (every event kept). */
  after?: number | undefined;
  headers?: Record<string, string> | undefined;
  fetch?: typeof fetch | undefined;
  signal?: AbortSignal | undefined;
  cancelOnAbort?: boolean | undefined;
  retry?: RetryOptions | undefined;
}

/**
 * Follows a run started earlier (an app closed mid-run and opened again):
 * its events after `after`, then its live ones, as streamRun after a
 * drop. Bad options throw at once (TypeError, code "invalid_argument").
 */
export declare function resumeRun(url: string | URL, options: ResumeRunOptions): AsyncGenerator<StreamEvent, Result | undefined, undefined>;

/** What runStatus and cancelRun need. */
export interface RunCallOptions {
  sessionId: string;
  runId: string;
  headers?: Record<string, string> | undefined;
  fetch?: typeof fetch | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * A run's status as the durable deployment answers it: "queued" while it
 * waits behind another run of its conversation (known from the moment
 * its request was accepted).
 */
export interface RunStatus {
  runId: string;
  status: "queued" | "running" | "completed" | "awaiting_approval" | "failed" | "cancelled";
  lastEventId: number;
  result?: Result;
  /** Set when the Result was larger than the run's log keeps (1 MiB): read the turn from the conversation. */
  resultOmitted?: boolean;
  error?: { code: string; message: string };
}

/** GET of a run: its status, and its Result once completed; "run_lost" when unknown. */
export declare function runStatus(url: string | URL, options: RunCallOptions): Promise<RunStatus>;

/** DELETE of a run: stops it (its turn rolled back) and answers its final status. */
export declare function cancelRun(url: string | URL, options: RunCallOptions): Promise<RunStatus>;
