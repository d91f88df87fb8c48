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

import { ACTION, KIND, Writer, writeBegin, writeModelReply, writeToolResult, writeDelta, readAction, readRefused } from "./wire.js";

/** Prefix of the global names the glue gives its instances (AGENTRT_GLOBAL). */
const GLOBAL_PREFIX = "agentrt_";

/** Packed history format: magic "ARH" and version 1 (docs/packed-history.md). */
const PACK_MAGIC = [0x41, 0x52, 0x48];
const PACK_VERSION = 1;
const ROLE_CODES = { user: 0, assistant: 1, tool: 2, system: 3 };
const ROLE_OTHER = 255;
const FLAG_CONTENT = 1;
const FLAG_ID = 2;
const FLAG_TOOL_CALL_ID = 4;
const FLAG_TOOL_CALLS = 8;

/** How many event-loop turns loadRuntime waits for the module to publish. */
const PUBLISH_TURNS = 100;

let instances = 0;
let goLoading = null;
const encoder = new TextEncoder();

/**
 * The error type of agentrt. `code` is stable and machine-readable (see
 * DESIGN section 3: invalid_argument, invalid_history, session_busy,
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
// Packed history

class Packer {
  constructor(capacity) {
    this.buf = new Uint8Array(Math.max(64, capacity));
    this.pos = 0;
  }

  reserve(n) {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  byte(b) {
    this.reserve(1);
    this.buf[this.pos++] = b;
  }

  uvarint(v) {
    this.reserve(10);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }

  string(s) {
    // A UTF-16 code unit encodes to at most 3 bytes of UTF-8, and to at
    // least 1: write the bytes after room for the shortest length prefix,
    // and move them on in the rare case the real length needs more.
    const n = s.length;
    const room = varintSize(n);
    this.reserve(room + n * 3);
    const start = this.pos + room;
    const written = n > LONG_STRING ? encoder.encodeInto(s, this.buf.subarray(start)).written : encodeShort(s, this.buf, start);
    const size = varintSize(written);
    if (size !== room) this.buf.copyWithin(this.pos + size, start, start + written);
    this.uvarint(written);
    this.pos += written;
  }

  bytes() {
    return this.buf.subarray(0, this.pos);
  }
}

// Strings longer than this many UTF-16 code units are encoded with
// TextEncoder.encodeInto; shorter ones (ids, roles, short turns) by
// encodeShort, which costs no call into the engine and no subarray view
// per string. Measured on V8 with the benchmark history: encodeShort for
// every string was slower than encodeInto for every string; 32 was the
// fastest split.
const LONG_STRING = 32;

// encodeShort writes s as UTF-8 into buf at start, as TextEncoder does
// (a lone surrogate becomes U+FFFD), and returns the byte count. buf must
// have room for s.length * 3 bytes.
function encodeShort(s, buf, start) {
  let pos = start;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      buf[pos++] = c;
    } else if (c < 0x800) {
      buf[pos++] = 0xc0 | (c >> 6);
      buf[pos++] = 0x80 | (c & 0x3f);
    } else if (c < 0xd800 || c > 0xdfff) {
      buf[pos++] = 0xe0 | (c >> 12);
      buf[pos++] = 0x80 | ((c >> 6) & 0x3f);
      buf[pos++] = 0x80 | (c & 0x3f);
    } else {
      const d = c <= 0xdbff && i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        // A surrogate pair: 4 bytes from 2 code units.
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        buf[pos++] = 0xf0 | (c >> 18);
        buf[pos++] = 0x80 | ((c >> 12) & 0x3f);
        buf[pos++] = 0x80 | ((c >> 6) & 0x3f);
        buf[pos++] = 0x80 | (c & 0x3f);
      } else {
        buf[pos++] = 0xef; // U+FFFD
        buf[pos++] = 0xbf;
        buf[pos++] = 0xbd;
      }
    }
  }
  return pos - start;
}

function varintSize(v) {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 0x80);
    n++;
  }
  return n;
}

function historyError(index, message) {
  return new AgentrtError("invalid_history", `agentrt: history[${index}]: ${message}`, { index });
}

function optionalString(v) {
  return v === undefined || v === null || typeof v === "string";
}

// normalizeCall converts one tool call, in the module's shape ({id, name,
// arguments}) or OpenAI's ({id, type: "function", function: {name,
// arguments}}), to the module's shape with arguments as JSON text.
function normalizeCall(c, index, j) {
  if (!isObject(c)) throw historyError(index, `tool_calls[${j}] must be an object`);
  let name = c.name;
  let args = c.arguments;
  if (c.function !== undefined) {
    if (c.type !== undefined && c.type !== "function") {
      throw historyError(index, `tool_calls[${j}].type must be "function"`);
    }
    if (!isObject(c.function)) throw historyError(index, `tool_calls[${j}].function must be an object`);
    name = c.function.name;
    args = c.function.arguments;
  }
  if (!optionalString(c.id)) throw historyError(index, `tool_calls[${j}].id must be a string`);
  if (!optionalString(name)) throw historyError(index, `tool_calls[${j}] name must be a string`);
  if (args === undefined || args === null) args = "";
  else if (!isObject(args) && typeof args !== "string") {
    throw historyError(index, `tool_calls[${j}] arguments must be JSON text or an object`);
  } else if (typeof args !== "string") {
    try {
      args = JSON.stringify(args);
    } catch (e) {
      throw historyError(index, `tool_calls[${j}] arguments cannot be turned into JSON: ${e && e.message}`);
    }
    if (typeof args !== "string") throw historyError(index, `tool_calls[${j}] arguments cannot be turned into JSON`);
  }
  return { id: c.id ?? "", name: name ?? "", arguments: args };
}

// The fields readMessage found, reused for every message so that packing
// a long history allocates nothing per message.
const read = { role: "", content: null, id: undefined, toolCallId: undefined, calls: undefined };

/**
 * Reads and checks one history message, in the module's shape, camelCase,
 * or OpenAI's chat shape, into `read`. Throws AgentrtError (invalid_history,
 * with index) when a field has the wrong type. Unknown roles pass through:
 * the module refuses them with their index.
 */
