// agentrt glue: loading. Compiles the module, loads the Go toolchain's
// wasm_exec.js when the realm has no Go class yet, and starts Go instances
// under their own global names.

import { AgentrtError, argError, toError, isObject, isBytes } from "./errors.js";
import { TurnDriver } from "./driver.js";
import { createRuntime } from "./control.js";
import { checkNeedsApproval } from "./approve.js";

/** Prefix of the global names the glue gives its instances (AGENTRT_GLOBAL). */
const GLOBAL_PREFIX = "agentrt_";

let instances = 0;
/** wasm_exec.js loads in progress, by URL. */
const goLoads = new Map();


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

export function toURL(v, name) {
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
// (the npm package's layout). It is the only file the glue finds by URL:
// bundlers (Vite, webpack 5, Parcel; Rollup and esbuild with the usual
// asset plugin or a copy) see the literal and emit the file, and the URL
// they rewrite is the one loaded.
export function packagedModule() {
  return new URL("./agentrt.wasm", import.meta.url);
}

function loadFailed(what, e) {
  return new AgentrtError("load_failed", `agentrt: cannot load ${what}: ${e && e.message ? e.message : e}`, { cause: e });
}

// progressReporter checks onProgress (named name in errors) and returns
// the function that calls it with { phase, loaded, total }, or null.
// Phases, in order: "download" (bytes of the module received, and their
// total when the response says it; repeated), "compile" (every byte is in,
// the compile finishes; with compileStreaming most of it ran during the
// download), "done" (compiled; for loadRuntime, the runtime is ready).
// An exception the callback throws is ignored: progress is advisory.
export function progressReporter(onProgress, name) {
  if (onProgress === undefined) return null;
  if (typeof onProgress !== "function") throw argError(name, "must be a function");
  let last = 0, lastTotal;
  // Called without counts ("done"), it repeats the last ones.
  return (phase, loaded = last, total = loaded === last ? lastTotal : undefined) => {
    last = loaded;
    lastTotal = total;
    try {
      onProgress({ phase, loaded, total });
    } catch {
      // Progress is advisory: a failing callback does not fail the load.
    }
  };
}

// bodyTotal is the number of bytes a response's body will yield, when its
// headers say: Content-Length, unless the body is sent compressed (then
// the length is that of the compressed bytes, and the body yields more).
function bodyTotal(res) {
  const n = Number(res.headers.get("content-length"));
  const enc = (res.headers.get("content-encoding") || "identity").toLowerCase();
  return Number.isSafeInteger(n) && n > 0 && enc === "identity" ? n : undefined;
}

// counted returns res's body as a stream that reports each chunk as
// download progress. A total the bytes outgrow (a compressed body whose
// Content-Encoding a cross-origin response hides) is dropped. The body is
// read to its end whatever the stream's reader does: a compile that stops
// reading early (it has all it needs) would otherwise abort the request.
function counted(res, report) {
  let total = bodyTotal(res);
  let loaded = 0;
  let ctl;
  let cancelled = false;
  const out = new ReadableStream({
    start(c) { ctl = c; },
    cancel() { cancelled = true; },
  });
  const reader = res.body.getReader();
  report("download", 0, total);
  (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        loaded += value.byteLength;
        if (total !== undefined && loaded > total) total = undefined;
        report("download", loaded, total);
        if (!cancelled) ctl.enqueue(value);
      }
      report("compile", loaded, total ?? loaded);
      if (!cancelled) ctl.close();
    } catch (e) {
      if (!cancelled) ctl.error(e);
    }
  })();
  return out;
}

// compileResponse compiles the module a response carries: streamed (the
// download and the compile overlap) when the host has compileStreaming
// and the server says application/wasm, else from the whole body.
async function compileResponse(res, report) {
  const type = res.headers.get("content-type") || "";
  const streaming = typeof WebAssembly.compileStreaming === "function" && type.startsWith("application/wasm");
  if (!report) {
    if (streaming) return await WebAssembly.compileStreaming(res);
    return await WebAssembly.compile(await res.arrayBuffer());
  }
  if (!res.body || typeof ReadableStream !== "function") {
    const bytes = new Uint8Array(await res.arrayBuffer());
    report("download", bytes.byteLength, bytes.byteLength);
    report("compile", bytes.byteLength, bytes.byteLength);
    return await WebAssembly.compile(bytes);
  }
  const body = counted(res, report);
  if (streaming) {
    return await WebAssembly.compileStreaming(new Response(body, { headers: { "content-type": "application/wasm" } }));
  }
  return await WebAssembly.compile(await new Response(body).arrayBuffer());
}

/**
 * Compiles the agentrt module once, so that many runtimes can be loaded
 * from it without compiling again.
 *
 * @param {string | URL | ArrayBuffer | ArrayBufferView | Response | WebAssembly.Module} wasm
 * @param {{ onProgress?: (p: { phase: string, loaded: number, total?: number }) => void }} [options]
 * @returns {Promise<WebAssembly.Module>}
 */
export async function compile(wasm = packagedModule(), options = undefined) {
  if (options !== undefined && !isObject(options)) throw argError("options", "must be an object");
  const report = progressReporter(options?.onProgress, "options.onProgress");
  const module = await compileModule(wasm, report);
  if (report) report("done");
  return module;
}

