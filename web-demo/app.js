// The agentrt web demo: a chat page that shows the seeding seam.
//
// The page (the host) keeps the durable history in IndexedDB; the runtime
// keeps the live session in memory. Each turn sends the stored earlier
// turns as history and the new message as input, so a runtime that lost
// its sessions (page reload, "Restart runtime") seeds itself once from
// IndexedDB, and a warm one ignores the history. The inspector shows, for
// every turn, the seed outcome and the exact messages the model received.
//
// Plain ES modules, no dependencies, no build step: storage.js keeps the
// history, ui.js renders, and this file wires them to the runtime. It
// loads the glue, the OpenAI-compatible model and the module from the
// served dist/ directory (the npm package's files).

import { storage, toStored, codedError } from "./storage.js";
import {
  state, els, $, setRuntimeStatus, renderInspector, renderMessages, renderQueueNote, renderProblems,
  renderConversations as renderConversationList, scrollToEnd, showError, closeDrawers, toggle,
} from "./ui.js";

const DIST = new URL("./dist/", import.meta.url);
const GLUE_URL = new URL("glue.js", DIST).href;
const OPENAI_URL = new URL("openai.js", DIST).href;
const WASM_URL = new URL("agentrt.wasm", DIST).href;
const WASM_EXEC_URL = new URL("wasm_exec.js", DIST).href;

// The runtime runs in a dedicated Web Worker where the browser has one
// (the glue's worker mode, ADR 0021), so compiling the module, starting Go
// and seeding never block this page's scrolling and painting. "?worker=0"
// in the page's URL keeps it on the main thread, to compare the two.
const IN_WORKER = typeof Worker === "function" && new URLSearchParams(location.search).get("worker") !== "0";

const SYSTEM_PROMPT =
  "You are the assistant of the agentrt demo. Be brief. " +
  "Call the time tool when asked about the date or time.";

// ---------------------------------------------------------------------------
// Tools.

const timeTool = {
  name: "time",
  description: "Returns the current date and time. Optional argument timeZone: an IANA time zone such as Europe/Paris.",
  parameters: {
    type: "object",
    properties: { timeZone: { type: "string", description: "IANA time zone, e.g. UTC or Asia/Tokyo" } },
  },
  call(args) {
    const timeZone = args && typeof args.timeZone === "string" ? args.timeZone : undefined;
    // An unknown zone throws a RangeError: the runtime reports it as tool_error.
    const fmt = new Intl.DateTimeFormat("en-GB", { dateStyle: "full", timeStyle: "long", timeZone });
    return fmt.format(new Date());
  },
};

// pay needs the person's approval for every call (needsApproval: true):
// the run stops before it and the page shows an approval card. The paused
// turn is stored like any other, so the card comes back after a reload,
// from the stored history alone (checkHistory's awaiting).
const payTool = {
  name: "pay",
  description: "Sends a payment (pretend). Arguments: amount (a number), to (a name). Needs the person's approval.",
  parameters: {
    type: "object",
    properties: { amount: { type: "number" }, to: { type: "string" } },
  },
  needsApproval: true,
  call(args) {
    return `paid ${args && args.amount} to ${args && args.to}`;
  },
};

function parseMaybeJSON(v) {
  if (typeof v !== "string" || !v) return null;
  try { return JSON.parse(v); } catch { return null; }
}

// ---------------------------------------------------------------------------
// The runtime: one instance at a time. "Restart runtime" throws it away.

const runtime = {
  rt: null, // the loaded runtime, or null while loading / after a failure
  generation: 0, // bumped by every (re)start; stale loads are discarded
  version: "",
  waiters: [], // resolve functions of whenReady() calls
  modelConfig: { kind: "echo" },
};

function whenReady() {
  if (runtime.rt) return Promise.resolve(runtime.rt);
  return new Promise((resolve) => runtime.waiters.push(resolve));
}

