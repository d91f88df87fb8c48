// The agentrt web demo: a chat page that shows the seeding seam.
//
// The page (the host) keeps the durable history in IndexedDB; the runtime
// keeps the live session in memory. Each turn sends the stored earlier
// turns as history and the new message as input, so a runtime that lost
// its sessions (page reload, "Restart runtime") seeds itself once from
// IndexedDB, and a warm one ignores the history. The inspector shows, for
// every turn, the seed outcome and the exact messages the model received.
//
// Plain ES module, no dependencies, no build step. It loads glue.js and
// the module from the served dist/ directory.

const DIST = new URL("./dist/", import.meta.url);
const GLUE_URL = new URL("glue.js", DIST).href;
const WASM_URL = new URL("agentrt.wasm", DIST).href;
const WASM_EXEC_URL = new URL("wasm_exec.js", DIST).href;

const SYSTEM_PROMPT =
  "You are the assistant of the agentrt demo. Be brief. " +
  "Call the time tool when asked about the date or time.";

// ---------------------------------------------------------------------------
// Durable history: IndexedDB.
//
// One object store, "conversations", keyed by id:
//   { id, title, createdAt, updatedAt, messages: [{ role, content, tool_call_id?, tool_calls? }] }
// A turn's messages are appended in one read-write transaction, so two tabs
// writing the same conversation never lose each other's turns.

const DB_NAME = "agentrt-demo";
const DB_VERSION = 1;
const STORE = "conversations";

let dbPromise = null;

function openDB() {
  if (!dbPromise) {
    dbPromise = new Promise((resolve, reject) => {
      const req = indexedDB.open(DB_NAME, DB_VERSION);
      req.onupgradeneeded = () => {
        const db = req.result;
        if (!db.objectStoreNames.contains(STORE)) db.createObjectStore(STORE, { keyPath: "id" });
      };
      req.onsuccess = () => {
        const db = req.result;
        // Another tab upgrading the schema: let it, and reopen on next use.
        db.onversionchange = () => { db.close(); dbPromise = null; };
        resolve(db);
      };
      req.onerror = () => reject(req.error);
      req.onblocked = () => reject(new Error("IndexedDB is blocked by another tab; close it and reload"));
    });
    dbPromise.catch(() => { dbPromise = null; });
  }
  return dbPromise;
}

// tx runs fn(store) in one transaction and resolves with fn's result once
// the transaction has committed.
async function tx(mode, fn) {
  const db = await openDB();
  return new Promise((resolve, reject) => {
    const t = db.transaction(STORE, mode);
    let out;
    t.oncomplete = () => resolve(out);
    t.onerror = () => reject(t.error);
    t.onabort = () => reject(t.error || new Error("IndexedDB transaction aborted"));
    Promise.resolve(fn(t.objectStore(STORE))).then((v) => { out = v; }, (e) => { t.abort(); reject(e); });
  });
}

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

const storage = {
  async list() {
    const all = await tx("readonly", (s) => request(s.getAll()));
    return all.sort((a, b) => b.updatedAt - a.updatedAt);
  },
  get(id) {
    return tx("readonly", (s) => request(s.get(id)));
  },
  async create() {
    const now = Date.now();
    const conv = { id: newId(), title: "New conversation", createdAt: now, updatedAt: now, messages: [] };
    await tx("readwrite", (s) => request(s.add(conv)));
    return conv;
  },
  // append adds messages to the end of a conversation, atomically.
  append(id, messages) {
    return tx("readwrite", async (s) => {
      const conv = await request(s.get(id));
      if (!conv) throw codedError("not_found", "the conversation was deleted");
      for (const m of messages) conv.messages.push(toStored(m));
      if (conv.title === "New conversation") {
        const first = conv.messages.find((m) => m.role === "user");
        if (first) conv.title = first.content.slice(0, 60) || conv.title;
      }
      conv.updatedAt = Date.now();
      await request(s.put(conv));
      return conv;
    });
  },
  remove(id) {
    return tx("readwrite", (s) => request(s.delete(id)));
  },
};

// toStored keeps the fields of a session message that history needs.
function toStored(m) {
  const out = { role: String(m.role), content: m.content == null ? "" : String(m.content) };
  const callId = m.tool_call_id ?? m.toolCallId;
  if (callId) out.tool_call_id = String(callId);
  const calls = m.tool_calls ?? m.toolCalls;
  if (Array.isArray(calls) && calls.length) {
    out.tool_calls = calls.map((c) => ({
      id: String(c.id),
      name: String(c.name ?? c.function?.name ?? ""),
      arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments ?? c.function?.arguments ?? {}),
    }));
  }
  return out;
}

