// The native side of the shell stand-in. It plays what a mobile app's
// native code does around a webview:
// - it owns the module's bytes (read once from the app bundle; here one
//   fetch by this page, never by the webview) and hands them over on
//   request, as a transferred ArrayBuffer or as a base64 string (the form
//   most native bridges carry);
// - it owns the durable history (SQLite in an app; a Map here) and answers
//   the webview's asynchronous load and append calls;
// - it can kill the webview (drop the page and its runtime, as the OS does
//   to a background app) and start a new one, which must seed cold from the
//   history kept here.
//
// Tests and the benchmark drive it through window.shell (see below).

import { Bridge } from "./bridge.js";

const WASM_URL = new URL("../dist/agentrt.wasm", import.meta.url);
const WEBVIEW_URL = new URL("webview.html", import.meta.url);

// The durable history: conversation id -> messages.
const store = new Map();
// Every Content Security Policy violation seen here or reported by a webview.
const violations = [];
let wasmBytes = null;
let webview = null; // { iframe, bridge, transport, ready }
let starts = 0;

document.addEventListener("securitypolicyviolation", (e) => {
  violations.push({ where: "native", directive: e.effectiveDirective || e.violatedDirective, blocked: e.blockedURI });
});

// A stand-in for an asynchronous trip to the native store.
const bridgeHop = () => new Promise((resolve) => setTimeout(resolve, 0));

function toBase64(bytes) {
  if (typeof bytes.toBase64 === "function") return bytes.toBase64();
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

// salted returns the module's bytes with a custom section of random bytes
// appended: the same module, but not byte-identical, so an engine that
// reuses compiled code for identical bytes (V8 does, within a process)
// compiles it afresh. The benchmark measures a cold compile this way.
function salted(bytes) {
  const name = new TextEncoder().encode("agentrt-salt");
  const payload = crypto.getRandomValues(new Uint8Array(16));
  const size = 1 + name.length + payload.length; // < 128: one-byte LEB128s
  const out = new Uint8Array(bytes.length + 2 + size);
  out.set(bytes);
  out.set([0, size, name.length], bytes.length);
  out.set(name, bytes.length + 3);
  out.set(payload, bytes.length + 3 + name.length);
  return out;
}

function setStatus(text) {
  document.getElementById("status").textContent = text;
}

const handlers = {
  // What the webview needs to boot: the conversation and the runtime's configuration.
  config: async () => ({
    conversation: webview.conversation,
    systemPrompt: "You are the assistant of the agentrt shell stand-in.",
    worker: webview.worker,
  }),
  // The module's bytes, copied out of the bundle for each webview.
  wasm: async () => {
    const copy = webview.salt ? salted(wasmBytes) : wasmBytes.slice();
    if (webview.transport === "base64") return { transport: "base64", base64: toBase64(copy) };
    return { result: { transport: "bytes", bytes: copy.buffer }, transfer: [copy.buffer] };
  },
  "history.load": async ({ conversation }) => {
    await bridgeHop();
    return { messages: structuredClone(store.get(conversation) || []) };
  },
  "history.append": async ({ conversation, messages }) => {
    await bridgeHop();
    const list = store.get(conversation) || [];
    list.push(...messages);
    store.set(conversation, list);
    return { count: list.length };
  },
  violation: async (v) => {
    violations.push({ where: "webview", ...v });
  },
};

/**
 * start opens a new webview on conversation. transport is how the module's
 * bytes cross the bridge: "base64" (default) or "bytes". salt appends a
 * custom section of random bytes to the module (see salted). worker runs
 * the webview's runtime in a Web Worker (the glue's worker mode), the
 * bytes handed to it. Resolves with the webview's boot timings once its
 * runtime is ready.
 */
async function start({ transport = "base64", conversation = "chat-1", salt = false, worker = false } = {}) {
  if (webview) throw new Error("a webview is running: kill it first");
  await bytesReady;
  const iframe = document.createElement("iframe");
  iframe.title = "webview";
  const n = ++starts;
  webview = { iframe, transport, conversation, salt, worker: Boolean(worker), bridge: null };
  const wv = webview;
  const ready = new Promise((resolve, reject) => {
    handlers.ready = async (timings) => { if (webview === wv) resolve(timings); };
    handlers.failed = async (err) => { if (webview === wv) reject(Object.assign(new Error(err.message), { code: err.code })); };
  });
  // The webview says hello when it listens; it gets its end of the channel then.
  const onHello = (e) => {
    if (e.source !== iframe.contentWindow || e.origin !== location.origin || e.data !== "agentrt-shell-hello") return;
    removeEventListener("message", onHello);
    const channel = new MessageChannel();
    wv.bridge = new Bridge(channel.port1, handlers);
    iframe.contentWindow.postMessage("agentrt-shell-bridge", location.origin, [channel.port2]);
  };
  addEventListener("message", onHello);
  iframe.src = WEBVIEW_URL.href + "#" + n;
  document.getElementById("frame").appendChild(iframe);
  document.body.dataset.webview = "starting";
  setStatus(`webview ${n}: starting (${transport}${worker ? ", worker" : ""})`);
  const timings = await ready;
  document.body.dataset.webview = "ready";
  setStatus(`webview ${n}: ready`);
  return timings;
}

/** kill drops the webview and its runtime without warning it; the history stays. */
function kill() {
  if (!webview) return false;
  if (webview.bridge) webview.bridge.close();
  webview.iframe.remove();
  webview = null;
  document.body.dataset.webview = "none";
  setStatus("killed: no webview");
  return true;
}

function call(method, params) {
  if (!webview || !webview.bridge) throw new Error("no webview");
  return webview.bridge.call(method, params);
}

const bytesReady = (async () => {
  const res = await fetch(WASM_URL);
  if (!res.ok) throw new Error(`HTTP ${res.status} for ${WASM_URL.href}`);
  wasmBytes = new Uint8Array(await res.arrayBuffer());
})();

/** The shell's controls, for tests, the benchmark and the console. */
window.shell = {
  start,
  kill,
  /** Sends text as the webview's user would; resolves with the turn's summary. */
  send: (text) => call("send", { text }),
  /** What the webview's document loaded (resource URLs) and its realm's state. */
  inspect: () => call("inspect", {}),
  /** Tries eval in the webview: resolves with whether the policy blocked it. */
  probeEval: () => call("probe", {}),
  /** A copy of the stored history of conversation. */
  history: (conversation = "chat-1") => structuredClone(store.get(conversation) || []),
  /** Replaces the stored history of conversation (the benchmark seeds 1,000 messages). */
  setHistory: (conversation, messages) => { store.set(conversation, structuredClone(messages)); },
  /** The policy violations seen so far, here and in every webview. */
  violations: () => violations.slice(),
  bytesReady,
};

document.getElementById("start").addEventListener("click", () => start().catch((e) => setStatus(`failed: ${e.message}`)));
document.getElementById("kill").addEventListener("click", kill);
bytesReady.then(() => { document.body.dataset.bytes = String(wasmBytes.length); },
  (e) => { document.body.dataset.bytes = "failed"; setStatus(`cannot read the module: ${e.message}`); });
