// rt.watch, rt.reconnect and rt.mode (docs/adr/0026-shared-worker-mode.md)
// on the main thread and, in the browser pages, in worker mode: a watcher
// sees every event of every run on its session as it happens, a reconnect
// replays a run's events after a seq, and an unknown run is run_lost.
// Shared mode itself needs two pages: js/test/browser/shared.mjs.
import { describe, test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { loadRuntime } from "../glue.js";
import { RunHub, RUN_LOG_EVENTS, ENDED_RUNS } from "../hub.js";
import { compiledModule, wasmExecURL } from "./env.mjs";
import { deferred, rejectsWith, runtimeModes, modeConfig, hasWebWorker } from "./helpers.mjs";

const opened = [];
afterEach(() => {
  for (const rt of opened.splice(0)) rt.close();
});

// gated is a model that streams "a", waits for gate, then streams "b" and answers "ab".
function gated(gate, started) {
  return async (req) => {
    req.delta("a");
    if (started) started.resolve();
    await gate.promise;
    req.delta("b");
    return { content: "ab" };
  };
}

async function collect(it) {
  const out = [];
  for await (const ev of it) out.push(ev);
  return out;
}

for (const mode of runtimeModes) {
  describe(`watch and reconnect (${mode})`, () => {
    const load = async (config) => {
      const rt = await loadRuntime(modeConfig(mode, { wasm: await compiledModule(), wasmExec: wasmExecURL, ...config }));
      opened.push(rt);
      return rt;
    };

    test("rt.mode names where the runtime runs", async () => {
      const rt = await load({ model: "echo" });
      assert.equal(rt.mode, mode);
    });

    test("a watcher sees every event of a run as it happens, and none after it stops", async () => {
      const gate = deferred();
      const started = deferred();
      const rt = await load({ model: gated(gate, started) });
      const seen = [];
      const stop = await rt.watch("s1", (ev) => seen.push(ev));
      const other = [];
      await rt.watch("s2", (ev) => other.push(ev));
      const running = rt.run({ sessionId: "s1", input: "hi" });
      await started.promise;
      // The delta "a" reached the watcher before the run ended.
      await waitFor(() => seen.some((e) => e.type === "model.delta" && e.delta === "a"));
      gate.resolve();
      const res = await running;
      await waitFor(() => seen.length > 0 && seen[seen.length - 1].type === "run.completed");
      assert.deepEqual(seen.map((e) => e.seq), seen.map((_, i) => i + 1));
      assert.ok(seen.every((e) => e.runId === res.runId && e.sessionId === "s1"));
      assert.equal(other.length, 0);
      await stop();
      const before = seen.length;
      await rt.run({ sessionId: "s1", input: "again", onEvent: () => {} });
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(seen.length, before);
    });

    test("a watcher that throws breaks neither the run nor the other watchers", async () => {
      const rt = await load({ model: "echo" });
      const quiet = globalThis.reportError;
      globalThis.reportError = () => {};
      try {
        await rt.watch("s", () => { throw new Error("boom"); });
        const seen = [];
        await rt.watch("s", (ev) => seen.push(ev.type));
        const res = await rt.run({ sessionId: "s", input: "hi" });
        assert.equal(res.status, "completed");
        await waitFor(() => seen.includes("run.completed"));
      } finally {
        globalThis.reportError = quiet;
      }
    });

    test("reconnect gives the events after `after`, live, ending with the terminal event", async () => {
      const gate = deferred();
      const started = deferred();
      const rt = await load({ model: gated(gate, started) });
      const running = rt.run({ sessionId: "r", input: "hi", runId: "run-r", onEvent: () => {} });
      await started.promise;
      assert.deepEqual(await rt.activeRuns("r"), ["run-r"]);
      const live = collect(rt.reconnect("run-r", { after: 1 }));
      gate.resolve();
      await running;
      const got = await live;
      assert.equal(got[0].seq, 2);
      assert.deepEqual(got.map((e) => e.seq), got.map((_, i) => i + 2));
      assert.equal(got[got.length - 1].type, "run.completed");
      assert.deepEqual(await rt.activeRuns("r"), []);
      assert.deepEqual(got.filter((e) => e.type === "model.delta").map((e) => e.delta), ["a", "b"]);
      // After it ended, the log still holds it.
      const again = await collect(rt.reconnect("run-r", { after: got.length }));
      assert.deepEqual(again.map((e) => e.type), ["run.completed"]);
    });

    test("an unknown run is run_lost; bad arguments are invalid_argument", async () => {
      const rt = await load({ model: "echo" });
      await rejectsWith(assert, rt.reconnect("nope").next(), "run_lost");
      for (const [id, o] of [["", undefined], [1, undefined], ["x", { after: -1 }], ["x", { after: 1.5 }], ["x", 3]]) {
        assert.throws(() => rt.reconnect(id, o), (e) => e.code === "invalid_argument");
      }
      await rejectsWith(assert, (async () => rt.watch("s", "not a function"))(), "invalid_argument");
    });
  });
}

describe("the run log's bounds", () => {
  const ev = (runId, seq, type = "model.delta") => ({ type, runId, sessionId: "s", seq });

  test(`a run keeps its last ${RUN_LOG_EVENTS} events; a reconnect past them starts with run.gap`, async () => {
    const hub = new RunHub();
    for (let i = 1; i <= RUN_LOG_EVENTS + 10; i++) hub.record(ev("r", i));
    hub.record(ev("r", RUN_LOG_EVENTS + 11, "run.completed"));
    const got = await collect(hub.reconnect("r", 3));
    assert.deepEqual(got[0], { type: "run.gap", runId: "r", sessionId: "s", after: 3, next: 12, dropped: 8 });
    assert.equal(got[1].seq, 12);
    assert.equal(got.length, 1 + RUN_LOG_EVENTS);
    // Within the log: no gap.
    const tail = await collect(hub.reconnect("r", RUN_LOG_EVENTS + 9));
    assert.deepEqual(tail.map((e) => e.seq), [RUN_LOG_EVENTS + 10, RUN_LOG_EVENTS + 11]);
  });

  test(`at most ${ENDED_RUNS} ended runs are kept; runs in flight are never dropped`, async () => {
    const hub = new RunHub();
    hub.record(ev("live", 1, "run.started"));
    for (let i = 0; i <= ENDED_RUNS; i++) hub.record(ev(`r${i}`, 1, "run.completed"));
    await rejectsWith(assert, hub.reconnect("r0").next(), "run_lost");
    assert.equal((await collect(hub.reconnect("r1"))).length, 1);
    assert.deepEqual(hub.active("s"), ["live"]);
    hub.end("live", Object.assign(new Error("gone"), { code: "cancelled" }));
    const it = hub.reconnect("live");
    assert.equal((await it.next()).value.type, "run.started");
    await rejectsWith(assert, it.next(), "cancelled");
  });
});

async function waitFor(cond, ms = 5000) {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('worker: "shared" refusals', () => {
  for (const [k, v] of [["model", async () => ({ content: "x" })], ["model", "echo"], ["tools", [{ name: "t", call: () => 1 }]],
    ["countTokens", () => 1], ["systemPrompt", "be brief"], ["limits", {}]]) {
    test(`options.${k} is refused with invalid_argument, naming it`, async () => {
      const err = await rejectsWith(assert, loadRuntime({ worker: "shared", agent: "/agent.js", [k]: v }), "invalid_argument");
      assert.ok(err instanceof TypeError);
      assert.match(err.message, new RegExp(`options\\.${k}`));
    });
  }
  test("a missing agent is refused with invalid_argument", async () => {
    const err = await rejectsWith(assert, loadRuntime({ worker: "shared" }), "invalid_argument");
    assert.match(err.message, hasWebWorker ? /options\.agent/ : /options\.(agent|worker)/);
  });
});