function newId() {
  const b = new Uint8Array(9);
  crypto.getRandomValues(b); // works outside secure contexts too (webviews on a LAN address)
  return "c-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

function codedError(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

// ---------------------------------------------------------------------------
// Models and tools.

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

// openAIModel returns a model function for an OpenAI-compatible endpoint.
// It streams: each content delta goes to request.delta as it arrives. The
// key lives only in this closure (never in storage).
function openAIModel({ baseURL, model, key }) {
  const url = baseURL.replace(/\/+$/, "") + "/chat/completions";
  return async function complete(request) {
    const messages = [];
    if (request.system) messages.push({ role: "system", content: request.system });
    for (const m of request.messages) messages.push(toOpenAIMessage(m));
    const body = { model, stream: true, messages };
    const tools = (request.tools || []).map((t) => ({
      type: "function",
      function: {
        name: t.name,
        description: t.description || undefined,
        parameters: parseMaybeJSON(t.parameters) || { type: "object", properties: {} },
      },
    }));
    if (tools.length) body.tools = tools;
    const headers = { "content-type": "application/json", accept: "text/event-stream" };
    if (key) headers.authorization = "Bearer " + key;
    let res;
    try {
      res = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
    } catch (e) {
      throw new Error(`cannot reach ${url}: ${e.message}`);
    }
    if (!res.ok) {
      const text = await res.text().catch(() => "");
      throw new Error(`${url} answered ${res.status}: ${text.slice(0, 300)}`);
    }
    return readChatStream(res, (text) => request.delta(text));
  };
}

function toOpenAIMessage(m) {
  const out = { role: m.role, content: m.content ?? "" };
  const calls = m.tool_calls ?? m.toolCalls;
  if (m.role === "assistant" && Array.isArray(calls) && calls.length) {
    out.content = m.content || null;
    out.tool_calls = calls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments ?? {}) },
    }));
  }
  const callId = m.tool_call_id ?? m.toolCallId;
  if (m.role === "tool") out.tool_call_id = callId;
  return out;
}

function parseMaybeJSON(v) {
  if (typeof v !== "string") return v || null;
  if (!v) return null;
  try { return JSON.parse(v); } catch { return null; }
}

// readChatStream reads a chat.completions Server-Sent Events stream (or a
// plain JSON answer) into a reply { content, toolCalls }.
async function readChatStream(res, onDelta) {
  const type = res.headers.get("content-type") || "";
  if (!type.includes("text/event-stream")) {
    const j = await res.json();
    const msg = j?.choices?.[0]?.message || {};
    if (msg.content) onDelta(msg.content);
    return {
      content: msg.content || "",
      toolCalls: (msg.tool_calls || []).map((c) => ({ id: c.id, name: c.function?.name, arguments: c.function?.arguments || "{}" })),
    };
  }
  let content = "";
  const calls = []; // by index
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let done = false;
  while (!done) {
    const chunk = await reader.read();
    if (chunk.done) break;
    buf += chunk.value;
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, "");
      buf = buf.slice(nl + 1);
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") { done = true; break; }
      let ev;
      try { ev = JSON.parse(data); } catch { continue; }
      if (ev.error) throw new Error("endpoint error: " + (ev.error.message || JSON.stringify(ev.error)));
      const delta = ev.choices?.[0]?.delta;
      if (!delta) continue;
      if (typeof delta.content === "string" && delta.content) {
        content += delta.content;
        onDelta(delta.content);
      }
      for (const tc of delta.tool_calls || []) {
        const i = tc.index ?? calls.length;
        const c = (calls[i] ||= { id: "", name: "", arguments: "" });
        if (tc.id) c.id = tc.id;
        if (tc.function?.name) c.name += tc.function.name;
        if (tc.function?.arguments) c.arguments += tc.function.arguments;
      }
    }
  }
  // Read to the end after [DONE] (servers close right after it): cancelling
  // instead would abort the request, which browsers log as a failure.
  while (done && !(await reader.read()).done) { /* drain */ }
  return { content, toolCalls: calls.filter(Boolean).map((c) => ({ ...c, arguments: c.arguments || "{}" })) };
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
    const model = runtime.modelConfig.kind === "openai" ? openAIModel(runtime.modelConfig) : "echo";
    const rt = await glue.loadRuntime({
      wasm: WASM_URL,
      wasmExec: WASM_EXEC_URL,
      systemPrompt: SYSTEM_PROMPT,
      model,
      tools: [timeTool],
    });
    if (gen !== runtime.generation) { closeQuietly(rt); return; }
    runtime.rt = rt;
    runtime.version = rt.version || glue.version || "";
    const modelName = runtime.modelConfig.kind === "openai" ? runtime.modelConfig.model : "echo";
    setRuntimeStatus("ready", `ready (instance #${gen}, model ${modelName})`);
    const waiters = runtime.waiters.splice(0);
    for (const w of waiters) w(rt);
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
  if (state.running) state.running.abandon(codedError("restarted", "the runtime was restarted"));
  closeQuietly(old);
  for (const turns of state.turns.values()) turns.push({ marker: "Runtime restarted: sessions are cold" });
  renderInspector();
  startRuntime();
}