async function startRuntime() {
  const gen = ++runtime.generation;
  setRuntimeStatus("loading", "loading…");
  try {
    const glue = await import(GLUE_URL);
    if (typeof glue.loadRuntime !== "function") throw new Error(`${GLUE_URL} does not export loadRuntime`);
    let model = "echo";
    if (runtime.modelConfig.kind === "openai") {
      // The package's model: streams deltas and calls tools. It aborts its
      // request when the run ends early, so "Restart runtime" (which
      // cancels the running turn and closes the instance) ends the old
      // instance's requests; the turn is retried on the new instance.
      const { openAIModel } = await import(OPENAI_URL);
      const { baseURL, model: name, key } = runtime.modelConfig;
      model = openAIModel({ baseURL, model: name, apiKey: key });
    }
    const rt = await glue.loadRuntime({
      wasm: WASM_URL,
      // In a worker the glue imports the wasm_exec.js beside it as a
      // module: a script URL would be evaluated from its text, which a
      // strict Content Security Policy (no 'unsafe-eval') refuses.
      ...(IN_WORKER ? { worker: true } : { wasmExec: WASM_EXEC_URL }),
      systemPrompt: SYSTEM_PROMPT,
      model,
      tools: [timeTool, payTool],
      onProgress: ({ phase, loaded, total }) => {
        if (gen !== runtime.generation || phase === "done") return;
        const mb = (n) => (n / 1e6).toFixed(1);
        setRuntimeStatus("loading", `${phase === "download" ? "downloading" : "compiling"} the module: ${mb(loaded)}${total ? ` of ${mb(total)}` : ""} MB…`);
      },
    });
    if (gen !== runtime.generation) { closeQuietly(rt); return; }
    runtime.rt = rt;
    state.ready = true;
    runtime.version = rt.version || glue.version || "";
    const modelName = runtime.modelConfig.kind === "openai" ? runtime.modelConfig.model : "echo";
    setRuntimeStatus("ready", `ready (instance #${gen}, model ${modelName}${IN_WORKER ? ", in a worker" : ""})`);
    document.body.dataset.thread = IN_WORKER ? "worker" : "main";
    const waiters = runtime.waiters.splice(0);
    for (const w of waiters) w(rt);
    checkCurrent();
    pump();
  } catch (e) {
    if (gen !== runtime.generation) return;
    setRuntimeStatus("failed", "failed to load");
    showError(e, { title: "The runtime did not load", action: { label: "Try again", run: restartRuntime } });
  }
}

function closeQuietly(rt) {
  try { rt?.close?.(); } catch { /* the instance is being dropped anyway */ }
}

// restartRuntime drops the current instance (its sessions are gone: the
// next turn of every conversation is a cold start) and loads a new one. A
// turn running on the old instance is abandoned and retried on the new
// one; messages sent meanwhile wait in the queue.
function restartRuntime() {
  const old = runtime.rt;
  runtime.rt = null;
  state.ready = false;
  if (state.running) state.running.abandon(codedError("restarted", "the runtime was restarted"));
  closeQuietly(old);
  for (const turns of state.turns.values()) turns.push({ marker: "Runtime restarted: sessions are cold" });
  renderInspector();
  startRuntime();
}

// ---------------------------------------------------------------------------
// Sending: a queue, so nothing is lost while the runtime (re)loads.

function send() {
  const text = els.input.value;
  if (!text.trim()) { els.input.focus(); return; }
  if (!state.current) return;
  els.input.value = "";
  state.queue.push({ convId: state.current, text, status: "queued" });
  renderMessages();
  pump();
}

let pumping = false;
let settled = 0;

async function pump() {
  if (pumping) return;
  pumping = true;
  setBusy();
  try {
    while (state.queue.length) {
      const rt = await whenReady();
      const job = state.queue[0];
      // A job abandoned by a restart stays first in the queue and runs
      // again on the new instance; runTurn removes the others.
      await runTurn(rt, job);
    }
  } finally {
    pumping = false;
    setBusy();
  }
}

function setBusy() {
  document.body.dataset.busy = String(pumping || state.queue.length > 0);
  renderQueueNote();
}

