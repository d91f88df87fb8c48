// agentrt's HTTP client of resumable runs: streamRun starts a resumable run on the
// durable deployment's HTTP API (docs/worker.md, "Resumable runs") and
// yields its events, reconnecting with Last-Event-ID when the connection
// drops, so that each event arrives once.
//
//   import { streamRun } from "agentrt/http";
//   for await (const ev of streamRun("https://chat.example.com", { sessionId: "chat-1", input: "hi" })) {
//     if (ev.type === "model.delta") show(ev.delta);
//   }
//
// One dependency-free ES module: it needs only fetch with a streamed
// body, TextDecoder and AbortController (browsers, webviews, Node 20+,
// Bun, Deno, workerd). EventSource is not used: it cannot POST.

import { AgentrtError } from "./glue.js";

/**
 * What retry defaults to: give up after 5 requests in a row that receive
 * no new event; wait 500 ms before a retry, doubling up to 8 s.
 */
export const DEFAULT_RETRY = Object.freeze({ attempts: 5, delayMs: 500, maxDelayMs: 8000 });

/** The events that end a run. */
const FINAL = new Set(["run.completed", "run.failed", "run.cancelled"]);

/** Statuses worth another attempt: the run may still be there. */
const RETRY_STATUS = new Set([502, 503, 504]);

/** The most of an error answer's body that is read, in characters. */
const MAX_ERROR_TEXT = 300;

function argError(name, what) {
  const err = new TypeError(`agentrt/http: ${name} ${what}`);
  err.code = "invalid_argument";
  return err;
}

function isSignal(v) {
  return v !== null && typeof v === "object" && typeof v.aborted === "boolean" && typeof v.addEventListener === "function";
}

function abortError(cause) {
  return new AgentrtError("cancelled", "agentrt/http: the run was aborted", { name: "AbortError", cause });
}

// newRunID returns a run id made here, so that a start whose answer is
// lost can still be resumed (or learnt lost) by its id.
function newRunID() {
  const b = new Uint8Array(8);
  globalThis.crypto.getRandomValues(b);
  return "r-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

// readRoot checks the API root and the options object every call takes,
// and returns the root's URL, ending in "/".
function readRoot(url, options) {
  let base;
  try {
    base = new URL(String(url));
  } catch {
    throw argError("url", "must be an absolute URL (the API root)");
  }
  if (options === null || typeof options !== "object") throw argError("options", "must be an object");
  return base.href.endsWith("/") ? base.href : base.href + "/";
}

// readOptions checks streamRun's options (resume false) or resumeRun's
// (resume true: runId and after instead of input, history and policy).
function readOptions(url, options, resume) {
  const root = readRoot(url, options);
  const { sessionId, input, history, policy, runId, after, headers, fetch: fetchFn, signal, retry, cancelOnAbort } = options;
  if (typeof sessionId !== "string" || sessionId === "") throw argError("options.sessionId", "must be a non-empty string");
  if (resume) {
    if (typeof runId !== "string" || runId === "") throw argError("options.runId", "must be a non-empty string");
    if (after !== undefined && (!Number.isSafeInteger(after) || after < 0)) throw argError("options.after", "must be a non-negative integer");
  } else {
    if (typeof input !== "string") throw argError("options.input", "must be a string");
    if (history !== undefined && !Array.isArray(history)) throw argError("options.history", "must be an array");
    if (policy !== undefined && (policy === null || typeof policy !== "object" || Array.isArray(policy))) throw argError("options.policy", "must be an object");
    if (policy !== undefined && policy.onDisconnect !== undefined && policy.onDisconnect !== "continue") {
      throw argError("options.policy.onDisconnect", 'must be "continue" (or left out): a run that stops with its connection cannot be resumed');
    }
    if (runId !== undefined && (typeof runId !== "string" || runId === "")) throw argError("options.runId", "must be a non-empty string");
  }
  if (headers !== undefined && (headers === null || typeof headers !== "object")) throw argError("options.headers", "must be an object");
  const doFetch = fetchFn === undefined ? globalThis.fetch : fetchFn;
  if (typeof doFetch !== "function") throw argError("options.fetch", "must be a function");
  if (signal !== undefined && !isSignal(signal)) throw argError("options.signal", "must be an AbortSignal");
  if (cancelOnAbort !== undefined && typeof cancelOnAbort !== "boolean") throw argError("options.cancelOnAbort", "must be a boolean");
  const r = { ...DEFAULT_RETRY };
  if (retry !== undefined) {
    if (retry === null || typeof retry !== "object") throw argError("options.retry", "must be an object");
    for (const k of ["attempts", "delayMs", "maxDelayMs"]) {
      if (retry[k] === undefined) continue;
      if (!Number.isInteger(retry[k]) || retry[k] < 0) throw argError(`options.retry.${k}`, "must be a non-negative integer");
      r[k] = retry[k];
    }
  }
  const runs = new URL(`v1/sessions/${encodeURIComponent(sessionId)}/runs`, root).href;
  const common = { runs, headers: { ...(headers || {}) }, fetch: doFetch, signal, retry: r, cancelOnAbort: cancelOnAbort === true };
  if (resume) return { ...common, runId, body: null, after: after || 0 };
  const body = { input, policy: { ...(policy || {}), onDisconnect: "continue" }, runId: runId || newRunID() };
  if (history !== undefined) body.history = history;
  return { ...common, runId: body.runId, body, after: 0 };
}

// errorOf reads an error answer ({"error": {code, message}}) as an
// AgentrtError with its code; status and runId are kept on it.
async function errorOf(res, runId) {
  let code = "internal", message = `HTTP ${res.status}`, appended;
  try {
    const text = await res.text();
    try {
      const e = JSON.parse(text).error;
      if (e && typeof e.code === "string") code = e.code;
      if (e && typeof e.message === "string") message = e.message;
      // The messages a failed run keeps (the results of approved calls).
      if (e && Array.isArray(e.appended)) appended = e.appended;
    } catch {
      if (text) message = `HTTP ${res.status}: ${text.slice(0, MAX_ERROR_TEXT)}`;
    }
  } catch {
    // The body could not be read: the status says enough.
  }
  const err = new AgentrtError(code, `agentrt/http: ${message}`, { appended });
  err.status = res.status;
  err.runId = runId;
  return err;
}

// sleep waits ms, or until signal aborts.
function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });
}

