// loadRuntime({ countTokens }) (docs/adr/0018-context-window-by-tokens.md):
// the module asks the glue's driver for the counts its caches lack (wire
// action 6) and the host's counter answers (js/count.js). The budget
// respected with the host's counter, pairs never split, system prompt and
// input kept, the too-large refusal, bad counters failing typed, counts
// cached across turns, the window corpus with a counter, and the count
// frames against the Go package's golden frames. Runs under `node --test`
// and in the browsers through js/test/browser (worker mode there).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { root } from "./env.mjs";
import { runtimes, hasWebWorker } from "./helpers.mjs";
import { windowCases, received, runWindowCase } from "./corpus.mjs";
import { Writer, readAction, ACTION } from "../wire.js";
import { writeCounts, countWith, MAX_TOKEN_COUNT } from "../count.js";

const { load, release } = runtimes();

const utf8 = new TextEncoder();
const bytes = (s) => (s === undefined ? 0 : utf8.encode(s).length);

// estimate is core.EstimateTokens in JavaScript: the corpus's figures
// hold with it.
function estimate(m) {
  let n = bytes(m.content) + bytes(m.tool_call_id);
  for (const c of m.tool_calls ?? []) n += bytes(c.id) + bytes(c.name) + bytes(c.arguments);
  return Math.ceil(n / 4) + 4;
}

// recorder wraps count, recording what it is asked.
function recorder(count) {
  const seen = [];
  const f = (m) => {
    seen.push(`${m.role}:${m.content}`);
    return count(m);
  };
  return { f, seen };
}




const golden = async (name) => new Uint8Array(await readFile(new URL(`wire/testdata/golden/${name}`, root)));

// The golden frames are read from the repository: not served to the
// browsers' page.
const onDisk = typeof globalThis.document === "undefined";

test("the count frames are the Go package's", { skip: !onDisk && "the golden frames are not served to the page" }, async () => {
  const a = readAction(await golden("action-count.bin"));
  assert.equal(a.kind, ACTION.count);
  assert.equal(a.handle, 9);
  assert.deepEqual(a.count.map((m) => m.role), ["system", "user", "assistant", "tool"]);
  assert.equal(a.count[1].content, "héllo");
  assert.deepEqual(a.count[2].tool_calls, [{ id: "c", name: "n", arguments: "{}" }]);
  assert.deepEqual([...writeCounts(new Writer(), 9, { counts: [0, 7, 300, MAX_TOKEN_COUNT] })], [...await golden("counts.bin")]);
  assert.deepEqual([...writeCounts(new Writer(), 9, { error: { code: "invalid_argument", message: "countTokens failed: no tokenizer" } })],
    [...await golden("counts-failed.bin")]);
});

test("countWith: the counts, or the first failure as invalid_argument", () => {
  const msgs = [{ role: "user", content: "a" }, { role: "user", content: "b" }];
  assert.deepEqual(countWith(() => 3, msgs), { counts: [3, 3] });
  for (const [v, re] of [[-1, /-1/], [1.5, /1\.5/], [NaN, /NaN/], [Infinity, /Infinity/], [2 ** 31, /2147483648/], ["3", /a string/],
    [null, /null/], [undefined, /undefined/], [Promise.resolve(1), /Promise/], [10n, /bigint/]]) {
    const r = countWith(() => v, msgs);
    assert.equal(r.error?.code, "invalid_argument", String(v));
    assert.match(r.error.message, re);
  }
  const r = countWith(() => { throw new Error("no tokenizer"); }, msgs);
  assert.deepEqual(r.error, { code: "invalid_argument", message: "countTokens failed: no tokenizer" });
});

describe("window corpus with a host counter", async () => {
  for (const c of await windowCases()) {
    test(c.name, async () => {
      const counter = recorder(estimate);
      const rt = await load({ ...(c.systemPrompt ? { systemPrompt: c.systemPrompt } : {}), countTokens: counter.f });
      try {
        await runWindowCase(rt, c);
        if (c.policy.maxContextTokens) assert.ok(counter.seen.length > 0, "the host's counter was never called");
      } finally {
        release(rt);
      }
    });
  }
});

// words counts a message's words plus one: not the estimate, so a
// window that followed the estimate would differ.
const words = (m) => m.content.split(" ").filter(Boolean).length + 1;

test("the budget is respected with the host's counter: its counts, not the estimate's", async () => {
  const rt = await load({ systemPrompt: "be brief", countTokens: words });
  try {
    // Long words: the estimate would count each message at 100 or more.
    const long = "x".repeat(400);
    const history = Array.from({ length: 20 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `${long} ${i}` }));
    const r = await rt.run({ sessionId: "b", input: "hi", history, policy: { maxContextTokens: 30, contextChunkTokens: 10 } });
    // 3 a message; the system prompt 3, the input 2: 9 messages would be
    // 3 + 2 + 24 = 29, within 30.
    assert.ok(r.context.tokens <= 30, JSON.stringify(r.context));
    assert.ok(r.context.messages > 2, `only ${r.context.messages} messages sent: the estimate counted`);
    assert.equal(received(r.reply.content), r.context.messages);
    assert.equal(r.context.messages + r.context.dropped, 21);
  } finally {
    release(rt);
  }
});

