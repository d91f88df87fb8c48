// The shared worker's side of shared mode (docs/adr/0026-shared-worker-mode.md)
// without a browser: js/worker.js is imported into a scope that looks like
// a SharedWorkerGlobalScope (no postMessage, a connect event), and two
// "pages" speak its protocol over MessageChannel ports. One runtime serves
// both; a page naming another agent is refused; a page's watch sees the
// other page's run; a page's close stops its watches and not the runs;
// reconnect from the other page gets the rest. The browser e2e with real
// pages is js/test/browser/shared.mjs.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { wasmURL, wasmExecURL } from "./env.mjs";

const inPage = typeof document !== "undefined";
const AGENT = new URL("./browser/shared-agent.js", import.meta.url).href;
const OTHER = new URL("./browser/shared-agent-other.js", import.meta.url).href;

// page is one page's end of a port: call(method, args, marks) answers the
// worker's res; callbacks are the functions the worker's marks call.
function page(port) {
  let ids = 0;
  const pending = new Map();
  const callbacks = new Map();
  port.onmessage = (e) => {
    const m = e.data;
    if (m.op === "loaded" || m.op === "res") {
      const p = pending.get(m.op === "loaded" ? "load" : m.id);
      if (p) p(m);
    } else if (m.op === "callback") {
      const f = callbacks.get(m.n);
      if (f) f(...m.args);
    }
  };
  const wait = (key, msg) => new Promise((resolve) => {
    pending.set(key, resolve);
    port.postMessage(msg);
  });
  return {
    callbacks,
    load: (agent) => wait("load", { op: "load", options: { agent, wasm: wasmURL.href, wasmExec: wasmExecURL.href } }),
    call: (method, args, marks = [], target) => {
      const id = ++ids;
      return wait(id, { op: "req", id, method, args, marks, target });
    },
    close: () => port.postMessage({ op: "req", id: ++ids, method: "close", args: [], marks: [] }),
  };
}

// In a page (the page runner) the scope has a document: the browser e2e
// covers shared mode there.
if (inPage) test("the shared worker's pages (worker.js over ports)", { skip: "a page has a document" }, () => {});
else describe("the shared worker's pages (worker.js over ports)", () => {
  let connect;
  const channels = [];
  before(async () => {
    // The scope of a shared worker: addEventListener, onconnect, no postMessage.
    const listeners = [];
    globalThis.onconnect = null;
    globalThis.addEventListener = (type, fn) => { if (type === "connect") listeners.push(fn); };
    await import("../worker.js?shared");
    connect = () => {
      const ch = new MessageChannel();
      channels.push(ch);
      for (const fn of listeners) fn({ ports: [ch.port2] });
      return page(ch.port1);
    };
  });
  after(() => {
    for (const ch of channels) { ch.port1.close(); ch.port2.close(); }
    delete globalThis.addEventListener;
    delete globalThis.onconnect;
  });

  test("two pages share one runtime; another agent is refused; a watch sees the other page's run; a page's close stops its watches, not its runs", async () => {
    const a = connect();
    const b = connect();
    const la = await a.load(AGENT);
    assert.equal(la.ok, true, JSON.stringify(la));
    const refused = await b.load(OTHER);
    assert.equal(refused.ok, false);
    assert.equal(refused.error.code, "invalid_argument");
    assert.match(refused.error.message, /options\.agent/);
    assert.equal((await b.load(AGENT)).ok, true);

    // B watches; A runs a quick turn.
    const seen = [];
    b.callbacks.set(1, (ev) => seen.push(ev));
    const w = await b.call("watch", ["conv", undefined], [{ at: [1], kind: "fn", n: 1 }]);
    assert.equal(w.ok, true, JSON.stringify(w));
    const r = await a.call("run", [{ sessionId: "conv", input: "hi", runId: "run-1" }]);
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.equal(r.value.appended.at(-1).content, "echo: hi");
    assert.deepEqual(seen.map((e) => e.seq), seen.map((_, i) => i + 1));
    assert.equal(seen.at(-1).type, "run.completed");
    // One runtime: B sees A's session.
    assert.equal((await b.call("session", ["conv"])).value.messageCount, 2);

    // A starts a slow run and closes (its page went away); the run goes on,
    // and B reconnects to it and gets it to its end.
    const slow = a.call("run", [{ sessionId: "conv", input: "slow", runId: "run-2" }]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    a.close();
    const rc = await b.call("reconnect", ["run-2", { after: 0 }]);
    assert.equal(rc.ok, true, JSON.stringify(rc));
    const events = [];
    for (;;) {
      const step = await b.call("next", [], [], rc.handle);
      if (step.value.done) break;
      events.push(step.value.value);
    }
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
    assert.equal(events.at(-1).type, "run.completed");
    assert.equal(events.filter((e) => e.type === "model.delta").length, 12);
    assert.equal(events.at(-1).result.status, "completed");
    void slow;

    // B's close stops its watch: a run after it reaches no watcher.
    const before = seen.length;
    b.close();
    const c = connect();
    assert.equal((await c.load(AGENT)).ok, true);
    assert.equal((await c.call("run", [{ sessionId: "conv", input: "again" }])).ok, true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(seen.length, before, "B's watch saw events after B closed");
  });
});
