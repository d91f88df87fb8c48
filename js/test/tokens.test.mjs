// policy.maxContextTokens in the glue (docs/adr/0018-context-window-by-tokens.md):
// the token window's corpus (testdata/contract/window/) as the Go edges
// run it, result.context and the model.context events, the too-large
// refusal, and quick turns left to runs without a policy. Runs under
// `node --test` and in the browsers through js/test/browser.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { runtimes, hasWebWorker } from "./helpers.mjs";
import { windowCases, runWindowCase } from "./corpus.mjs";

const { load, release } = runtimes();




describe("window corpus", async () => {
  for (const c of await windowCases()) {
    test(c.name, async () => {
      const rt = await load(c.systemPrompt ? { systemPrompt: c.systemPrompt } : {});
      try {
        await runWindowCase(rt, c);
      } finally {
        release(rt);
      }
    });
  }
});

test("model.context events precede each model call; result.context is the last", async () => {
  const rt = await load();
  try {
    const history = Array.from({ length: 30 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `m${i}` }));
    const events = [];
    const r = await rt.run({ sessionId: "e", input: "hi", history, policy: { maxContextTokens: 60, contextChunkTokens: 30 }, onEvent: (ev) => events.push(ev) });
    const want = { messages: 7, tokens: 35, dropped: 24 };
    assert.deepEqual(r.context, want);
    const at = events.findIndex((ev) => ev.type === "model.context");
    assert.ok(at >= 0, `no model.context in ${events.map((ev) => ev.type)}`);
    assert.deepEqual(events[at].context, want);
    assert.equal(events[at].step, 1);
    assert.equal(events[at].sessionId, "e");
    assert.equal(events[at + 1].type, "model.delta");
    const done = events[events.length - 1];
    assert.equal(done.type, "run.completed");
    assert.deepEqual(done.result.context, want);
    // Without a budget: neither the event nor result.context.
    const events2 = [];
    const r2 = await rt.run({ sessionId: "e", input: "again", onEvent: (ev) => events2.push(ev) });
    assert.equal(r2.context, undefined);
    assert.ok(!events2.some((ev) => ev.type === "model.context"));
    // A quick turn (no policy) neither.
    assert.equal((await rt.run({ sessionId: "e", input: "quick" })).context, undefined);
  } finally {
    release(rt);
  }
});

test("bad token fields are refused invalid_argument, changing nothing", async () => {
  const rt = await load();
  try {
    for (const policy of [{ maxContextTokens: -1 }, { maxContextTokens: 1.5 }, { maxContextTokens: "100" },
      { contextChunkTokens: -1 }, { maxContextTokens: 100, contextChunkTokens: 101 }]) {
      await assert.rejects(rt.run({ sessionId: "bad", input: "x", policy }), (e) => e.code === "invalid_argument", JSON.stringify(policy));
    }
    assert.equal(rt.session("bad"), null);
    const r = await rt.run({ sessionId: "bad", input: "x", policy: { maxContextTokens: 100 } });
    assert.deepEqual(r.context, { messages: 1, tokens: 5, dropped: 0 });
  } finally {
    release(rt);
  }
});

// Worker mode (browsers only, as in worker.test.mjs): the policy reaches
// the worker's glue, and result.context and model.context come back.
if (hasWebWorker) {
  test("worker mode: the token window's policy, result.context and model.context", async () => {
    const rt = await load({ worker: true });
    try {
      const history = Array.from({ length: 30 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `m${i}` }));
      const events = [];
      const r = await rt.run({ sessionId: "w", input: "hi", history, policy: { maxContextTokens: 60, contextChunkTokens: 30 }, onEvent: (ev) => events.push(ev) });
      const want = { messages: 7, tokens: 35, dropped: 24 };
      assert.deepEqual(r.context, want);
      assert.deepEqual(events.find((ev) => ev.type === "model.context")?.context, want);
      await assert.rejects(rt.run({ sessionId: "w", input: "x".repeat(400), policy: { maxContextTokens: 60 } }), (e) => e.code === "limit_exceeded");
      assert.equal((await rt.session("w")).messageCount, 32);
    } finally {
      release(rt);
    }
  });
}
