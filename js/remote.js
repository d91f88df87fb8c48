// agentrt glue: worker mode's page side (docs/adr/0021-worker-mode.md).
// loadRemote starts the worker entry (js/worker.js), which runs the glue's
// own loadRuntime, and returns a RemoteRuntime: the Runtime's members,
// each forwarded by message. The host's model and tools are called here,
// on the page, when the worker asks.

import { AgentrtError, argError, toError, isObject, isBytes, closedError, abortError, describe, reportCallbackError } from "./errors.js";
import { readRequest, readOptions } from "./args.js";
import { toURL } from "./load.js";
import { countWith } from "./count.js";

// fromWire rebuilds an error that crossed from the worker.
function fromWire(e) {
  if (!isObject(e)) return new AgentrtError("internal", "agentrt: the worker failed");
  return new AgentrtError(typeof e.code === "string" ? e.code : "internal", String(e.message),
    { index: e.index, name: e.name, appended: e.appended });
}

function deadError(cause) {
  return new AgentrtError("internal", "agentrt: the runtime's worker stopped" + (cause ? ` (${cause})` : ""));
}

// freezeMessage freezes a message as the main-thread glue hands them.
function freezeMessage(m) {
  if (!isObject(m)) return m;
  const calls = m.tool_calls ?? m.toolCalls;
  if (Array.isArray(calls)) for (const c of calls) Object.freeze(c);
  return Object.freeze(m);
}

function freezeResult(r) {
  if (!isObject(r)) return r;
  freezeMessage(r.reply);
  if (Array.isArray(r.appended)) r.appended = r.appended.map((m) => (m === r.reply ? m : freezeMessage(m)));
  return r;
}

// wireHistory makes a history ready to cross: a packed Uint8Array is copied
// into a buffer of its own and transferred; the host's bytes stay.
function wireHistory(h, transfer) {
  if (!(h instanceof Uint8Array)) return h;
  const copy = h.slice();
  transfer.push(copy.buffer);
  return copy;
}

// wasmBytes makes the module's bytes ready to cross to the worker, which
// compiles them there: copied once into a buffer of their own and
// transferred, the host's bytes left as they were. Anything else (a
// WebAssembly.Module, undefined) crosses as it is.
function wasmBytes(wasm, transfer) {
  if (!isBytes(wasm)) return wasm;
  const src = wasm instanceof ArrayBuffer ? new Uint8Array(wasm) : new Uint8Array(wasm.buffer, wasm.byteOffset, wasm.byteLength);
  const copy = src.slice();
  transfer.push(copy.buffer);
  return copy;
}

/** A Runtime whose glue and module run in a dedicated Web Worker. */
class RemoteRuntime {
  #w;
  #version;
  #globalName;
  #closed = false;
  #dead = null;
  #ids = 0;
  #pending = new Map();
  #events = new Map();
  #model;
  #tools;
  // The page's countTokens (js/count.js), which the worker asks by message.
  #countTokens;
  #calls = new Map();
  #releases = new Map();
  // The messages of each session's last model call, by the worker's ids
  // (js/worker.js wireMessages): a call carries only the messages the
  // page has not seen.
  #held = new Map();

