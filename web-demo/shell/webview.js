// The web side of the shell stand-in: what an app's webview runs. It never
// fetches the module: it asks the native side for the bytes over the bridge,
// compiles them, and hands the compiled module to the glue; or, when the
// native side asks for worker mode, hands the bytes to the glue's worker. Each turn loads
// the conversation's history from the native side, runs it (a cold runtime
// seeds from it exactly once) and sends the new messages back to be stored.
//
// The page runs under `default-src 'self'; script-src 'self'
// 'wasm-unsafe-eval'`: wasm_exec.js is a same-origin script, glue.js a
// same-origin module, and compiling wasm is what 'wasm-unsafe-eval' allows.

import { loadRuntime } from "../dist/glue.js";
import { Bridge } from "./bridge.js";

let bridge = null;
let rt = null;
let conversation = "";
let probing = null; // the violations seen while probeEval runs
let queue = Promise.resolve();
const early = []; // violations seen before the bridge was up

document.addEventListener("securitypolicyviolation", (e) => {
  const v = { directive: e.effectiveDirective || e.violatedDirective, blocked: e.blockedURI, sample: e.sample || "" };
  if (probing) probing.push(v);
  else if (bridge) bridge.call("violation", v);
  else early.push(v);
});

function setRuntime(state, text) {
  document.body.dataset.runtime = state;
  document.getElementById("runtime").textContent = text;
}

function bubble(role, text) {
  const li = document.createElement("li");
  li.className = role;
  li.textContent = text;
  const list = document.getElementById("messages");
  list.appendChild(li);
  li.scrollIntoView({ block: "end" });
}

function fromBase64(s) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(s);
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// boot loads the runtime from what the native side hands over, timing each stage.
async function boot() {
  const t0 = performance.now();
  const config = await bridge.call("config", {});
  conversation = config.conversation;
  const got = await bridge.call("wasm", {});
  const t1 = performance.now();
  const bytes = got.transport === "base64" ? fromBase64(got.base64) : new Uint8Array(got.bytes);
  const t2 = performance.now();
  // In worker mode (the glue's, ADR 0021) the bytes cross to the
  // runtime's worker, which compiles them: this page's main thread
  // neither compiles nor starts Go.
  const module = config.worker ? null : await WebAssembly.compile(bytes);
  const t3 = performance.now();
  rt = await loadRuntime(config.worker
    ? { worker: true, wasm: bytes, systemPrompt: config.systemPrompt }
    : { wasm: module, systemPrompt: config.systemPrompt });
  const t4 = performance.now();
  const history = (await bridge.call("history.load", { conversation })).messages;
  for (const m of history) if (m.role === "user" || m.role === "assistant") bubble(m.role, m.content);
  setRuntime("ready", `ready (${rt.version || "agentrt"}${config.worker ? ", in a worker" : ""}), ${history.length} stored messages`);
  return {
    transport: got.transport,
    thread: rt.worker ? "worker" : "main",
    bytes: bytes.length,
    bridgeMs: t1 - t0,
    decodeMs: t2 - t1,
    compileMs: t3 - t2,
    instantiateMs: t4 - t3,
    totalMs: t4 - t0,
    stored: history.length,
  };
}

// send runs one turn: the history from the native side, the run, the new
// messages back to the native side.
async function send(text) {
  bubble("user", text);
  const t0 = performance.now();
  const { messages } = await bridge.call("history.load", { conversation });
  const t1 = performance.now();
  const r = await rt.run({ sessionId: conversation, input: text, history: messages });
  const t2 = performance.now();
  await bridge.call("history.append", { conversation, messages: r.appended });
  bubble("assistant", r.reply.content);
  return {
    seed: r.seed,
    reply: r.reply.content,
    appended: r.appended.length,
    messageCount: r.messageCount,
    stored: messages.length,
    loadMs: t1 - t0,
    runMs: t2 - t1,
  };
}

function enqueue(fn) {
  const p = queue.then(fn);
  queue = p.catch(() => {});
  return p;
}

const handlers = {
  send: ({ text }) => enqueue(() => send(text)),
  inspect: async () => ({
    resources: performance.getEntriesByType("resource").map((e) => e.name),
    goGlobal: typeof globalThis.Go,
    thread: rt && rt.worker ? "worker" : "main",
    runtime: document.body.dataset.runtime,
  }),
  // Tries eval, which the policy forbids; waits for the violation event.
  probe: async () => {
    probing = [];
    let blocked = false;
    try {
      new Function("return 1")();
    } catch (e) {
      blocked = e instanceof EvalError || /unsafe-eval|Content Security Policy|CSP/i.test(String(e && e.message));
    }
    for (let i = 0; i < 50 && probing.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const seen = probing;
    probing = null;
    return { blocked, violations: seen };
  },
};

document.getElementById("composer").addEventListener("submit", (e) => {
  e.preventDefault();
  const input = document.getElementById("input");
  const text = input.value.trim();
  input.value = "";
  if (text && rt) enqueue(() => send(text)).catch((err) => bubble("assistant", `error: ${err.code || ""} ${err.message}`));
});

addEventListener("message", (e) => {
  if (e.source !== parent || e.origin !== location.origin || e.data !== "agentrt-shell-bridge" || bridge) return;
  bridge = new Bridge(e.ports[0], handlers);
  for (const v of early.splice(0)) bridge.call("violation", v);
  boot().then(
    (timings) => bridge.call("ready", timings),
    (err) => {
      setRuntime("failed", `failed: ${err.code || ""} ${err.message}`);
      bridge.call("failed", { code: err.code || "", message: String(err.message || err) });
    },
  );
});
parent.postMessage("agentrt-shell-hello", location.origin);
