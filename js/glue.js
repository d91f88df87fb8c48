// agentrt glue: the host API of the agentrt WebAssembly module.
//
// One dependency-free ES module for browsers, webviews, Node, Bun, Deno and
// workerd. It loads the module (and the Go toolchain's wasm_exec.js when the
// page has no `Go` yet), gives every runtime its own Go instance and global
// name, sends history in the packed format, and turns AbortSignals, event
// callbacks and async iteration into the module's calls. See docs/glue.md.
//
// Error convention: functions that return a Promise reject, functions that
// return a value throw. Bad arguments are TypeErrors whose message names the
// argument and whose `code` is "invalid_argument"; everything else is an
// AgentrtError with a stable `code`.

import { packHistory as pack, toModuleHistory as readHistory } from "./history.js";

/** Prefix of the global names the glue gives its instances (AGENTRT_GLOBAL). */
const GLOBAL_PREFIX = "agentrt_";

/** How many event-loop turns loadRuntime waits for the module to publish. */
const PUBLISH_TURNS = 100;

let instances = 0;
let goLoading = null;

/**
 * The error type of agentrt. `code` is stable and machine-readable (see
 * docs/contract.md, "Errors": invalid_argument, invalid_history, session_busy,
 * limit_exceeded, model_error, tool_error, cancelled, timeout, internal;
 * plus load_failed from loadRuntime); `index`, when set, is the position of
 * the message at fault in the history the host passed.
 */
export class AgentrtError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {{index?: number, cause?: unknown, name?: string}} [options]
   */
  constructor(code, message, options = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = options.name || "AgentrtError";
    this.code = code;
    if (Number.isInteger(options.index) && options.index >= 0) this.index = options.index;
  }
}

function argError(name, what) {
  const err = new TypeError(`agentrt: ${name} ${what}`);
  err.code = "invalid_argument";
  return err;
}

function abortError(cause) {
  return new AgentrtError("cancelled", "agentrt: the run was aborted", { name: "AbortError", cause });
}

// toError returns e as an Error with a string code: an Error that has one is
// returned as it is; anything else is wrapped.
function toError(e, fallbackCode = "internal") {
  if (e instanceof Error && typeof e.code === "string") {
    if (e.index !== undefined && !(Number.isInteger(e.index) && e.index >= 0)) {
      try { delete e.index; } catch { /* frozen: leave it */ }
    }
    return e;
  }
  if (e !== null && typeof e === "object" && typeof e.code === "string") {
    return new AgentrtError(e.code, String(e.message ?? e.code), { index: e.index, cause: e });
  }
  const message = e instanceof Error ? e.message : String(e);
  return new AgentrtError(fallbackCode, message, { cause: e });
}

function isObject(v) {
  return v !== null && typeof v === "object";
}

function isBytes(v) {
  return v instanceof ArrayBuffer || ArrayBuffer.isView(v);
}

function isSignal(v) {
  return isObject(v) && typeof v.aborted === "boolean" && typeof v.addEventListener === "function";
}

function reportCallbackError(e) {
  if (typeof globalThis.reportError === "function") globalThis.reportError(e);
  else queueMicrotask(() => { throw e; });
}

// ---------------------------------------------------------------------------
// History: read by js/history.js, the rules of docs/contract.md

function historyError(index, message) {
  return new AgentrtError("invalid_history", message, { index });
}

/**
 * Converts a history to the module's message shape, accepting every shape
 * of docs/contract.md: the module's own (snake_case or camelCase), OpenAI
 * chat messages and Vercel AI SDK UIMessages (one may yield several
 * messages). Refusals are AgentrtErrors (invalid_history, index).
 *
 * @param {ReadonlyArray<object>} history
 * @returns {Array<object>} new objects; the input is not changed
 */
export function toModuleHistory(history) {
  return readHistory(history, historyError);
}

/**
 * Encodes a history in the module's packed format (docs/packed-history.md),
 * accepting every shape toModuleHistory accepts. A Uint8Array is returned
 * as it is (it is taken to be packed already).
 *
 * @param {ReadonlyArray<object> | Uint8Array} history
 * @returns {Uint8Array}
 */
export function packHistory(history) {
  return pack(history, historyError);
}

// ---------------------------------------------------------------------------
// Loading

