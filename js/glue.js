// agentrt glue: the host API of the agentrt WebAssembly module.
//
// One dependency-free ES module for browsers, webviews, Node, Bun, Deno and
// workerd. It loads the module (and the Go toolchain's wasm_exec.js when the
// page has no `Go` yet), gives every runtime its own Go instance and global
// name, sends history in the packed format, and turns AbortSignals, event
// callbacks and async iteration into the module's calls. See docs/glue.md.
//
// Error convention: functions that return a Promise reject, functions that
// return a value throw, and what they reject or throw is always an
// AgentrtError with a stable `code` (bad arguments are TypeErrors that are
// AgentrtErrors too: their message names the argument, their `code` is
// "invalid_argument").

import { packHistory as pack, toModuleHistory as readHistory, readReply, PackMemo, PackScratch, mirrorInto } from "./history.js";
import {
  ACTION, KIND, Writer, writeBegin, writeModelReply, writeToolResult, writeDelta, writeCommit, readAction, readRefused, readCommitted,
} from "./wire.js";

/** Prefix of the global names the glue gives its instances (AGENTRT_GLOBAL). */
const GLOBAL_PREFIX = "agentrt_";

/** Prefixes of generated run ids: the glue's, and the runtime's own. */
const GLUE_RUN_PREFIX = "glue:";
const CORE_RUN_PREFIX = "agentrt:";

let instances = 0;
/** wasm_exec.js loads in progress, by URL. */
const goLoads = new Map();
/** The TypeErrors of bad arguments, which are AgentrtErrors too. */
const argErrors = new WeakSet();
const encoder = new TextEncoder();

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

  /**
   * `e instanceof AgentrtError` is true for every error the glue rejects or
   * throws, the TypeErrors of bad arguments included.
   */
  static [Symbol.hasInstance](v) {
    return Function.prototype[Symbol.hasInstance].call(this, v) || (this === AgentrtError && isObject(v) && argErrors.has(v));
  }
}

function argError(name, what) {
  const err = new TypeError(`agentrt: ${name} ${what}`);
  err.code = "invalid_argument";
  argErrors.add(err);
  return err;
}

// describe returns a thrown value's text without trusting it: a host's
// exception may be a Proxy or have a throwing getter.
function describe(e) {
  try {
    if (e instanceof Error && typeof e.message === "string") return e.message;
    return String(e);
  } catch {
    return "(a value that cannot be shown)";
  }
}

function closedError() {
  return new AgentrtError("invalid_argument", "agentrt: the runtime is closed");
}

// lostError is the rejection of a call that met an instance whose Go
// program had exited (a fatal error such as running out of memory).
function lostError(cause) {
  return new AgentrtError("internal", "agentrt: the module's Go program exited" +
    (cause === undefined ? "" : ` (${describe(cause)})`) +
    "; a fresh instance serves the next call, its sessions cold until the host's history seeds them",
    { cause });
}

function abortError(cause) {
  return new AgentrtError("cancelled", "agentrt: the run was aborted", { name: "AbortError", cause });
}

function timeoutError() {
  return new AgentrtError("timeout", "agentrt: the run's policy.timeoutMs passed", { name: "TimeoutError" });
}

