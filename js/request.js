// agentrt glue: what the driver hands a host's model, and the copy of a
// turn's policy it sends the module.

import { AgentrtError, isObject, refusedError } from "./errors.js";
import { ACTION } from "./wire.js";

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

function policyError(msg) {
  return new AgentrtError("invalid_argument", msg);
}

// NO_JSON stands for a value JSON has no form for (a function, a symbol,
// a bigint, NaN): the module's reader refuses it as a field of the wrong
// type, as the module's syscall/js API refuses the value itself.
const NO_JSON = {};

function toJSONForm(k, v) {
  switch (typeof v) {
    case "undefined":
      // A field set to undefined is kept (null, read as absent), so that
      // an unknown key is refused even then, as Object.keys sees it.
      return null;
    case "number":
      if (Number.isFinite(v)) return v;
      return v > 0 ? 1e300 : v < 0 ? -1e300 : NO_JSON; // too large or negative, as the module reads ±Infinity
    case "function":
    case "symbol":
    case "bigint":
      return NO_JSON;
  }
  return v;
}

// checkPolicy returns what a turn sends of policy p: undefined for none
// (or an empty one, the begin frame's short form), or a copy of p read
// back from its JSON text, with that text as `json`. The glue checks
// nothing of a policy itself: the module reads the text with the reader
// every edge shares (hostmsg.Policy: exact keys, types, core's bounds)
// and refuses the turn with its one error text. What must happen here,
// before the copy, is the copy: JSON.stringify reads each field once, so
// a getter can neither answer the module another value than the one the
// glue keeps (timeoutMs for its timer, allowedTools, repair) nor run
// while the frame is being written (a getter that runs a turn would
// write that turn's frame over it).
export function checkPolicy(p) {
  if (p === undefined || p === null) return undefined;
  if (typeof p !== "object") throw policyError("policy must be an object");
  let json;
  try {
    json = JSON.stringify(p, toJSONForm);
  } catch (e) {
    // A throwing getter, a cycle: as the module's syscall/js API answers.
    throw policyError(`reading the value threw: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (json === "{}") return undefined;
  const c = JSON.parse(json);
  return { json, timeoutMs: c.timeoutMs, allowedTools: c.allowedTools, repair: c.repair, maxContextTokens: c.maxContextTokens };
}

// configText returns the JSON text of a runtime's config c (the glue's
// options systemPrompt, model, tools and limits, checked for their types
// by load.js, and countByAction when the host counts tokens) for
// agentrt_create's config frame: what JSON carries of it.
// The module reads the text with its createRuntime's own config reader
// (docs/wire.md, "Config frame"), so a config's rules and error texts are
// the module's. A model function is "host" (the glue answers model
// calls); a tool is its name, description and parameters (its call stays
// here); parameters given as an object are its JSON text, as the module
// reads one, and a value JSON has no form for is written so that the
// reader refuses it as that value (as toJSONForm does for limits).
export function configText(c) {
  const tools = Array.isArray(c.tools) ? c.tools.map(toolConfig) : c.tools;
  const model = typeof c.model === "function" ? "host" : c.model;
  try {
    return JSON.stringify({ systemPrompt: c.systemPrompt, model, tools, limits: c.limits, countByAction: c.countByAction }, toJSONForm);
  } catch (e) {
    // A throwing getter, a cycle: as the module's createRuntime answers.
    throw new AgentrtError("invalid_argument", `config: reading the value threw: ${e instanceof Error ? e.message : String(e)}`);
  }
}

// toolConfig is tool t (the i-th) as configText writes it: needsApproval
// is true when the tool's calls are asked of the glue (js/approve.js), as
// the module reads a tool whose needsApproval is true or a function.
function toolConfig(t, i) {
  const c = { name: t.name, description: t.description, parameters: parametersText(t.parameters, i) };
  if (t.needsApproval === true || typeof t.needsApproval === "function") c.needsApproval = true;
  return c;
}

// parametersText is a tool's parameters as configText writes them.
function parametersText(p, i) {
  if (p === undefined || p === null || typeof p === "string") return p;
  if (typeof p !== "object") return false; // refused by the module as the value would be: not an object or a string
  let text;
  try {
    text = JSON.stringify(p);
  } catch {
    text = undefined;
  }
  if (typeof text !== "string") throw new AgentrtError("invalid_argument", `config.tools[${i}].parameters cannot be converted to JSON`);
  return text;
}

const PROMISE_THEN = Promise.prototype.then;

/**
 * adopt reads a host's answer v (a model's or a tool's) as `await` would,
 * without ever throwing: { ok: true, value } or { ok: false, reason } at
 * once when v is not a thenable (or reading its `then` throws), else a
 * Promise of one that never rejects. A thenable is adopted through a
 * Promise's resolve function: its `then` runs in a job, a throw from it
 * rejects, a second settle is ignored, and a thenable it fulfils with is
 * adopted in turn.
 */
export function adopt(v) {
  let then;
  try {
    if (v === null || (typeof v !== "object" && typeof v !== "function")) return { ok: true, value: v };
    then = v.then;
  } catch (reason) {
    return { ok: false, reason };
  }
  if (typeof then !== "function") return { ok: true, value: v };
  return new Promise((resolve) => {
    const ok = (value) => resolve({ ok: true, value });
    const fail = (reason) => resolve({ ok: false, reason });
    if (then === PROMISE_THEN) {
      // A native Promise settles once with a plain value: its own then
      // is the short way (a subclass whose species throws goes below).
      try {
        then.call(v, ok, fail);
        return;
      } catch { /* adopt it as any thenable */ }
    }
    new Promise((r) => r(v)).then(ok, fail);
  });
}

// ReplyRefused carries readReply's refusal of a model's reply.
export class ReplyRefused extends Error {}


const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * wellFormed returns s as the module keys it: each lone surrogate
 * replaced by U+FFFD, as TextEncoder encodes it (and Go's store decodes
 * it). Session ids are normalised once, where a call enters the glue, so
 * that the driver's queues and mirrors key a session as the module does.
 */
export function wellFormed(s) {
  if (typeof s.isWellFormed === "function") return s.isWellFormed() ? s : s.toWellFormed();
  return s.replace(LONE_SURROGATE, "\uFFFD");
}

/**
 * utf8Over reports whether s takes more than max bytes in UTF-8 (lone
 * surrogates as U+FFFD), without encoding it: a string of more than max
 * code units is over at once, one of at most max / 3 never is.
 */
export function utf8Over(s, max) {
  const n = s.length;
  if (n > max) return true;
  if (n * 3 <= max) return false;
  return utf8Bytes(s) > max;
}

/**
 * replyOver reports whether a reply read by readReply counts more than
 * max bytes as a message: its content and each tool call's id, name and
 * arguments, as core counts a message's size.
 */
export function replyOver(reply, max) {
  const calls = reply.toolCalls;
  if (calls.length === 0) return utf8Over(reply.content, max);
  let units = reply.content.length;
  for (const c of calls) units += c.id.length + c.name.length + c.arguments.length;
  if (units > max) return true;
  if (units * 3 <= max) return false;
  let bytes = utf8Bytes(reply.content);
  for (const c of calls) bytes += utf8Bytes(c.id) + utf8Bytes(c.name) + utf8Bytes(c.arguments);
  return bytes > max;
}

/**
 * toolOver reports whether a tool's output counts more than max bytes as
 * the tool message that holds it: the output and the call's id, as core
 * counts a message's size.
 */
export function toolOver(out, callId, max) {
  const units = out.length + callId.length;
  if (units > max) return true;
  if (units * 3 <= max) return false;
  return utf8Bytes(out) + utf8Bytes(callId) > max;
}

/**
 * utf8Bytes returns the bytes s takes in UTF-8, lone surrogates as
 * U+FFFD, as the module counts a message's size (core's Message.Size).
 * utf8Over, replyOver and toolOver are copies of core's byte limits kept
 * here to refuse a message before it is copied into the module's memory;
 * js/test/rulecopies.test.mjs holds them to the module's answers.
 */
export function utf8Bytes(s) {
  let bytes = 0;
  for (let i = 0, n = s.length; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < n && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * toolSpec returns what a model is told of tool t (ModelRequest.tools):
 * its name, description and parameters (a JSON Schema, copied; one that
 * cannot be read is left out).
 */
export function toolSpec(t) {
  const spec = { name: t.name, description: typeof t.description === "string" ? t.description : "" };
  let params = t.parameters;
  try {
    if (typeof params === "string") params = params === "" ? undefined : JSON.parse(params);
    else if (isObject(params)) params = JSON.parse(JSON.stringify(params));
    else params = undefined;
  } catch {
    params = undefined;
  }
  if (params !== undefined) spec.parameters = params;
  return spec;
}

/**
 * deliverEvents hands a frame's events to the turn's listener, in the
 * shape of the module's events; run.completed carries the result of the
 * done action a.
 */
export function deliverEvents(turn, events, a) {
  for (const e of events) {
    // Under policy.maxContextTokens the module sends model.context
    // events, asked for with or without a listener: the last is the
    // result's context (the done action's result does not carry it).
    if (e.type === "model.context") turn.context = e.context;
    const end = (e.type === "run.completed" || e.type === "run.awaiting_approval") && a.kind === ACTION.done;
    if (end && turn.context !== undefined) a.result.context = turn.context;
    if (!turn.onEvent) continue;
    const ev = { type: e.type, runId: turn.runId, sessionId: turn.sessionId, seq: e.seq };
    if (e.seed !== undefined) ev.seed = e.seed;
    if (e.context !== undefined) {
      ev.context = e.context;
      ev.step = e.step;
    }
    if (e.type === "model.delta") {
      ev.delta = e.delta;
      ev.step = e.step;
    }
    if (e.toolCall !== undefined) ev.toolCall = e.toolCall;
    if (e.message !== undefined) ev.message = e.message;
    if (end) ev.result = a.result;
    if (e.error !== undefined) ev.error = refusedError(e.error);
    turn.onEvent(ev);
  }
}