function baseURL() {
  try {
    if (typeof document !== "undefined" && document.baseURI) return document.baseURI;
  } catch { /* no document */ }
  try {
    if (globalThis.location && globalThis.location.href) return globalThis.location.href;
  } catch { /* Deno without --location throws */ }
  try {
    if (globalThis.process && typeof globalThis.process.cwd === "function") {
      const cwd = globalThis.process.cwd().replace(/\\/g, "/");
      return "file://" + (cwd.startsWith("/") ? "" : "/") + encodeURI(cwd).replace(/[?#]/g, encodeURIComponent) + "/";
    }
  } catch { /* no cwd */ }
  return import.meta.url;
}

function toURL(v, name) {
  if (v instanceof URL) return v;
  try {
    return new URL(v, baseURL());
  } catch (e) {
    throw argError(name, `is not a valid URL: ${JSON.stringify(String(v).slice(0, 200))}`);
  }
}

async function readURL(url, as) {
  if (url.protocol === "file:") {
    const spec = "node:fs/promises";
    const fs = await import(/* webpackIgnore: true */ /* @vite-ignore */ spec);
    const data = await fs.readFile(url);
    return as === "text" ? new TextDecoder().decode(data) : data;
  }
  const res = await fetch(url);
  if (!res.ok) throw new Error(`HTTP ${res.status} for ${url.href}`);
  if (as === "text") return res.text();
  if (as === "response") return res;
  return new Uint8Array(await res.arrayBuffer());
}

function loadFailed(what, e) {
  return new AgentrtError("load_failed", `agentrt: cannot load ${what}: ${e && e.message ? e.message : e}`, { cause: e });
}

/**
 * Compiles the agentrt module once, so that many runtimes can be loaded
 * from it without compiling again.
 *
 * @param {string | URL | ArrayBuffer | ArrayBufferView | Response | WebAssembly.Module} wasm
 * @returns {Promise<WebAssembly.Module>}
 */
export async function compile(wasm) {
  if (wasm instanceof WebAssembly.Module) return wasm;
  if (isBytes(wasm)) {
    try {
      return await WebAssembly.compile(wasm);
    } catch (e) {
      throw loadFailed("the module bytes", e);
    }
  }
  let res;
  if (typeof Response !== "undefined" && wasm instanceof Response) {
    res = wasm;
  } else if (typeof wasm === "string" || wasm instanceof URL) {
    const url = toURL(wasm, "wasm");
    try {
      const got = await readURL(url, "response");
      if (!(typeof Response !== "undefined" && got instanceof Response)) return await WebAssembly.compile(got);
      res = got;
    } catch (e) {
      throw loadFailed(url.href, e);
    }
  } else {
    throw argError("wasm", "must be a URL, a string, bytes, a Response or a WebAssembly.Module");
  }
  try {
    const type = res.headers.get("content-type") || "";
    if (typeof WebAssembly.compileStreaming === "function" && type.startsWith("application/wasm")) {
      return await WebAssembly.compileStreaming(res);
    }
    return await WebAssembly.compile(await res.arrayBuffer());
  } catch (e) {
    throw loadFailed(res.url || "the module response", e);
  }
}

function loadScriptTag(url) {
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = url.href;
    s.async = true;
    s.onload = () => resolve();
    s.onerror = () => reject(new Error(`script ${url.href} failed to load`));
    (document.head || document.documentElement).appendChild(s);
  });
}

// loadGo returns the Go class of wasm_exec.js, loading the file from url
// once per realm when no Go class is defined yet.
async function loadGo(url) {
  if (typeof globalThis.Go === "function") return globalThis.Go;
  if (!goLoading) {
    goLoading = (async () => {
      const inPage = typeof document !== "undefined" && typeof document.createElement === "function" &&
        url.protocol !== "file:" && !globalThis.Deno;
      if (inPage) {
        await loadScriptTag(url);
      } else {
        const source = await readURL(url, "text");
        // wasm_exec.js is a classic script that defines globalThis.Go.
        new Function(source)();
      }
      if (typeof globalThis.Go !== "function") throw new Error(`${url.href} did not define Go`);
      return globalThis.Go;
    })();
    goLoading.catch(() => { goLoading = null; });
  }
  try {
    return await goLoading;
  } catch (e) {
    throw loadFailed(url.href, e);
  }
}

function uniqueName() {
  instances++;
  let rand = "";
  try {
    const b = new Uint8Array(4);
    crypto.getRandomValues(b);
    for (const x of b) rand += x.toString(16).padStart(2, "0");
  } catch {
    rand = Math.floor(Math.random() * 0xffffffff).toString(16);
  }
  let name = `${GLOBAL_PREFIX}${instances}_${rand}`;
  while (name in globalThis) name += "_";
  return name;
}

