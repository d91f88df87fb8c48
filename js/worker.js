// agentrt glue: the entry that runs inside a dedicated Web Worker in worker
// mode (docs/adr/0021-worker-mode.md). It loads the same glue the page
// would (loadRuntime without `worker`), so there is one glue and one driver
// in both modes, and answers the page's messages (js/remote.js speaks the
// other side): a request calls the Runtime method it names, whichever it
// is (docs/adr/0024-one-definition-per-operation.md). The host's models and tools stay on the page: the runtime
// here is configured with stand-ins that ask the page by message.

import { loadRuntime, AgentrtError } from "./glue.js";

const scope = globalThis;

/** The runtime this worker holds, once loaded. */
let rt = null;
/** Calls to the page's model or tools waiting for an answer, by call id. */
const calls = new Map();
/** Worker-side AbortControllers of the page's signals, by mark number. */
const signals = new Map();
/**
 * The iterators a method answered (stream), which the page pulls from,
 * by handle, each with the marks of its request.
 */
const handles = new Map();
let nextHandle = 0;
let nextCall = 0;
/**
 * The messages the page holds from its model calls, per session: each
 * message object of the session's last call -> its id. The driver hands
 * the same frozen message objects turn after turn, so a model call sends
 * the page only the messages it has not seen, and ids for the others.
 */
const held = new Map();
let nextMessage = 0;
/** Sessions whose messages the page holds at most; the oldest are dropped. */
const HELD_SESSIONS = 64;

// wireError is an error as it crosses to the page: its code, message,
// index, name and appended (rebuilt there as an AgentrtError).
function wireError(e) {
  const out = { code: "internal", message: "agentrt: (an error that cannot be shown)" };
  try {
    if (e !== null && typeof e === "object" && typeof e.code === "string") out.code = e.code;
    out.message = e instanceof Error || (e && typeof e.message === "string") ? e.message : String(e);
    if (Number.isInteger(e && e.index)) out.index = e.index;
    if (e && (e.name === "AbortError" || e.name === "TimeoutError")) out.name = e.name;
    if (e && Array.isArray(e.appended)) out.appended = e.appended;
  } catch { /* keep the defaults */ }
  return out;
}

function post(msg, transfer) {
  try {
    scope.postMessage(msg, transfer || []);
  } catch (e) {
    // A value that cannot be cloned (a tool's odd output is stringified
    // before it gets here; a Result always clones): answered as an error.
    if (msg.op === "res") scope.postMessage({ op: "res", id: msg.id, ok: false, error: wireError(e) });
  }
}

// ask calls the page's model or tool and resolves with its answer. The
// page answers once; a later answer finds no entry and is dropped. When
// signal aborts, the page is told to abort its own controller.
function ask(kind, payload, signal, onDelta) {
  const cid = ++nextCall;
  return new Promise((resolve, reject) => {
    calls.set(cid, { resolve, reject, onDelta });
    post({ op: "call", cid, kind, payload });
    if (signal) {
      const abort = () => post({ op: "abortCall", cid, reason: wireError(signal.reason) });
      if (signal.aborted) abort();
      else signal.addEventListener("abort", abort, { once: true });
    }
  });
}

// wireMessages returns a model call's messages as they cross to the page:
// the id of each message the page holds from the session's last call,
// { id, m } for each other one. The page keeps the messages of this call
// only (ids it is not sent again are dropped), and so does this side;
// the sessions dropped to stay within HELD_SESSIONS are named in dropped.
function wireMessages(sessionId, messages, dropped) {
  const before = held.get(sessionId);
  const now = new Map();
  const out = new Array(messages.length);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    let id = before === undefined ? undefined : before.get(m);
    if (id !== undefined) out[i] = id;
    else out[i] = { id: id = ++nextMessage, m };
    now.set(m, id);
  }
  held.delete(sessionId);
  held.set(sessionId, now);
  while (held.size > HELD_SESSIONS) {
    const oldest = held.keys().next().value;
    held.delete(oldest);
    dropped.push(oldest);
  }
  return out;
}

