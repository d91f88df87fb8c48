// agentrt glue: the entry that runs inside a dedicated Web Worker in worker
// mode (docs/adr/0021-worker-mode.md). It loads the same glue the page
// would (loadRuntime without `worker`), so there is one glue and one driver
// in both modes, and answers the page's messages (js/remote.js speaks the
// other side). The host's models and tools stay on the page: the runtime
// here is configured with stand-ins that ask the page by message.

import { loadRuntime, AgentrtError } from "./glue.js";

const scope = globalThis;

/** The runtime this worker holds, once loaded. */
let rt = null;
/** Calls to the page's model or tools waiting for an answer, by call id. */
const calls = new Map();
/** Worker-side AbortControllers of the page's runs, by request id. */
const runs = new Map();
/** Stream iterators the page pulls from, by request id. */
const streams = new Map();
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

// options rebuilds a run's options from what the page sent: a signal the
// page's aborts reach, and an onEvent that posts each event.
function runOptions(id, o) {
  if (!o) return undefined;
  const out = { runId: o.runId, inspect: o.inspect, signal: undefined, onEvent: undefined };
  if (o.signal) {
    const ctl = new AbortController();
    runs.set(id, ctl);
    out.signal = ctl.signal;
  }
  // An event's error crosses as wireError's object (a cloned Error keeps
  // no code, index nor appended) and is rebuilt on the page.
  if (o.onEvent) out.onEvent = (ev) => post({ op: "event", id, ev: ev.error === undefined ? ev : { ...ev, error: wireError(ev.error) } });
  return out;
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

async function request(id, method, args) {
  switch (method) {
    case "run": {
      const [r] = args;
      return rt.run({ ...r, ...runOptions(id, r) });
    }
    case "startRun":
      return rt.startRun(args[0], args[1], runOptions(id, args[2]));
    case "startRunWithPolicy":
      return rt.startRunWithPolicy(args[0], args[1], args[2], runOptions(id, args[3]));
    case "startRunWithHistory":
      return rt.startRunWithHistory(args[0], args[1], args[2], runOptions(id, args[3]));
    case "startRunWithPolicyAndHistory":
      return rt.startRunWithPolicyAndHistory(args[0], args[1], args[2], args[3], runOptions(id, args[4]));
    case "stream": {
      const [r] = args;
      streams.set(id, rt.stream({ ...r, ...runOptions(id, r) }));
      return true;
    }
    case "next":
    case "return": {
      const it = streams.get(args[0]);
      if (!it) return { done: true };
      try {
        const step = method === "next" ? await it.next() : await it.return();
        if (step.done) {
          streams.delete(args[0]);
          runs.delete(args[0]);
        }
        return { done: step.done, value: step.value };
      } catch (e) {
        streams.delete(args[0]);
        runs.delete(args[0]);
        throw e;
      }
    }
    case "cancelRun": return rt.cancelRun(args[0]);
    case "session": return rt.session(args[0]);
    case "deleteSession": return rt.deleteSession(args[0]);
    case "listSessions": return rt.listSessions();
    case "stats": return rt.stats();
    case "checkHistory": return rt.checkHistory(args[0]);
    case "close":
      rt.close();
      return true;
    default:
      throw new AgentrtError("invalid_argument", `agentrt: the worker has no method ${String(method)}`);
  }
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
        msg = { op: "res", id: m.id, ok: true, value: await request(m.id, m.method, m.args) };
      } catch (err) {
        msg = { op: "res", id: m.id, ok: false, error: wireError(err) };
      }
      if (m.method !== "stream" && m.method !== "next") runs.delete(m.id);
      post(msg);
      return;
    }
    case "abort": {
      const ctl = runs.get(m.id);
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