function nextTurn() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function checkConfig(options) {
  if (!isObject(options)) throw argError("options", "must be an object");
  const { wasm, wasmExec, systemPrompt, model, tools, limits } = options;
  if (wasm === undefined || wasm === null) throw argError("options.wasm", "is required");
  if (wasmExec !== undefined && typeof wasmExec !== "string" && !(wasmExec instanceof URL)) {
    throw argError("options.wasmExec", "must be a URL or a string");
  }
  if (systemPrompt !== undefined && typeof systemPrompt !== "string") {
    throw argError("options.systemPrompt", "must be a string");
  }
  if (model !== undefined && model !== "echo" && typeof model !== "function") {
    throw argError("options.model", 'must be "echo" or a function');
  }
  if (tools !== undefined) {
    if (!Array.isArray(tools)) throw argError("options.tools", "must be an array");
    tools.forEach((t, i) => {
      if (!isObject(t)) throw argError(`options.tools[${i}]`, "must be an object");
      if (typeof t.name !== "string" || t.name === "") throw argError(`options.tools[${i}].name`, "must be a non-empty string");
      if (typeof t.call !== "function") throw argError(`options.tools[${i}].call`, "must be a function");
    });
  }
  if (limits !== undefined && (!isObject(limits) || Array.isArray(limits))) {
    throw argError("options.limits", "must be an object");
  }
}

/**
 * Loads a new agentrt runtime: its own Go instance, published under its own
 * global name. The module is compiled from `wasm` unless it is a
 * WebAssembly.Module already (see compile). wasm_exec.js is loaded from
 * `wasmExec` when no `Go` class is defined yet (default: wasm_exec.js next
 * to the module's URL, or next to this file).
 *
 * @param {object} options
 * @returns {Promise<Runtime>}
 */
export async function loadRuntime(options) {
  checkConfig(options);
  const { wasm, wasmExec, systemPrompt, model, tools, limits } = options;
  let execURL;
  if (wasmExec !== undefined) execURL = toURL(wasmExec, "options.wasmExec");
  else if (typeof wasm === "string" || wasm instanceof URL) execURL = new URL("wasm_exec.js", toURL(wasm, "options.wasm"));
  else execURL = new URL("./wasm_exec.js", import.meta.url);

  const [module, Go] = await Promise.all([compile(wasm), loadGo(execURL)]);
  const name = uniqueName();
  const go = new Go();
  go.argv = ["agentrt"];
  go.env = { AGENTRT_GLOBAL: name };
  let instance;
  try {
    instance = await WebAssembly.instantiate(module, go.importObject);
  } catch (e) {
    throw loadFailed("an instance of the module", e);
  }
  let exited = false;
  go.run(instance).then(() => { exited = true; }, () => { exited = true; });
  let api = globalThis[name];
  for (let turn = 0; !isObject(api) && !exited && turn < PUBLISH_TURNS; turn++) {
    await nextTurn();
    api = globalThis[name];
  }
  if (!isObject(api) || typeof api.createRuntime !== "function") {
    delete globalThis[name];
    throw new AgentrtError("load_failed", `agentrt: the module did not publish globalThis.${name}` +
      (exited ? " (it exited)" : ""));
  }
  const config = {};
  if (systemPrompt !== undefined) config.systemPrompt = systemPrompt;
  if (model !== undefined) config.model = model;
  if (tools !== undefined) config.tools = tools;
  if (limits !== undefined) config.limits = limits;
  let core;
  try {
    core = api.createRuntime(config);
    // The module answers a refused configuration with an Error value (Go
    // cannot throw into JavaScript).
    if (core instanceof Error || !isObject(core)) throw core;
  } catch (e) {
    delete globalThis[name];
    throw toError(e, "invalid_argument");
  }
  return new Runtime(core, name, typeof api.version === "string" ? api.version : "");
}

// ---------------------------------------------------------------------------
// Runtime

function checkRunArgs(sessionId, input, policy, options, where) {
  if (typeof sessionId !== "string") throw argError(`${where}sessionId`, "must be a string");
  if (typeof input !== "string") throw argError(`${where}input`, "must be a string");
  if (policy !== undefined && policy !== null && (!isObject(policy) || Array.isArray(policy))) {
    throw argError(`${where}policy`, "must be an object");
  }
  if (options === undefined || options === null) return;
  if (!isObject(options)) throw argError("options", "must be an object");
  if (options.runId !== undefined && typeof options.runId !== "string") throw argError(`${where}runId`, "must be a string");
  if (options.onEvent !== undefined && typeof options.onEvent !== "function") throw argError(`${where}onEvent`, "must be a function");
  if (options.signal !== undefined && options.signal !== null && !isSignal(options.signal)) {
    throw argError(`${where}signal`, "must be an AbortSignal");
  }
}

