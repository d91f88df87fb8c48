// agentrt glue: the entry that runs inside a dedicated Web Worker in worker
// mode (docs/adr/0021-worker-mode.md). It loads the same glue the page
// would (loadRuntime without `worker`), so there is one glue and one driver
// in both modes, and answers the page's messages (js/remote.js speaks the
// other side): a request calls the Runtime method it names, whichever it
// is (docs/adr/0024-one-definition-per-operation.md). The host's models and tools stay on the page: the runtime
// here is configured with stand-ins that ask the page by message.

import { loadRuntime, AgentrtError } from "./glue.js";

/** The config key that logs every run for reconnects (js/runtime.js LOG_RUNS); this entry imports the glue only. */
const LOG_RUNS = Symbol.for("agentrt.logRuns");

const scope = globalThis;

/** The runtime this worker holds, once loaded. */
let rt = null;
/** Calls to the page's model or tools waiting for an answer, by call id. */
const calls = new Map();
/**
 * Each page's connection: its post function, the worker-side
 * AbortControllers of its signals by mark number, and the iterators a
 * method answered (stream, reconnect) or the stop of a watch, which the
 * page pulls from or ends, by handle, each with the marks of its request.
 * A dedicated worker has one; a shared worker one per page's port.
 */
function connection(send) {
  return { post: (msg, transfer) => post(msg, transfer, send), signals: new Map(), handles: new Map() };
}
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
// index, name, appended, head and missing (rebuilt there as an
// AgentrtError).
function wireError(e) {
  const out = { code: "internal", message: "agentrt: (an error that cannot be shown)" };
  try {
    if (e !== null && typeof e === "object" && typeof e.code === "string") out.code = e.code;
    out.message = e instanceof Error || (e && typeof e.message === "string") ? e.message : String(e);
    if (Number.isInteger(e && e.index)) out.index = e.index;
    if (e && (e.name === "AbortError" || e.name === "TimeoutError")) out.name = e.name;
    if (e && Array.isArray(e.appended)) out.appended = e.appended;
    if (e && typeof e.head === "string") out.head = e.head;
    if (e && Array.isArray(e.missing)) out.missing = e.missing;
  } catch { /* keep the defaults */ }
  return out;
}