// readEvents yields the Server-Sent Events of body: {id, event, data}
// with id the last id line seen (a string) or null.
async function* readEvents(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let id = null, event = "", data = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buf += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        // A lone \r at the end may be the first half of \r\n.
        if (buf[nl] === "\r" && nl === buf.length - 1 && !done) break;
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + (buf.startsWith("\r\n", nl) ? 2 : 1));
        if (line === "") {
          if (data.length > 0) yield { id, event: event || "message", data: data.join("\n") };
          event = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let v = colon < 0 ? "" : line.slice(colon + 1);
        if (v.startsWith(" ")) v = v.slice(1);
        if (field === "id" && !v.includes("\0")) id = v;
        else if (field === "event") event = v;
        else if (field === "data") data.push(v);
      }
      if (done) return; // an event not ended by a blank line is dropped, as EventSource does
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * Starts a streamed run with `policy.onDisconnect: "continue"` on the
 * durable deployment's HTTP API and yields its events, each once: when the
 * connection drops (a network error, or a stream that ends before the
 * run), it reconnects to `GET .../runs/{runId}/events` with
 * `Last-Event-ID` set to the last event's id, and yields only events of a
 * higher id. It ends after `run.completed`, `run.failed` or
 * `run.cancelled` (yielded too); the generator's return value is the
 * Result of a completed run, or undefined.
 *
 * @param {string | URL} url the API root, e.g. "https://chat.example.com"
 * @param {object} options sessionId, input, history?, policy?, runId?,
 *   headers?, fetch?, signal?, cancelOnAbort?, retry? (see http.d.ts)
 * @returns {AsyncGenerator<object, object | undefined>}
 */
export function streamRun(url, options) {
  return follow(readOptions(url, options, false));
}

/**
 * Follows a run started earlier (by streamRun, whose events carry its
 * `runId`): it replays the run's events after `after` (default 0, all
 * that are kept), then its live ones, as streamRun does after a drop.
 * For an app that was closed mid-run and opened again.
 *
 * @param {string | URL} url the API root
 * @param {object} options sessionId, runId, after?, headers?, fetch?,
 *   signal?, cancelOnAbort?, retry? (see http.d.ts)
 * @returns {AsyncGenerator<object, object | undefined>}
 */
export function resumeRun(url, options) {
  return follow(readOptions(url, options, true));
}