function readMessage(m, index) {
  if (!isObject(m) || Array.isArray(m)) throw historyError(index, "must be an object");
  const role = m.role;
  if (typeof role !== "string") throw historyError(index, "role must be a string");
  const content = m.content;
  if (!optionalString(content)) throw historyError(index, "content must be a string or null");
  const id = m.id;
  if (!optionalString(id)) throw historyError(index, "id must be a string");
  const toolCallId = m.tool_call_id ?? m.toolCallId;
  if (!optionalString(toolCallId)) throw historyError(index, "tool_call_id must be a string");
  const rawCalls = m.tool_calls ?? m.toolCalls;
  let calls;
  if (rawCalls !== undefined && rawCalls !== null) {
    if (!Array.isArray(rawCalls)) throw historyError(index, "tool_calls must be an array");
    calls = new Array(rawCalls.length);
    for (let j = 0; j < rawCalls.length; j++) calls[j] = normalizeCall(rawCalls[j], index, j);
  }
  read.role = role;
  read.content = typeof content === "string" ? content : null;
  read.id = typeof id === "string" ? id : undefined;
  read.toolCallId = typeof toolCallId === "string" ? toolCallId : undefined;
  read.calls = calls;
}

/** Converts one history message to the module's shape (see readMessage). */
function normalizeMessage(m, index) {
  readMessage(m, index);
  const out = { role: read.role, content: read.content };
  if (read.id !== undefined) out.id = read.id;
  if (read.toolCallId !== undefined) out.tool_call_id = read.toolCallId;
  if (read.calls !== undefined) out.tool_calls = read.calls;
  return out;
}

/**
 * Converts a history to the module's message shape, accepting the shapes
 * hosts store: the module's own (snake_case or camelCase) and OpenAI chat
 * messages (assistant `content: null`, `tool_calls: [{id, type: "function",
 * function: {name, arguments}}]`, arguments objects JSON-stringified).
 *
 * @param {ReadonlyArray<object>} history
 * @returns {Array<object>} new objects; the input is not changed
 */