// toError returns e as an AgentrtError: one is returned as it is; an
// error with a string code (the module's) is copied with its code, index
// and name; anything else (a host's exception) gets fallbackCode.
function toError(e, fallbackCode = "internal") {
  if (e instanceof AgentrtError) return e;
  let code, message, index, name;
  try {
    if (isObject(e) && typeof e.code === "string") {
      code = e.code;
      message = typeof e.message === "string" ? e.message : code;
      index = e.index;
      name = e.name === "AbortError" ? e.name : undefined;
    }
  } catch {
    code = undefined;
  }
  if (code === undefined) return new AgentrtError(fallbackCode, `agentrt: ${describe(e)}`, { cause: e });
  return new AgentrtError(code, message, { index, cause: e, name });
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

// reportCallbackError reports an exception of a host callback like an event
// listener's: reportError where the host has it, else console.error (Node
// has no reportError, and an uncaught exception would end its process).
function reportCallbackError(e) {
  try {
    if (typeof globalThis.reportError === "function") {
      globalThis.reportError(e);
      return;
    }
  } catch { /* fall through */ }
  try {
    console.error("agentrt: an onEvent callback threw:", e);
  } catch { /* nowhere to report it */ }
}

// ---------------------------------------------------------------------------
// History: read by js/history.js, the rules of docs/contract.md

function historyError(index, message) {
  return new AgentrtError("invalid_history", message, index >= 0 ? { index } : {});
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

// packagedModule is the URL of the agentrt.wasm shipped next to this file
// (the npm package's layout). Bundlers see the literal and emit the file.
function packagedModule() {
  return new URL("./agentrt.wasm", import.meta.url);
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
export async function compile(wasm = packagedModule()) {
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
//
// Loads are shared by URL: a call with another URL (a retry after a wrong
// path) starts its own load instead of waiting for one that will fail, and
// a failed load is forgotten, so a retry starts afresh.
async function loadGo(url) {
  if (typeof globalThis.Go === "function") return globalThis.Go;
  let loading = goLoads.get(url.href);
  if (!loading) {
    loading = (async () => {
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
    goLoads.set(url.href, loading);
    loading.then(() => goLoads.delete(url.href), () => goLoads.delete(url.href));
  }
  try {
    return await loading;
  } catch (e) {
    throw loadFailed(url.href, e);
  }
}

function uniqueName() {
  instances++;
  let rand = "";
  for (const x of crypto.getRandomValues(new Uint8Array(4))) rand += x.toString(16).padStart(2, "0");
  let name = `${GLOBAL_PREFIX}${instances}_${rand}`;
  while (name in globalThis) name += "_";
  return name;
}

function checkConfig(options) {
  if (!isObject(options)) throw argError("options", "must be an object");
  const { wasm, wasmExec, systemPrompt, model, tools, limits } = options;
  if (wasm === null) throw argError("options.wasm", "must be a URL, bytes, a Response or a WebAssembly.Module, or omitted");
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
 * WebAssembly.Module already (see compile); without `wasm`, from the
 * agentrt.wasm next to this file, as the npm package ships it. wasm_exec.js is loaded from
 * `wasmExec` when no `Go` class is defined yet (default: wasm_exec.js next
 * to the module's URL, or next to this file).
 *
 * @param {object} options
 * @returns {Promise<Runtime>}
 */
export async function loadRuntime(options = {}) {
  let wasm, wasmExec, systemPrompt, model, tools, limits, execURL;
  try {
    checkConfig(options);
    ({ wasmExec, systemPrompt, model, tools, limits } = options);
    wasm = options.wasm === undefined ? packagedModule() : options.wasm;
    if (wasmExec !== undefined) execURL = toURL(wasmExec, "options.wasmExec");
    else if (typeof wasm === "string" || wasm instanceof URL) execURL = new URL("wasm_exec.js", toURL(wasm, "options.wasm"));
    else execURL = new URL("./wasm_exec.js", import.meta.url);
  } catch (e) {
    throw toError(e, "invalid_argument");
  }

  const [module, Go] = await Promise.all([compile(wasm), loadGo(execURL)]);
  const config = {};
  if (systemPrompt !== undefined) config.systemPrompt = systemPrompt;
  if (model !== undefined) config.model = model;
  if (tools !== undefined) config.tools = tools;
  if (limits !== undefined) config.limits = limits;
  const boot = { module, Go, config };
  return new Runtime(boot, await startInstance(boot));
}

// startInstance starts a Go instance of boot.module under a new global name
// and creates its runtime from boot.config. It resolves with the instance:
// { go, name, core, version, dead, pending, onExit }.
async function startInstance(boot) {
  const name = uniqueName();
  const go = new boot.Go();
  go.argv = ["agentrt"];
  go.env = { AGENTRT_GLOBAL: name };
  quietAfterExit(go);
  let instance;
  try {
    instance = await WebAssembly.instantiate(boot.module, go.importObject);
  } catch (e) {
    throw loadFailed("an instance of the module", e);
  }
  const inst = { go, name, core: null, fast: null, version: "", dead: false, pending: new Set(), onExit: null };
  const exited = () => {
    if (inst.onExit) inst.onExit();
  };
  // go.run runs main until it blocks: a module that publishes has done so
  // when go.run returns.
  go.run(instance).then(exited, exited);
  const api = globalThis[name];
  if (!isObject(api) || typeof api.createRuntime !== "function") {
    delete globalThis[name];
    throw new AgentrtError("load_failed", `agentrt: the module did not publish globalThis.${name}` +
      (go.exited ? " (it exited)" : ""));
  }
  let core;
  try {
    core = api.createRuntime(boot.config);
    // The module answers a refused configuration with an Error value (Go
    // cannot throw into JavaScript).
    if (core instanceof Error || !isObject(core)) throw core;
  } catch (e) {
    delete globalThis[name];
    throw toError(e, "invalid_argument");
  }
  try {
    inst.fast = new FastPath(instance.exports, core.fastPath, boot.config, () => core.listSessions());
  } catch (e) {
    delete globalThis[name];
    throw e;
  }
  inst.core = core;
  inst.version = typeof api.version === "string" ? api.version : "";
  return inst;
}

// quietAfterExit makes calls into an instance whose Go program has exited
// return undefined instead of throwing "Go program has already exited".
// Those calls come from the module's own callbacks (a model's Promise
// settling, a timer firing) as well as from the glue; thrown from a
// callback, the exception would be uncaught, and end a Node or Bun process.
// The glue checks go.exited around its own calls instead. The Go runtime's
// own timers are cleared: wasm_exec.js resumes Go for a timer until Go
// deletes it, which a Go program that exited never does.
function quietAfterExit(go) {
  const resume = go._resume;
  go._resume = function (...args) {
    if (!this.exited) return resume.apply(this, args);
    for (const t of this._scheduledTimeouts.values()) clearTimeout(t);
    this._scheduledTimeouts.clear();
    return undefined;
  };
}

// disposeInstance closes an instance's runtime and deletes its global.
function disposeInstance(inst) {
  try {
    if (inst.fast) inst.fast.close();
    if (!inst.dead && !inst.go.exited) inst.core.close();
  } catch {
    // The instance is being dropped: nothing to report.
  } finally {
    delete globalThis[inst.name];
  }
}

// ---------------------------------------------------------------------------
// The fast path: turns driven through the module's wasmexport functions
// over the wire (docs/wire.md), with a mirror of each session's messages

const NO_TOOLS = Object.freeze([]);

// The limits a quick turn checks, when the configuration leaves them to
// the module's defaults (core.DefaultLimits).
const DEFAULT_MAX_MESSAGES = 100000;
const DEFAULT_MAX_MESSAGE_BYTES = 1 << 20;

// A turn whose policy allows every tool, for #allowedSpecs.
const ALL_TOOLS = Object.freeze({ allowed: undefined });

// A quick turn's model has no event listener: its deltas go nowhere, as
// they do on a turn without onEvent.
function ignoreDelta() {}

/**
 * ModelRequest is what a JavaScript model is handed (ModelRequest in
 * glue.d.ts). A class gives every request one shape: an object literal
 * with a getter costs V8 a new accessor on every request, measured at
 * 0.4-0.8 µs against 0.02 µs for this. `signal` is a getter of the
 * prototype, and its AbortController is made when first read, so a model
 * that never looks at it costs none; `delta` is the request's own
 * function, so that it can be passed on alone.
 */
class ModelRequest {
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
function checkPolicy(p) {
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

// text describes a thrown or rejected value as the module does: an
// Error's message, a string as it is, anything else as String(v).
function text(v) {
  try {
    let s;
    if (typeof v === "string") s = v;
    else if (isObject(v) && typeof v.message === "string") s = v.message;
    else s = String(v);
    return s.length > 1024 ? s.slice(0, 1024) + "..." : s;
  } catch {
    return "(a value that cannot be shown)";
  }
}

function isThenable(v) {
  return (isObject(v) || typeof v === "function") && typeof v.then === "function";
}

// ReplyRefused carries readReply's refusal of a model's reply.
class ReplyRefused extends Error {}

function refusedError(e) {
  return new AgentrtError(e.code, e.message, { index: e.index });
}

// How many turns end between two prunings of the mirrors of sessions the
// module no longer holds (evicted).
const PRUNE_EVERY = 256;

/**
 * FastPath runs turns through the module's wasmexport functions: one
 * export call per model or tool answer, frames in linear memory, and a
 * mirror of each session's messages from which model requests are
 * sliced. See docs/adr/0007-js-boundary.md.
 */
class FastPath {
  #ex;
  #n;
  #w = new Writer(4096);
  // The last history packed: a host that passes its whole history on
  // every turn has only its new messages encoded.
  #memo = new PackMemo();
  #memoSession = undefined;
  // The buffer other histories are packed into: begin copies the bytes
  // into its frame before anything packs again.
  #scratch = new PackScratch();
  #modelFn;
  #system;
  #tools = new Map();
  #specs = [];
  #mirrors = new Map();
  #active = new Map(); // runId -> turn
  #waiting = new Map(); // sessionId -> [wake]
  #ended = 0;
  #listSessions;
  // Quick turns (docs/adr/0012-quick-turn.md): #busy counts the turns in
  // flight per session, #pending holds the quick turns whose model is
  // running and that have not begun in the module (innermost last), and
  // the limits are the two a quick turn checks before calling its model.
  #busy = new Map(); // sessionId -> turns in flight
  #pending = [];
  #quickOK;
  #maxMessages = DEFAULT_MAX_MESSAGES;
  #maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;

  constructor(exports, number, config, listSessions) {
    this.#listSessions = listSessions;
    if (!exports || typeof exports.agentrt_begin !== "function" || !(exports.mem instanceof WebAssembly.Memory) ||
      !Number.isInteger(number)) {
      throw new AgentrtError("load_failed", "agentrt: the module has no fast path (agentrt_begin)");
    }
    this.#ex = exports;
    this.#n = number;
    this.#modelFn = typeof config.model === "function" ? config.model : null;
    this.#system = typeof config.systemPrompt === "string" ? config.systemPrompt : "";
    this.#quickOK = this.#modelFn !== null && typeof exports.agentrt_commit === "function" &&
      typeof String.prototype.toWellFormed === "function" && this.#readLimits(config.limits);
    for (const t of config.tools ?? []) {
      this.#tools.set(t.name, t);
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
      this.#specs.push(spec);
    }
  }

  // #readLimits takes the two limits a quick turn checks from the
  // configuration the module was created with (0 or absent: the
  // default); it reports false, and quick turns stay off, when they
  // cannot be read.
  #readLimits(limits) {
    if (limits === undefined || limits === null) return true;
    try {
      const n = limits.maxMessagesPerSession;
      const b = limits.maxMessageBytes;
      if (n !== undefined && n !== null && !(Number.isSafeInteger(n) && n >= 0)) return false;
      if (b !== undefined && b !== null && !(Number.isSafeInteger(b) && b >= 0)) return false;
      if (n > 0) this.#maxMessages = n;
      if (b > 0) this.#maxMessageBytes = b;
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Every call into the module comes here first: a quick turn whose model
   * is running begins in the module now, as it would have before its
   * model was called, so that the call meets the module as it would
   * without quick turns.
   */
  enter() {
    if (this.#pending.length !== 0) {
      for (const q of this.#pending.splice(0)) this.#upgrade(q);
    }
  }

  // #call writes frame into the module's input buffer, calls fn and
  // returns the answer's bytes (valid until the next call).
  #call(fn, frame) {
    if (this.#pending.length !== 0) {
      // Beginning the quick turns writes their frames over this one.
      frame = frame.slice();
      this.enter();
    }
    const ex = this.#ex;
    const at = ex.agentrt_in(frame.length);
    new Uint8Array(ex.mem.buffer, at, frame.length).set(frame);
    return this.#out(fn(this.#n, frame.length));
  }

  #out(n) {
    return new Uint8Array(this.#ex.mem.buffer, this.#ex.agentrt_out(), n);
  }

  // #action decodes an action frame, throwing a refusal as its error.
  #action(bytes) {
    if (bytes.length > 4 && bytes[4] === KIND.refused) throw refusedError(readRefused(bytes));
    return readAction(bytes);
  }

  /** Begins a turn; throws (a refusal) or returns the turn to drive. */
  begin(sessionId, input, policy, history, withHistory, runId, inspect, onEvent) {
    policy = checkPolicy(policy);
    const mirror = this.#mirrors.get(sessionId);
    let packed;
    let historyMirror;
    if (withHistory) {
      // A cold session's mirror is built while packing, and only where a
      // JavaScript model will be handed the messages.
      let onRecord;
      if (mirror === undefined && this.#modelFn !== null && Array.isArray(history)) {
        onRecord = mirrorInto(historyMirror = []);
      }
      // The memo serves the session of the last history packed (a host
      // passing its history again). Another session's history is packed
      // plainly: remembering it costs more than a cold seed should, and
      // the memo starts with the session's next history.
      if (this.#memoSession === sessionId) packed = pack(history ?? [], historyError, onRecord, this.#memo);
      else {
        this.#memo.forget();
        packed = pack(history ?? [], historyError, onRecord, undefined, this.#scratch);
        this.#memoSession = sessionId;
      }
    }
    const frame = writeBegin(this.#w.reset(), {
      sessionId, input, runId, history: packed, inspect, events: onEvent !== undefined,
      historyMirror: historyMirror !== undefined, policy,
      // A history the glue packed from an array holds only strings it
      // encoded itself: valid UTF-8 (docs/adr/0011-history-valid-flag.md).
      historyValid: packed !== undefined && packed !== history,
      mirrorGen: mirror ? mirror.gen : 0, mirrorLen: mirror ? mirror.msgs.length : 0,
    });
    const first = this.#action(this.#call(this.#ex.agentrt_begin, frame));
    const turn = {
      handle: first.handle, runId, sessionId, onEvent, historyMirror, first,
      timeoutMs: policy ? policy.timeoutMs ?? 0 : 0, timer: undefined, expired: false,
      allowed: policy && Array.isArray(policy.allowedTools) ? policy.allowedTools : undefined,
      wake: null, interrupted: false, closed: false, request: undefined, gen: 0,
    };
    this.#active.set(runId, turn);
    this.#busy.set(sessionId, (this.#busy.get(sessionId) ?? 0) + 1);
    return turn;
  }

  /**
   * Whether a turn without history, policy, events, inspection or a
   * host's run id may be a quick turn: a JavaScript model, a mirror of
   * the session, no turn of it in flight, and an input that a turn would
   * append (not the mirror's last message again) within the limits.
   */
  quickable(sessionId, input) {
    if (!this.#quickOK || this.#busy.get(sessionId) > 0) return false;
    const m = this.#mirrors.get(sessionId);
    if (m === undefined) return false;
    const msgs = m.msgs;
    const n = msgs.length;
    if (n === 0 || n + 2 > this.#maxMessages || input.length * 3 > this.#maxMessageBytes) return false;
    const last = msgs[n - 1];
    return !(last.role === "user" && last.content === input.toWellFormed());
  }

  /**
   * Runs a quick turn (docs/adr/0012-quick-turn.md): the model first, on
   * the session's mirror and the input, then one commit of the input and
   * the reply. A reply the module cannot commit as it is (a thenable, tool
   * calls, a failure, a refused or stale commit), or a model that called
   * the module, gets the turn begun in the module as it would have been
   * without quick turns; the answer in hand is fed to it. Returns what
   * drive returns.
   */
  quick(sessionId, input, runId) {
    const m = this.#mirrors.get(sessionId);
    const n = m.msgs.length;
    const inputMsg = Object.freeze({ role: "user", content: input.toWellFormed() });
    // One copy of the right length: slicing first and pushing after
    // would copy the session twice once the copy grows.
    const msgs = m.msgs;
    msgs.push(inputMsg);
    const messages = msgs.slice();
    msgs.pop();
    const req = new ModelRequest(runId, sessionId, this.#system, messages, this.#allowedSpecs(ALL_TOOLS), 1, ignoreDelta);
    const q = { sessionId, input, runId, gen: m.gen, n, req, turn: undefined, error: undefined, matched: false };
    this.#busy.set(sessionId, (this.#busy.get(sessionId) ?? 0) + 1);
    this.#pending.push(q);
    let v;
    let failure;
    let reply;
    let thenable = false;
    try {
      try {
        v = this.#modelFn(req);
      } catch (e) {
        failure = "model threw: " + text(e);
      }
      // The reply is read while the turn is still pending: a getter of it
      // that calls the module must find the turn begun, as it does on the
      // ordinary path, where the reply is read by a turn that holds its
      // session.
      if (failure === undefined && q.turn === undefined && q.error === undefined) {
        thenable = isThenable(v);
        if (!thenable) {
          try {
            reply = readReply(v, (message) => new ReplyRefused(message));
          } catch (e) {
            failure = e instanceof ReplyRefused ? e.message : "the model's reply cannot be read: " + text(e);
          }
        }
      }
    } finally {
      const at = this.#pending.lastIndexOf(q);
      if (at >= 0) this.#pending.length = at;
      this.#unbusy(sessionId);
    }
    if (q.turn === undefined && q.error === undefined) {
      // Nothing called the module while the model ran: it is as it was.
      if (reply !== undefined && reply.toolCalls.length === 0) {
        const res = this.#commit(q, m, inputMsg, reply.content);
        if (res !== undefined) return res;
      }
      this.#upgrade(q);
    }
    if (q.error !== undefined) throw q.error;
    const turn = q.turn;
    if (!q.matched) return this.drive(turn);
    const held = { v, reply, failure };
    let next;
    try {
      next = this.#feedHeld(turn, req, held);
    } catch (e) {
      this.#end(turn);
      throw e;
    }
    if (next instanceof Promise) return this.#driveAsync(turn, next);
    turn.first = next;
    return this.drive(turn);
  }

  // #commit stores the quick turn q in one call and returns its Result,
  // or undefined when the module did not store it (stale or refused).
  #commit(q, m, inputMsg, content) {
    const frame = writeCommit(this.#w.reset(), q.sessionId, q.runId, q.input, q.gen, q.n, content);
    const out = this.#call(this.#ex.agentrt_commit, frame);
    if (out.length < 5 || out[4] !== KIND.committed) return undefined;
    const count = readCommitted(out);
    if (count < 0) return undefined;
    const reply = Object.freeze({ role: "assistant", content: content.toWellFormed() });
    m.msgs.push(inputMsg, reply);
    if (++this.#ended % PRUNE_EVERY === 0) this.#prune();
    return {
      runId: q.runId, sessionId: q.sessionId, status: "completed", reply, appended: [inputMsg, reply],
      seed: { mode: "none", seeded: 0, skippedSystem: 0 }, messageCount: count, modelCalls: [{ step: 1, messageCount: q.n + 1 }],
    };
  }

  // #upgrade begins the quick turn q in the module, as it would have
  // begun before its model was called. When the module asks for the model
  // on the very window the model was handed, the model's answer is the
  // answer to that call (q.matched); otherwise the first request's signal
  // aborts and the turn goes on as any other, calling the model again.
  #upgrade(q) {
    let turn;
    try {
      turn = this.begin(q.sessionId, q.input, undefined, undefined, false, q.runId, false, undefined);
    } catch (e) {
      q.error = e;
      ModelRequest.stop(q.req, e);
      return;
    }
    q.turn = turn;
    const a = turn.first;
    if (a.kind === ACTION.model && a.step === 1 && a.generation === q.gen && !a.adopt && a.from === q.n &&
      a.start === 0 && a.end === q.n + 1) {
      turn.first = undefined;
      this.#messages(turn, a);
      turn.request = q.req;
      q.matched = true;
      return;
    }
    ModelRequest.stop(q.req, new AgentrtError("cancelled", "agentrt: the session changed while the model ran; it is asked again"));
  }

  // #feedHeld feeds the answer a quick turn's model gave (the reply read
  // already, a failure, or a value or thenable to read) to its turn, as
  // #callModel would have, and returns the next action or a Promise of it.
  #feedHeld(turn, req, held) {
    const handle = turn.handle;
    const v = held.v;
    if (held.failure === undefined && held.reply === undefined && isThenable(v)) {
      return this.#settle(turn, v).then((s) => {
        turn.request = undefined;
        if (s === null) {
          ModelRequest.stop(req, turn.expired ? timeoutError() : abortError());
          return this.#resume(turn);
        }
        return s.ok ? this.#feedModel(turn, handle, s.value) : this.#feedModel(turn, handle, undefined, "model rejected: " + text(s.reason));
      });
    }
    turn.request = undefined;
    if (held.reply === undefined) return this.#feedModel(turn, handle, v, held.failure);
    if (turn.interrupted) return this.#resume(turn);
    return this.#action(this.#call(this.#ex.agentrt_feed, writeModelReply(this.#w.reset(), handle, held.reply)));
  }

  // #unbusy counts a turn of sessionId out. A count of 0 stays in the
  // map until the session goes (forget, #prune): deleting and adding a
  // key on every turn costs V8 more than the whole check it serves.
  #unbusy(sessionId) {
    const k = this.#busy.get(sessionId);
    if (k !== undefined && k > 0) this.#busy.set(sessionId, k - 1);
  }

  // #interrupt stops waiting for the turn's model, tool or session: it is
  // asked for its next action at once.
  #interrupt(turn) {
    turn.interrupted = true;
    if (turn.wake) turn.wake();
  }

  /** Cancels the run with runId through core (cancelRun); reports whether this call did. */
  cancel(core, runId) {
    this.enter();
    const ok = core.cancelRun(runId) === true;
    const turn = this.#active.get(runId);
    if (ok && turn) this.#interrupt(turn);
    return ok;
  }

  /** Drops the mirror of the session with id (it is being deleted). */
  forget(id) {
    this.#mirrors.delete(id);
    if (this.#busy.get(id) === 0) this.#busy.delete(id);
  }

  /** Drops every mirror and stops waiting turns (the runtime closed). */
  close() {
    this.#mirrors.clear();
    for (const turn of this.#active.values()) this.#interrupt(turn);
  }

  /** Aborts the signals of the model requests in flight (the instance died). */
  abortModels(reason) {
    for (const turn of this.#active.values()) if (turn.request) ModelRequest.stop(turn.request, reason);
  }

  // #prune drops the mirrors of sessions the module no longer holds.
  #prune() {
    if ((this.#mirrors.size === 0 && this.#busy.size === 0) || this.#listSessions === undefined) return;
    const live = new Set(this.#listSessions());
    for (const id of this.#mirrors.keys()) if (!live.has(id)) this.#mirrors.delete(id);
    for (const [id, k] of this.#busy) if (k === 0 && !live.has(id)) this.#busy.delete(id);
  }

  // #events hands a frame's events to the turn's listener, in the shape
  // of the module's events; run.completed carries the result.
  #events(turn, events, a) {
    for (const e of events) {
      const ev = { type: e.type, runId: turn.runId, sessionId: turn.sessionId, seq: e.seq };
      if (e.seed !== undefined) ev.seed = e.seed;
      if (e.type === "model.delta") {
        ev.delta = e.delta;
        ev.step = e.step;
      }
      if (e.toolCall !== undefined) ev.toolCall = e.toolCall;
      if (e.message !== undefined) ev.message = e.message;
      if (e.type === "run.completed" && a.kind === ACTION.done) ev.result = a.result;
      if (e.error !== undefined) ev.error = refusedError(e.error);
      turn.onEvent(ev);
    }
  }

  async #callTool(turn, a) {
    const call = a.call;
    const tool = this.#tools.get(call.name);
    let out;
    let failure;
    let args;
    if (call.arguments === "") args = {};
    else {
      try {
        args = JSON.parse(call.arguments);
      } catch (e) {
        failure = "arguments are not valid JSON: " + text(e);
      }
    }
    if (failure === undefined) {
      let v;
      try {
        v = tool.call(args, { runId: turn.runId, sessionId: turn.sessionId, toolCallId: call.id });
      } catch (e) {
        failure = "threw: " + text(e);
      }
      if (failure === undefined && isThenable(v)) {
        const s = await this.#settle(turn, v);
        if (s === null) return this.#resume(turn);
        if (s.ok) v = s.value;
        else failure = "rejected: " + text(s.reason);
      }
      if (turn.interrupted) return this.#resume(turn);
      if (failure === undefined) {
        if (typeof v === "string") out = v;
        else if (v === undefined) out = "";
        else {
          try {
            out = JSON.stringify(v);
          } catch {
            out = undefined;
          }
          if (typeof out !== "string") failure = "the result cannot be converted to JSON";
        }
      }
    }
    const w = this.#w.reset();
    const frame = failure === undefined ? writeToolResult(w, turn.handle, false, out) : writeToolResult(w, turn.handle, true, failure);
    return this.#action(this.#call(this.#ex.agentrt_feed, frame));
  }

  /**
   * Drives the turn to its end: the Result, or a thrown error. A turn
   * whose model answers at once (not a thenable) and that calls no tool
   * ends within this call, which returns its Result; otherwise it returns
   * a Promise of it, from the first answer that has to be awaited on.
   */
  drive(turn) {
    let a = turn.first;
    turn.first = undefined;
    let ends = true;
    try {
      for (;;) {
        if (a.events !== undefined && turn.onEvent) this.#events(turn, a.events, a);
        switch (a.kind) {
          case ACTION.model: {
            this.#arm(turn);
            const next = this.#callModel(turn, a);
            if (next instanceof Promise) {
              ends = false;
              return this.#driveAsync(turn, next);
            }
            a = next;
            continue;
          }
          case ACTION.done:
          case ACTION.failed:
            return this.#outcome(turn, a);
          case ACTION.wait:
          case ACTION.tool:
            ends = false;
            return this.#driveAsync(turn, a);
          default:
            throw new AgentrtError("internal", `agentrt: unexpected action ${a.kind}`);
        }
      }
    } finally {
      if (ends) this.#end(turn);
    }
  }

  // #driveAsync is drive from an action, or a Promise of one, on. An
  // action is taken at once: a wait must be queued before the caller
  // returns, or a turn on its session that ends within the same call (a
  // model that answers at once) releases the session before the waiter
  // is queued, and nothing wakes it.
  async #driveAsync(turn, next) {
    try {
      let a = next instanceof Promise ? await next : next;
      for (;;) {
        if (next !== a && a.events !== undefined && turn.onEvent) this.#events(turn, a.events, a);
        next = undefined;
        switch (a.kind) {
          case ACTION.wait:
            await this.#wait(turn);
            a = this.#resume(turn);
            continue;
          case ACTION.model:
            this.#arm(turn);
            a = await this.#callModel(turn, a);
            continue;
          case ACTION.tool:
            this.#arm(turn);
            a = await this.#callTool(turn, a);
            continue;
          case ACTION.done:
          case ACTION.failed:
            return this.#outcome(turn, a);
          default:
            throw new AgentrtError("internal", `agentrt: unexpected action ${a.kind}`);
        }
      }
    } finally {
      this.#end(turn);
    }
  }

  // #outcome ends a turn on its done or failed action, for both drive
  // loops: the Result, with the reply kept on the mirror, or the thrown
  // error, with the mirror dropped.
  #outcome(turn, a) {
    if (a.kind === ACTION.done) {
      this.#keepReply(turn, a.result);
      return a.result;
    }
    this.#dropMirror(turn);
    throw refusedError(a.error);
  }

  // #keepReply adds a completed turn's reply to the session's mirror when
  // the mirror holds everything before it: the module sends each message
  // once, in the next model action's tail, so without this the mirror
  // lags the session by the last reply, and a quick turn, which needs the
  // whole session, could not use it.
  #keepReply(turn, res) {
    const m = this.#mirrors.get(turn.sessionId);
    if (m !== undefined && m.gen === turn.gen && m.msgs.length === res.messageCount - 1) m.msgs.push(res.reply);
  }

  // #dropMirror forgets the session's mirror after a turn that failed
  // once it had a model call: it rolled its messages back, which gives the
  // session a new generation. The next turn's model action sends the
  // whole session, as it would for the old mirror; a quick turn would
  // call its model on the old one first.
  #dropMirror(turn) {
    if (turn.gen !== 0) this.#mirrors.delete(turn.sessionId);
  }

  // #end takes an ended turn off the path.
  #end(turn) {
    turn.closed = true;
    if (turn.timer !== undefined) clearTimeout(turn.timer);
    this.#active.delete(turn.runId);
    this.#unbusy(turn.sessionId);
    this.#release(turn.sessionId);
    if (++this.#ended % PRUNE_EVERY === 0) this.#prune();
  }

  // #resume asks for the next action after a wait or an interruption.
  #resume(turn) {
    this.enter();
    turn.interrupted = false;
    return this.#action(this.#out(this.#ex.agentrt_next(this.#n, turn.handle, turn.expired ? 1 : 0)));
  }

  // #arm starts the policy's timeout once the turn holds its session.
  #arm(turn) {
    if (turn.timeoutMs > 0 && turn.timer === undefined) {
      turn.timer = setTimeout(() => {
        turn.expired = true;
        this.#interrupt(turn);
      }, turn.timeoutMs);
    }
  }

  // #settle waits for v when it is a thenable, or until the turn is
  // interrupted: { ok, value } or { ok: false, reason }, or null when
  // interrupted.
  #settle(turn, v) {
    return new Promise((resolve) => {
      turn.wake = () => resolve(null);
      v.then((value) => resolve({ ok: true, value }), (reason) => resolve({ ok: false, reason }));
    }).finally(() => { turn.wake = null; });
  }

  #wait(turn) {
    return new Promise((resolve) => {
      if (turn.interrupted) return resolve();
      turn.wake = resolve;
      let q = this.#waiting.get(turn.sessionId);
      if (!q) this.#waiting.set(turn.sessionId, q = []);
      q.push(resolve);
    }).finally(() => { turn.wake = null; });
  }

  // #release wakes the turns waiting for a session a turn has left.
  #release(sessionId) {
    const q = this.#waiting.get(sessionId);
    if (!q) return;
    this.#waiting.delete(sessionId);
    for (const wake of q) wake();
  }

  // #messages applies a model action's window to the session's mirror and
  // returns the messages [start, end) as a new array.
  #messages(turn, a) {
    if (a.generation === 0) {
      // The module sent the window alone: no mirror of this session.
      this.#mirrors.delete(turn.sessionId);
      turn.historyMirror = undefined;
      return a.tail.slice();
    }
    let m = this.#mirrors.get(turn.sessionId);
    if (a.adopt && turn.historyMirror !== undefined) m = { gen: a.generation, msgs: turn.historyMirror };
    turn.historyMirror = undefined;
    if (m === undefined || m.gen !== a.generation || m.msgs.length < a.from) {
      if (a.from !== 0) {
        // The module counted on a mirror this glue does not hold: use the
        // window if the tail covers it, and start the mirror again.
        this.#mirrors.delete(turn.sessionId);
        if (a.from <= a.start) return a.tail.slice(a.start - a.from);
        throw new AgentrtError("internal", "agentrt: the session mirror is out of step with the module");
      }
      m = { gen: a.generation, msgs: [] };
    }
    const msgs = m.msgs;
    if (msgs.length !== a.from) msgs.length = a.from;
    for (const x of a.tail) msgs.push(x);
    m.gen = turn.gen = a.generation;
    this.#mirrors.set(turn.sessionId, m);
    return msgs.slice(a.start, a.end);
  }

  // #allowedSpecs returns the tool specs the turn's policy allows, as a
  // new array (the shared empty one when there are none).
  #allowedSpecs(turn) {
    const allowed = turn.allowed;
    const specs = allowed === undefined ? this.#specs : this.#specs.filter((t) => allowed.includes(t.name));
    return specs.length === 0 ? NO_TOOLS : specs.slice();
  }

  // #callModel hands the model its request and feeds its reply. It
  // returns the next action, or a Promise of it when the model answered
  // with a thenable.
  #callModel(turn, a) {
    const handle = turn.handle;
    let answered = false;
    const req = new ModelRequest(turn.runId, turn.sessionId, this.#system, this.#messages(turn, a), this.#allowedSpecs(turn), a.step,
      (t) => {
        if (answered || turn.closed || typeof t !== "string") return;
        const out = this.#action(this.#call(this.#ex.agentrt_feed, writeDelta(this.#w.reset(), handle, t)));
        if (out.events !== undefined && turn.onEvent) this.#events(turn, out.events, out);
      });
    let v;
    let failure;
    try {
      v = this.#modelFn(req);
    } catch (e) {
      failure = "model threw: " + text(e);
    }
    if (failure === undefined && isThenable(v)) {
      turn.request = req;
      return this.#settle(turn, v).then((s) => {
        turn.request = undefined;
        answered = true;
        if (s === null) {
          // Cancelled, timed out or closed while the model was working.
          ModelRequest.stop(req, turn.expired ? timeoutError() : abortError());
          return this.#resume(turn);
        }
        return s.ok ? this.#feedModel(turn, handle, s.value) : this.#feedModel(turn, handle, undefined, "model rejected: " + text(s.reason));
      });
    }
    answered = true;
    return this.#feedModel(turn, handle, v, failure);
  }

  // #feedModel feeds the model's answer v, or its failure, to the turn
  // and returns the next action.
  #feedModel(turn, handle, v, failure) {
    if (turn.interrupted) return this.#resume(turn);
    let reply;
    if (failure === undefined) {
      try {
        reply = readReply(v, (message) => new ReplyRefused(message));
      } catch (e) {
        failure = e instanceof ReplyRefused ? e.message : "the model's reply cannot be read: " + text(e);
      }
    }
    const w = this.#w.reset();
    const frame = failure === undefined ? writeModelReply(w, handle, reply) : writeModelReply(w, handle, undefined, failure);
    return this.#action(this.#call(this.#ex.agentrt_feed, frame));
  }
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
}