function modelStandIn(req) {
  const dropped = [];
  const payload = {
    runId: req.runId, sessionId: req.sessionId, system: req.system, messages: wireMessages(req.sessionId, req.messages, dropped),
    dropped, tools: req.tools, step: req.step,
  };
  return ask("model", payload, req.signal, (text) => req.delta(text));
}

function toolStandIn(name, kind = "tool") {
  return (args, ctx) => ask(kind, { name, args, ctx: { runId: ctx.runId, sessionId: ctx.sessionId, toolCallId: ctx.toolCallId } });
}

// decode puts a request's marks (js/remote.js RemoteRuntime #encode) in
// its arguments: a stand-in that posts a function's arguments to the
// page, the signal of a controller the page's aborts reach, or a
// detached Uint8Array where the page's was detached. It
// returns the marks' numbers of signals, to drop when the request ends.
function decode(args, marks) {
  const own = [];
  for (const mk of Array.isArray(marks) ? marks : []) {
    let v;
    if (mk.kind === "fn") {
      const n = mk.n;
      v = (...a) => {
        const c = crossing(a);
        post({ op: "callback", n, args: c.value, frozen: c.frozen, errors: c.errors });
      };
    } else if (mk.kind === "signal") {
      const ctl = new AbortController();
      signals.set(mk.n, ctl);
      own.push(mk.n);
      if (mk.aborted) ctl.abort();
      v = ctl.signal;
    } else if (mk.kind === "detached") {
      v = new Uint8Array(1);
      structuredClone(v.buffer, { transfer: [v.buffer] });
    } else continue;
    const [i, k] = mk.at;
    if (k === undefined) args[i] = v;
    else if (args[i] !== null && typeof args[i] === "object") args[i][k] = v;
  }
  return own;
}

function drop(own) {
  for (const n of own) signals.delete(n);
}

// answer is the page's message of a request's value.
function answer(id, v) {
  const c = crossing(v);
  return { op: "res", id, ok: true, value: c.value, frozen: c.frozen, errors: c.errors };
}

// crossing prepares a value for the page, in one walk: it lists the
// paths of the frozen objects in v (postorder, each object once), which
// the page freezes again in its clone, so the page is handed what the
// main-thread glue hands, frozen messages included; and it replaces each
// Error in v (a cloned Error keeps neither code, index nor appended, a
// run.failed event's error among them) with wireError's object, in
// copies of the objects that hold one, listing their paths, which the
// page rebuilds as AgentrtErrors.
function crossing(v) {
  const frozen = [];
  const errors = [];
  const seen = new Set();
  const walk = (o, path, depth) => {
    if (o instanceof Error) {
      errors.push(path);
      return wireError(o);
    }
    if (o === null || typeof o !== "object" || seen.has(o) || depth > 8 || ArrayBuffer.isView(o)) return o;
    seen.add(o);
    let copy;
    for (const k of Object.keys(o)) {
      const w = walk(o[k], [...path, k], depth + 1);
      if (w !== o[k]) {
        copy ??= Array.isArray(o) ? [...o] : { ...o };
        copy[k] = w;
      }
    }
    if (Object.isFrozen(o)) frozen.push(path);
    return copy ?? o;
  };
  const value = walk(v, [], 0);
  return { value, frozen: frozen.length > 0 ? frozen : undefined, errors: errors.length > 0 ? errors : undefined };
}

// isMethod reports whether name is a method of the runtime's class (the
// glue's Runtime), the only functions the page may call.
function isMethod(name) {
  const proto = Object.getPrototypeOf(rt);
  return typeof name === "string" && name !== "constructor" && Object.prototype.hasOwnProperty.call(proto, name) &&
    typeof Object.getOwnPropertyDescriptor(proto, name).value === "function";
}

// isIterator reports whether a method's answer is an async iterator,
// which stays here as a handle the page pulls from.
function isIterator(v) {
  return v !== null && typeof v === "object" && typeof v.next === "function" && typeof v[Symbol.asyncIterator] === "function";
}