export function toModuleHistory(history) {
  if (!Array.isArray(history)) throw argError("history", "must be an array");
  const out = new Array(history.length);
  for (let i = 0; i < history.length; i++) out[i] = normalizeMessage(history[i], i);
  return out;
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
  if (history instanceof Uint8Array) return history;
  if (!Array.isArray(history)) throw argError("history", "must be an array or a Uint8Array");
  const n = history.length;
  // One buffer sized from the content lengths (most messages are ASCII),
  // grown geometrically if the estimate falls short.
  let estimate = 16;
  for (let i = 0; i < n; i++) {
    const m = history[i];
    const c = isObject(m) ? m.content : undefined;
    estimate += 24 + (typeof c === "string" ? c.length : 0);
  }
  const p = new Packer(estimate + (estimate >> 4));
  for (const b of PACK_MAGIC) p.byte(b);
  p.byte(PACK_VERSION);
  p.uvarint(n);
  for (let i = 0; i < n; i++) packMessage(p, history[i], i);
  return p.bytes();
}

// mirrorSink, while set, receives the session message of every
// non-system message packMessage writes (see FastPath: the mirror a cold
// seed adopts).
let mirrorSink = null;

// packMessage checks one message with readMessage and writes it.
function packMessage(p, m, index) {
  readMessage(m, index);
  const { role, content, id, toolCallId, calls } = read;
  if (mirrorSink !== null && role !== "system") mirrorSink.push(mirrorMessage(role, content, id, toolCallId, calls));
  const code = Object.prototype.hasOwnProperty.call(ROLE_CODES, role) ? ROLE_CODES[role] : ROLE_OTHER;
  let flags = 0;
  if (content !== null) flags |= FLAG_CONTENT;
  if (id !== undefined) flags |= FLAG_ID;
  if (toolCallId !== undefined) flags |= FLAG_TOOL_CALL_ID;
  if (calls !== undefined) flags |= FLAG_TOOL_CALLS;
  p.byte(code);
  p.byte(flags);
  if (code === ROLE_OTHER) p.string(role);
  if (content !== null) p.string(content);
  if (id !== undefined) p.string(id);
  if (toolCallId !== undefined) p.string(toolCallId);
  if (calls !== undefined) {
    p.uvarint(calls.length);
    for (const c of calls) {
      p.string(c.id);
      p.string(c.name);
      p.string(c.arguments);
    }
  }
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
  let fast;
  try {
    fast = new FastPath(instance.exports, core.fastPath, config, () => core.listSessions());
  } catch (e) {
    delete globalThis[name];
    throw e;
  }
  return new Runtime(core, name, typeof api.version === "string" ? api.version : "", fast);
}

// ---------------------------------------------------------------------------
// The fast path: turns driven through the module's wasmexport functions
// over the wire (docs/wire.md), with a mirror of each session's messages

// mirrorMessage returns the frozen session message the module stores for
// a history message read by readMessage (null content is "", empty ids
// and empty tool-call lists are left out), in the shape and key order of
// the module's messages.
function mirrorMessage(role, content, id, toolCallId, calls) {
  const m = { role, content: content === null ? "" : content };
  if (toolCallId) m.tool_call_id = toolCallId;
  if (calls !== undefined && calls.length > 0) {
    for (const c of calls) Object.freeze(c);
    m.tool_calls = Object.freeze(calls);
  }
  if (id) m.id = id;
  return Object.freeze(m);
}

const NO_TOOLS = Object.freeze([]);
const MAX_TIMEOUT_MS = 365 * 24 * 3600 * 1000;

function policyError(msg) {
  return new AgentrtError("invalid_argument", msg);
}

// checkPolicy checks the JavaScript types of a policy as the module's
// syscall/js path does, and returns it (or undefined for none).
function checkPolicy(p) {
  if (p === undefined || p === null) return undefined;
  if (!isObject(p)) throw policyError("policy must be an object");
  if (Array.isArray(p)) throw policyError("policy must be an object, not an Array");
  for (const f of ["seedMode", "onBusy", "toolErrors"]) {
    const v = p[f];
    if (v !== undefined && v !== null && typeof v !== "string") throw policyError(`policy.${f} must be a string`);
  }
  for (const f of ["maxSteps", "maxContextMessages", "maxContextBytes", "timeoutMs"]) {
    const v = p[f];
    if (v === undefined || v === null) continue;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) throw policyError(`policy.${f} must be a non-negative integer`);
  }
  if ((p.timeoutMs ?? 0) > MAX_TIMEOUT_MS) throw policyError("policy.timeoutMs is too large");
  const tools = p.allowedTools;
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools)) throw policyError("policy.allowedTools must be an Array of strings");
    tools.forEach((t, i) => {
      if (typeof t !== "string") throw policyError(`policy.allowedTools[${i}] must be a string`);
    });
  }
  return p;
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