// readRequest checks a run() or stream() request and copies its fields, so
// that each getter is read once. A host exception is invalid_argument.
function readRequest(req) {
  try {
    if (!isObject(req)) throw argError("request", "must be an object");
    const r = {
      sessionId: req.sessionId, input: req.input, policy: req.policy, history: req.history,
      runId: req.runId, signal: req.signal, onEvent: req.onEvent, inspect: req.inspect,
    };
    checkRunArgs(r.sessionId, r.input, r.policy, r, "request.");
    checkHistory(r.history, "request.history");
    return r;
  } catch (e) {
    throw toError(e, "invalid_argument");
  }
}

// readOptions checks the arguments of an ADR entry point and copies its
// options; a host exception is invalid_argument.
function readOptions(sessionId, input, policy, options, history, withHistory) {
  try {
    checkRunArgs(sessionId, input, policy, options, "");
    if (withHistory) checkHistory(history, "history");
    if (options === undefined || options === null) return undefined;
    return { runId: options.runId, signal: options.signal, onEvent: options.onEvent, inspect: options.inspect };
  } catch (e) {
    throw toError(e, "invalid_argument");
  }
}

/**
 * A runtime: one Go instance of the module and the sessions it holds.
 * Created by loadRuntime; close() frees it.
 *
 * If the instance's Go program exits (a fatal error in Go, such as running
 * out of memory), the calls in flight reject with code "internal", and a
 * fresh instance of the same module and configuration is started for the
 * next call: its sessions are cold, and the host's history seeds them.
 */