// ---------------------------------------------------------------------------
// Page state.

const state = {
  current: null, // the open conversation's id
  stored: [], // its stored messages (from IndexedDB)
  queue: [], // jobs waiting to run: { convId, text, status, error? }
  running: null, // the job running now
  failed: [], // jobs that failed, shown with Retry
  turns: new Map(), // convId -> inspector entries of this page's lifetime
  seedMode: "if-empty",
};

const $ = (id) => document.getElementById(id);
const els = {};

function setRuntimeStatus(kind, text) {
  document.body.dataset.runtime = kind;
  els.status.textContent = text;
  renderQueueNote();
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
    const result = await Promise.race([
      rt.run({
        sessionId: conv.id,
        input: job.text,
        history,
        policy,
        inspect: true,
        signal: controller.signal,
        onEvent: (ev) => { if (job.attempt === attempt) onRunEvent(job, ev); },
      }),
      abandoned,
    ]);
    await storage.append(conv.id, result.appended || []);
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
// The inspector.

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

function renderInspector() {
  const list = state.turns.get(state.current) || [];
  const last = [...list].reverse().find((t) => !t.marker);
  els.seedMode.textContent = last ? last.seed.mode : "–";
  els.seedCount.textContent = last ? String(last.seed.seeded) : "–";
  els.modelMessages.textContent = last && last.calls.length ? String(last.calls[0].messageCount) : "–";

  els.turns.replaceChildren();
  for (const t of [...list].reverse()) {
    const li = document.createElement("li");
    if (t.marker) {
      li.className = "marker";
      li.textContent = t.marker;
      els.turns.append(li);
      continue;
    }
    li.className = "turn";
    li.dataset.deltas = String(t.deltas);
    const h = document.createElement("h3");
    h.textContent = `Turn ${t.n}`;
    const seed = document.createElement("p");
    seed.className = `seed seed-${t.seed.mode}`;
    seed.textContent =
      `sent ${t.historyLength} history message${t.historyLength === 1 ? "" : "s"}; ` +
      `seed: ${t.seed.mode}, ${t.seed.seeded} seeded` +
      (t.seed.skippedSystem ? `, ${t.seed.skippedSystem} system skipped` : "") +
      `; session now holds ${t.sessionCount ?? "?"}; reply streamed in ${t.deltas} delta${t.deltas === 1 ? "" : "s"}`;
    li.append(h, seed);
    for (const c of t.calls) {
      const d = document.createElement("details");
      if (c === t.calls[0]) d.open = list.indexOf(t) === list.length - 1;
      const s = document.createElement("summary");
      s.textContent = `Model call ${c.step}: received ${c.messageCount} message${c.messageCount === 1 ? "" : "s"}`;
      const ol = document.createElement("ol");
      ol.className = "inspect-messages";
      // On the first call, the seeded messages sit just before the input.
      const seededFrom = c === t.calls[0] && t.seed.seeded ? c.messages.length - 1 - t.seed.seeded : -1;
      c.messages.forEach((m, i) => {
        const item = document.createElement("li");
        item.className = `inspect-msg role-${m.role}`;
        if (seededFrom >= 0 && i >= seededFrom && i < c.messages.length - 1) item.classList.add("seeded");
        item.textContent = `${m.role}: ${describe(m)}`;
        ol.append(item);
      });
      d.append(s, ol);
      li.append(d);
    }
    els.turns.append(li);
  }
}

function describe(m) {
  const calls = m.tool_calls ?? m.toolCalls;
  if (Array.isArray(calls) && calls.length) {
    const names = calls.map((c) => `${c.name}(${typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments)})`);
    return (m.content ? m.content + " " : "") + "→ calls " + names.join(", ");
  }
  if (m.role === "tool") return `[${m.tool_call_id ?? m.toolCallId}] ${m.content}`;
  return m.content ?? "";
}

// ---------------------------------------------------------------------------
// Rendering the chat.

function bubble(role, text, extra) {
  const li = document.createElement("li");
  li.className = `bubble role-${role}` + (extra ? " " + extra : "");
  li.dataset.testid = "message";
  li.dataset.role = role;
  const who = document.createElement("span");
  who.className = "who";
  who.textContent = role === "user" ? "You" : role === "assistant" ? "Assistant" : role === "tool" ? "Tool" : role;
  const body = document.createElement("span");
  body.className = "text";
  body.textContent = text;
  li.append(who, body);
  return li;
}

function renderMessages() {
  const frag = document.createDocumentFragment();
  for (const m of state.stored) {
    frag.append(bubble(m.role, describe(m)));
  }
  const pending = [...state.failed, ...state.queue].filter((j) => j.convId === state.current && j.status !== "done");
  for (const job of pending) {
    const extra = job.status === "failed" ? "failed" : "pending";
    const b = bubble("user", job.text, extra);
    const note = document.createElement("span");
    note.className = "note";
    note.textContent =
      job.status === "failed" ? "not sent" :
      job.status === "running" ? "" :
      runtime.rt ? "queued" : "waiting for the runtime…";
    if (note.textContent) b.append(note);
    frag.append(b);
    if (job.status === "running") {
      for (const t of job.tools) frag.append(bubble("tool", t, "live"));
      const r = bubble("assistant", job.reply, "live");
      r.setAttribute("aria-busy", "true");
      r.hidden = !job.reply;
      job.replyEl = r;
      frag.append(r);
    }
  }
  els.messages.replaceChildren(frag);
  scrollToEnd();
}

function scrollToEnd() {
  els.messages.scrollTop = els.messages.scrollHeight;
}

function renderQueueNote() {
  const waiting = state.queue.filter((j) => j.status === "queued").length;
  if (waiting && !runtime.rt) {
    els.queueNote.hidden = false;
    els.queueNote.textContent = `${waiting} message${waiting === 1 ? "" : "s"} waiting for the runtime to load.`;
  } else {
    els.queueNote.hidden = true;
    els.queueNote.textContent = "";
  }
}

async function renderConversations() {
  let list;
  try {
    list = await storage.list();
  } catch (e) {
    showError(e, { title: "Cannot read the conversations from IndexedDB" });
    return;
  }
  els.conversations.replaceChildren(
    ...list.map((c) => {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "conv";
      b.textContent = c.title;
      b.title = `${c.messages.length} stored messages`;
      if (c.id === state.current) b.setAttribute("aria-current", "true");
      b.addEventListener("click", () => { openConversation(c.id); closeDrawers(); });
      const count = document.createElement("span");
      count.className = "count";
      count.textContent = String(c.messages.length);
      b.append(count);
      li.append(b);
      return li;
    }),
  );
}

async function loadCurrent() {
  const conv = state.current ? await storage.get(state.current) : null;
  state.stored = conv ? conv.messages : [];
  els.chatTitle.textContent = conv ? conv.title : "Conversation";
  renderMessages();
  renderInspector();
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

// ---------------------------------------------------------------------------
// Errors: always on the page, never only in the console.

function showError(e, { title, action, job } = {}) {
  const div = document.createElement("div");
  div.className = "error";
  div.dataset.testid = "error";
  if (e && e.code) div.dataset.code = e.code;
  const h = document.createElement("strong");
  h.textContent = title || "Error";
  const p = document.createElement("p");
  const code = e && e.code ? `[${e.code}] ` : "";
  const index = e && e.index != null ? ` (history index ${e.index})` : "";
  p.textContent = code + (e && e.message ? e.message : String(e)) + index;
  div.append(h, p);
  const remove = () => div.remove();
  if (action) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = action.label;
    b.addEventListener("click", () => { remove(); action.run(); });
    div.append(b);
  }
  const x = document.createElement("button");
  x.type = "button";
  x.textContent = "Dismiss";
  x.addEventListener("click", () => {
    remove();
    if (job) { state.failed = state.failed.filter((j) => j !== job); renderMessages(); }
  });
  div.append(x);
  els.errors.append(div);
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

function closeDrawers() {
  for (const [btn, panel] of [[els.toggleSide, els.side], [els.toggleInspector, els.inspector]]) {
    panel.classList.remove("open");
    btn.setAttribute("aria-expanded", "false");
  }
}

function toggle(btn, panel) {
  const open = !panel.classList.contains("open");
  closeDrawers();
  panel.classList.toggle("open", open);
  btn.setAttribute("aria-expanded", String(open));
  if (open) panel.querySelector("button, select, input, a, summary")?.focus();
}

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
