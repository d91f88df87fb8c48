// agentrt glue: what the driver hands a host's model, and the checks of
// a turn's policy.

import { AgentrtError, isObject } from "./errors.js";

/**
 * ModelRequest is what a JavaScript model is handed (ModelRequest in
 * glue.d.ts). A class gives every request one shape: an object literal
 * with a getter costs V8 a new accessor on every request, measured at
 * 0.4-0.8 µs against 0.02 µs for this. `signal` is a getter of the
 * prototype, and its AbortController is made when first read, so a model
 * that never looks at it costs none; `delta` is the request's own
 * function, so that it can be passed on alone.
 */
export class ModelRequest {
  #ac = undefined;
  #stopped = undefined;

  constructor(runId, sessionId, system, messages, tools, step, delta) {
    this.runId = runId;
    this.sessionId = sessionId;
    this.system = system;
    this.messages = messages;
    this.tools = tools;
    this.step = step;
    this.delta = delta;
  }

  /** Aborts when the run stops before the model answered. */
  get signal() {
    if (this.#ac === undefined) {
      this.#ac = new AbortController();
      if (this.#stopped !== undefined) this.#ac.abort(this.#stopped);
    }
    return this.#ac.signal;
  }

  // stop aborts req's signal with reason (once), now or when it is read.
  static stop(req, reason) {
    if (req.#stopped !== undefined) return;
    req.#stopped = reason;
    if (req.#ac !== undefined) req.#ac.abort(reason);
  }
}

const MAX_TIMEOUT_MS = 365 * 24 * 3600 * 1000;

function policyError(msg) {
  return new AgentrtError("invalid_argument", msg);
}

// checkPolicy checks the JavaScript types of a policy as the module's
// syscall/js path does, and returns a copy (or undefined for none): each
// field is read once, so a getter can neither answer the frame another
// value than the one checked nor run while the frame is being written
// (a getter that runs a turn would write that turn's frame over it).
export function checkPolicy(p) {
  if (p === undefined || p === null) return undefined;
  if (!isObject(p)) throw policyError("policy must be an object");
  if (Array.isArray(p)) throw policyError("policy must be an object, not an Array");
  const c = {
    seedMode: p.seedMode, onBusy: p.onBusy, toolErrors: p.toolErrors,
    maxSteps: p.maxSteps, maxContextMessages: p.maxContextMessages, maxContextBytes: p.maxContextBytes,
    timeoutMs: p.timeoutMs, allowedTools: p.allowedTools,
  };
  for (const f of ["seedMode", "onBusy", "toolErrors"]) {
    const v = c[f];
    if (v !== undefined && v !== null && typeof v !== "string") throw policyError(`policy.${f} must be a string`);
  }
  for (const f of ["maxSteps", "maxContextMessages", "maxContextBytes", "timeoutMs"]) {
    const v = c[f];
    if (v === undefined || v === null) continue;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) throw policyError(`policy.${f} must be a non-negative integer`);
  }
  if ((c.timeoutMs ?? 0) > MAX_TIMEOUT_MS) throw policyError("policy.timeoutMs is too large");
  const tools = c.allowedTools;
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools)) throw policyError("policy.allowedTools must be an Array of strings");
    const copy = [];
    for (let i = 0, n = tools.length; i < n; i++) {
      const t = tools[i];
      if (typeof t !== "string") throw policyError(`policy.allowedTools[${i}] must be a string`);
      copy.push(t);
    }
    c.allowedTools = copy;
  }
  return c;
}

export function isThenable(v) {
  return (isObject(v) || typeof v === "function") && typeof v.then === "function";
}

// ReplyRefused carries readReply's refusal of a model's reply.
export class ReplyRefused extends Error {}