class Runtime {
  #boot;
  #inst;
  #restarting = null;
  #closed = false;
  #runs = 0;
  #version;

  constructor(boot, inst) {
    this.#boot = boot;
    this.#version = inst.version;
    this.#adopt(inst);
  }

  /** The module's version. */
  get version() { return this.#version; }

  /** The global name the current instance published its exports at. */
  get globalName() { return this.#inst.name; }

  /** Whether close() was called. */
  get closed() { return this.#closed; }

  #adopt(inst) {
    this.#inst = inst;
    inst.onExit = () => this.#lost(inst);
  }

  // #lost handles the exit of inst's Go program: the calls waiting for it
  // reject, and a fresh instance is started in its place.
  #lost(inst, cause) {
    if (inst.dead) return;
    inst.dead = true;
    delete globalThis[inst.name];
    for (const reject of inst.pending) reject(lostError(cause));
    inst.pending.clear();
    if (inst.fast) inst.fast.abortModels(lostError(cause));
    if (!this.#closed && this.#inst === inst && !this.#restarting) this.#restart();
  }

  #restart() {
    const p = startInstance(this.#boot).then((fresh) => {
      this.#restarting = null;
      if (this.#closed) disposeInstance(fresh);
      else this.#adopt(fresh);
    }, () => {
      // The next call tries again.
      this.#restarting = null;
    });
    this.#restarting = p;
  }

  // #ready returns the live instance, waiting for a restart when the last
  // one exited.
  async #ready() {
    for (let attempt = 0; ; attempt++) {
      if (this.#closed) throw closedError();
      const inst = this.#inst;
      if (inst.go.exited) this.#lost(inst);
      if (!inst.dead) return inst;
      if (attempt === 2) throw new AgentrtError("internal", "agentrt: the module's Go program exited and a fresh instance could not be started");
      if (!this.#restarting) this.#restart();
      await this.#restarting;
    }
  }

  // #now returns the live instance for a synchronous call; while a fresh
  // one is starting it throws.
  #now() {
    if (this.#closed) throw closedError();
    const inst = this.#inst;
    if (inst.go.exited) this.#lost(inst);
    if (inst.dead) {
      throw new AgentrtError("internal", "agentrt: the module's Go program exited; a fresh instance is starting, retry");
    }
    return inst;
  }

  // #start runs one turn; it is the body of run(), stream() and the four
  // ADR entry points. Arguments are checked by the caller.
  async #start(sessionId, input, policy, history, withHistory, options, onStarted) {
    const inst = this.#restarting || this.#inst.dead || this.#inst.go.exited ? await this.#ready() : this.#now();
    const core = inst.core;
    const signal = options && options.signal ? options.signal : undefined;
    if (signal && signal.aborted) throw abortError(signal.reason);
    const fast = inst.fast;
    const runId = options && options.runId !== undefined ? options.runId : `${GLUE_RUN_PREFIX}${++this.#runs}`;
    const onEvent = options && options.onEvent;
    const listener = onEvent ? (ev) => {
      try {
        onEvent(ev);
      } catch (e) {
        reportCallbackError(e);
      }
    } : undefined;
    const inspect = Boolean(options && options.inspect);
    let driven;
    if (!onStarted && !withHistory && policy === undefined && !listener && !inspect &&
      !(options && options.runId !== undefined) && fast.quickable(sessionId, input)) {
      // A quick turn (docs/adr/0012-quick-turn.md): begin and drive in one.
      try {
        driven = fast.quick(sessionId, input, runId);
      } catch (e) {
        if (inst.go.exited) {
          this.#lost(inst, e);
          throw lostError(e);
        }
        throw toError(e);
      }
    } else {
      let turn;
      try {
        turn = fast.begin(sessionId, input, policy, history, withHistory, runId, inspect, listener);
      } catch (e) {
        if (inst.go.exited) {
          this.#lost(inst, e);
          throw lostError(e);
        }
        throw toError(e);
      }
      if (onStarted) onStarted(runId, inst);
      try {
        driven = fast.drive(turn);
      } catch (e) {
        if (inst.go.exited) this.#lost(inst, e);
        throw toError(e);
      }
    }
    // A turn whose model answered at once has ended.
    if (!(driven instanceof Promise)) return driven;
    // The turn's Promise never settles if the Go program exits: #lost
    // rejects it instead.
    const settled = new Promise((resolve, reject) => {
      inst.pending.add(reject);
      driven.then((v) => {
        inst.pending.delete(reject);
        resolve(v);
      }, (e) => {
        inst.pending.delete(reject);
        if (inst.go.exited) this.#lost(inst, e);
        reject(e);
      });
    });
    let aborted = false;
    const onAbort = () => {
      try {
        if (!inst.dead && fast.cancel(core, runId)) aborted = true;
      } catch { /* the run ends anyway */ }
    };
    if (signal) signal.addEventListener("abort", onAbort, { once: true });
    try {
      return await settled;
    } catch (e) {
      if (aborted) throw abortError(e);
      throw toError(e);
    } finally {
      if (signal) signal.removeEventListener("abort", onAbort);
    }
  }

  // #revert takes a completed turn the host never received off its session
  // (the no-divergence rule, docs/adr/0004-memory-budget-and-no-divergence.md).
  #revert(inst, sessionId, runId) {
    if (inst.dead || inst.go.exited) return; // a fresh instance is cold
    try {
      inst.fast.enter();
      inst.fast.forget(sessionId);
      if (typeof inst.core.revertRun === "function") inst.core.revertRun(sessionId, runId);
      else inst.core.deleteSession(sessionId);
    } catch { /* the instance is going away */ }
  }

