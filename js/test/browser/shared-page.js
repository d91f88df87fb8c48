// The page of the shared-mode e2e (shared.mjs): window.app loads the
// runtime in shared mode and runs, watches and reconnects as the steps
// ask. The page's store is localStorage ("store:<session>": the messages
// the page committed, in order); the run a page started is remembered in
// sessionStorage ("run", "seq"), which survives a reload of that page.
import { loadRuntime } from "/dist/glue.js";

const AGENT = new URL("shared-agent.js", import.meta.url).href;
const OTHER = new URL("shared-agent-other.js", import.meta.url).href;

const app = {
  rt: null,
  seen: [],
  events: [],
  done: null,
  error: null,

  async load({ name = "agentrt-e2e", other = false, noShared = false } = {}) {
    if (noShared) delete globalThis.SharedWorker;
    try {
      app.rt = await loadRuntime({ worker: "shared", name, agent: other ? OTHER : AGENT,
        wasm: "/dist/agentrt.wasm", wasmExec: "/dist/wasm_exec.js" });
      return { mode: app.rt.mode };
    } catch (e) {
      return { failed: { code: e.code, name: e.name, message: e.message } };
    }
  },

  async watch(sessionId) {
    await app.rt.watch(sessionId, (ev) => app.seen.push({ type: ev.type, runId: ev.runId, seq: ev.seq, delta: ev.delta }));
    return true;
  },

  stored(sessionId) {
    return JSON.parse(localStorage.getItem(`store:${sessionId}`) || "[]");
  },

  // commit appends a finished run's messages to the page's store, once
  // per run id.
  commit(sessionId, result) {
    const key = `committed:${result.runId}`;
    if (localStorage.getItem(key)) return;
    localStorage.setItem(key, "1");
    localStorage.setItem(`store:${sessionId}`, JSON.stringify([...app.stored(sessionId), ...result.appended]));
  },

  note(ev) {
    app.events.push({ type: ev.type, seq: ev.seq, delta: ev.delta });
    if (typeof ev.seq === "number") sessionStorage.setItem("seq", String(ev.seq));
  },

  // start runs input on sessionId with runId, remembered for a reload.
  start(sessionId, input, runId) {
    sessionStorage.setItem("run", JSON.stringify({ sessionId, runId }));
    sessionStorage.setItem("seq", "0");
    app.rt.run({ sessionId, input, runId, history: app.stored(sessionId), onEvent: app.note }).then((res) => {
      app.commit(sessionId, res);
      app.done = { status: res.status, runId: res.runId };
    }, (e) => { app.error = { code: e.code, message: e.message }; });
    return true;
  },

  // resume reconnects to the run this page started before its reload,
  // from the last seq it saw, and commits the result the terminal event
  // carries.
  async resume() {
    const run = JSON.parse(sessionStorage.getItem("run") || "null");
    if (!run) return { failed: { code: "none" } };
    const after = Number(sessionStorage.getItem("seq") || "0");
    try {
      for await (const ev of app.rt.reconnect(run.runId, { after })) {
        app.note(ev);
        if (ev.type === "run.completed" && ev.result) app.commit(run.sessionId, ev.result);
      }
      return { after, events: app.events };
    } catch (e) {
      return { after, events: app.events, failed: { code: e.code, message: e.message } };
    }
  },

  async run(sessionId, input, extra = {}) {
    try {
      const res = await app.rt.run({ sessionId, input, history: app.stored(sessionId), ...extra });
      app.commit(sessionId, res);
      return { status: res.status, head: res.head, appended: res.appended };
    } catch (e) {
      return { failed: { code: e.code, message: e.message, head: e.head, missing: e.missing } };
    }
  },

  // behind runs input as a tab whose copy of sessionId is empty (it
  // stored nothing): with ifHead set to its copy's head, merging the
  // refusal's missing messages and retrying with the head it names, as
  // docs/glue.md's loop does. It reports each refusal and the result.
  async behind(sessionId, input) {
    let copy = [];
    let head = (await app.rt.checkHistory(copy)).head;
    const tries = [];
    for (let i = 0; i < 3; i++) {
      try {
        const res = await app.rt.run({ sessionId, input, history: copy, ifHead: head });
        return { tries, status: res.status, head: res.head, copy: [...copy, ...res.appended].map((m) => m.content) };
      } catch (e) {
        tries.push({ code: e.code, head: e.head, missing: e.missing && e.missing.map((m) => m.content) });
        if (e.code !== "history_diverged" || !Array.isArray(e.missing)) return { tries, failed: e.code };
        copy = [...copy, ...e.missing];
        head = e.head;
      }
    }
    return { tries, failed: "still refused after three tries" };
  },
};

window.app = app;
window.appReady = true;