async function runTurn(rt, job) {
  job.status = "running";
  job.reply = "";
  job.tools = [];
  job.deltas = 0;
  const attempt = (job.attempt = {}); // events of an abandoned attempt are ignored
  state.running = job;
  const controller = new AbortController();
  let abandon;
  const abandoned = new Promise((_, reject) => { abandon = reject; });
  abandoned.catch(() => {});
  job.abandon = (err) => { controller.abort(); abandon(err); };
  renderMessages();
  try {
    const conv = await storage.get(job.convId);
    if (!conv) throw codedError("not_found", "this conversation no longer exists");
    // Only the earlier turns go in history; the new message is the input.
    // Sent as stored: the glue reads every shape by the rules of
    // docs/contract.md.
    const history = conv.messages;
    const policy = { seedMode: state.seedMode };
    if (state.repair.has(conv.id)) policy.repair = true;
    const result = await Promise.race([
      rt.run({
        sessionId: conv.id,
        // An approval card's answer resumes the paused turn: no input.
        ...(job.approvals ? { approvals: job.approvals } : { input: job.text }),
        history,
        policy,
        inspect: true,
        signal: controller.signal,
        onEvent: (ev) => { if (job.attempt === attempt) onRunEvent(job, ev); },
      }),
      abandoned,
    ]);
    // A repaired history heals where it is stored too: the next cold start
    // needs no repair.
    if (result.seed && result.seed.repaired) await storage.heal(conv.id, history.length, result.seed.repaired, result.appended || []);
    else await storage.append(conv.id, result.appended || []);
    recordTurn(conv.id, result, history.length, job.deltas);
    job.status = "done";
    broadcast({ type: "changed", convId: conv.id });
  } catch (e) {
    if (e && e.code === "restarted") {
      job.status = "queued"; // retried on the new instance
    } else {
      job.status = "failed";
      job.error = e;
      state.failed.push(job);
      showError(e, {
        title: "The message was not sent",
        action: { label: "Retry", run: () => retry(job) },
        job,
      });
    }
  } finally {
    state.running = null;
    if (job.status !== "queued") state.queue = state.queue.filter((j) => j !== job);
    if (job.convId === state.current) await loadCurrent();
    await renderConversations();
    // A hook for tests: how many turns finished (either way) on this page.
    if (job.status !== "queued") document.body.dataset.settled = String(++settled);
  }
}

function retry(job) {
  state.failed = state.failed.filter((j) => j !== job);
  job.status = "queued";
  job.error = undefined;
  state.queue.push(job);
  renderMessages();
  pump();
}

function onRunEvent(job, ev) {
  if (ev.type === "model.delta") job.deltas++;
  if (job.convId !== state.current || !job.replyEl) {
    if (ev.type === "model.delta") job.reply += ev.delta ?? ev.text ?? "";
    return;
  }
  switch (ev.type) {
    case "model.delta":
      job.reply += ev.delta ?? ev.text ?? "";
      job.replyEl.querySelector(".text").textContent = job.reply;
      job.replyEl.hidden = false;
      scrollToEnd();
      break;
    case "tool.started":
      job.tools.push(`calling ${ev.toolCall?.name ?? "a tool"}…`);
      job.reply = "";
      renderMessages();
      break;
    case "tool.finished":
      job.tools.push(`${ev.toolCall?.name ?? "tool"} returned: ${ev.message?.content ?? ""}`);
      renderMessages();
      break;
  }
}

// ---------------------------------------------------------------------------
// The inspector's record of each turn.

function recordTurn(convId, result, historyLength, deltas) {
  const calls = (result.modelCalls || []).map((c) => ({
    step: c.step,
    messageCount: c.messageCount,
    messages: c.messages || [],
  }));
  const list = state.turns.get(convId) || [];
  list.push({
    n: list.filter((t) => !t.marker).length + 1,
    seed: result.seed || { mode: "none", seeded: 0, skippedSystem: 0 },
    historyLength,
    deltas,
    calls,
    sessionCount: result.messageCount,
  });
  state.turns.set(convId, list);
  renderInspector();
}

// ---------------------------------------------------------------------------
// Conversations.

async function renderConversations() {
  let list;
  try {
    list = await storage.list();
  } catch (e) {
    showError(e, { title: "Cannot read the conversations from IndexedDB" });
    return;
  }
  renderConversationList(list, openConversation);
}