  /**
   * Runs one turn. See RunRequest in glue.d.ts.
   * @param {object} request
   * @returns {Promise<object>} the Result
   */
  run(request) {
    let r;
    try {
      r = readRequest(request);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#start(r.sessionId, r.input, r.policy ?? undefined, r.history, r.history !== undefined && r.history !== null, r);
  }

  /**
   * Runs one turn and yields its events as they come; the last is
   * run.completed with `result`. A refusal, failure or cancel makes the
   * iterator throw; leaving the loop early cancels the run, or, when it had
   * completed before its result was handed out, takes its turn back off the
   * session.
   * @param {object} request
   * @returns {AsyncIterableIterator<object>}
   */
  stream(request) {
    const req = readRequest(request);
    if (this.#closed) throw closedError();
    const { sessionId, input, policy, history } = req;
    const userOnEvent = req.onEvent;
    const queue = [];
    const waiting = [];
    let started = null;
    let runId;
    let runInst;
    let settled = false;
    let result = null;
    let delivered = false;
    let finished = false;
    let heldCompleted = null;
    let completedPushed = false;
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
      if (isObject(ev) && ev.type === "run.completed") {
        if (ev.result === undefined) {
          heldCompleted = ev;
          return;
        }
        completedPushed = true;
      }
      push({ event: ev });
    };
    const start = () => {
      const options = { runId: req.runId, signal: req.signal, inspect: req.inspect, onEvent };
      started = this.#start(sessionId, input, policy ?? undefined, history,
        history !== undefined && history !== null, options, (id, inst) => { runId = id; runInst = inst; })
        .then((res) => {
          if (settled) return;
          settled = true;
          result = res;
          let done = heldCompleted;
          if (done) done.result = res;
          else if (!completedPushed) {
            done = { type: "run.completed", runId: res.runId, sessionId: res.sessionId, seq: lastSeq + 1, result: res };
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
        if (item.event !== undefined) {
          if (isObject(item.event) && item.event.type === "run.completed") delivered = true;
          return { value: item.event, done: false };
        }
        finished = true;
        if (item.error) throw item.error;
        return { value: undefined, done: true };
      },
      return: async (value) => {
        if (!finished) {
          finished = true;
          for (const w of waiting.splice(0)) w();
          if (started) {
            if (!settled && runId !== undefined && !runInst.dead) {
              try { runInst.fast.cancel(runInst.core, runId); } catch { /* it ends anyway */ }
            }
            await started;
            // The run completed before its result reached the host: the
            // session must not keep a turn the host never stored.
            if (result !== null && !delivered && !this.#closed) this.#revert(runInst, sessionId, result.runId ?? runId);
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
  startRun(sessionId, input, options) {
    let o;
    try {
      o = readOptions(sessionId, input, undefined, options, undefined, false);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#start(sessionId, input, undefined, undefined, false, o);
  }

  /**
   * The ADR entry point: a turn with a policy and no history.
   * @returns {Promise<object>}
   */
  startRunWithPolicy(sessionId, input, policy, options) {
    let o;
    try {
      o = readOptions(sessionId, input, policy, options, undefined, false);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#start(sessionId, input, policy ?? {}, undefined, false, o);
  }

  /**
   * The ADR entry point: a turn that seeds an empty session from history.
   * @returns {Promise<object>}
   */
  startRunWithHistory(sessionId, input, history, options) {
    let o;
    try {
      o = readOptions(sessionId, input, undefined, options, history, true);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#start(sessionId, input, undefined, history, true, o);
  }

  /**
   * The ADR entry point: a turn that seeds the session from history as
   * policy.seedMode says.
   * @returns {Promise<object>}
   */
  startRunWithPolicyAndHistory(sessionId, input, policy, history, options) {
    let o;
    try {
      o = readOptions(sessionId, input, policy, options, history, true);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#start(sessionId, input, policy ?? {}, history, true, o);
  }

  /**
   * Cancels the active run with runId; reports whether this call did.
   * @param {string} runId
   * @returns {boolean}
   */
  cancelRun(runId) {
    if (typeof runId !== "string") throw argError("runId", "must be a string");
    return Boolean(this.#call((core, inst) => inst.fast.cancel(core, runId)));
  }

  /**
   * A snapshot of the session with id, or null when there is none.
   * @param {string} id
   * @returns {object | null}
   */
  session(id) {
    if (typeof id !== "string") throw argError("id", "must be a string");
    return this.#call((core) => core.getSession(id)) ?? null;
  }

  /**
   * Removes the session with id; reports whether there was one.
   * @param {string} id
   * @returns {boolean}
   */
  deleteSession(id) {
    if (typeof id !== "string") throw argError("id", "must be a string");
    return Boolean(this.#call((core, inst) => {
      inst.fast.forget(id);
      return core.deleteSession(id);
    }));
  }

  /**
   * The ids of all sessions, sorted.
   * @returns {string[]}
   */
  listSessions() {
    return this.#call((core) => core.listSessions());
  }

  /**
   * The runtime's counters.
   * @returns {object}
   */
  stats() {
    return this.#call((core) => core.stats());
  }

  /**
   * Cancels every active run, and frees the instance: its global is
   * deleted and every later call fails. Idempotent.
   */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    const inst = this.#inst;
    this.#inst = { ...inst, core: null, dead: true, pending: new Set() };
    try {
      if (inst.fast && !inst.dead && !inst.go.exited) inst.fast.enter();
    } catch { /* it is being closed */ }
    disposeInstance(inst);
  }

  #call(f) {
    const inst = this.#now();
    let v;
    try {
      inst.fast.enter();
      v = f(inst.core, inst);
    } catch (e) {
      if (inst.go.exited) {
        this.#lost(inst, e);
        throw lostError(e);
      }
      throw toError(e);
    }
    if (inst.go.exited) {
      this.#lost(inst);
      throw lostError();
    }
    return v;
  }
}