function post(msg, transfer, send = (m, t) => scope.postMessage(m, t)) {
  try {
    send(msg, transfer || []);
  } catch (e) {
    // A value that cannot be cloned (a tool's odd output is stringified
    // before it gets here; a Result always clones): answered as an error.
    if (msg.op === "res") send({ op: "res", id: msg.id, ok: false, error: wireError(e) }, []);
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
function decode(conn, args, marks) {
  const { post, signals } = conn;
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

function drop(conn, own) {
  for (const n of own) conn.signals.delete(n);
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
async function request(conn, m) {
  const args = Array.isArray(m.args) ? m.args : [];
  const { handles } = conn;
  if (m.target !== undefined) {
    const h = handles.get(m.target);
    if (!h) return { value: { done: true } };
    if (m.method !== "next" && m.method !== "return") {
      throw new AgentrtError("invalid_argument", `agentrt: an iterator of the worker has no method ${String(m.method)}`);
    }
    try {
      const step = await h.it[m.method]();
      if (step.done) end(conn, m.target);
      return { value: { done: step.done, value: step.value } };
    } catch (e) {
      end(conn, m.target);
      throw e;
    }
  }
  if (!isMethod(m.method)) throw new AgentrtError("invalid_argument", `agentrt: the worker has no method ${String(m.method)}`);
  const own = decode(conn, args, m.marks);
  let v;
  try {
    v = await rt[m.method](...args);
  } catch (e) {
    drop(conn, own);
    throw e;
  }
  // A watch's stop: kept as a handle whose return() stops it.
  const watch = typeof v === "function";
  if (watch) {
    const stop = v;
    v = { next: async () => ({ done: true }), return: async () => { stop(); return { done: true }; }, [Symbol.asyncIterator]() { return this; } };
  }
  if (isIterator(v)) {
    const handle = ++nextHandle;
    handles.set(handle, { it: v, own, watch });
    return { handle };
  }
  drop(conn, own);
  return { value: v };
}

// end drops an iterator that ended, and its request's signals.
function end(conn, handle) {
  const h = conn.handles.get(handle);
  if (!h) return;
  conn.handles.delete(handle);
  drop(conn, h.own);
}

// loadAgent makes the runtime's config from an agent module (shared
// mode, or worker mode with `agent`): its exports, imported once here, so
// the model and tools run in the worker.
async function loadAgent(options) {
  let mod;
  try {
    mod = await import(/* webpackIgnore: true */ /* @vite-ignore */ options.agent);
  } catch (e) {
    throw new AgentrtError("load_failed", `agentrt: cannot import the agent module ${options.agent}: ${e && e.message ? e.message : e}`);
  }
  const a = mod.default !== undefined && mod.model === undefined ? mod.default : mod;
  const config = { wasm: options.wasm, wasmExec: options.wasmExec, [LOG_RUNS]: true };
  for (const k of ["model", "tools", "systemPrompt", "countTokens", "limits"]) if (a[k] !== undefined) config[k] = a[k];
  if (config.model === undefined) throw new AgentrtError("invalid_argument", `agentrt: the agent module ${options.agent} exports no model`);
  if (options.progress) config.onProgress = (p) => post({ op: "progress", p });
  for (const k of Object.keys(config)) if (config[k] === undefined) delete config[k];
  rt = await loadRuntime(config);
  return { version: rt.version, globalName: rt.globalName };
}

async function load(options) {
  if (typeof options.agent === "string") return loadAgent(options);
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

// The shared worker's one load (shared mode): every page's load waits for
// it, and a page naming another agent module is refused.
let sharedLoad = null;
let sharedAgent = "";

async function loadShared(options) {
  if (typeof options.agent !== "string") throw new AgentrtError("invalid_argument", "agentrt: a shared worker needs options.agent");
  if (!sharedLoad) {
    sharedAgent = options.agent;
    sharedLoad = load(options);
    sharedLoad.catch(() => { sharedLoad = null; });
  } else if (options.agent !== sharedAgent) {
    throw argError("options.agent", `names ${options.agent}, but this shared worker runs ${sharedAgent}: give the runtime another options.name, or the same agent`);
  }
  return sharedLoad;
}

function argError(name, what) {
  const e = new TypeError(`agentrt: ${name} ${what}`);
  e.code = "invalid_argument";
  return e;
}

// onMessage answers one message of the page behind conn; shared says the
// runtime is shared by every page (a shared worker).
async function onMessage(conn, m, shared) {
  if (m === null || typeof m !== "object") return;
  const post = conn.post;
  switch (m.op) {
    case "load":
      try {
        post({ op: "loaded", ok: true, value: await (shared ? loadShared(m.options) : load(m.options)) });
      } catch (err) {
        post({ op: "loaded", ok: false, error: wireError(err) });
      }
      return;
    case "req": {
      let msg;
      try {
        if (!rt) throw new AgentrtError("internal", "agentrt: the worker's runtime is not loaded");
        // A page's close ends its own runtime; the shared one serves the other pages.
        if (shared && m.method === "close" && m.target === undefined) {
          for (const [k, h] of [...conn.handles]) {
            if (h.watch) h.it.return();
            end(conn, k);
          }
          return;
        }
        const a = await request(conn, m);
        msg = a.handle !== undefined ? { op: "res", id: m.id, ok: true, handle: a.handle }
          : answer(m.id, a.value);
      } catch (err) {
        msg = { op: "res", id: m.id, ok: false, error: wireError(err) };
      }
      post(msg);
      return;
    }
    case "abort": {
      const ctl = conn.signals.get(m.n);
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
}

// Imported anywhere else (a bundler's scan, a test importing every file),
// it does nothing. A dedicated worker's scope posts; a shared worker's
// has pages connecting, each with a port.
if (typeof scope.postMessage === "function" && typeof scope.addEventListener === "function" &&
  typeof scope.document === "undefined") {
  const conn = connection((msg, transfer) => scope.postMessage(msg, transfer));
  scope.addEventListener("message", (e) => onMessage(conn, e.data, false));
} else if (typeof scope.postMessage !== "function" && typeof scope.addEventListener === "function" &&
  typeof scope.document === "undefined" && "onconnect" in scope) {
  scope.addEventListener("connect", (e) => {
    const port = e.ports[0];
    const conn = connection((msg, transfer) => port.postMessage(msg, transfer));
    port.addEventListener("message", (ev) => onMessage(conn, ev.data, true));
    port.start();
  });
}
