// agentrt glue: the checks of the Runtime's arguments, made before
// anything reaches the module: a bad argument is a TypeError with code
// invalid_argument, and a request's fields are read once.

import { argError, toError, isObject, isSignal } from "./errors.js";
import { readResume } from "./approve.js";

/**
 * Prefixes of generated run ids: the glue's, and the runtime's own
 * (core.GeneratedRunIDPrefix, copied: a host's id is refused before a
 * turn begins, without a call into the module; js/test/rulecopies.test.mjs
 * holds the copy to the module's answer).
 */
export const GLUE_RUN_PREFIX = "glue:";
const CORE_RUN_PREFIX = "agentrt:";


function checkRunArgs(sessionId, input, policy, options, where) {
  if (typeof sessionId !== "string") throw argError(`${where}sessionId`, "must be a string");
  if (typeof input !== "string") throw argError(`${where}input`, "must be a string");
  if (policy !== undefined && policy !== null && (!isObject(policy) || Array.isArray(policy))) {
    throw argError(`${where}policy`, "must be an object");
  }
  if (options === undefined || options === null) return;
  if (!isObject(options)) throw argError("options", "must be an object");
  const runId = options.runId;
  if (runId !== undefined) {
    if (typeof runId !== "string") throw argError(`${where}runId`, "must be a string");
    if (runId === "") throw argError(`${where}runId`, "must not be empty");
    if (runId.startsWith(GLUE_RUN_PREFIX) || runId.startsWith(CORE_RUN_PREFIX)) {
      throw argError(`${where}runId`, `must not start with "${GLUE_RUN_PREFIX}" or "${CORE_RUN_PREFIX}": those are generated ids`);
    }
  }
  if (options.onEvent !== undefined && typeof options.onEvent !== "function") throw argError(`${where}onEvent`, "must be a function");
  if (options.signal !== undefined && options.signal !== null && !isSignal(options.signal)) {
    throw argError(`${where}signal`, "must be an AbortSignal");
  }
}

function checkHistory(history, name) {
  if (history !== undefined && history !== null && !Array.isArray(history) && !(history instanceof Uint8Array)) {
    throw argError(name, "must be an array or a Uint8Array");
  }
  if (history instanceof Uint8Array && isDetached(history.buffer)) {
    throw argError(name, "is a Uint8Array whose buffer is detached (transferred)");
  }
}

// isDetached reports whether an ArrayBuffer was detached (transferred):
// reading its bytes would throw.
export function isDetached(buf) {
  if (typeof buf.detached === "boolean") return buf.detached;
  if (typeof SharedArrayBuffer !== "undefined" && buf instanceof SharedArrayBuffer) return false;
  try {
    new Uint8Array(buf, 0, 0);
    return false;
  } catch {
    return true;
  }
}

// readIfHead checks a run's precondition on the conversation's head
// (docs/adr/0025-conversation-heads.md): undefined or null is none; a
// string goes to the module, which refuses one that is not a head.
function readIfHead(v, name) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw argError(name, "must be a string (a head)");
  return v;
}

/**
 * Checks a run() or stream() request and copies its fields, so that each
 * getter is read once. Throws an AgentrtError; a host exception is
 * invalid_argument.
 */
export function readRequest(req) {
  try {
    if (!isObject(req)) throw argError("request", "must be an object");
    const r = {
      sessionId: req.sessionId, input: req.input, policy: req.policy, history: req.history,
      runId: req.runId, signal: req.signal, onEvent: req.onEvent, inspect: req.inspect, approvals: req.approvals,
      ifHead: readIfHead(req.ifHead, "request.ifHead"),
    };
    readResume(r);
    checkRunArgs(r.sessionId, r.input, r.policy, r, "request.");
    checkHistory(r.history, "request.history");
    return r;
  } catch (e) {
    throw toError(e, "invalid_argument");
  }
}

/**
 * Checks the arguments of an ADR entry point and copies its options
 * (undefined when there are none). Throws an AgentrtError; a host
 * exception is invalid_argument.
 */
export function readOptions(sessionId, input, policy, options, history, withHistory) {
  try {
    checkRunArgs(sessionId, input, policy, options, "");
    if (withHistory) checkHistory(history, "history");
    if (options === undefined || options === null) return undefined;
    return { runId: options.runId, signal: options.signal, onEvent: options.onEvent, inspect: options.inspect,
      ifHead: readIfHead(options.ifHead, "options.ifHead") };
  } catch (e) {
    throw toError(e, "invalid_argument");
  }
}
