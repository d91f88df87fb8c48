// agentrt glue: worker mode's page side (docs/adr/0021-worker-mode.md).
// loadRemote starts the worker entry (js/worker.js), which runs the glue's
// own loadRuntime, and returns a RemoteRuntime: the Runtime's methods,
// each forwarded by one message shape that one dispatcher in the worker
// answers (docs/adr/0024-one-definition-per-operation.md). The host's model and tools are called here,
// on the page, when the worker asks.

import { AgentrtError, argError, toError, isObject, isBytes, closedError, abortError, describe, reportCallbackError } from "./errors.js";
import { isDetached } from "./args.js";
import { toURL } from "./load.js";
import { countWith } from "./count.js";

// fromWire rebuilds an error that crossed from the worker.
function fromWire(e) {
  if (!isObject(e)) return new AgentrtError("internal", "agentrt: the worker failed");
  return new AgentrtError(typeof e.code === "string" ? e.code : "internal", String(e.message),
    { index: e.index, name: e.name, appended: e.appended, head: e.head, missing: e.missing });
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

// refreeze freezes the objects of a value that crossed from the worker
// which were frozen there (js/worker.js crossing): a value crosses as a
// clone, and a clone is never frozen. The paths are in postorder, so an
// object's inner objects are frozen before it.
function refreeze(v, paths) {
  if (!Array.isArray(paths)) return v;
  for (const p of paths) {
    let o = v;
    for (const k of p) o = o == null ? undefined : o[k];
    if (o !== null && typeof o === "object") Object.freeze(o);
  }
  return v;
}

// rebuild puts back the errors of a value that crossed from the worker
// (js/worker.js crossing): each path names an error's object, which
// becomes an AgentrtError with its code, index and appended.
function rebuild(v, paths) {
  if (!Array.isArray(paths)) return v;
  for (const p of paths) {
    if (p.length === 0) return fromWire(v);
    let o = v;
    for (const k of p.slice(0, -1)) o = o == null ? undefined : o[k];
    const k = p[p.length - 1];
    if (o !== null && typeof o === "object" && !Object.isFrozen(o)) o[k] = fromWire(o[k]);
  }
  return v;
}

// isSignal reports whether v is an AbortSignal (of this realm or not).
function isSignal(v) {
  return typeof AbortSignal === "function" && v instanceof AbortSignal;
}

// isPlain reports whether v is a plain object (a request, options), whose
// fields are marked as the arguments are (RemoteRuntime #encode).
function isPlain(v) {
  if (v === null || typeof v !== "object") return false;
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

// cloneable returns v without what a structured clone refuses: functions
// and symbols are left out, and so is any other value that cannot be
// cloned; arrays and objects are copied with their fields so treated.
function cloneable(v, depth) {
  if (typeof v === "function" || typeof v === "symbol") return undefined;
  if (v === null || typeof v !== "object") return v;
  if (depth > 64) return undefined;
  if (Array.isArray(v)) return v.map((x) => cloneable(x, depth + 1));
  if (isPlain(v)) {
    const o = {};
    for (const k of Object.keys(v)) o[k] = cloneable(v[k], depth + 1);
    return o;
  }
  try {
    structuredClone(v);
    return v;
  } catch {
    return undefined;
  }
}

// methodsOf returns the names of the methods of a class's prototype
// proto: its own properties that are functions, but not its constructor
// or its getters (js/worker.js isMethod bounds what it calls the same way).
function methodsOf(proto) {
  const out = [];
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (name === "constructor") continue;
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (typeof d.value === "function") out.push(name);
  }
  return out;
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

/**
 * A Runtime whose glue and module run in a dedicated Web Worker. Its
 * methods are the glue's Runtime methods, made by forward: each posts one
 * request, { op: "req", id, method, args, marks }, which js/worker.js
 * answers by calling the same method of its own Runtime.
 */
class RemoteRuntime {
  #w;
  #version;
  #globalName;
  #closed = false;
  #dead = null;
  #ids = 0;
  // The requests waiting for their answer, by id.
  #pending = new Map();
  // The marks a request's arguments crossed with (see #encode): by the
  // request's id while it is in flight, by its handle while an iterator
  // it answered lives. Each is a function to release the mark.
  #marks = new Map();
  // The host's functions the worker may call, by mark number.
  #callbacks = new Map();
  #nextMark = 0;
  #model;
  #tools;
  // The page's countTokens (js/count.js), which the worker asks by message.
  #countTokens;
  #calls = new Map();
  // The messages of each session's last model call, by the worker's ids
  // (js/worker.js wireMessages): a call carries only the messages the
  // page has not seen.
  #held = new Map();

  #mode;

  constructor(w, info, model, tools, countTokens, mode = "worker") {
    this.#mode = mode;
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

  /**
   * Gives RemoteRuntime a forwarding method for each method of the glue's
   * Runtime class it does not define itself (close): one that posts the
   * call to the worker and answers with a Promise, or, for the methods
   * in Runtime.iterates, checks the arguments with the reader named there
   * and hands back an async iterator at once, as the Runtime does. A
   * method added to Runtime is forwarded with no code here.
   */
  static forward(Runtime) {
    const iterates = Runtime.iterates ?? {};
    for (const name of methodsOf(Runtime.prototype)) {
      if (Object.prototype.hasOwnProperty.call(RemoteRuntime.prototype, name)) continue;
      const check = iterates[name];
      Object.defineProperty(RemoteRuntime.prototype, name, {
        configurable: true, writable: true,
        value: typeof check === "function"
          ? { [name](...args) { check(...args); return this.#iterate(name, args); } }[name]
          : { [name](...args) { return this.#call(name, args); } }[name],
      });
    }
  }

  /** The module's version. */
  get version() { return this.#version; }

  /** The global name the worker's instance published its exports at (in the worker). */
  get globalName() { return this.#globalName; }

  /** Whether close() was called. */
  get closed() { return this.#closed; }

  /** The dedicated Web Worker the runtime runs in (in shared mode, the SharedWorker's port). */
  get worker() { return this.#w; }

  /** Where the runtime runs: "worker" (a dedicated Web Worker) or "shared" (a SharedWorker every tab shares). */
  get mode() { return this.#mode; }

  /**
   * Calls onEvent with every event of every run on sessionId, as the
   * Runtime's watch; resolves with the function that stops it.
   * @param {string} sessionId
   * @param {(event: object) => void} onEvent
   * @returns {Promise<() => Promise<void>>}
   */
  async watch(sessionId, onEvent) {
    if (typeof onEvent !== "function") throw argError("onEvent", "must be a function");
    const { handle } = await this.#send("watch", [sessionId, onEvent]);
    let stopped = null;
    return () => {
      stopped ??= this.#send("return", [], handle).then(() => {}, () => {}).finally(() => this.#release(handle));
      return stopped;
    };
  }

  #die(why) {
    if (this.#dead) return;
    this.#dead = why;
    const err = deadError(why);
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
    this.#releaseAll();
    for (const c of this.#calls.values()) c.abort(err);
    this.#calls.clear();
    this.#held.clear();
  }

  #releaseAll() {
    for (const release of this.#marks.values()) release();
    this.#marks.clear();
  }

  // #encode makes a method's arguments ready to cross. An argument, or a
  // field of an argument that is a plain object (a request, options),
  // which is a function, an AbortSignal or a detached Uint8Array crosses
  // as a mark in marks: { at: [argument index, field?], kind, n,
  // aborted }, its place left undefined. The worker puts a stand-in
  // there: a function that posts its arguments here, the signal of a
  // controller that the page's abort reaches, or a detached array. Other
  // bytes are copied once and the copy transferred (the host's bytes
  // stay). It returns the args and the function that releases the marks.
  #encode(args, marks, transfer) {
    const hooks = [];
    const mark = (v, at) => {
      if (typeof v === "function") {
        const n = ++this.#nextMark;
        this.#callbacks.set(n, v);
        hooks.push(() => this.#callbacks.delete(n));
        marks.push({ at, kind: "fn", n });
        return undefined;
      }
      if (isSignal(v)) {
        const n = ++this.#nextMark;
        const onAbort = () => {
          if (!this.#dead && !this.#closed) this.#w.postMessage({ op: "abort", n });
        };
        if (!v.aborted) {
          v.addEventListener("abort", onAbort, { once: true });
          hooks.push(() => v.removeEventListener("abort", onAbort));
        }
        marks.push({ at, kind: "signal", n, aborted: v.aborted });
        return undefined;
      }
      if (v instanceof Uint8Array && isDetached(v.buffer)) {
        // Its bytes cannot be read or sent: the worker puts a detached
        // array of its own there, which its glue refuses as this one would.
        marks.push({ at, kind: "detached" });
        return undefined;
      }
      if (v instanceof Uint8Array) {
        const copy = v.slice();
        transfer.push(copy.buffer);
        return copy;
      }
      return v;
    };
    const out = args.map((a, i) => {
      if (isPlain(a)) {
        const o = {};
        for (const k of Object.keys(a)) o[k] = mark(a[k], [i, k]);
        return o;
      }
      return mark(a, [i]);
    });
    return { args: out, release: () => { for (const h of hooks) h(); } };
  }

  // #send posts a request and resolves with its answer: { value, handle }.
  // The marks of its arguments live until the answer, or, when the
  // answer is an iterator's handle, until #release(handle).
  #send(method, args, target = undefined) {
    if (this.#closed) return Promise.reject(closedError());
    if (this.#dead) return Promise.reject(deadError(this.#dead));
    const id = ++this.#ids;
    return new Promise((resolve, reject) => {
      const marks = [];
      const transfer = [];
      let enc;
      try {
        enc = this.#encode(args, marks, transfer);
      } catch (e) {
        // A getter of the host's that throws: as the glue's readers
        // answer it on the main thread.
        reject(toError(e, "invalid_argument"));
        return;
      }
      this.#marks.set(id, enc.release);
      const done = () => {
        this.#pending.delete(id);
        this.#marks.delete(id);
      };
      this.#pending.set(id, {
        resolve: (m) => {
          done();
          if (m.handle !== undefined) this.#marks.set(-m.handle, enc.release);
          else enc.release();
          resolve({ value: refreeze(rebuild(m.value, m.errors), m.frozen), handle: m.handle });
        },
        reject: (e) => { done(); enc.release(); reject(e); },
      });
      try {
        this.#w.postMessage({ op: "req", id, target, method, args: enc.args, marks }, transfer);
      } catch {
        // A value a structured clone refuses (a function among a
        // message's fields, an extra field the glue does not read): sent
        // without what cannot be cloned, which the glue on the main
        // thread does not read either.
        try {
          this.#w.postMessage({ op: "req", id, target, method, args: enc.args.map((a) => cloneable(a, 0)), marks }, transfer);
        } catch (e) {
          this.#pending.get(id).reject(toError(e, "invalid_argument"));
        }
      }
    });
  }

  // #release drops the marks an iterator's request crossed with: the
  // iterator has ended.
  #release(handle) {
    const release = this.#marks.get(-handle);
    if (!release) return;
    this.#marks.delete(-handle);
    release();
  }

  // #call forwards a method whose answer is a value (or a Promise of one).
  async #call(method, args) {
    return (await this.#send(method, args)).value;
  }

  // #iterate forwards a method that answers an async iterator: the
  // iterator stays in the worker, and each next() here asks it for one
  // step, so an early exit reverts a completed turn whose run.completed
  // was not handed out, as on the main thread.
  #iterate(method, args) {
    if (this.#closed) throw closedError();
    let started = null;
    let finished = false;
    let handle;
    const pull = async (step) => {
      started ??= this.#send(method, args).then((a) => {
        if (a.handle === undefined) throw new AgentrtError("internal", `agentrt: the worker's ${method} answered no iterator`);
        return a.handle;
      });
      handle ??= await started;
      let s;
      try {
        s = (await this.#send(step, [], handle)).value;
      } catch (e) {
        this.#release(handle);
        throw e;
      }
      if (s.done) {
        finished = true;
        this.#release(handle);
      }
      return { value: s.value, done: s.done };
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

  #onMessage(m) {
    if (!isObject(m)) return;
    switch (m.op) {
      case "res": {
        const p = this.#pending.get(m.id);
        if (p) m.ok ? p.resolve(m) : p.reject(fromWire(m.error));
        return;
      }
      case "callback": {
        const f = this.#callbacks.get(m.n);
        if (f) {
          try { f(...refreeze(rebuild(m.args, m.errors), m.frozen)); } catch (e) { reportCallbackError(e); }
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
    this.#releaseAll();
    for (const c of this.#calls.values()) c.abort(abortError());
    this.#calls.clear();
    this.#held.clear();
    try {
      this.#w.postMessage({ op: "req", id: ++this.#ids, method: "close", args: [], marks: [] });
    } catch { /* it is going away */ }
    this.#w.terminate();
  }
}

// webWorkers reports whether the host is a browser realm with Web Workers.
// Deno and Bun have a Worker class too, but they run no page to keep
// responsive: like Node and workerd, they are refused (ADR 0021).
export function webWorkers() {
  const g = globalThis;
  return typeof g.Worker === "function" && !g.Deno && !g.Bun && !(g.process && g.process.versions && g.process.versions.node);
}

/**
 * Checks the worker option and starts the runtime in a Web Worker. Where
 * the host has no Worker, the option is refused with invalid_argument.
 *
 * @param {object} options loadRuntime's options, checked by checkConfig
 * @param {Function} Runtime the glue's Runtime class, whose methods are forwarded
 * @returns {Promise<RemoteRuntime>}
 */
export async function loadRemote(options, Runtime) {
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
  return connect(w, entry ? entry.href : "worker.js", config, transfer, options, Runtime, tools, "worker");
}

// connect sends the worker w (or a SharedWorker's port, as a Worker-like
// object) its load message, waits for it to load, and returns the
// RemoteRuntime that speaks to it.
export async function connect(w, label, config, transfer, options, Runtime, tools, mode) {
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
      reject(new AgentrtError("load_failed", `agentrt: the worker ${label} failed to start` + (e && e.message ? `: ${e.message}` : "")));
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
  RemoteRuntime.forward(Runtime);
  return new RemoteRuntime(w, info, options.model, tools, options.countTokens, mode);
}