// request runs one request of the page: the runtime's method, or a step
// of an iterator a method answered (target). It answers { value } or,
// for an iterator, { handle }.
async function request(m) {
  const args = Array.isArray(m.args) ? m.args : [];
  if (m.target !== undefined) {
    const h = handles.get(m.target);
    if (!h) return { value: { done: true } };
    if (m.method !== "next" && m.method !== "return") {
      throw new AgentrtError("invalid_argument", `agentrt: an iterator of the worker has no method ${String(m.method)}`);
    }
    try {
      const step = await h.it[m.method]();
      if (step.done) end(m.target);
      return { value: { done: step.done, value: step.value } };
    } catch (e) {
      end(m.target);
      throw e;
    }
  }
  if (!isMethod(m.method)) throw new AgentrtError("invalid_argument", `agentrt: the worker has no method ${String(m.method)}`);
  const own = decode(args, m.marks);
  let v;
  try {
    v = await rt[m.method](...args);
  } catch (e) {
    drop(own);
    throw e;
  }
  if (isIterator(v)) {
    const handle = ++nextHandle;
    handles.set(handle, { it: v, own });
    return { handle };
  }
  drop(own);
  return { value: v };
}

// end drops an iterator that ended, and its request's signals.
function end(handle) {
  const h = handles.get(handle);
  if (!h) return;
  handles.delete(handle);
  drop(h.own);
}

async function load(options) {
  const config = {
    wasm: options.wasm, wasmExec: options.wasmExec, systemPrompt: options.systemPrompt, limits: options.limits,
  };
  if (options.model === "echo") config.model = "echo";
  else if (options.model === "function") config.model = modelStandIn;
  if (options.countTokens) {
    // The page counts each count action's messages (js/count.js).
    config.countTokens = (messages) => ask("count", { messages });
    config.countTokens[Symbol.for("agentrt.countsAll")] = true; // js/count.js COUNTS_ALL
  }
  // A needsApproval function stays on the page: "function" marks it.
  if (options.tools) {
    config.tools = options.tools.map((t) => ({ ...t, call: toolStandIn(t.name),
      needsApproval: t.needsApproval === "function" ? toolStandIn(t.name, "approve") : t.needsApproval }));
  }
  if (options.progress) config.onProgress = (p) => post({ op: "progress", p });
  for (const k of Object.keys(config)) if (config[k] === undefined) delete config[k];
  rt = await loadRuntime(config);
  return { version: rt.version, globalName: rt.globalName };
}

// Imported anywhere else (a bundler's scan, a test importing every file),
// it does nothing.
if (typeof scope.postMessage === "function" && typeof scope.addEventListener === "function" &&
  typeof scope.document === "undefined") scope.addEventListener("message", async (e) => {
  const m = e.data;
  if (m === null || typeof m !== "object") return;
  switch (m.op) {
    case "load":
      try {
        post({ op: "loaded", ok: true, value: await load(m.options) });
      } catch (err) {
        post({ op: "loaded", ok: false, error: wireError(err) });
      }
      return;
    case "req": {
      let msg;
      try {
        if (!rt) throw new AgentrtError("internal", "agentrt: the worker's runtime is not loaded");
        const a = await request(m);
        msg = a.handle !== undefined ? { op: "res", id: m.id, ok: true, handle: a.handle }
          : answer(m.id, a.value);
      } catch (err) {
        msg = { op: "res", id: m.id, ok: false, error: wireError(err) };
      }
      post(msg);
      return;
    }
    case "abort": {
      const ctl = signals.get(m.n);
      if (ctl) ctl.abort();
      return;
    }
    case "answer": {
      const c = calls.get(m.cid);
      if (!c) return; // answered already, or never asked
      calls.delete(m.cid);
      if (m.ok) c.resolve(m.value);
      else c.reject(new Error(m.message));
      return;
    }
    case "delta": {
      const c = calls.get(m.cid);
      if (c && c.onDelta) {
        try { c.onDelta(m.text); } catch { /* the run ended */ }
      }
      return;
    }
  }
});