function checkHistory(history, name) {
  if (history !== undefined && history !== null && !Array.isArray(history) && !(history instanceof Uint8Array)) {
    throw argError(name, "must be an array or a Uint8Array");
  }
}

function checkRequest(req) {
  if (!isObject(req)) throw argError("request", "must be an object");
  checkRunArgs(req.sessionId, req.input, req.policy, req, "request.");
  checkHistory(req.history, "request.history");
}

/**
 * A runtime: one Go instance of the module and the sessions it holds.
 * Created by loadRuntime; close() frees it.
 */
class Runtime {
  #core;
  #name;
  #version;
  #closed = false;
  #runs = 0;

  constructor(core, name, version) {
    this.#core = core;
    this.#name = name;
    this.#version = version;
  }

  /** The module's version. */
  get version() { return this.#version; }

  /** The global name this runtime's instance published its exports at. */
  get globalName() { return this.#name; }

  /** Whether close() was called. */
  get closed() { return this.#closed; }

  #live() {
    if (this.#closed) throw new AgentrtError("invalid_argument", "agentrt: the runtime is closed");
    return this.#core;
  }

  // #start runs one turn; it is the body of run(), stream() and the four
  // ADR entry points. Arguments are checked by the caller.
  async #start(sessionId, input, policy, history, withHistory, options, onStarted) {
    const core = this.#live();
    const signal = options && options.signal ? options.signal : undefined;
    if (signal && signal.aborted) throw abortError(signal.reason);
    const packed = withHistory ? packHistory(history ?? []) : undefined;
    const runId = options && options.runId !== undefined ? options.runId : `glue-${++this.#runs}`;
    const onEvent = options && options.onEvent;
    const modOptions = { runId };
    if (options && options.inspect) modOptions.inspect = true;
    if (onEvent) {
      modOptions.onEvent = (ev) => {
        try {
          onEvent(ev);
        } catch (e) {
          reportCallbackError(e);
        }
      };
    }
    let pending;
    try {
      // The module's methods are called as plain functions (they do not
      // use `this`): a receiver would cost the module one more value to
      // take in on every call.
      let call;
      if (withHistory && policy) {
        call = core.startRunWithPolicyAndHistory;
        pending = call(sessionId, input, policy, packed, modOptions);
      } else if (withHistory) {
        call = core.startRunWithHistory;
        pending = call(sessionId, input, packed, modOptions);
      } else if (policy) {
        call = core.startRunWithPolicy;
        pending = call(sessionId, input, policy, modOptions);
      } else {
        call = core.startRun;
        pending = call(sessionId, input, modOptions);
      }
    } catch (e) {
      throw toError(e);
    }
    if (onStarted) onStarted(runId);
    let aborted = false;
    const onAbort = () => {
      if (core.cancelRun(runId)) aborted = true;
    };
    if (signal) signal.addEventListener("abort", onAbort, { once: true });
    try {
      return await pending;
    } catch (e) {
      if (aborted) throw abortError(e);
      throw toError(e);
    } finally {
      if (signal) signal.removeEventListener("abort", onAbort);
    }
  }

  /**
   * Runs one turn. See RunRequest in glue.d.ts.
   * @param {object} request
   * @returns {Promise<object>} the Result
   */
  async run(request) {
    checkRequest(request);
    const { sessionId, input, policy, history } = request;
    return this.#start(sessionId, input, policy ?? undefined, history, history !== undefined && history !== null, request);
  }

  /**
   * Runs one turn and yields its events as they come; the last is
   * run.completed with `result`. A refusal, failure or cancel makes the
   * iterator throw; leaving the loop early cancels the run.
   * @param {object} request
   * @returns {AsyncIterableIterator<object>}
   */
  stream(request) {
    checkRequest(request);
    this.#live();
    const { sessionId, input, policy, history } = request;
    const userOnEvent = request.onEvent;
    const queue = [];
    const waiting = [];
    let started = null;
    let runId;
    let settled = false;
    let failure = null;
    let finished = false;
    let heldCompleted = null;
    let lastSeq = 0;
    const push = (item) => {
      queue.push(item);
      for (const w of waiting.splice(0)) w();
    };
    const onEvent = (ev) => {
      if (settled) return;
      if (isObject(ev) && typeof ev.seq === "number") lastSeq = ev.seq;
      if (userOnEvent) {
        try {
          userOnEvent(ev);
        } catch (e) {
          reportCallbackError(e);
        }
      }
      if (isObject(ev) && ev.type === "run.completed" && ev.result === undefined) heldCompleted = ev;
      else push({ event: ev });
    };
    const start = () => {
      const options = { runId: request.runId, signal: request.signal, inspect: request.inspect, onEvent };
      started = this.#start(sessionId, input, policy ?? undefined, history,
        history !== undefined && history !== null, options, (id) => { runId = id; })
        .then((result) => {
          if (settled) return;
          settled = true;
          let done = heldCompleted;
          if (done) done.result = result;
          else if (!queue.some((q) => q.event && q.event.type === "run.completed")) {
            done = { type: "run.completed", runId: result.runId, sessionId: result.sessionId, seq: lastSeq + 1, result };
          }
          if (done) push({ event: done });
          push({ end: true });
        }, (err) => {
          if (settled) return;
          settled = true;
          push({ error: err });
        });
    };
    const iterator = {
      next: async () => {
        if (finished) return { value: undefined, done: true };
        if (!started) start();
        while (queue.length === 0) {
          await new Promise((resolve) => { waiting.push(resolve); });
          if (finished) return { value: undefined, done: true };
        }
        const item = queue.shift();
        if (item.event !== undefined) return { value: item.event, done: false };
        finished = true;
        if (item.error) throw item.error;
        return { value: undefined, done: true };
      },
      return: async (value) => {
        if (!finished) {
          finished = true;
          for (const w of waiting.splice(0)) w();
          if (started) {
            if (!settled && runId !== undefined && !this.#closed) {
              try { this.#core.cancelRun(runId); } catch { /* it ends anyway */ }
            }
            await started;
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

  /**
   * The ADR entry point: a turn with the default policy and no history.
   * @returns {Promise<object>}
   */
  async startRun(sessionId, input, options) {
    checkRunArgs(sessionId, input, undefined, options, "");
    return this.#start(sessionId, input, undefined, undefined, false, options);
  }

  /**
   * The ADR entry point: a turn with a policy and no history.
   * @returns {Promise<object>}
   */
  async startRunWithPolicy(sessionId, input, policy, options) {
    checkRunArgs(sessionId, input, policy, options, "");
    return this.#start(sessionId, input, policy ?? {}, undefined, false, options);
  }

  /**
   * The ADR entry point: a turn that seeds an empty session from history.
   * @returns {Promise<object>}
   */
  async startRunWithHistory(sessionId, input, history, options) {
    checkRunArgs(sessionId, input, undefined, options, "");
    checkHistory(history, "history");
    return this.#start(sessionId, input, undefined, history, true, options);
  }

  /**
   * The ADR entry point: a turn that seeds the session from history as
   * policy.seedMode says.
   * @returns {Promise<object>}
   */
  async startRunWithPolicyAndHistory(sessionId, input, policy, history, options) {
    checkRunArgs(sessionId, input, policy, options, "");
    checkHistory(history, "history");
    return this.#start(sessionId, input, policy ?? {}, history, true, options);
  }

  /**
   * Cancels the active run with runId; reports whether this call did.
   * @param {string} runId
   * @returns {boolean}
   */
  cancelRun(runId) {
    if (typeof runId !== "string") throw argError("runId", "must be a string");
    return Boolean(this.#call(() => this.#live().cancelRun(runId)));
  }

  /**
   * A snapshot of the session with id, or null when there is none.
   * @param {string} id
   * @returns {object | null}
   */
  session(id) {
    if (typeof id !== "string") throw argError("id", "must be a string");
    return this.#call(() => this.#live().getSession(id)) ?? null;
  }

  /**
   * Removes the session with id; reports whether there was one.
   * @param {string} id
   * @returns {boolean}
   */
  deleteSession(id) {
    if (typeof id !== "string") throw argError("id", "must be a string");
    return Boolean(this.#call(() => this.#live().deleteSession(id)));
  }

  /**
   * The ids of all sessions, sorted.
   * @returns {string[]}
   */
  listSessions() {
    return this.#call(() => this.#live().listSessions());
  }

  /**
   * The runtime's counters.
   * @returns {object}
   */
  stats() {
    return this.#call(() => this.#live().stats());
  }

  /**
   * Cancels every active run, and frees the instance: its global is
   * deleted and every later call fails. Idempotent.
   */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    const core = this.#core;
    this.#core = null;
    try {
      core.close();
    } catch {
      // The instance is being dropped: nothing to report.
    } finally {
      delete globalThis[this.#name];
    }
  }

  #call(f) {
    try {
      return f();
    } catch (e) {
      throw toError(e);
    }
  }
}
