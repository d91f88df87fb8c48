// The driver under a host's faulty models and tools: every way a model or
// tool can fail or misbehave ends its turn typed, rolled back, with the
// session free; session ids are keyed as the module keys them; sizes are
// refused before anything is copied into the module's memory; mirrors
// follow the module's evictions. Runs under `node --test`, `bun test` and
// `deno test -A`. The model and tool faults, session ids and history run
// in each mode (helpers.mjs, runtimeModes): on the main thread, and where
// the host has Web Workers in worker mode (docs/adr/0021-worker-mode.md),
// where the session and counters are read back by message (awaited).
import { describe, test, before } from "node:test";
import assert from "node:assert/strict";
import { packHistory } from "../glue.js";
import { compiledModule } from "./env.mjs";
import { runtimes, rejectsWith, runtimeModes, modeConfig } from "./helpers.mjs";

// load opens a runtime on the main thread; the tables run in each mode
// open theirs with loadMain(modeConfig(mode, config)), releasing the
// previous test's.
const { load, release } = runtimes();
const loadMain = load;
let previous;

before(async () => {
  await compiledModule();
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** p, or a rejection naming what when it takes longer than ms (a hang). */
function within(p, what, ms = 5000) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms (a hang)`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** Asserts that session id holds only whole turns: every user message answered, every tool call with its result. */
export async function assertWellFormed(rt, id) {
  const s = await rt.session(id);
  if (s === null) return;
  const msgs = s.messages;
  const open = new Set();
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    if (m.role === "assistant") for (const c of m.toolCalls ?? m.tool_calls ?? []) open.add(c.id);
    if (m.role === "tool") open.delete(m.toolCallId ?? m.tool_call_id);
  }
  assert.equal(open.size, 0, `session ${JSON.stringify(id)} has tool calls without results: ${JSON.stringify(msgs)}`);
  if (msgs.length > 0) {
    const last = msgs[msgs.length - 1];
    assert.ok(last.role === "assistant" && !(last.toolCalls ?? last.tool_calls ?? []).length,
      `session ${JSON.stringify(id)} ends in ${JSON.stringify(last)}`);
  }
}

/** Asserts the runtime holds no run and the session is free: a turn on it completes. */
async function assertFree(rt, id) {
  assert.equal((await rt.stats()).activeRuns, 0, "active runs after every run settled");
  await assertWellFormed(rt, id);
  const r = await within(rt.run({ sessionId: id, input: "after", policy: { onBusy: "reject" } }), "a turn after the fault");
  assert.equal(r.status, "completed");
}

// Thenables that break as adversarial hosts break them.
const throwingThen = () => ({ then() { throw new Error("then threw"); } });
const throwingGetter = () => ({ get then() { throw new Error("then getter threw"); } });

// A model that answers "ok" unless the input names a fault.
function faultyModel(fault) {
  return (req) => {
    const last = req.messages[req.messages.length - 1];
    if (last.role === "user" && last.content === "fault") return fault();
    return "ok";
  };
}

// suffix names a table's worker-mode copy; the main thread's keeps its name.
const suffix = (mode) => (mode === "main" ? "" : ` (${mode})`);

for (const mode of runtimeModes) {
// A table's runtimes, in its mode, one at a time: each test's is closed
// when the next test opens its own (a page holds only so many workers'
// and instances' memories).
const load = async (config) => {
  release(previous);
  return (previous = await loadMain(modeConfig(mode, config)));
};

describe(`model faults${suffix(mode)}`, () => {
  for (const [name, fault] of [["then throws", throwingThen], ["then getter throws", throwingGetter]]) {
    test(`a model's thenable whose ${name}: model_error, rolled back, the session free (cold and warm)`, async () => {
      const rt = await load({ model: faultyModel(fault) });
      // Cold: the turn begins in the module first.
      await within(rejectsWith(assert, rt.run({ sessionId: "cold", input: "fault" }), "model_error"), "cold fault");
      assert.equal((await rt.session("cold"))?.messageCount ?? 0, 0);
      await assertFree(rt, "cold");
      // Warm: the session has a mirror, a quick turn calls the model first.
      await rt.run({ sessionId: "warm", input: "hello" });
      const before = (await rt.session("warm")).messageCount;
      await within(rejectsWith(assert, rt.run({ sessionId: "warm", input: "fault" }), "model_error"), "warm fault");
      assert.equal((await rt.session("warm")).messageCount, before, "the failed turn is rolled back");
      await assertFree(rt, "warm");
    });
  }

  test("a thenable that fulfils with a Promise gives the promise's value, as await does", async () => {
    const rt = await load({ model: () => ({ then(resolve) { resolve(Promise.resolve("deep")); } }) });
    const r = await within(rt.run({ sessionId: "s", input: "x" }), "run");
    assert.equal(r.reply.content, "deep");
    const r2 = await within(rt.run({ sessionId: "s", input: "y" }), "quick run");
    assert.equal(r2.reply.content, "deep");
    await assertWellFormed(rt, "s");
  });

  test("a thenable that settles twice, or late after a timeout, settles the run once", async () => {
    const late = [];
    const rt = await load({
      model: (req) => {
        const last = req.messages[req.messages.length - 1].content;
        if (last === "twice") return { then(res, rej) { res("first"); rej(new Error("second")); res("third"); } };
        if (last === "late") return { then(res) { late.push(res); } };
        return "ok";
      },
    });
    const r = await within(rt.run({ sessionId: "s", input: "twice" }), "twice");
    assert.equal(r.reply.content, "first");
    await within(rejectsWith(assert, rt.run({ sessionId: "s", input: "late", policy: { timeoutMs: 20 } }), "timeout"), "late");
    for (const res of late) res("too late");
    await sleep(5);
    await assertFree(rt, "s");
  });

  test("turn A's model rejecting does not touch turn B, begun microtasks later with a tool", async () => {
    const calls = [];
    const rt = await load({
      model: (req) => {
        const last = req.messages[req.messages.length - 1];
        if (last.role === "user" && last.content === "A") return Promise.reject(new Error("A's model failed"));
        if (last.role === "user" && last.content === "B") {
          return Promise.resolve({ content: "", toolCalls: [{ id: "c1", name: "t", arguments: "{}" }] });
        }
        return Promise.resolve("B done");
      },
      tools: [{ name: "t", call: async () => { calls.push(1); return "tool out"; } }],
    });
    // The faults depend on where B begins in A's failure: try each place.
    for (let delay = 0; delay < 16; delay++) {
      const id = `s${delay}`;
      await rt.run({ sessionId: id, input: "warm" });
      const pA = rt.run({ sessionId: id, input: "A" });
      for (let i = 0; i < delay; i++) await null;
      const pB = rt.run({ sessionId: id, input: "B" });
      const [a, b] = await within(Promise.allSettled([pA, pB]), `A and B, B ${delay} microtasks later`);
      assert.equal(a.status, "rejected");
      assert.equal(a.reason.code, "model_error", a.reason.message);
      assert.equal(b.status, "fulfilled", `B, ${delay} microtasks later: ${b.reason?.message}`);
      assert.equal(b.value.reply.content, "B done");
      assert.equal(calls.length, delay + 1);
      await assertFree(rt, id);
    }
  });
});

