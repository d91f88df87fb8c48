// The glue under hostile hosts: every rejection an AgentrtError, run ids
// that cannot collide, streams that never leave a turn the host did not
// receive, and a Go program that exits. Runs under `node --test`,
// `bun test` and `deno test -A`.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { loadRuntime, AgentrtError } from "../glue.js";
import { compiledModule, wasmURL, wasmExecURL } from "./env.mjs";
import { runtimes, deferred, rejectsWith, isAgentrtError } from "./helpers.mjs";

let wasm;
const { load } = runtimes();

before(async () => {
  wasm = await compiledModule();
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function rejection(p) {
  try {
    await p;
  } catch (e) {
    return e;
  }
  assert.fail("expected a rejection");
}

describe("errors", () => {
  test("errors from the module are AgentrtErrors with code and index", async () => {
    const rt = await load();
    const err = await rejection(rt.run({ sessionId: "s", input: "x", history: [{ role: "user", content: "a" }, { role: "robot", content: "b" }] }));
    isAgentrtError(err, "invalid_history", 1);
    const e2 = await rejection(rt.run({ sessionId: "s", input: "x", policy: { maxSteps: -1 } }));
    isAgentrtError(e2, "invalid_argument");
    const e3 = await rejection(rt.startRunWithPolicy("s", "x", { onBusy: "maybe" }));
    isAgentrtError(e3, "invalid_argument");
    const failing = await load({ model: () => { throw new Error("boom"); } });
    const events = [];
    const e4 = await rejection(failing.run({ sessionId: "s", input: "x", onEvent: (e) => events.push(e) }));
    isAgentrtError(e4, "model_error");
    const failed = events.find((e) => e.type === "run.failed");
    assert.ok(failed.error instanceof AgentrtError, "an event's error is an AgentrtError too");
  });

  test("bad arguments are TypeErrors and AgentrtErrors", async () => {
    const rt = await load();
    const err = await rejection(rt.run({ sessionId: 1, input: "x" }));
    assert.ok(err instanceof TypeError);
    isAgentrtError(err, "invalid_argument");
    assert.throws(() => rt.stream(null), (e) => e instanceof TypeError && e instanceof AgentrtError);
    assert.ok(!(new Error("x") instanceof AgentrtError));
    assert.ok(!({ code: "internal" } instanceof AgentrtError));
  });

  test("host exceptions in history: throwing getter, Proxy trap, lying length", async () => {
    const rt = await load();
    const getter = { role: "user", get content() { throw new Error("getter"); } };
    const trap = new Proxy({ role: "user", content: "x" }, { get() { throw new Error("trap"); } });
    const hostile = new Proxy({}, { get() { throw new Error("again"); } });
    const thrower = { role: "user", get content() { throw hostile; } };
    const lying = new Proxy([{ role: "user", content: "a" }, { role: "assistant", content: "b" }], {
      get(t, k) { return k === "length" ? 5 : Reflect.get(t, k); },
    });
    const cases = [
      [[{ role: "user", content: "a" }, getter], 1],
      [[trap], 0],
      [[{ role: "user", content: "a" }, { role: "assistant", content: "b" }, thrower], 2],
      [lying, 2],
      [new Proxy([], { get(t, k) { return k === "length" ? -1 : Reflect.get(t, k); } }), undefined],
      [new Proxy([], { get(t, k) { if (k === "length") throw new Error("no length"); return Reflect.get(t, k); } }), undefined],
    ];
    for (const [history, index] of cases) {
      for (const p of [
        rt.run({ sessionId: "s", input: "x", history }),
        rt.startRunWithHistory("s", "x", history),
        (async () => { for await (const _ of rt.stream({ sessionId: "s", input: "x", history })) { /* nothing */ } })(),
      ]) {
        const err = await rejection(p);
        isAgentrtError(err, "invalid_history", index);
      }
    }
    assert.deepEqual(rt.listSessions(), []);
    assert.equal((await rt.run({ sessionId: "s", input: "still fine" })).status, "completed");
  });

  test("host exceptions in the request and options are invalid_argument", async () => {
    const rt = await load();
    const req = { sessionId: "s", get input() { throw new Error("getter"); } };
    isAgentrtError(await rejection(rt.run(req)), "invalid_argument");
    assert.throws(() => rt.stream(req), (e) => e instanceof AgentrtError && e.code === "invalid_argument");
    const opts = new Proxy({}, { get() { throw new Error("trap"); } });
    isAgentrtError(await rejection(rt.startRun("s", "x", opts)), "invalid_argument");
    const bad = new Proxy({}, { get() { throw new Proxy({}, { get() { throw 1; } }); } });
    isAgentrtError(await rejection(loadRuntime(bad)), "invalid_argument");
    // A getter that throws only the second time it is read.
    let reads = 0;
    const flaky = { wasm, get systemPrompt() { if (++reads > 1) throw new Error("second read"); return "s"; } };
    isAgentrtError(await rejection(loadRuntime(flaky)), "invalid_argument");
    assert.deepEqual(rt.listSessions(), []);
  });

});


describe("run ids", () => {
  test('runId "" and the generated prefixes are refused, changing nothing', async () => {
    const rt = await load();
    for (const runId of ["", "glue:1", "agentrt:run-1"]) {
      isAgentrtError(await rejection(rt.run({ sessionId: "s", input: "x", runId })), "invalid_argument");
      isAgentrtError(await rejection(rt.startRun("s", "x", { runId })), "invalid_argument");
      assert.throws(() => rt.stream({ sessionId: "s", input: "x", runId }), (e) => e.code === "invalid_argument");
    }
    assert.deepEqual(rt.listSessions(), []);
  });

  test("host ids shaped like generated ones never collide with them", async () => {
    const gate = deferred();
    const rt = await load({ model: async () => { await gate.promise; return "ok"; } });
    const host = ["glue-1", "glue-2", "run-1", "1", "glue1"].map((runId, i) => rt.run({ sessionId: `h${i}`, input: "x", runId }));
    const generated = [0, 1, 2].map((i) => rt.run({ sessionId: `g${i}`, input: "x" }));
    gate.resolve();
    const results = await Promise.all([...host, ...generated]);
    assert.ok(results.every((r) => r.status === "completed"));
    assert.ok(results.slice(5).every((r) => r.runId.startsWith("glue:")), results.map((r) => r.runId).join());
  });

  test("breaking out of a stream with a host runId cancels the run", async () => {
    const entered = deferred();
    const rt = await load({ model: () => { entered.resolve(); return new Promise(() => {}); } });
    for await (const ev of rt.stream({ sessionId: "s", input: "x", runId: "mine" })) {
      if (ev.type === "message.appended") {
        await entered.promise;
        break;
      }
    }
    assert.equal(rt.stats().activeRuns, 0);
    assert.equal(rt.session("s"), null);
  });
});

// strip keeps what a host compares of a message.
const strip = (m) => ({ role: m.role, content: m.content });

// agree asserts the runtime cannot diverge from the host: the session is
// absent (the host's history seeds it) or holds exactly the host's history.
function agree(rt, sessionId, stored) {
  const s = rt.session(sessionId);
  if (s === null) return;
  assert.deepEqual(s.messages.map(strip), stored.map(strip));
}

// streamTurn runs one turn by stream, leaving the loop after `leaveAfter`
// events (never, when it is Infinity), and stores what the host received.
async function streamTurn(rt, sessionId, stored, input, leaveAfter) {
  let n = 0;
  for await (const ev of rt.stream({ sessionId, input, history: stored })) {
    if (ev.type === "run.completed") stored.push(...ev.result.appended);
    if (++n >= leaveAfter) break;
  }
}

describe("stream: no turn the host did not receive", () => {
  const models = {
    echo: undefined,
    sync: (req) => "sync " + req.messages.length,
    async: async (req) => { await sleep(0); return "async " + req.messages.length; },
    deltas: async (req) => { req.delta("a"); await sleep(1); req.delta("b"); return "deltas"; },
    tool: (req) => (req.messages.at(-1).role === "tool" ? "done" : { content: "", toolCalls: [{ name: "t", arguments: "{}" }] }),
  };
  for (const [name, model] of Object.entries(models)) {
    test(`every break point, ${name} model`, async () => {
      const rt = await load({ model, tools: [{ name: "t", call: async () => { await sleep(0); return "r"; } }] });
      const stored = [];
      // Count the events of one whole turn first.
      await streamTurn(rt, "count", [], "hello", Infinity);
      const total = rt.session("count").messageCount;
      const events = [];
      for await (const ev of rt.stream({ sessionId: "count2", input: "hello" })) events.push(ev);
      assert.ok(total >= 2 && events.length >= 3);
      for (let k = 1; k <= events.length; k++) {
        await streamTurn(rt, "s", stored, `turn ${k}`, k);
        agree(rt, "s", stored);
        assert.equal(rt.stats().activeRuns, 0);
      }
      // A whole turn after all that sees exactly the host's history.
      const before = stored.length;
      await streamTurn(rt, "s", stored, "last", Infinity);
      assert.ok(stored.length > before);
      agree(rt, "s", stored);
    });
  }

  test("100 random breaks with sync and async models", async () => {
    let seed = 11;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const rt = await load({ model: async (req) => { if (random() < 0.5) await sleep(0); return "m" + req.messages.length; } });
    const stored = [];
    for (let i = 0; i < 100; i++) {
      await streamTurn(rt, "r", stored, `turn ${i}`, 1 + Math.floor(random() * 6));
      agree(rt, "r", stored);
    }
    assert.equal(rt.stats().activeRuns, 0);
  });

  test("leaving after run.completed keeps the turn", async () => {
    const rt = await load();
    const stored = [];
    for await (const ev of rt.stream({ sessionId: "s", input: "x" })) {
      if (ev.type === "run.completed") {
        stored.push(...ev.result.appended);
        break;
      }
    }
    assert.equal(rt.session("s").messageCount, 2);
    agree(rt, "s", stored);
  });
});

describe("hostile models", () => {
  test("a thenable that throws after resolving, one that settles twice, and a late delta", async () => {
    let lateDelta;
    const modes = {
      throwAfterResolve: () => ({ then(ok) { ok("resolved"); throw new Error("after"); } }),
      settleTwice: () => ({ then(ok, bad) { ok("first"); ok("second"); bad(new Error("late")); } }),
      settleTwiceLater: () => ({ then(ok) { setTimeout(() => { ok("later"); ok("again"); }, 1); } }),
      lateDelta: (req) => { lateDelta = req.delta; req.delta("early"); return "done"; },
    };
    const rt = await load({ model: (req) => modes[req.messages.at(-1).content](req) });
    const printed = [];
    const saved = { error: console.error, warn: console.warn, log: console.log };
    for (const k of Object.keys(saved)) console[k] = (...a) => printed.push(a.map(String).join(" "));
    try {
      assert.equal((await rt.run({ sessionId: "a", input: "throwAfterResolve" })).reply.content, "resolved");
      assert.equal((await rt.run({ sessionId: "b", input: "settleTwice" })).reply.content, "first");
      assert.equal((await rt.run({ sessionId: "c", input: "settleTwiceLater" })).reply.content, "later");
      const deltas = [];
      await rt.run({ sessionId: "d", input: "lateDelta", onEvent: (e) => { if (e.type === "model.delta") deltas.push(e.delta); } });
      lateDelta("late");
      await sleep(5);
      assert.deepEqual(deltas, ["early"]);
    } finally {
      Object.assign(console, saved);
    }
    assert.deepEqual(printed, [], "nothing printed");
  });
});

describe("onEvent", () => {
  test("a throwing onEvent is logged where there is no reportError, and the process lives on", async () => {
    const rt = await load();
    const saved = globalThis.reportError;
    const savedError = console.error;
    const logged = [];
    delete globalThis.reportError;
    console.error = (...a) => logged.push(a);
    try {
      const r = await rt.run({ sessionId: "s", input: "x", onEvent: () => { throw new Error("host bug"); } });
      assert.equal(r.status, "completed");
      for await (const _ of rt.stream({ sessionId: "s", input: "y", onEvent: () => { throw new Error("host bug"); } })) { /* nothing */ }
      await sleep(5);
    } finally {
      if (saved !== undefined) globalThis.reportError = saved;
      console.error = savedError;
    }
    assert.ok(logged.length > 0);
    assert.ok(logged.every((a) => a.some((x) => x instanceof Error && x.message === "host bug")));
  });
});

describe("the model request's signal", () => {
  // signalModel hangs on the input "hang" until its signal aborts, and
  // answers "done" otherwise; it records every request.
  function signalModel() {
    const requests = [];
    const entered = [];
    const model = (req) => {
      requests.push(req);
      if (req.messages.at(-1).content !== "hang") return "done";
      entered.shift()?.resolve();
      return new Promise((resolve, reject) => {
        req.signal.addEventListener("abort", () => reject(req.signal.reason), { once: true });
      });
    };
    const next = () => {
      const d = deferred();
      entered.push(d);
      return d.promise;
    };
    return { model, requests, next };
  }

  test("aborts with cancelled, timeout or on close, and not when the model answered", async () => {
    const m = signalModel();
    const rt = await load({ model: m.model });
    const done = await rt.run({ sessionId: "s", input: "hi" });
    assert.equal(done.reply.content, "done");
    const first = m.requests[0];
    assert.equal(first.step, 1);
    assert.ok(first.signal instanceof AbortSignal);
    assert.equal(first.signal.aborted, false, "a model that answered is not aborted");

    let entered = m.next();
    const ac = new AbortController();
    const cancelled = rt.run({ sessionId: "s", input: "hang", signal: ac.signal });
    await entered;
    ac.abort();
    isAgentrtError(await rejection(cancelled), "cancelled");
    let reason = m.requests.at(-1).signal.reason;
    isAgentrtError(reason, "cancelled");
    assert.equal(reason.name, "AbortError");

    entered = m.next();
    const timed = rt.run({ sessionId: "s", input: "hang", policy: { timeoutMs: 50 } });
    await entered;
    isAgentrtError(await rejection(timed), "timeout");
    reason = m.requests.at(-1).signal.reason;
    isAgentrtError(reason, "timeout");
    assert.equal(reason.name, "TimeoutError");

    entered = m.next();
    const it = rt.stream({ sessionId: "s", input: "hang" });
    const loop = (async () => { for await (const ev of it) if (ev.type === "run.started") break; })();
    await entered;
    await loop;
    isAgentrtError(m.requests.at(-1).signal.reason, "cancelled");

    entered = m.next();
    const closing = rt.run({ sessionId: "s", input: "hang" });
    await entered;
    rt.close();
    isAgentrtError(await rejection(closing), "cancelled");
    assert.equal(m.requests.at(-1).signal.aborted, true);
    // The four that hung were aborted; the one that answered was not.
    assert.equal(m.requests.filter((r) => r.signal.aborted).length, 4);
  });

  test("works taken apart: a destructured signal aborts and a lone delta streams", async () => {
    let entered = deferred();
    const seen = [];
    const model = ({ runId, sessionId, system, messages, tools, step, signal, delta }) => {
      seen.push({ runId, sessionId, system, n: messages.length, tools: tools.length, step });
      delta("par");
      delta("tial");
      if (messages.at(-1).content !== "hang") return "done";
      entered.resolve();
      return new Promise((resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
    };
    const rt = await load({ model, systemPrompt: "be brief" });
    const deltas = [];
    const onEvent = (ev) => { if (ev.type === "model.delta") deltas.push(ev.delta); };
    const done = await rt.run({ sessionId: "s", input: "hi", runId: "r1", onEvent });
    assert.equal(done.reply.content, "done");
    assert.deepEqual(deltas, ["par", "tial"]);
    assert.deepEqual(seen[0], { runId: "r1", sessionId: "s", system: "be brief", n: 1, tools: 0, step: 1 });

    entered = deferred();
    const ac = new AbortController();
    const cancelled = rt.run({ sessionId: "s", input: "hang", signal: ac.signal });
    await entered.promise;
    ac.abort();
    isAgentrtError(await rejection(cancelled), "cancelled");
    assert.equal(seen.length, 2);
    const after = await rt.run({ sessionId: "s", input: "again" });
    assert.equal(after.messageCount, 4, "the cancelled turn left nothing behind");
  });
});

describe("a Go program that exits", () => {
  // Every Go object the glue creates while a test runs, by subclassing the
  // Go class of wasm_exec.js, which the glue uses when it is defined.
  let made;
  let saved;
  before(async () => {
    await load(); // wasm_exec.js is loaded now
    saved = globalThis.Go;
    made = [];
    globalThis.Go = class extends saved {
      constructor() {
        super();
        made.push(this);
      }
    };
  });
  after(() => {
    globalThis.Go = saved;
  });

  // kill ends a Go program as a fatal error does: wasmExit marks it exited,
  // and its run Promise resolves.
  function kill(go) {
    const imports = go.importObject.gojs ?? go.importObject.go;
    imports["runtime.wasmExit"](0);
    go._resolveExitPromise();
  }

  test("calls in flight reject with internal, and the next call gets a fresh instance seeded by history", async () => {
    const release = deferred();
    const entered = deferred();
    const signals = [];
    const rt = await load({
      systemPrompt: "sys",
      model: async (req) => {
        if (req.messages.at(-1).content === "hang") {
          signals.push(req.signal);
          entered.resolve();
          await release.promise;
        }
        return `seen ${req.messages.length}`;
      },
    });
    const go = made.at(-1);
    const name = rt.globalName;
    const stored = [];
    const first = await rt.run({ sessionId: "s", input: "one", history: stored });
    stored.push(...first.appended);
    const hanging = rt.run({ sessionId: "s", input: "hang", history: stored });
    await entered.promise;
    kill(go);
    const err = await rejection(hanging);
    isAgentrtError(err, "internal");
    assert.match(err.message, /exited/);
    // The model's request is aborted with the instance.
    assert.equal(signals.length, 1);
    isAgentrtError(signals[0].reason, "internal");
    // The model's Promise settling into the dead instance throws nothing.
    release.resolve();
    await sleep(5);
    // The next call runs on a fresh instance: cold, seeded from history.
    const next = await rt.run({ sessionId: "s", input: "two", history: stored });
    assert.equal(next.seed.mode, "cold");
    assert.equal(next.reply.content, "seen 3");
    assert.notEqual(rt.globalName, name);
    assert.equal(globalThis[name], undefined, "the dead instance's global is gone");
    assert.equal(made.length >= 2, true);
    assert.deepEqual(rt.listSessions(), ["s"]);
  });

  test("a synchronous call notices the exit; stream and the entry points recover", async () => {
    const rt = await load();
    await rt.run({ sessionId: "a", input: "x" });
    kill(made.at(-1));
    assert.throws(() => rt.stats(), (e) => e instanceof AgentrtError && e.code === "internal");
    const r = await rt.startRun("b", "y");
    assert.equal(r.status, "completed");
    assert.deepEqual(rt.listSessions(), ["b"]);
    kill(made.at(-1));
    const events = [];
    for await (const ev of rt.stream({ sessionId: "c", input: "z" })) events.push(ev.type);
    assert.equal(events.at(-1), "run.completed");
    assert.equal(rt.stats().sessions, 1);
    rt.close();
    isAgentrtError(await rejection(rt.run({ sessionId: "d", input: "w" })), "invalid_argument");
  });

  test("a Go timer that fires after the exit neither throws nor spins", async () => {
    const rt = await load();
    await rt.run({ sessionId: "a", input: "x" });
    const go = made.at(-1);
    kill(go);
    // What the Go runtime does to sleep: a timeout that resumes Go. wasm_exec.js
    // resumes Go until Go deletes the timeout, which a dead Go never does.
    const imports = go.importObject.gojs ?? go.importObject.go;
    go.mem.setUint32(8, 0, true);
    go.mem.setUint32(12, 0, true);
    imports["runtime.scheduleTimeoutEvent"](0);
    await sleep(20);
    assert.equal(go._scheduledTimeouts.size, 0);
    assert.equal((await rt.run({ sessionId: "b", input: "y" })).status, "completed");
  });

  test("exiting while a stream runs makes the iterator throw internal", async () => {
    const entered = deferred();
    const rt = await load({ model: () => { entered.resolve(); return new Promise(() => {}); } });
    const it = rt.stream({ sessionId: "s", input: "x" });
    const seen = [];
    const loop = (async () => { for await (const ev of it) seen.push(ev.type); })();
    await entered.promise;
    kill(made.at(-1));
    isAgentrtError(await rejection(loop), "internal");
    assert.ok(seen.includes("run.started"));
  });
});