async function loadCurrent() {
  const conv = state.current ? await storage.get(state.current) : null;
  state.stored = conv ? conv.messages : [];
  state.check = null; // another history: checkCurrent asks again
  els.chatTitle.textContent = conv ? conv.title : "Conversation";
  renderMessages();
  renderInspector();
  checkCurrent();
}

// checkCurrent asks the runtime, once it is loaded, what it thinks of the
// open conversation's stored history, without running anything, and shows
// the problems in the inspector. In worker mode checkHistory answers with
// a Promise; an answer that arrives after the open conversation or the
// runtime changed is dropped.
let checks = 0;
function checkCurrent() {
  state.check = null;
  const n = ++checks;
  if (runtime.rt && state.current) {
    const fail = (e) => showError(e, { title: "Cannot check the stored history" });
    try {
      const got = runtime.rt.checkHistory(state.stored);
      if (got && typeof got.then === "function") {
        got.then((check) => {
          if (n !== checks) return;
          state.check = check;
          renderProblems();
          renderMessages(); // the approval card
        }, (e) => { if (n === checks) fail(e); });
      } else {
        state.check = got;
        renderMessages();
      }
    } catch (e) {
      fail(e);
    }
  }
  renderProblems();
}

// decide answers the open conversation's approval card: every call it
// awaits is approved, or denied, in one resume (a run with approvals and
// no input).
function decide(approved) {
  const awaiting = state.check?.awaiting ?? [];
  if (!state.current || awaiting.length === 0) return;
  const names = awaiting.map((a) => a.name).join(", ");
  state.check = { ...state.check, awaiting: [] };
  state.queue.push({
    convId: state.current, status: "queued", text: `${approved ? "Approved" : "Denied"}: ${names}`,
    approvals: awaiting.map((a) => ({ toolCallId: a.toolCallId, approved, reason: approved ? undefined : "denied on the approval card" })),
  });
  renderMessages();
  pump();
}

// repairAndContinue turns policy.repair on for the open conversation and
// sends again the messages its stored history made fail.
function repairAndContinue() {
  const id = state.current;
  state.repair.add(id);
  for (const e of els.errors.querySelectorAll('[data-testid="error"][data-code="invalid_history"]')) e.remove();
  for (const job of state.failed.filter((j) => j.convId === id)) retry(job);
  renderProblems();
}

async function openConversation(id) {
  document.body.dataset.view = "loading";
  const conv = await storage.get(id);
  if (!conv) { await openDefault(); return; }
  state.current = id;
  if (location.hash !== "#c=" + id) history.replaceState(null, "", "#c=" + id);
  els.secondTab.href = location.href;
  await loadCurrent();
  await renderConversations();
  document.body.dataset.view = "loaded";
}

// openDefault opens the conversation named in the URL, else the most
// recently used one, else a new one.
async function openDefault() {
  const m = /^#c=(.+)$/.exec(location.hash);
  if (m && (await storage.get(decodeURIComponent(m[1])))) return openConversation(decodeURIComponent(m[1]));
  const list = await storage.list();
  if (list.length) return openConversation(list[0].id);
  const conv = await storage.create();
  return openConversation(conv.id);
}


window.addEventListener("error", (ev) => showError(ev.error || ev.message, { title: "Unexpected error" }));
window.addEventListener("unhandledrejection", (ev) => showError(ev.reason, { title: "Unexpected error" }));

// ---------------------------------------------------------------------------
// Tabs: both tabs share IndexedDB; tell the other one when a turn landed.

const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("agentrt-demo") : null;

function broadcast(msg) {
  try { channel?.postMessage(msg); } catch { /* a closed channel only loses the hint */ }
}

if (channel) {
  channel.onmessage = async (ev) => {
    await renderConversations();
    if (ev.data?.convId === state.current && !state.running) await loadCurrent();
  };
}

// ---------------------------------------------------------------------------
// Wiring.