test("pairs are never split: a tool call and its results go together", async () => {
  let step = 0;
  const sent = [];
  const model = (req) => {
    sent.push(req.messages);
    step++;
    if (step === 1) return { content: "", toolCalls: [{ id: "c1", name: "t", arguments: "{}" }, { id: "c2", name: "t", arguments: "{}" }] };
    return { content: "done" };
  };
  const rt = await load({ model, tools: [{ name: "t", call: () => "r" }], countTokens: () => 5 });
  try {
    const policy = { maxContextTokens: 40, contextChunkTokens: 1 };
    for (let i = 0; i < 6; i++) {
      step = 0;
      await rt.run({ sessionId: "p", input: `q${i}`, policy });
    }
    for (const msgs of sent) {
      assert.notEqual(msgs[0].role, "tool", "the window starts with a tool result");
      for (const [i, m] of msgs.entries()) {
        if (m.tool_calls) {
          const ids = msgs.slice(i + 1, i + 1 + m.tool_calls.length).map((x) => x.tool_call_id);
          assert.deepEqual(ids, m.tool_calls.map((c) => c.id), "a call sent without its results");
        }
      }
    }
  } finally {
    release(rt);
  }
});

test("the system prompt and the input are always sent; too large is refused, changing nothing", async () => {
  const rt = await load({ systemPrompt: "sys", countTokens: (m) => (m.content === "huge" ? 1000 : 5) });
  try {
    const history = Array.from({ length: 10 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `m${i}` }));
    const r = await rt.run({ sessionId: "s", input: "hi", history, policy: { maxContextTokens: 10 } });
    // The system prompt (5) and the input (5): nothing else fits.
    assert.deepEqual(r.context, { messages: 1, tokens: 10, dropped: 10 });
    const before = rt.session("s").messages.length;
    await assert.rejects(rt.run({ sessionId: "s", input: "huge", policy: { maxContextTokens: 10 } }),
      (e) => e.code === "limit_exceeded" && /1005 tokens, more than policy.maxContextTokens \(10\)/.test(e.message));
    assert.equal(rt.session("s").messages.length, before);
  } finally {
    release(rt);
  }
});

test("a bad counter fails the run invalid_argument and changes nothing; the runtime goes on", async () => {
  let mode = "";
  const rt = await load({
    countTokens: (m) => {
      if (m.content !== "bad" && !/model received/.test(m.content)) return 2;
      switch (mode) {
        case "throw": throw new Error("no tokenizer");
        case "negative": return -1;
        case "nan": return NaN;
        case "fraction": return 1.5;
        case "infinite": return Infinity;
        case "string": return "3";
        case "promise": return Promise.resolve(3);
        case "huge": return 2 ** 31;
      }
      return 2;
    },
  });
  try {
    const policy = { maxContextTokens: 100 };
    await rt.run({ sessionId: "s", input: "hello", policy });
    for (const m of ["throw", "negative", "nan", "fraction", "infinite", "string", "promise", "huge"]) {
      // At the input (before seeding) and at the previous reply (before
      // the model call).
      for (const at of ["input", "reply"]) {
        mode = at === "input" ? m : "";
        if (at === "reply") await rt.run({ sessionId: "s", input: "ok", policy });
        mode = m;
        const before = rt.session("s").messages.length;
        await assert.rejects(rt.run({ sessionId: "s", input: at === "input" ? "bad" : "next", policy }),
          (e) => e.code === "invalid_argument" && /countTokens/.test(e.message), `${m} at the ${at}`);
        assert.equal(rt.session("s").messages.length, before, `${m} at the ${at}: the session changed`);
      }
    }
    mode = "";
    const r = await rt.run({ sessionId: "s", input: "bad", policy });
    assert.ok(r.context);
  } finally {
    release(rt);
  }
});

test("counts are cached: the counter is called once per stored message across turns", async () => {
  const counter = recorder(words);
  const rt = await load({ systemPrompt: "sys", tools: [{ name: "a", call: () => "" }, { name: "b", call: () => "" }], countTokens: counter.f });
  try {
    const turns = 30;
    for (let i = 0; i < turns; i++) await rt.run({ sessionId: "s", input: `q${i}`, policy: { maxContextTokens: 50 } });
    // The system prompt, two tool specs, each input and each reply but
    // the last (counted at the next turn).
    assert.equal(counter.seen.length, 1 + 2 + 2 * turns - 1);
    const inputs = counter.seen.filter((s) => s.startsWith("user:"));
    assert.equal(new Set(inputs).size, inputs.length, "an input was counted twice");
    // Without a budget (a quick turn too) the counter is not called.
    const n = counter.seen.length;
    await rt.run({ sessionId: "s", input: "free" });
    await rt.run({ sessionId: "s", input: "free", policy: {} });
    assert.equal(counter.seen.length, n);
  } finally {
    release(rt);
  }
});

test("countTokens that is not a function is refused invalid_argument", async () => {
  for (const countTokens of [1, "estimate", {}, null]) {
    await assert.rejects(load({ countTokens }), (e) => e.code === "invalid_argument" && /countTokens/.test(e.message), String(countTokens));
  }
});

// Worker mode (browsers only, as in worker.test.mjs): the page's counter
// is asked by message.
if (hasWebWorker) {
  test("worker mode: the page's countTokens counts, once per stored message, and a bad one fails typed", async () => {
    let bad = false;
    const counter = recorder((m) => (bad && m.content === "bad" ? -1 : words(m)));
    const rt = await load({ worker: true, systemPrompt: "sys", countTokens: counter.f });
    try {
      const policy = { maxContextTokens: 50 };
      for (let i = 0; i < 5; i++) {
        const r = await rt.run({ sessionId: "w", input: `q${i}`, policy });
        assert.ok(r.context.tokens <= 50);
      }
      assert.equal(counter.seen.length, 1 + 2 * 5 - 1);
      bad = true;
      await assert.rejects(rt.run({ sessionId: "w", input: "bad", policy }), (e) => e.code === "invalid_argument" && /countTokens/.test(e.message));
      assert.equal((await rt.session("w")).messageCount, 10);
    } finally {
      release(rt);
    }
  });
}