// compileModule is compile with a progress reporter (or null).
export async function compileModule(wasm, report) {
  if (wasm instanceof WebAssembly.Module) return wasm;
  if (isBytes(wasm)) {
    const n = wasm.byteLength;
    if (report) report("compile", n, n);
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
      if (!(typeof Response !== "undefined" && got instanceof Response)) {
        if (report) {
          report("download", got.byteLength, got.byteLength);
          report("compile", got.byteLength, got.byteLength);
        }
        return await WebAssembly.compile(got);
      }
      res = got;
    } catch (e) {
      throw loadFailed(url.href, e);
    }
  } else {
    throw argError("wasm", "must be a URL, a string, bytes, a Response or a WebAssembly.Module");
  }
  try {
    return await compileResponse(res, report);
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

// loadGo returns the Go class of wasm_exec.js, loading the file once per
// realm when no Go class is defined yet: from url when the host named one
// (options.wasmExec), else by importing the wasm_exec.js shipped beside
// this file, as a module bundlers follow and emit with the app (it is a
// script that sets globalThis.Go, and runs as a module as it is). Where
// there is none beside this file (the glue's sources, or a bundle without
// it), it is loaded from near: next to a module URL the host passed.
//
// Loads are shared by URL: a call with another URL (a retry after a wrong
// path) starts its own load instead of waiting for one that will fail, and
// a failed load is forgotten, so a retry starts afresh.
export async function loadGo(url, near) {
  if (typeof globalThis.Go === "function") return globalThis.Go;
  if (url) return loadGoScript(url);
  try {
    await import("./wasm_exec.js");
    if (typeof globalThis.Go !== "function") throw new Error("wasm_exec.js did not define Go");
    return globalThis.Go;
  } catch (e) {
    if (typeof globalThis.Go === "function") return globalThis.Go;
    if (near) return loadGoScript(near);
    throw loadFailed("the wasm_exec.js beside the glue", e);
  }
}

async function loadGoScript(url) {
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

export function checkConfig(options) {
  if (!isObject(options)) throw argError("options", "must be an object");
  const { wasm, wasmExec, systemPrompt, model, tools, limits, onProgress } = options;
  if (onProgress !== undefined && typeof onProgress !== "function") {
    throw argError("options.onProgress", "must be a function");
  }
  const w = options.worker;
  if (w !== undefined && typeof w !== "boolean" && typeof w !== "string" && !(w instanceof URL)) {
    throw argError("options.worker", "must be true, false, a URL or a string");
  }
  if (wasm === null) throw argError("options.wasm", "must be a URL, bytes, a Response or a WebAssembly.Module, or omitted");
  if (wasmExec !== undefined && typeof wasmExec !== "string" && !(wasmExec instanceof URL)) {
    throw argError("options.wasmExec", "must be a URL or a string");
  }
  // null is no prompt, and no limits, as in the module (jsedge.Config):
  // testdata/edges/ holds both to one answer.
  if (systemPrompt !== undefined && systemPrompt !== null && typeof systemPrompt !== "string") {
    throw argError("options.systemPrompt", "must be a string");
  }
  // The host's token counter (js/count.js): the module asks for counts
  // under a token budget.
  if (options.countTokens !== undefined && typeof options.countTokens !== "function") {
    throw argError("options.countTokens", "must be a function (message) => number");
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
      checkNeedsApproval(t.needsApproval, i);
    });
  }
  if (limits !== undefined && limits !== null && (!isObject(limits) || Array.isArray(limits))) {
    throw argError("options.limits", "must be an object");
  }
}

// startInstance starts a Go instance of boot.module under a new global name
// and creates its runtime from boot.config. It resolves with the instance:
// { go, name, number, driver, version, dead, pending, onExit, idle } (idle:
// js/idle.js).
export async function startInstance(boot) {
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
  const inst = { go, name, number: -1, driver: null, version: "", dead: false, pending: new Set(), onExit: null, idle: false };
  const exited = () => {
    if (inst.onExit) inst.onExit();
  };
  // go.run runs main until it blocks: a module that publishes has done so
  // when go.run returns.
  go.run(instance).then(exited, exited);
  const api = globalThis[name];
  if (!isObject(api)) {
    delete globalThis[name];
    throw new AgentrtError("load_failed", `agentrt: the module did not publish globalThis.${name}` +
      (go.exited ? " (it exited)" : ""));
  }
  // The runtime is created over the wire (agentrt_create, a config frame
  // of JSON text, js/control.js): the glue calls the module's wire exports
  // only.
  try {
    inst.number = createRuntime(instance.exports, boot.config);
  } catch (e) {
    delete globalThis[name];
    throw toError(e, "invalid_argument");
  }
  try {
    inst.driver = new TurnDriver(instance.exports, inst.number, boot.config);
  } catch (e) {
    delete globalThis[name];
    throw e;
  }
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
export function disposeInstance(inst) {
  try {
    if (inst.driver) inst.driver.close();
    if (inst.driver && !inst.dead && !inst.go.exited) inst.driver.closeRuntime();
  } catch {
    // The instance is being dropped: nothing to report.
  } finally {
    delete globalThis[inst.name];
  }
}

// ---------------------------------------------------------------------------