describe(`tool faults${suffix(mode)}`, () => {
  for (const [name, fault] of [["then throws", throwingThen], ["then getter throws", throwingGetter]]) {
    test(`a tool's thenable whose ${name}: tool_error, rolled back, the session free`, async () => {
      const rt = await load({
        model: (req) => {
          const last = req.messages[req.messages.length - 1];
          if (last.role === "tool") return "after the tool";
          if (last.content === "use") return { content: "", toolCalls: [{ id: "c1", name: "t", arguments: "{}" }] };
          return "ok";
        },
        tools: [{ name: "t", call: fault }],
      });
      await within(rejectsWith(assert, rt.run({ sessionId: "s", input: "use" }), "tool_error"), "cold");
      assert.equal((await rt.session("s"))?.messageCount ?? 0, 0);
      await assertFree(rt, "s");
      const before = (await rt.session("s")).messageCount;
      await within(rejectsWith(assert, rt.run({ sessionId: "s", input: "use" }), "tool_error"), "warm");
      assert.equal((await rt.session("s")).messageCount, before);
      await assertFree(rt, "s");
    });
  }
});

describe(`session ids${suffix(mode)}`, () => {
  test('"x\\uD800" and "x\\uDC00" are one session, as the module keys it, and nothing hangs', async () => {
    const rt = await load({ model: () => sleep(10).then(() => "ok") });
    const a = rt.run({ sessionId: "x\uD800", input: "one" });
    const b = rt.run({ sessionId: "x\uDC00", input: "two" });
    const [ra, rb] = await within(Promise.all([a, b]), "both runs");
    assert.equal(ra.status, "completed");
    assert.equal(rb.status, "completed");
    assert.deepEqual(await rt.listSessions(), ["x\uFFFD"]);
    assert.equal((await rt.session("x\uD800")).messageCount, 4);
    assert.equal((await rt.stats()).activeRuns, 0);
    // Warm turns on both spellings (quick turns) keep to the one session.
    await within(rt.run({ sessionId: "x\uDC00", input: "three" }), "warm");
    await within(rt.run({ sessionId: "x\uD800", input: "four" }), "warm");
    assert.equal((await rt.session("x\uFFFD")).messageCount, 8);
    assert.equal(await rt.deleteSession("x\uDC00"), true);
    assert.deepEqual(await rt.listSessions(), []);
  });
});