// replyCall converts one tool call of a model reply, or returns the
// message that refuses it.
function replyCall(c) {
  if (!isObject(c)) return "tool call must be an object";
  const id = c.id ?? "";
  if (typeof id !== "string") return "id must be a string";
  const name = c.name ?? "";
  if (typeof name !== "string") return "name must be a string";
  let args = c.arguments;
  if (args === undefined || args === null) args = "{}";
  else if (typeof args === "object") {
    try {
      args = JSON.stringify(args);
    } catch {
      return "arguments cannot be converted to JSON";
    }
    if (typeof args !== "string") return "arguments cannot be converted to JSON";
  } else if (typeof args !== "string") return "arguments must be a JSON string or an object";
  return { id, name, arguments: args };
}

// modelReply converts what a model function answered to { content,
// toolCalls }, or returns the message that refuses it.
function modelReply(v) {
  if (typeof v === "string") return { content: v, toolCalls: NO_TOOLS };
  if (!isObject(v)) return "the model must answer an object { content, toolCalls? } or a string";
  const content = v.content;
  if (content !== undefined && content !== null && typeof content !== "string") return "reply.content must be a string";
  let calls = v.toolCalls;
  if (calls === undefined || calls === null) calls = v.tool_calls;
  const out = { content: content ?? "", toolCalls: NO_TOOLS };
  if (calls === undefined || calls === null) return out;
  if (!Array.isArray(calls)) return "reply.toolCalls must be an Array";
  out.toolCalls = new Array(calls.length);
  for (let i = 0; i < calls.length; i++) {
    const c = replyCall(calls[i]);
    if (typeof c === "string") return `reply.toolCalls[${i}]: ${c}`;
    out.toolCalls[i] = c;
  }
  return out;
}

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
  #modelFn;
  #system;
  #tools = new Map();
  #specs = [];
  #mirrors = new Map();
  #active = new Map(); // runId -> turn
  #waiting = new Map(); // sessionId -> [wake]
  #ended = 0;
  #listSessions;

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

  // #call writes frame into the module's input buffer, calls fn and
  // returns the answer's bytes (valid until the next call).
  #call(fn, frame) {
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
      if (mirror === undefined && Array.isArray(history)) {
        historyMirror = [];
        mirrorSink = historyMirror;
      }
      try {
        packed = packHistory(history ?? []);
      } finally {
        mirrorSink = null;
      }
    }
    const frame = writeBegin(this.#w.reset(), {
      sessionId, input, runId, history: packed, inspect, events: onEvent !== undefined,
      historyMirror: historyMirror !== undefined, policy,
      mirrorGen: mirror ? mirror.gen : 0, mirrorLen: mirror ? mirror.msgs.length : 0,
    });
    const first = this.#action(this.#call(this.#ex.agentrt_begin, frame));
    const turn = {
      handle: first.handle, runId, sessionId, onEvent, historyMirror, first,
      timeoutMs: policy ? policy.timeoutMs ?? 0 : 0, timer: undefined, expired: false,
      allowed: policy && Array.isArray(policy.allowedTools) ? [...policy.allowedTools] : undefined,
      wake: null, interrupted: false, closed: false,
    };
    this.#active.set(runId, turn);
    return turn;
  }

  // #interrupt stops waiting for the turn's model, tool or session: it is
  // asked for its next action at once.
  #interrupt(turn) {
    turn.interrupted = true;
    if (turn.wake) turn.wake();
  }

  /** Cancels the run with runId through core (cancelRun); reports whether this call did. */
  cancel(core, runId) {
    const ok = core.cancelRun(runId) === true;
    const turn = this.#active.get(runId);
    if (ok && turn) this.#interrupt(turn);
    return ok;
  }

  /** Drops the mirror of the session with id (it is being deleted). */
  forget(id) {
    this.#mirrors.delete(id);
  }

  /** Drops every mirror and stops waiting turns (the runtime closed). */
  close() {
    this.#mirrors.clear();
    for (const turn of this.#active.values()) this.#interrupt(turn);
  }

  // #prune drops the mirrors of sessions the module no longer holds.
  #prune() {
    if (this.#mirrors.size === 0 || this.#listSessions === undefined) return;
    const live = new Set(this.#listSessions());
    for (const id of this.#mirrors.keys()) if (!live.has(id)) this.#mirrors.delete(id);
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

  /** Drives the turn to its end: the Result, or a thrown error. */
  async drive(turn) {
    let a = turn.first;
    turn.first = undefined;
    try {
      for (;;) {
        if (a.events !== undefined && turn.onEvent) this.#events(turn, a.events, a);
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
            return a.result;
          case ACTION.failed:
            throw refusedError(a.error);
          default:
            throw new AgentrtError("internal", `agentrt: unexpected action ${a.kind}`);
        }
      }
    } finally {
      turn.closed = true;
      if (turn.timer !== undefined) clearTimeout(turn.timer);
      this.#active.delete(turn.runId);
      this.#release(turn.sessionId);
      if (++this.#ended % PRUNE_EVERY === 0) this.#prune();
    }
  }

  // #resume asks for the next action after a wait or an interruption.
  #resume(turn) {
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
    m.gen = a.generation;
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

  async #callModel(turn, a) {
    const messages = this.#messages(turn, a);
    const handle = turn.handle;
    let answered = false;
    const req = {
      runId: turn.runId, sessionId: turn.sessionId, system: this.#system, messages,
      tools: this.#allowedSpecs(turn), step: a.step,
      delta: (t) => {
        if (answered || turn.closed || typeof t !== "string") return;
        const out = this.#action(this.#call(this.#ex.agentrt_feed, writeDelta(this.#w.reset(), handle, t)));
        if (out.events !== undefined && turn.onEvent) this.#events(turn, out.events, out);
      },
    };
    let v;
    let failure;
    try {
      v = this.#modelFn(req);
    } catch (e) {
      failure = "model threw: " + text(e);
    }
    if (failure === undefined && isThenable(v)) {
      const s = await this.#settle(turn, v);
      if (s === null) {
        answered = true;
        return this.#resume(turn);
      }
      if (s.ok) v = s.value;
      else failure = "model rejected: " + text(s.reason);
    }
    answered = true;
    if (turn.interrupted) return this.#resume(turn);
    let reply;
    if (failure === undefined) {
      reply = modelReply(v);
      if (typeof reply === "string") failure = reply;
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
  #fast;

  constructor(core, name, version, fast) {
    this.#core = core;
    this.#name = name;
    this.#version = version;
    this.#fast = fast;
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
  // ADR entry points. Arguments are checked by the caller. The turn runs
  // on the fast path (see FastPath).
  async #start(sessionId, input, policy, history, withHistory, options, onStarted) {
    this.#live();
    const fast = this.#fast;
    const signal = options && options.signal ? options.signal : undefined;
    if (signal && signal.aborted) throw abortError(signal.reason);
    const runId = options && options.runId !== undefined ? options.runId : `glue-${++this.#runs}`;
    const onEvent = options && options.onEvent;
    const listener = onEvent ? (ev) => {
      try {
        onEvent(ev);
      } catch (e) {
        reportCallbackError(e);
      }
    } : undefined;
    let turn;
    try {
      turn = fast.begin(sessionId, input, policy, history, withHistory, runId, Boolean(options && options.inspect), listener);
    } catch (e) {
      throw toError(e);
    }
    if (onStarted) onStarted(runId);
    let aborted = false;
    const onAbort = () => {
      if (fast.cancel(this.#core, runId)) aborted = true;
    };
    if (signal) signal.addEventListener("abort", onAbort, { once: true });
    try {
      return await fast.drive(turn);
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
              try { this.#fast.cancel(this.#core, runId); } catch { /* it ends anyway */ }
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
    this.#live();
    return Boolean(this.#call(() => this.#fast.cancel(this.#core, runId)));
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
    this.#fast.forget(id);
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
   * The runtime's counters. With options.gc true, garbage is collected
   * first, so that heapAlloc counts live objects only.
   * @param {{gc?: boolean}} [options]
   * @returns {object}
   */
  stats(options) {
    const core = this.#live();
    return this.#call(() => core.stats(isObject(options) && options.gc === true ? { gc: true } : undefined));
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
      this.#fast.close();
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
