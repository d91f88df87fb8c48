// Worker mode (docs/adr/0021-worker-mode.md): one table of Runtime
// behaviour run on the main thread and, where the host has Web Workers
// (the browser pages of js/test/browser/run.mjs), in worker mode, where
// the same glue runs in a dedicated worker and the model and tools stay
// functions here. Where there is no Worker (Node, Bun, Deno), the option
// must be refused with invalid_argument.
import { describe, test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { loadRuntime, packHistory, AgentrtError } from "../glue.js";
import { readFile } from "node:fs/promises";
import { compiledModule, wasmExecURL, wasmURL, dist } from "./env.mjs";
import { deferred, rejectsWith, hasWebWorker, runtimeModes } from "./helpers.mjs";

// Each test's runtimes are closed when it ends: a page holds only so many
// Go instances' memories at once (Chromium refuses more), and the glue's
// other suites run in the same page.
const opened = [];
afterEach(() => {
  for (const rt of opened.splice(0)) rt.close();
});
const load = async (config = {}) => {
  const rt = await loadRuntime({ wasm: await compiledModule(), wasmExec: wasmExecURL, ...config });
  opened.push(rt);
  return rt;
};

const history = [
  { role: "user", content: "hello" },
  { role: "assistant", content: "hi" },
];

// waitAbort is a model or tool that answers only by rejecting when signal aborts.
function waitAbort(signal, started) {
  if (started) started.resolve();
  return new Promise((_, reject) => {
    if (!signal) return;
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

if (!hasWebWorker) {
  describe("worker mode where there is no Worker", () => {
    for (const worker of [true, "worker.js", new URL("https://example.com/worker.js")]) {
      test(`worker: ${String(worker)} is refused with invalid_argument`, async () => {
        const err = await rejectsWith(assert, loadRuntime({ wasm: await compiledModule(), wasmExec: wasmExecURL, worker }), "invalid_argument");
        assert.ok(err instanceof AgentrtError);
        assert.match(err.message, /options\.worker/);
      });
    }
  });
}

describe("worker option", () => {
  for (const worker of [1, null, {}, () => {}]) {
    test(`worker: ${String(worker)} is refused with invalid_argument`, async () => {
      const err = await rejectsWith(assert, loadRuntime({ wasm: await compiledModule(), wasmExec: wasmExecURL, worker }), "invalid_argument");
      assert.match(err.message, /options\.worker/);
    });
  }

  test("worker: false runs on the main thread", async () => {
    const rt = await load({ worker: false });
    assert.equal((await rt.run({ sessionId: "s", input: "x" })).status, "completed");
    assert.equal(typeof globalThis[rt.globalName], "object");
  });
});

for (const mode of runtimeModes) {
  const open = (config = {}) => load(mode === "worker" ? { worker: true, ...config } : config);

  describe(`the Runtime table (${mode})`, () => {
    test("the model is handed the session's messages turn after turn, the earlier ones the same frozen objects", async () => {
      const seen = [];
      const rt = await open({
        model: (req) => {
          seen.push(req.messages);
          const last = req.messages.at(-1);
          if (last.role === "user" && last.content === "use the tool") return { toolCalls: [{ id: "c1", name: "t", arguments: "{}" }] };
          return { content: `reply ${seen.length}` };
        },
        tools: [{ name: "t", call: () => "tool out" }],
      });
      assert.equal((await rt.run({ sessionId: "m", input: "use the tool", history })).reply.content, "reply 2");
      assert.equal((await rt.run({ sessionId: "m", input: "again" })).reply.content, "reply 3");
      assert.deepEqual(seen.map((ms) => ms.map((m) => m.role)), [
        ["user", "assistant", "user"],
        ["user", "assistant", "user", "assistant", "tool"],
        ["user", "assistant", "user", "assistant", "tool", "assistant", "user"],
      ]);
      assert.equal(seen[2][4].content, "tool out");
      assert.equal(seen[2][5].content, "reply 2");
      for (let i = 0; i < 3; i++) assert.equal(seen[1][i], seen[0][i], `message ${i} of the second call`);
      for (let i = 0; i < 5; i++) assert.equal(seen[2][i], seen[1][i], `message ${i} of the third call`);
      for (const ms of seen) for (const m of ms) assert.ok(Object.isFrozen(m));
    });

    test("a turn, and the session it leaves", async () => {
      const rt = await open({ systemPrompt: "Be brief." });
      assert.equal(typeof rt.version, "string");
      const r = await rt.run({ sessionId: "s", input: "hello" });
      assert.equal(r.status, "completed");
      assert.equal(r.sessionId, "s");
      assert.match(r.reply.content, /hello/);
      assert.equal(r.messageCount, 2);
      assert.ok(Object.isFrozen(r.reply), "the reply is frozen");
      assert.equal((await rt.session("s")).messageCount, 2);
      assert.deepEqual(await rt.listSessions(), ["s"]);
      const r2 = await rt.startRun("s", "again");
      assert.equal(r2.messageCount, 4);
      assert.equal(await rt.deleteSession("s"), true);
      assert.equal(await rt.session("s"), null);
      assert.equal(typeof (await rt.stats()), "object");
    });

    test("seeds from a history array and from packed bytes, once", async () => {
      const rt = await open();
      const a = await rt.run({ sessionId: "a", input: "x", history });
      assert.equal(a.seed.mode, "cold");
      assert.equal(a.seed.seeded, 2);
      assert.equal(a.messageCount, 4);
      const packed = packHistory(history);
      const copy = packed.slice();
      const b = await rt.startRunWithHistory("b", "x", packed);
      assert.equal(b.seed.seeded, 2);
      assert.deepEqual(packed, copy, "the host's packed bytes are left as they were");
      const again = await rt.startRunWithPolicyAndHistory("b", "y", {}, packed);
      assert.notEqual(again.seed.mode, "cold");
      assert.equal(again.messageCount, 6);
      const check = await rt.checkHistory(packed);
      assert.equal(check.ok, true);
    });

    test("events reach onEvent on this side, in order", async () => {
      const rt = await open();
      const seen = [];
      const r = await rt.run({ sessionId: "e", input: "x", history, onEvent: (ev) => seen.push(ev) });
      assert.equal(seen[0].type, "run.started");
      assert.ok(seen.some((ev) => ev.type === "session.seeded"));
      assert.equal(seen.at(-1).type, "run.completed");
      assert.deepEqual(seen.map((ev) => ev.seq), seen.map((_, i) => i + 1));
      assert.ok(seen.every((ev) => ev.runId === r.runId));
    });

    test("stream yields the events and ends with run.completed", async () => {
      const rt = await open({ model: (req) => { req.delta("par"); req.delta("tial"); return "done"; } });
      const types = [];
      let last;
      for await (const ev of rt.stream({ sessionId: "st", input: "x" })) {
        types.push(ev.type);
        last = ev;
      }
      assert.equal(types[0], "run.started");
      assert.equal(types.filter((t) => t === "model.delta").length, 2);
      assert.equal(last.type, "run.completed");
      assert.equal(last.result.reply.content, "done");
      assert.equal((await rt.session("st")).messageCount, 2);
    });

    test("leaving a stream before run.completed takes the turn back", async () => {
      const rt = await open();
      for await (const ev of rt.stream({ sessionId: "early", input: "x" })) {
        assert.equal(ev.type, "run.started");
        break;
      }
      const s = await rt.session("early");
      assert.ok(s === null || s.messageCount === 0, JSON.stringify(s));
    });

    test("an AbortSignal cancels a run whose model waits, and the model's signal aborts", async () => {
      const started = deferred();
      let modelSignal;
      const rt = await open({ model: (req) => { modelSignal = req.signal; return waitAbort(req.signal, started); } });
      const ctl = new AbortController();
      const p = rt.run({ sessionId: "c", input: "x", signal: ctl.signal });
      await started.promise;
      ctl.abort();
      const err = await rejectsWith(assert, p, "cancelled");
      assert.equal(err.name, "AbortError");
      await until(() => modelSignal.aborted);
      assert.equal(await rt.session("c"), null);
      const already = new AbortController();
      already.abort();
      await rejectsWith(assert, rt.run({ sessionId: "c", input: "x", signal: already.signal }), "cancelled");
    });

    test("cancelRun cancels a hanging tool's run", async () => {
      const started = deferred();
      const rt = await open({
        model: (req) => req.step === 1 ? { toolCalls: [{ id: "t1", name: "hang", arguments: "{}" }] } : "after",
        tools: [{ name: "hang", call: () => waitAbort(undefined, started) }],
      });
      const p = rt.run({ sessionId: "h", input: "x", runId: "r-hang" });
      await started.promise;
      assert.equal(await rt.cancelRun("r-hang"), true);
      await rejectsWith(assert, p, "cancelled");
      assert.equal(await rt.cancelRun("r-hang"), false);
      assert.equal(await rt.session("h"), null, "the cancelled turn is not kept");
    });

    test("policy.timeoutMs ends a run whose model never answers", async () => {
      const rt = await open({ model: (req) => waitAbort(req.signal) });
      await rejectsWith(assert, rt.run({ sessionId: "t", input: "x", policy: { timeoutMs: 20 } }), "timeout");
    });

    test("errors keep their codes and index", async () => {
      const rt = await open();
      await rejectsWith(assert, rt.run({ sessionId: 1, input: "x" }), "invalid_argument");
      await rejectsWith(assert, rt.run({ sessionId: "", input: "x" }), "invalid_argument");
      await rejectsWith(assert, rt.run({ sessionId: "s", input: "x", policy: { seedMode: "sometimes" } }), "invalid_argument");
      const bad = [{ role: "user", content: "a" }, { role: "wizard", content: "b" }];
      const err = await rejectsWith(assert, rt.run({ sessionId: "s", input: "x", history: bad }), "invalid_history", 1);
      assert.ok(err instanceof AgentrtError);
      assert.deepEqual(await rt.listSessions(), []);
    });

    test("a throwing model fails the run with model_error and the runtime keeps serving", async () => {
      let fail = true;
      const rt = await open({ model: () => { if (fail) throw new Error("boom"); return { content: "fine" }; } });
      const err = await rejectsWith(assert, rt.run({ sessionId: "m", input: "x" }), "model_error");
      assert.match(err.message, /boom/);
      fail = false;
      assert.equal((await rt.run({ sessionId: "m", input: "x" })).reply.content, "fine");
    });

    test("a throwing tool fails the run with tool_error and its text", async () => {
      const rt = await open({
        model: (req) => req.step === 1 ? { toolCalls: [{ id: "t1", name: "bad", arguments: "{}" }] } : "after",
        tools: [{ name: "bad", call: () => { throw new Error("tool broke"); } }],
      });
      const err = await rejectsWith(assert, rt.run({ sessionId: "tb", input: "x" }), "tool_error");
      assert.match(err.message, /tool broke/);
      assert.equal(await rt.session("tb"), null);
    });

    test("close ends a run in flight cancelled and aborts its model's signal with AbortError, cancelled", async () => {
      const started = deferred();
      let modelSignal;
      const rt = await open({ model: (req) => { modelSignal = req.signal; return waitAbort(req.signal, started); } });
      const p = rt.run({ sessionId: "c", input: "x" });
      await started.promise;
      rt.close();
      const err = await rejectsWith(assert, p, "cancelled");
      await until(() => modelSignal.aborted);
      assert.ok(modelSignal.reason instanceof AgentrtError, String(modelSignal.reason));
      assert.equal(modelSignal.reason.code, "cancelled");
      assert.equal(modelSignal.reason.name, "AbortError");
      assert.equal(err.code, "cancelled");
      await rejectsWith(assert, rt.run({ sessionId: "c", input: "x" }), "invalid_argument");
    });

    test("a session's messages and a stream's result are handed frozen, as the main thread hands them", async () => {
      const rt = await open();
      await rt.run({ sessionId: "fz", input: "x", history });
      const s = await rt.session("fz");
      assert.equal(s.messages.length, 4);
      for (const m of s.messages) assert.ok(Object.isFrozen(m), JSON.stringify(m));
      let done;
      for await (const ev of rt.stream({ sessionId: "fz", input: "y" })) if (ev.type === "run.completed") done = ev.result;
      assert.ok(Object.isFrozen(done.reply));
      assert.ok(done.appended.every((m) => Object.isFrozen(m)));
    });

    test("fields the glue does not read may hold functions, as the main thread ignores them", async () => {
      const rt = await open();
      const r = await rt.run({ sessionId: "fn", input: "x", meta: { f() {} }, extra: () => 1 });
      assert.equal(r.status, "completed");
      const h = [{ role: "user", content: "hello", note() {} }, { role: "assistant", content: "hi" }];
      const r2 = await rt.run({ sessionId: "fn2", input: "x", history: h });
      assert.equal(r2.seed.seeded, 2);
      const bad = { sessionId: "fn3", get input() { throw new Error("no input"); } };
      await rejectsWith(assert, rt.run(bad), "invalid_argument");
    });

    test("close rejects later calls with invalid_argument", async () => {
      const rt = await open();
      await rt.run({ sessionId: "x", input: "x" });
      rt.close();
      rt.close();
      assert.equal(rt.closed, true);
      await rejectsWith(assert, rt.run({ sessionId: "x", input: "x" }), "invalid_argument");
      assert.throws(() => rt.stream({ sessionId: "x", input: "x" }), (e) => e.code === "invalid_argument");
    });
  });
}

if (hasWebWorker) {
  describe("worker mode only", () => {
    test("a terminated worker fails the calls in flight and later ones with internal", async () => {
      const started = deferred();
      const rt = await load({ worker: true, model: (req) => waitAbort(req.signal, started) });
      const p = rt.run({ sessionId: "d", input: "x" });
      await started.promise;
      rt.worker.terminate();
      await rejectsWith(assert, p, "internal");
      await rejectsWith(assert, rt.run({ sessionId: "d", input: "x" }), "internal");
      await rejectsWith(assert, rt.listSessions(), "internal");
    });

    test("every method of the Runtime is forwarded, a bad argument rejected with the main thread's error", async () => {
      const main = await load();
      const remote = await load({ worker: true });
      const proto = Object.getPrototypeOf(main);
      const names = Object.getOwnPropertyNames(proto).filter((n) => n !== "constructor" && typeof Object.getOwnPropertyDescriptor(proto, n).value === "function");
      assert.ok(names.length >= 13, names.join(" "));
      for (const n of names) assert.equal(typeof remote[n], "function", n);
      const failure = async (f) => {
        try {
          await f();
        } catch (e) {
          return { code: e.code, message: e.message };
        }
        assert.fail("no error");
      };
      for (const [n, args] of [["cancelRun", [5]], ["session", [5]], ["deleteSession", [null]], ["checkHistory", ["x"]], ["run", [{ sessionId: 1 }]]]) {
        assert.deepEqual(await failure(() => remote[n](...args)), await failure(() => main[n](...args)), n);
      }
    });

    test("a method added to the glue's Runtime is forwarded with no code of its own", async () => {
      const main = await load();
      const proto = Object.getPrototypeOf(main);
      proto.probeForwarding = function (x) { return x; };
      try {
        const remote = await load({ worker: true });
        assert.equal(typeof remote.probeForwarding, "function");
        // The worker's Runtime (its own copy of the glue) has no such
        // method: the call crosses, and the worker's dispatcher refuses it.
        const err = await rejectsWith(assert, remote.probeForwarding(1), "invalid_argument");
        assert.match(err.message, /no method probeForwarding/);
        assert.equal(await remote.listSessions().then((ids) => ids.length), 0);
        delete Object.getPrototypeOf(remote).probeForwarding;
      } finally {
        delete proto.probeForwarding;
      }
    });

    test("a model that answers twice is taken at its first answer", async () => {
      const rt = await load({
        worker: true,
        model: () => ({ then(resolve) { resolve({ content: "first" }); resolve({ content: "second" }); } }),
      });
      assert.equal((await rt.run({ sessionId: "twice", input: "x" })).reply.content, "first");
      assert.equal((await rt.run({ sessionId: "twice", input: "y" })).messageCount, 4);
    });

    test("the built package's bundled glue starts the worker.js beside it", async () => {
      const built = await import(new URL("glue.js", dist).href);
      const rt = await built.loadRuntime({ worker: true, model: (req) => `built ${req.messages.length}` });
      try {
        const r = await rt.run({ sessionId: "b", input: "x", history });
        assert.equal(r.reply.content, "built 3");
        assert.equal(r.seed.seeded, 2);
        await rejectsWith(assert, rt.run({ sessionId: 2, input: "x" }), "invalid_argument");
      } finally {
        rt.close();
      }
    });

    test("onProgress is called on this side, last with done", async () => {
      const phases = [];
      const rt = await load({ worker: true, onProgress: (p) => phases.push(p.phase) });
      assert.equal(phases.at(-1), "done");
      assert.equal((await rt.run({ sessionId: "p", input: "x" })).status, "completed");
    });

    test("answers with functions among their fields cross as their JSON", async () => {
      const rt = await load({
        worker: true,
        model: (req) => req.step === 1
          ? { toolCalls: [{ id: "t1", name: "odd", arguments: "{}" }], extra() {} }
          : { content: "saw " + req.messages.at(-1).content, extra() {} },
        tools: [{ name: "odd", call: () => ({ n: 1, f() {} }) }],
      });
      const r = await rt.run({ sessionId: "odd", input: "x" });
      assert.equal(r.reply.content, 'saw {"n":1}');
    });

    test("more sessions than the page holds messages of: each turn is still handed all its messages", async () => {
      const seen = new Map();
      const rt = await load({ worker: true, model: (req) => { seen.set(req.sessionId, req.messages); return `n ${req.messages.length}`; } });
      const ids = Array.from({ length: 70 }, (_, i) => `s${i}`);
      for (const id of ids) await rt.run({ sessionId: id, input: "one", history });
      for (const id of ids) {
        const r = await rt.run({ sessionId: id, input: "two" });
        assert.equal(r.reply.content, "n 5", id);
        assert.deepEqual(seen.get(id).map((m) => m.content), ["hello", "hi", "one", "n 3", "two"]);
      }
    });

    test("module bytes cross to the worker and compile there; the host's bytes stay", async () => {
      const bytes = new Uint8Array(await readFile(wasmURL));
      const n = bytes.byteLength, first = bytes[0];
      for (const wasm of [bytes, bytes.buffer, new DataView(bytes.buffer)]) {
        const rt = await loadRuntime({ worker: true, wasm, wasmExec: wasmExecURL, model: (req) => `saw ${req.messages.length}` });
        opened.push(rt);
        assert.equal(bytes.byteLength, n, "the host's buffer is not detached");
        assert.equal(bytes[0], first);
        const r = await rt.run({ sessionId: "bytes", input: "x", history });
        assert.equal(r.reply.content, "saw 3");
        assert.equal(r.seed.seeded, 2);
      }
    });

    test("bytes that are not a module are load_failed, from the worker", async () => {
      const err = await rejectsWith(assert, loadRuntime({ worker: true, wasm: new Uint8Array([0, 1, 2, 3]), wasmExec: wasmExecURL }), "load_failed");
      assert.match(err.message, /module bytes/);
    });

    test("a worker entry that cannot load is load_failed", async () => {
      await rejectsWith(assert, loadRuntime({ wasm: await compiledModule(), wasmExec: wasmExecURL, worker: new URL("./no-such-worker.js", import.meta.url) }), "load_failed");
    });
  });
}

// until waits for f() to hold, a few event-loop turns at most.
async function until(f) {
  for (let i = 0; i < 100 && !f(); i++) await new Promise((r) => setTimeout(r, 0));
  assert.ok(f());
}