describe(`history${suffix(mode)}`, () => {
  test("a detached Uint8Array is invalid_argument, and changes nothing", async () => {
    const rt = await load({ model: () => "ok" });
    const u = packHistory([{ role: "user", content: "a" }, { role: "assistant", content: "b" }]).slice();
    if (typeof u.buffer.transfer === "function") u.buffer.transfer();
    else structuredClone(u.buffer, { transfer: [u.buffer] });
    assert.equal(u.byteLength, 0, "the buffer is detached");
    await within(rejectsWith(assert, rt.run({ sessionId: "s", input: "x", history: u }), "invalid_argument"), "run");
    await within(rejectsWith(assert, rt.startRunWithHistory("s", "x", u), "invalid_argument"), "startRunWithHistory");
    assert.equal(await rt.session("s"), null);
    assert.equal((await rt.stats()).activeRuns, 0);
  });
});


// Answers no host should give, from the model or from the tool, and what
// the turn makes of each: the code it fails with, or the reply it
// completes with (the model's second step echoes the tool's output). In
// worker mode an answer that cannot be cloned crosses as its JSON or, when
// it has none, as a rejection: the same codes, other messages.
describe(`hostile answers${suffix(mode)}`, () => {
  const cyclic = () => {
    const o = { content: "cyclic" };
    o.self = o;
    return o;
  };
  const answers = [
    ["an object whose getter throws", () => ({ get content() { throw new Error("getter threw"); } }), { model: "model_error", tool: "tool_error" }],
    ["a cyclic object", cyclic, { model: ["cyclic"], tool: "tool_error" }],
    ["a BigInt", () => 5n, { model: "model_error", tool: "tool_error" }],
    ["a Symbol", () => Symbol("s"), { model: "model_error", tool: "tool_error" }],
    ["a function", () => () => "f", { model: "model_error", tool: "tool_error" }],
    ["undefined", () => undefined, { model: "model_error", tool: ['after ""'] }],
    ["null", () => null, { model: "model_error", tool: ['after "null"'] }],
    ["toolCalls that are not an array", () => ({ content: "", toolCalls: "t" }), { model: "model_error" }],
    ["a call of a tool there is not", () => ({ content: "", toolCalls: [{ id: "c", name: "nope", arguments: "{}" }] }), { model: "tool_error" }],
  ];
  for (const [name, answer, want] of answers) {
    for (const [where, end] of Object.entries(want)) {
      const what = Array.isArray(end) ? `completes with ${JSON.stringify(end[0])}` : `fails with ${end}`;
      test(`a ${where} answering ${name}: the turn ${what}, and the session serves the next turn`, async () => {
        const rt = await load({
          model: (req) => {
            const last = req.messages[req.messages.length - 1];
            if (last.role === "user" && last.content === "go") {
              return where === "model" ? answer() : { content: "", toolCalls: [{ id: "c1", name: "t", arguments: "{}" }] };
            }
            if (last.role === "tool") return `after ${JSON.stringify(last.content)}`;
            return "ok";
          },
          tools: [{ name: "t", call: () => answer() }],
        });
        await rt.run({ sessionId: "s", input: "warm" });
        const before = (await rt.session("s")).messageCount;
        const r = await within(rt.run({ sessionId: "s", input: "go" }).then((v) => v, (e) => e), "the turn");
        if (Array.isArray(end)) {
          assert.ok(!(r instanceof Error), `failed: ${r && r.code}: ${r && r.message}`);
          assert.equal(r.reply.content, end[0]);
        } else {
          assert.ok(r instanceof Error, `completed: ${JSON.stringify(r && r.reply)}`);
          assert.equal(r.code, end, r.message);
          assert.equal((await rt.session("s")).messageCount, before, "the failed turn is rolled back");
        }
        await assertFree(rt, "s");
      });
    }
  }
});
}