  constructor(w, info, model, tools, countTokens) {
    this.#w = w;
    this.#countTokens = countTokens;
    this.#version = info.version;
    this.#globalName = info.globalName;
    this.#model = model;
    this.#tools = tools;
    w.addEventListener("message", (e) => this.#onMessage(e.data));
    w.addEventListener("error", (e) => {
      if (e && typeof e.preventDefault === "function") e.preventDefault();
      this.#die(e && e.message ? e.message : "an uncaught error");
    });
    w.addEventListener("messageerror", () => this.#die("a message that cannot be read"));
    const terminate = w.terminate.bind(w);
    // A worker terminated by its host is dead to this runtime: its calls
    // reject instead of waiting for answers that never come.
    w.terminate = () => {
      terminate();
      this.#die("terminated");
    };
  }

  /** The module's version. */
  get version() { return this.#version; }

  /** The global name the worker's instance published its exports at (in the worker). */
  get globalName() { return this.#globalName; }

  /** Whether close() was called. */
  get closed() { return this.#closed; }

  /** The dedicated Web Worker the runtime runs in. */
  get worker() { return this.#w; }

  #die(why) {
    if (this.#dead) return;
    this.#dead = why;
    const err = deadError(why);
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
    this.#events.clear();
    for (const c of this.#calls.values()) c.abort(err);
    this.#calls.clear();
    this.#held.clear();
  }

  // #send posts a request and resolves with its answer. A stream's
  // request (keep) answers when the stream is open: its events and its
  // signal stay wired until #release(id), when the stream ends.
  #send(method, args, transfer = [], onEvent = undefined, signal = undefined, keep = false) {
    if (this.#closed) return Promise.reject(closedError());
    if (this.#dead) return Promise.reject(deadError(this.#dead));
    const id = ++this.#ids;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (!this.#dead && !this.#closed) this.#w.postMessage({ op: "abort", id });
      };
      const release = () => {
        this.#events.delete(id);
        this.#releases.delete(id);
        if (signal) signal.removeEventListener("abort", onAbort);
      };
      const done = (ok) => {
        this.#pending.delete(id);
        if (keep && ok) this.#releases.set(id, release);
        else release();
      };
      this.#pending.set(id, {
        resolve: (v) => { done(true); resolve(keep ? id : v); },
        reject: (e) => { done(false); reject(e); },
      });
      if (onEvent) this.#events.set(id, onEvent);
      try {
        this.#w.postMessage({ op: "req", id, method, args }, transfer);
      } catch (e) {
        this.#pending.get(id).reject(toError(e, "invalid_argument"));
        return;
      }
      if (signal) signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  #onMessage(m) {
    if (!isObject(m)) return;
    switch (m.op) {
      case "res": {
        const p = this.#pending.get(m.id);
        if (p) m.ok ? p.resolve(m.value) : p.reject(fromWire(m.error));
        return;
      }
      case "event": {
        const f = this.#events.get(m.id);
        if (f) {
          const ev = m.ev && m.ev.error !== undefined ? { ...m.ev, error: fromWire(m.ev.error) } : m.ev;
          try { f(ev); } catch (e) { reportCallbackError(e); }
        }
        return;
      }
      case "call":
        this.#answer(m.cid, m.kind, m.payload);
        return;
      case "abortCall": {
        const c = this.#calls.get(m.cid);
        if (c) c.abort(fromWire(m.reason));
        return;
      }
    }
  }

  // #answer calls the page's model or tool for the worker and posts its
  // answer once: the value, or the error's text.
  async #answer(cid, kind, payload) {
    const ctl = new AbortController();
    let answered = false;
    const reply = (msg) => {
      if (answered) return;
      answered = true;
      this.#calls.delete(cid);
      if (this.#dead || this.#closed) return;
      try {
        this.#w.postMessage({ op: "answer", cid, ...msg });
        return;
      } catch (e) {
        if (!msg.ok) {
          this.#w.postMessage({ op: "answer", cid, ok: false, message: "the answer cannot be sent to the worker: " + describe(e) });
          return;
        }
        // A value that cannot be cloned (a function among its fields):
        // its JSON is what the glue reads of it on the main thread too.
        try {
          this.#w.postMessage({ op: "answer", cid, ok: true, value: JSON.parse(JSON.stringify(msg.value)) });
        } catch (e2) {
          this.#w.postMessage({ op: "answer", cid, ok: false, message: "the answer cannot be sent to the worker: " + describe(e) });
        }
      }
    };
    this.#calls.set(cid, { abort: (why) => ctl.abort(why) });
    try {
      let v;
      if (kind === "model") {
        const w = this.#w;
        const req = {
          ...payload,
          signal: ctl.signal,
          delta: (text) => {
            if (!answered && !this.#dead && !this.#closed) w.postMessage({ op: "delta", cid, text: String(text) });
          },
        };
        req.messages = this.#messages(payload);
        delete req.dropped;
        v = await this.#model(req);
      } else if (kind === "count") {
        v = countWith(this.#countTokens, payload.messages);
      } else {
        const tool = this.#tools.get(payload.name);
        v = await (kind === "approve" ? tool.needsApproval(payload.args, payload.ctx) : tool.call(payload.args, payload.ctx));
      }
      reply({ ok: true, value: v });
    } catch (e) {
      reply({ ok: false, message: describe(e) });
    }
  }

  // #messages rebuilds a model call's messages from what crossed: the
  // messages held from the session's last call by id, the others frozen
  // as the main-thread glue hands them. It keeps this call's messages.
  #messages(payload) {
    for (const sid of payload.dropped) this.#held.delete(sid);
    const before = this.#held.get(payload.sessionId);
    const now = new Map();
    const out = payload.messages.map((x) => {
      if (typeof x === "number") {
        const m = before === undefined ? undefined : before.get(x);
        if (m === undefined) throw new AgentrtError("internal", "agentrt: the worker's messages are out of step with the page's");
        now.set(x, m);
        return m;
      }
      now.set(x.id, freezeMessage(x.m));
      return x.m;
    });
    this.#held.set(payload.sessionId, now);
    return out;
  }

  // #turn forwards a turn: the history crosses transferred when packed,
  // the signal as an abort message, events to onEvent here.
  #release(id) {
    const f = this.#releases.get(id);
    if (f) f();
  }

  #turn(method, args, options, optionsAt, historyAt) {
    const transfer = [];
    const a = args.slice();
    // historyAt: the argument that is the history, or "request" for a
    // request object's history field.
    if (historyAt === "request") a[0] = { ...a[0], history: wireHistory(a[0].history, transfer) };
    else if (historyAt >= 0) a[historyAt] = wireHistory(a[historyAt], transfer);
    let onEvent, signal;
    if (options) {
      onEvent = options.onEvent;
      signal = options.signal ?? undefined;
      if (signal && signal.aborted) {
        return Promise.reject(new AgentrtError("cancelled", "agentrt: the run was aborted", { name: "AbortError", cause: signal.reason }));
      }
      const o = { runId: options.runId, inspect: options.inspect, signal: Boolean(signal), onEvent: Boolean(onEvent) };
      a[optionsAt] = historyAt === "request" ? { ...a[0], ...o } : o;
    }
    const keep = method === "stream";
    return this.#send(method, a, transfer, onEvent, signal, keep).then(keep ? (id) => id : freezeResult);
  }

  /** Runs one turn (see Runtime.run). */
  run(request) {
    let r;
    try {
      r = readRequest(request);
    } catch (e) {
      return Promise.reject(e);
    }
    const { sessionId, input, policy, history, approvals } = r;
    return this.#turn("run", [{ sessionId, input, policy, history, approvals }], r, 0, "request");
  }

  /** The ADR entry point (see Runtime.startRun). */
  startRun(sessionId, input, options) {
    return this.#entry("startRun", [sessionId, input], options, undefined, undefined, false);
  }

  /** The ADR entry point (see Runtime.startRunWithPolicy). */
  startRunWithPolicy(sessionId, input, policy, options) {
    return this.#entry("startRunWithPolicy", [sessionId, input, policy], options, policy, undefined, false);
  }

  /** The ADR entry point (see Runtime.startRunWithHistory). */
  startRunWithHistory(sessionId, input, history, options) {
    return this.#entry("startRunWithHistory", [sessionId, input, history], options, undefined, history, true);
  }

  /** The ADR entry point (see Runtime.startRunWithPolicyAndHistory). */
  startRunWithPolicyAndHistory(sessionId, input, policy, history, options) {
    return this.#entry("startRunWithPolicyAndHistory", [sessionId, input, policy, history], options, policy, history, true);
  }

  #entry(method, args, options, policy, history, withHistory) {
    let o;
    try {
      o = readOptions(args[0], args[1], policy, options, history, withHistory);
    } catch (e) {
      return Promise.reject(e);
    }
    const at = args.length;
    if (o) args.push(undefined);
    return this.#turn(method, args, o, at, withHistory ? args.length - (o ? 2 : 1) : -1);
  }

  /**
   * Runs one turn and yields its events (see Runtime.stream). Each next()
   * asks the worker for one event, so an early exit reverts a completed
   * turn whose run.completed was not handed out, as on the main thread.
   */
  stream(request) {
    const r = readRequest(request);
    if (this.#closed) throw closedError();
    const { sessionId, input, policy, history, approvals } = r;
    let started = null;
    let finished = false;
    let streamId;
    const pull = async (method) => {
      started ??= this.#turn("stream", [{ sessionId, input, policy, history, approvals }], r, 0, "request");
      streamId ??= await started;
      let step;
      try {
        step = await this.#send(method, [streamId]);
      } catch (e) {
        this.#release(streamId);
        throw e;
      }
      if (step.done) {
        finished = true;
        this.#release(streamId);
      } else if (isObject(step.value) && step.value.type === "run.completed") freezeResult(step.value.result);
      return { value: step.value, done: step.done };
    };
    const iterator = {
      next: async () => {
        if (finished) return { value: undefined, done: true };
        try {
          return await pull("next");
        } catch (e) {
          finished = true;
          throw e;
        }
      },
      return: async (value) => {
        if (!finished) {
          finished = true;
          if (started) {
            try { await pull("return"); } catch { /* it ended */ }
          }
        }
        return { value, done: true };
      },
      throw: async (err) => {
        await iterator.return();
        throw err;
      },
      [Symbol.asyncIterator]() { return iterator; },
    };
    return iterator;
  }

  /** Cancels the active run with runId; resolves with whether this call did. */
  cancelRun(runId) {
    if (typeof runId !== "string") return Promise.reject(argError("runId", "must be a string"));
    return this.#send("cancelRun", [runId]);
  }

  /** A snapshot of the session with id, or null. */
  session(id) {
    if (typeof id !== "string") return Promise.reject(argError("id", "must be a string"));
    return this.#send("session", [id]);
  }

  /** Removes the session with id; resolves with whether there was one. */
  deleteSession(id) {
    if (typeof id !== "string") return Promise.reject(argError("id", "must be a string"));
    return this.#send("deleteSession", [id]);
  }

  /** The ids of all sessions, sorted. */
  listSessions() {
    return this.#send("listSessions", []);
  }

  /** The runtime's counters. */
  stats() {
    return this.#send("stats", []);
  }

  /** The problems of a history (see Runtime.checkHistory). */
  checkHistory(history) {
    if (!Array.isArray(history) && !(history instanceof Uint8Array)) {
      return Promise.reject(argError("history", "must be an Array of messages or a packed Uint8Array"));
    }
    const transfer = [];
    return this.#send("checkHistory", [wireHistory(history, transfer)], transfer);
  }

  /**
   * Frees the worker: it is terminated, the calls in flight reject with
   * cancelled ("run cancelled", as the main-thread Runtime's close ends
   * its active runs), the signals of the model calls in flight abort with
   * an AbortError of code cancelled (the main thread's reason), and every
   * later call fails as closed. Idempotent.
   */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    const cancelled = new AgentrtError("cancelled", "run cancelled");
    for (const p of this.#pending.values()) p.reject(cancelled);
    this.#pending.clear();
    for (const c of this.#calls.values()) c.abort(abortError());
    this.#calls.clear();
    this.#held.clear();
    try {
      this.#w.postMessage({ op: "req", id: ++this.#ids, method: "close", args: [] });
    } catch { /* it is going away */ }
    this.#w.terminate();
  }
}

// webWorkers reports whether the host is a browser realm with Web Workers.
// Deno and Bun have a Worker class too, but they run no page to keep
// responsive: like Node and workerd, they are refused (ADR 0021).
function webWorkers() {
  const g = globalThis;
  return typeof g.Worker === "function" && !g.Deno && !g.Bun && !(g.process && g.process.versions && g.process.versions.node);
}

/**
 * Checks the worker option and starts the runtime in a Web Worker. Where
 * the host has no Worker, the option is refused with invalid_argument.
 *
 * @param {object} options loadRuntime's options, checked by checkConfig
 * @returns {Promise<RemoteRuntime>}
 */
export async function loadRemote(options) {
  let entry, config, tools;
  const transfer = [];
  try {
    const w = options.worker;
    if (!webWorkers()) {
      throw argError("options.worker", "needs a Web Worker, and this host has none (Node, Deno, Bun and workerd run the module in the caller's thread: omit the option)");
    }
    if (w === true) entry = null; // the packaged entry: see new Worker below
    else if (typeof w === "string" || w instanceof URL) entry = toURL(w, "options.worker");
    else throw argError("options.worker", "must be true, a URL or a string");
    const { wasm, wasmExec, systemPrompt, model, limits } = options;
    if (wasm !== undefined && !(wasm instanceof WebAssembly.Module) && !(typeof wasm === "string" || wasm instanceof URL) && !isBytes(wasm)) {
      throw argError("options.wasm", "must be a URL, a string, bytes or a WebAssembly.Module in worker mode");
    }
    tools = new Map((options.tools ?? []).map((t) => [t.name, t]));
    config = {
      wasm: typeof wasm === "string" ? toURL(wasm, "options.wasm").href : wasm instanceof URL ? wasm.href : wasmBytes(wasm, transfer),
      wasmExec: wasmExec === undefined ? undefined : toURL(wasmExec, "options.wasmExec").href,
      systemPrompt, limits: limits === undefined ? undefined : structuredClone(limits),
      model: model === undefined ? undefined : model === "echo" ? "echo" : "function",
      progress: options.onProgress !== undefined, countTokens: options.countTokens !== undefined,
      tools: options.tools ? options.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters,
        needsApproval: typeof t.needsApproval === "function" ? "function" : t.needsApproval })) : undefined,
    };
  } catch (e) {
    throw toError(e, "invalid_argument");
  }
  let w;
  try {
    // The packaged entry (worker.js, beside this file) is started from the
    // literal new Worker(new URL("./worker.js", import.meta.url), ...): the
    // form Vite and webpack recognise, so they bundle the entry (and the
    // glue and module it imports) as a worker of its own. A bare
    // new URL("./worker.js", ...) would be copied as a plain asset whose
    // import of ./glue.js finds nothing.
    w = entry === null
      ? new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "agentrt" })
      : new Worker(entry, { type: "module", name: "agentrt" });
  } catch (e) {
    throw new AgentrtError("load_failed", `agentrt: cannot start the worker ${entry ? entry.href : "worker.js"}: ${describe(e)}`, { cause: e });
  }
  const info = await new Promise((resolve, reject) => {
    const onMessage = (e) => {
      if (isObject(e.data) && e.data.op === "progress" && options.onProgress) {
        try { options.onProgress(e.data.p); } catch { /* progress is advisory */ }
        return;
      }
      if (!isObject(e.data) || e.data.op !== "loaded") return;
      cleanup();
      if (e.data.ok) resolve(e.data.value);
      else reject(fromWire(e.data.error));
    };
    const onError = (e) => {
      cleanup();
      reject(new AgentrtError("load_failed", `agentrt: the worker ${entry ? entry.href : "worker.js"} failed to start` + (e && e.message ? `: ${e.message}` : "")));
    };
    const cleanup = () => {
      w.removeEventListener("message", onMessage);
      w.removeEventListener("error", onError);
    };
    w.addEventListener("message", onMessage);
    w.addEventListener("error", onError);
    for (const k of Object.keys(config)) if (config[k] === undefined) delete config[k];
    w.postMessage({ op: "load", options: config }, transfer);
  }).catch((e) => {
    w.terminate();
    throw e;
  });
  return new RemoteRuntime(w, info, options.model, tools, options.countTokens);
}