function applyModel(kind) {
  if (kind === "openai") {
    const baseURL = els.openaiBase.value.trim();
    const model = els.openaiModel.value.trim();
    try {
      const u = new URL(baseURL);
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)");
    } catch {
      showError(codedError("invalid_argument", "the base URL must be an http(s) URL, e.g. https://api.openai.com/v1"), { title: "Model not changed" });
      return;
    }
    if (!model) {
      showError(codedError("invalid_argument", "name a model, e.g. gpt-4o-mini"), { title: "Model not changed" });
      return;
    }
    localStorage.setItem("agentrt-demo.openai", JSON.stringify({ baseURL, model })); // never the key
    runtime.modelConfig = { kind, baseURL, model, key: els.openaiKey.value };
  } else {
    runtime.modelConfig = { kind: "echo" };
  }
  // The model is part of the runtime's configuration: a new instance.
  restartRuntime();
}

function init() {
  Object.assign(els, {
    status: $("runtime-status"),
    input: $("input"),
    composer: $("composer"),
    messages: $("messages"),
    conversations: $("conversations"),
    errors: $("errors"),
    chatTitle: $("chat-title"),
    seedMode: $("seed-mode"),
    seedCount: $("seed-count"),
    modelMessages: $("model-messages"),
    turns: $("turns"),
    problems: $("history-problems"),
    problemList: $("problem-list"),
    problemNote: $("problem-note"),
    repairHistory: $("repair-history"),
    queueNote: $("queue-note"),
    secondTab: $("second-tab"),
    side: $("side"),
    inspector: $("inspector"),
    toggleSide: $("toggle-side"),
    toggleInspector: $("toggle-inspector"),
    seedSelect: $("seed-mode-select"),
    openaiSettings: $("openai-settings"),
    openaiBase: $("openai-base"),
    openaiModel: $("openai-model"),
    openaiKey: $("openai-key"),
  });

  els.composer.addEventListener("submit", (ev) => { ev.preventDefault(); send(); });
  els.messages.addEventListener("click", (ev) => {
    const b = ev.target.closest?.("[data-decision]");
    if (b) decide(b.dataset.decision === "approve");
  });
  els.repairHistory.addEventListener("click", repairAndContinue);
  els.input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); send(); }
  });
  $("restart-runtime").addEventListener("click", restartRuntime);
  $("new-conversation").addEventListener("click", async () => {
    try {
      const conv = await storage.create();
      await openConversation(conv.id);
      closeDrawers();
      els.input.focus();
    } catch (e) {
      showError(e, { title: "Cannot create a conversation" });
    }
  });
  els.toggleSide.addEventListener("click", () => toggle(els.toggleSide, els.side));
  els.toggleInspector.addEventListener("click", () => toggle(els.toggleInspector, els.inspector));
  document.addEventListener("keydown", (ev) => { if (ev.key === "Escape") closeDrawers(); });

  const savedMode = localStorage.getItem("agentrt-demo.seedMode");
  if (savedMode === "if-empty" || savedMode === "reconcile") state.seedMode = savedMode;
  els.seedSelect.value = state.seedMode;
  els.seedSelect.addEventListener("change", () => {
    state.seedMode = els.seedSelect.value;
    localStorage.setItem("agentrt-demo.seedMode", state.seedMode);
  });

  const saved = parseMaybeJSON(localStorage.getItem("agentrt-demo.openai") || "");
  if (saved) { els.openaiBase.value = saved.baseURL || ""; els.openaiModel.value = saved.model || ""; }
  for (const r of document.querySelectorAll('input[name="model"]')) {
    r.addEventListener("change", () => {
      els.openaiSettings.hidden = r.value !== "openai" || !r.checked;
      if (r.checked && r.value === "echo" && runtime.modelConfig.kind !== "echo") applyModel("echo");
    });
  }
  $("openai-apply").addEventListener("click", () => applyModel("openai"));

  window.addEventListener("hashchange", () => {
    const m = /^#c=(.+)$/.exec(location.hash);
    if (m && decodeURIComponent(m[1]) !== state.current) openConversation(decodeURIComponent(m[1]));
  });

  openDefault().catch((e) => showError(e, { title: "Cannot open IndexedDB" }));
  startRuntime();
}

init();