// Rule "memory on the main thread only": the sizes are checked against
// the instance's linear memory (memory.buffer.byteLength), which lives in
// the worker in worker mode; they run on the main thread alone, and the
// worker-mode table says so as a skipped test.
const memoryOnMainThread = 'rule "memory on the main thread only": the sizes read the instance\'s linear memory, which worker mode keeps in the worker';
if (runtimeModes.includes("worker")) test("sizes (worker)", { skip: memoryOnMainThread }, () => {});

// loadWatched loads a runtime and returns it with its instance's linear
// memory (the tests read memory.buffer.byteLength).
async function loadWatched(config) {
  const warm = await load({});
  warm.close();
  const Go = globalThis.Go;
  let instance;
  globalThis.Go = class extends Go {
    run(inst) {
      instance ??= inst;
      return super.run(inst);
    }
  };
  let rt;
  try {
    rt = await load(config);
  } finally {
    globalThis.Go = Go;
  }
  return { rt, memory: instance.exports.mem };
}

describe("sizes", () => {
  const KiB = 1024;
  const limit = 64 * KiB;
  // The same rule as a 300 MiB reply or a 256 MiB input under the default
  // limits, scaled down: more than maxMessageBytes, more than the module's
  // memory has to spare.
  const big = "b".repeat(16 * limit * 16);

  test("an input over maxMessageBytes is refused before it is copied: memory unchanged", async () => {
    const { rt, memory } = await loadWatched({ model: () => "ok", limits: { maxMessageBytes: limit } });
    await rt.run({ sessionId: "s", input: "warm" });
    await rt.run({ sessionId: "s", input: "warm again" });
    const size = memory.buffer.byteLength;
    for (const run of [
      () => rt.run({ sessionId: "s", input: big }),
      () => rt.run({ sessionId: "t", input: big }),
      () => rt.run({ sessionId: "s", input: big, policy: {} }),
      () => rt.run({ sessionId: "s", input: "é".repeat(limit / 2 + 1) }),
    ]) {
      await within(rejectsWith(assert, run(), "limit_exceeded"), "run");
      assert.equal(memory.buffer.byteLength, size, "the module's memory did not grow");
    }
    assert.equal(rt.session("s").messageCount, 4);
    await assertFree(rt, "s");
  });

  test("a reply over maxMessageBytes is refused before it is copied: memory unchanged", async () => {
    const { rt, memory } = await loadWatched({
      model: (req) => (req.messages[req.messages.length - 1].content === "big" ? big : "ok"),
      limits: { maxMessageBytes: limit },
    });
    await rt.run({ sessionId: "s", input: "warm" });
    await rt.run({ sessionId: "s", input: "warm again" });
    const size = memory.buffer.byteLength;
    await within(rejectsWith(assert, rt.run({ sessionId: "s", input: "big" }), "limit_exceeded"), "quick");
    assert.equal(memory.buffer.byteLength, size, "the module's memory did not grow");
    await within(rejectsWith(assert, rt.run({ sessionId: "s", input: "big", policy: {} }), "limit_exceeded"), "ordinary");
    assert.equal(memory.buffer.byteLength, size, "the module's memory did not grow");
    assert.equal(rt.session("s").messageCount, 4);
    await assertFree(rt, "s");
  });

  test("a tool's output over maxMessageBytes fails the turn before it is copied: memory unchanged", async () => {
    let calls = 0;
    const { rt, memory } = await loadWatched({
      model: (req) => {
        const last = req.messages[req.messages.length - 1];
        if (last.role === "user" && last.content === "use the tool") return { content: "", toolCalls: [{ id: "c1", name: "big", arguments: "{}" }] };
        return "ok";
      },
      tools: [{ name: "big", description: "answers too much", parameters: { type: "object" }, call: () => (calls++, calls % 2 ? big : { big }) }],
      limits: { maxMessageBytes: limit },
    });
    await rt.run({ sessionId: "s", input: "warm" });
    await rt.run({ sessionId: "s", input: "warm again" });
    const size = memory.buffer.byteLength;
    for (const policy of [undefined, { toolErrors: "report" }, { toolErrors: "fail" }, {}]) {
      const failed = rt.stats().runsFailed;
      const events = [];
      const err = await within(rejectsWith(assert, rt.run({ sessionId: "s", input: "use the tool", policy, onEvent: (ev) => events.push(ev.type) }), "limit_exceeded"), "tool");
      assert.equal(err.message, 'the result of tool "big" is more than maxMessageBytes', "the module's message");
      assert.equal(rt.stats().runsFailed, failed + 1, "counted failed, as the module counts it");
      assert.equal(events.at(-1), "run.failed", "the run.failed event");
      assert.equal(memory.buffer.byteLength, size, "the module's memory did not grow");
      assert.equal(rt.session("s").messageCount, 4, "the turn rolled back");
      assert.equal(rt.stats().activeRuns, 0);
    }
    assert.equal(calls, 4);
    await assertFree(rt, "s");
  });

  test("an output at maxMessageBytes, as the tool message counts it, is kept", async () => {
    // The tool message counts its output and its call's id ("c1").
    const { rt } = await loadWatched({
      model: (req) => {
        const last = req.messages[req.messages.length - 1];
        if (last.role === "user") return { content: "", toolCalls: [{ id: "c1", name: "t", arguments: "{}" }] };
        return "ok";
      },
      tools: [{ name: "t", description: "", parameters: { type: "object" }, call: (args, ctx) => "é".repeat((limit - 2) / 2 - (ctx.sessionId === "over" ? 0 : 1)) + (ctx.sessionId === "over" ? "x" : "xx") }],
      limits: { maxMessageBytes: limit },
    });
    const res = await rt.run({ sessionId: "at", input: "go" });
    assert.equal(res.status, "completed");
    await rejectsWith(assert, rt.run({ sessionId: "over", input: "go" }), "limit_exceeded");
  });

  test("a history over maxSeedBytes is refused before it is copied, as the module refuses it: memory unchanged", async () => {
    const { rt, memory } = await loadWatched({ model: () => "ok", limits: { maxSeedBytes: limit } });
    await rt.run({ sessionId: "s", input: "warm" });
    await rt.run({ sessionId: "s", input: "warm again" });
    const size = memory.buffer.byteLength;
    // 16 MiB of history in 40 KiB messages: over the limit at the second.
    const part = "h".repeat(40 * KiB);
    const history = [];
    for (let i = 0; i < 400; i++) history.push({ role: i % 2 ? "assistant" : "user", content: part });
    for (const [name, h] of [["an array", history], ["packed", packHistory(history)]]) {
      for (const run of [
        () => rt.run({ sessionId: "s", input: "x", history: h }),
        () => rt.run({ sessionId: "t", input: "x", history: h }),
        () => rt.run({ sessionId: "s", input: "x", history: h, policy: { seedMode: "reconcile" } }),
        () => rt.startRunWithHistory("t", "x", h),
      ]) {
        const err = await within(rejectsWith(assert, run(), "limit_exceeded", 1), name);
        assert.equal(err.message, `history exceeds maxSeedBytes (${limit}) at this message`);
        assert.equal(memory.buffer.byteLength, size, `${name}: the module's memory did not grow`);
      }
    }
    assert.equal(rt.session("s").messageCount, 4);
    assert.equal(rt.session("t"), null);
    await assertFree(rt, "s");
  });

  test("a history over maxSeedBytes with an earlier problem is refused for that problem, as core orders them: memory unchanged", async () => {
    const { rt, memory } = await loadWatched({ model: () => "ok", limits: { maxSeedBytes: limit } });
    await rt.run({ sessionId: "s", input: "warm" });
    const size = memory.buffer.byteLength;
    // An unanswered call, then 16 MiB in 40 KiB messages: over the limit
    // at host index 2, after core finds the call unanswered (at index 1).
    const part = "h".repeat(40 * KiB);
    const history = [{ role: "assistant", content: "", toolCalls: [{ id: "c1", name: "t", arguments: "{}" }] }];
    for (let i = 0; i < 400; i++) history.push({ role: i % 2 ? "assistant" : "user", content: part });
    const err = await within(rejectsWith(assert, rt.run({ sessionId: "t", input: "x", history }), "invalid_history", 0), "plain");
    assert.equal(err.message, 'tool call "c1" has no tool result before the next user or assistant message');
    // With repair the call is answered by a marker, and the limit is next.
    const repaired = await within(rejectsWith(assert, rt.run({ sessionId: "t", input: "x", history, policy: { repair: true } }), "limit_exceeded", 2), "repair");
    assert.equal(repaired.message, `history exceeds maxSeedBytes (${limit}) at this message`);
    assert.equal(memory.buffer.byteLength, size, "the module's memory did not grow");
    assert.equal(rt.session("t"), null);
  });

  test("the refusal of a history over maxSeedBytes is the module's: code, index and message", async () => {
    const { rt } = await loadWatched({ model: () => "ok", limits: { maxSeedBytes: limit, maxMessageBytes: limit / 2 } });
    const part = "u".repeat(20 * KiB);
    // A UIMessage yields an assistant message and its tool result (one
    // host message, two session messages): the index names the host's.
    const ui = {
      id: "m2", role: "assistant",
      parts: [{ type: "text", text: part }, { type: "tool-f", toolCallId: "c1", state: "output-available", input: {}, output: "o".repeat(30 * KiB) }],
    };
    for (const [name, history] of [
      ["the total", [{ role: "user", content: part }, { role: "assistant", content: part }, { role: "user", content: part }, { role: "assistant", content: part }]],
      ["a UIMessage", [{ role: "system", content: "s" }, { role: "user", content: part }, ui, { role: "user", content: part }]],
      ["one message", [{ role: "user", content: part }, { role: "assistant", content: "a".repeat(limit / 2 + 1) }, { role: "user", content: part }]],
    ]) {
      const want = rt.checkHistory(history).problems.at(-1);
      assert.equal(want.code, "limit_exceeded", `${name}: the module refuses it`);
      const err = await within(rejectsWith(assert, rt.run({ sessionId: "s", input: "x", history }), "limit_exceeded"), name);
      assert.deepEqual({ code: err.code, index: err.index, message: err.message }, { code: want.code, index: want.index, message: want.message }, name);
    }
    // Within the limit as the module counts it: seeded.
    const within64 = [{ role: "user", content: "w".repeat(limit / 2 - 1) }, { role: "assistant", content: "w".repeat(limit / 2 - 1) }];
    assert.equal((await rt.run({ sessionId: "w", input: "x", history: within64 })).status, "completed");
    assert.equal(rt.session("w").messageCount, 4);
  });
});