// follow yields the events of the run o names: it starts it first when
// o.body is set, and (re)connects to its events after o.after otherwise.
async function* follow(o) {
  const runId = o.runId;
  const eventsURL = `${o.runs}/${encodeURIComponent(runId)}/events`;
  const runURL = `${o.runs}/${encodeURIComponent(runId)}`;
  const ctl = new AbortController();
  const onAbort = () => ctl.abort(o.signal.reason);
  if (o.signal) {
    if (o.signal.aborted) throw abortError(o.signal.reason);
    o.signal.addEventListener("abort", onAbort);
  }
  let last = o.after; // the id of the last event yielded
  let failures = 0; // attempts in a row that yielded nothing
  let lastFailure;
  let finished = false;
  try {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) {
        if (failures >= o.retry.attempts) {
          throw new AgentrtError("network_error",
            `agentrt/http: run ${JSON.stringify(runId)} could not be reached after ${failures} attempts in a row; its events after ${last} were not received`,
            { cause: lastFailure });
        }
        await sleep(Math.min(o.retry.delayMs * 2 ** Math.max(failures - 1, 0), o.retry.maxDelayMs), ctl.signal);
      }
      if (ctl.signal.aborted) throw abortError(o.signal.reason);
      let res;
      try {
        if (attempt === 0 && o.body) {
          res = await o.fetch(o.runs, {
            method: "POST",
            headers: { ...o.headers, "Content-Type": "application/json", Accept: "text/event-stream" },
            body: JSON.stringify(o.body),
            signal: ctl.signal,
          });
        } else {
          res = await o.fetch(eventsURL, {
            method: "GET",
            headers: { ...o.headers, Accept: "text/event-stream", "Last-Event-ID": String(last) },
            signal: ctl.signal,
          });
        }
      } catch (e) {
        if (ctl.signal.aborted) throw abortError(o.signal.reason);
        failures++;
        lastFailure = e;
        continue;
      }
      if (!res.ok) {
        const err = await errorOf(res, runId);
        if (RETRY_STATUS.has(res.status)) {
          failures++;
          lastFailure = err;
          continue;
        }
        throw err;
      }
      if (!res.body) throw new AgentrtError("internal", "agentrt/http: the answer has no body to stream");
      let progressed = false;
      try {
        for await (const ev of readEvents(res.body)) {
          // Events already received are not yielded after an abort.
          if (ctl.signal.aborted) throw abortError(o.signal.reason);
          const seq = ev.id === null ? NaN : Number(ev.id);
          if (!Number.isSafeInteger(seq) || seq <= last) continue; // seen, or not a run's event
          let data;
          try {
            data = JSON.parse(ev.data);
          } catch {
            throw new AgentrtError("internal", `agentrt/http: event ${seq} (${ev.event}) is not JSON`);
          }
          if (data === null || typeof data !== "object") throw new AgentrtError("internal", `agentrt/http: event ${seq} (${ev.event}) is not an object`);
          if (typeof data.type !== "string") data.type = ev.event;
          last = seq;
          if (!progressed) {
            progressed = true;
            failures = 0;
          }
          if (FINAL.has(data.type)) finished = true;
          yield data;
          if (finished) return data.type === "run.completed" ? data.result : undefined;
        }
      } catch (e) {
        if (ctl.signal.aborted) throw abortError(o.signal.reason);
        if (e instanceof AgentrtError) throw e;
        lastFailure = e; // the connection dropped mid-stream
      }
      if (ctl.signal.aborted) throw abortError(o.signal.reason);
      if (!progressed) failures++;
      if (lastFailure === undefined) lastFailure = new Error("the stream ended before the run did");
    }
  } catch (e) {
    if (o.signal && o.signal.aborted && o.cancelOnAbort && !finished) {
      // Stop the run, then report the abort; a failed stop is its cause.
      let cause = o.signal.reason;
      try {
        const res = await o.fetch(runURL, { method: "DELETE", headers: { ...o.headers } });
        if (!res.ok) cause = await errorOf(res, runId);
        else await res.body?.cancel();
      } catch (err) {
        cause = err;
      }
      throw abortError(cause);
    }
    throw e;
  } finally {
    if (o.signal) o.signal.removeEventListener("abort", onAbort);
    ctl.abort(); // ends a stream left open when the caller stops reading
  }
}

/**
 * Answers a run's status: `{runId, status, lastEventId, result?, error?}`
 * (GET `/v1/sessions/{id}/runs/{runId}`). A run the object does not know
 * rejects with code "run_lost".
 *
 * @param {string | URL} url the API root
 * @param {{sessionId: string, runId: string, headers?: Record<string, string>, fetch?: typeof fetch, signal?: AbortSignal}} options
 */
export async function runStatus(url, options) {
  return runCall("GET", url, options);
}

/**
 * Stops a run (DELETE `/v1/sessions/{id}/runs/{runId}`): it is cancelled
 * and its turn rolled back; answers its final status. A run that already
 * ended is left as it is.
 *
 * @param {string | URL} url the API root
 * @param {{sessionId: string, runId: string, headers?: Record<string, string>, fetch?: typeof fetch, signal?: AbortSignal}} options
 */
export async function cancelRun(url, options) {
  return runCall("DELETE", url, options);
}

async function runCall(method, url, options) {
  const root = readRoot(url, options);
  const { sessionId, runId, headers, fetch: fetchFn, signal } = options;
  if (typeof sessionId !== "string" || sessionId === "") throw argError("options.sessionId", "must be a non-empty string");
  if (typeof runId !== "string" || runId === "") throw argError("options.runId", "must be a non-empty string");
  const doFetch = fetchFn === undefined ? globalThis.fetch : fetchFn;
  if (typeof doFetch !== "function") throw argError("options.fetch", "must be a function");
  if (signal !== undefined && !isSignal(signal)) throw argError("options.signal", "must be an AbortSignal");
  const u = new URL(`v1/sessions/${encodeURIComponent(sessionId)}/runs/${encodeURIComponent(runId)}`, root).href;
  let res;
  try {
    res = await doFetch(u, { method, headers: { ...(headers || {}), Accept: "application/json" }, signal });
  } catch (e) {
    if (signal && signal.aborted) throw abortError(signal.reason);
    throw new AgentrtError("network_error", `agentrt/http: ${method} of run ${JSON.stringify(runId)} failed`, { cause: e });
  }
  if (!res.ok) throw await errorOf(res, runId);
  return res.json();
}
