// Hostile hosts at the glue (docs/adr/0019-tool-approvals.md,
// docs/adr/0018-context-window-by-tokens.md): a needsApproval predicate
// whose answer is a thenable that settles twice, calls back inside its
// then, or whose then getter throws; approvals named twice, answered both
// ways, for another session's call, racing an input, sent to a closed
// runtime; the app closed between the decision and the tool's result and
// between the result and the model's next reply (the history the host
// stores comes out with each tool run once); and a counter whose counts
// change between calls or that closes the runtime. Runs under node
// --test, bun test and deno test -A, and in the browser pages (where
// worker mode is one more mode).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { runtimes, rejectsWith, runtimeModes, modeConfig } from "./helpers.mjs";
import { world as openWorld, contents, messagesOf, refused } from "./approvals.mjs";

const { load, release } = runtimes();
const world = (...args) => openWorld(load, ...args);

const approve = (id) => ({ toolCallId: id, approved: true });

// once returns a predicate that answers hostile() at its first call and
// false after it, so that a second run shows the runtime alive.
function once(hostile) {
  let n = 0;
  return () => (n++ === 0 ? hostile() : false);
}

// The thenables a predicate may answer with, and what the run does:
// "paused" (it took true), "completed" (false), or the error code.
const thenables = [
  ["resolves true, then rejects", () => ({ then(ok, fail) { ok(true); fail(new Error("late")); } }), "paused"],
  ["rejects, then resolves true", () => ({ then(ok, fail) { fail(new Error("no ledger")); ok(true); } }), "tool_error"],
  ["resolves false, then true", () => ({ then(ok) { ok(false); ok(true); } }), "completed"],
  ["resolves true, then false, later", () => ({ then(ok) { ok(true); setTimeout(() => ok(false), 0); } }), "paused"],
  ["calls back inside then, before returning", () => ({ then(ok) { ok(true); return 7; } }), "paused"],
  ["has a then getter that throws", () => ({ get then() { throw new Error("getter"); } }), "tool_error"],
  ["has a then that throws after resolving", () => ({ then(ok) { ok(true); throw new Error("after"); } }), "paused"],
  ["answers a number", () => 1, "tool_error"],
  ["answers an object", () => ({ need: true }), "tool_error"],
  ["answers a Promise of undefined", () => Promise.resolve(undefined), "tool_error"],
  ["answers a thenable of a thenable of true", () => ({ then(ok) { ok({ then(k) { k(true); } }); } }), "paused"],
];

for (const mode of runtimeModes) {
  describe(`hostile predicates (${mode})`, () => {
    for (const [name, hostile, want] of thenables) {
      test(`a predicate that ${name}: ${want}, and the runtime goes on`, async () => {
        const w = await world(mode, once(hostile));
        if (want === "paused" || want === "completed") {
          const res = await w.rt.run({ sessionId: "s", input: "q" });
          assert.equal(res.status, want === "paused" ? "awaiting_approval" : "completed");
          assert.deepEqual(w.runs, { pay: want === "paused" ? 0 : 1, look: 1 });
          if (want === "paused") {
            const done = await w.rt.run({ sessionId: "s", approvals: [approve("pay-q")] });
            assert.equal(done.reply.content, "done: looked | paid");
            assert.deepEqual(w.runs, { pay: 1, look: 1 });
          }
        } else {
          const err = await rejectsWith(assert, w.rt.run({ sessionId: "s", input: "q" }), want);
          assert.match(err.message, /approval check of tool "pay" failed/);
          assert.equal(await messagesOf(w.rt, "s"), null);
          assert.deepEqual(w.runs, { pay: 0, look: 0 });
        }
        // The predicate answers false from now on: the same session runs.
        const next = await w.rt.run({ sessionId: "s", input: "r" });
        assert.equal(next.status, "completed");
        assert.equal(next.reply.content, "done: paid | looked");
        release(w.rt);
      });
    }
  });

  describe(`hostile approvals (${mode})`, () => {
    test("a call whose arguments are not JSON fails the run tool_error naming them, the predicate not asked", async () => {
      let asked = 0;
      const model = (req) => req.messages.at(-1).role === "user"
        ? { content: "", toolCalls: [{ id: "c", name: "pay", arguments: "{bad" }] } : { content: "done" };
      const rt = await load(modeConfig(mode, { model, tools: [{ name: "pay", needsApproval: () => { asked++; return false; }, call: () => "paid" }] }));
      const err = await rejectsWith(assert, rt.run({ sessionId: "s", input: "q" }), "tool_error");
      assert.match(err.message, /approval check of tool "pay" failed: arguments are not valid JSON/);
      assert.equal(asked, 0);
      assert.equal(await messagesOf(rt, "s"), null);
      release(rt);
    });

    test("a call named twice, or approved and denied in one request, is refused; nothing changes", async () => {
      const w = await world(mode);
      assert.equal((await w.rt.run({ sessionId: "s", input: "q" })).status, "awaiting_approval");
      await refused(w, { sessionId: "s", approvals: [approve("pay-q"), approve("pay-q")] }, "invalid_argument");
      await refused(w, { sessionId: "s", approvals: [approve("pay-q"), { toolCallId: "pay-q", approved: false }] }, "invalid_argument");
      await refused(w, { sessionId: "s", approvals: [{ toolCallId: "pay-q", approved: false }, approve("pay-q")] }, "invalid_argument");
      // The look call ran already: it is not pending.
      await refused(w, { sessionId: "s", approvals: [approve("pay-q"), approve("look-q")] }, "invalid_argument");
      const res = await w.rt.run({ sessionId: "s", approvals: [approve("pay-q")] });
      assert.equal(res.status, "completed");
      assert.deepEqual(w.runs, { pay: 1, look: 1 });
      release(w.rt);
    });

    test("approvals with holes, throwing getters or a Proxy are refused invalid_argument; nothing changes", async () => {
      const w = await world(mode);
      assert.equal((await w.rt.run({ sessionId: "s", input: "q" })).status, "awaiting_approval");
      // eslint-disable-next-line no-sparse-arrays
      for (const approvals of [[, approve("pay-q")], [approve("pay-q"), ,], new Array(1)]) {
        await refused(w, { sessionId: "s", approvals }, "invalid_argument");
      }
      for (const approvals of [
        [{ get toolCallId() { throw new Error("getter"); }, approved: true }],
        new Proxy([approve("pay-q")], { get(t, k) { if (k === "length") throw new Error("proxy"); return t[k]; } }),
      ]) {
        await refused(w, { sessionId: "s", approvals }, "invalid_argument");
      }
      assert.equal((await w.rt.run({ sessionId: "s", approvals: [approve("pay-q")] })).status, "completed");
      assert.deepEqual(w.runs, { pay: 1, look: 1 });
      release(w.rt);
    });

    test("a decision for another session's pending call is refused in both sessions", async () => {
      const w = await world(mode);
      await w.rt.run({ sessionId: "s", input: "q" });
      await w.rt.run({ sessionId: "t", input: "r" });
      await refused(w, { sessionId: "s", approvals: [approve("pay-r")] }, "invalid_argument", ["s", "t"]);
      await refused(w, { sessionId: "t", approvals: [approve("pay-q"), approve("pay-r")] }, "invalid_argument", ["s", "t"]);
      // A session with nothing pending (and one never seen) refuses too.
      await refused(w, { sessionId: "u", approvals: [approve("pay-q")] }, "invalid_argument", ["s", "t", "u"]);
      assert.equal((await w.rt.run({ sessionId: "t", approvals: [approve("pay-r")] })).status, "completed");
      assert.equal((await w.rt.run({ sessionId: "s", approvals: [approve("pay-q")] })).status, "completed");
      assert.deepEqual(w.runs, { pay: 2, look: 2 });
      release(w.rt);
    });

    test("the same approval sent twice at once: one resumes, the other is refused; the tool runs once", async () => {
      const w = await world(mode);
      await w.rt.run({ sessionId: "s", input: "q" });
      const both = await Promise.allSettled([0, 1].map(() => w.rt.run({ sessionId: "s", approvals: [approve("pay-q")] })));
      assert.deepEqual(both.map((r) => r.status).sort(), ["fulfilled", "rejected"]);
      assert.equal(both.find((r) => r.status === "rejected").reason.code, "invalid_argument");
      assert.deepEqual(contents(await messagesOf(w.rt, "s")), ["user:q", "assistant:", "tool:looked", "tool:paid", "assistant:done: looked | paid"]);
      assert.deepEqual(w.runs, { pay: 1, look: 1 });
      release(w.rt);
    });

    test("an approval racing an input on the same session: one at a time, the tool runs once", async () => {
      for (const inputFirst of [false, true]) {
        const w = await world(mode);
        await w.rt.run({ sessionId: "s", input: "q" });
        const resume = () => w.rt.run({ sessionId: "s", approvals: [approve("pay-q")] });
        const input = () => w.rt.run({ sessionId: "s", input: "x" });
        const [a, b] = await Promise.allSettled(inputFirst ? [input(), resume()] : [resume(), input()]);
        const [inp, res] = inputFirst ? [a, b] : [b, a];
        assert.equal(res.status, "fulfilled", String(res.reason));
        assert.equal(res.value.status, "completed");
        const msgs = contents(await messagesOf(w.rt, "s"));
        if (inputFirst) {
          // The input met the paused session: refused, nothing appended.
          assert.equal(inp.status, "rejected");
          assert.equal(inp.reason.code, "invalid_argument");
          assert.deepEqual(msgs, ["user:q", "assistant:", "tool:looked", "tool:paid", "assistant:done: looked | paid"]);
          assert.deepEqual(w.runs, { pay: 1, look: 1 });
        } else {
          // The input waited for the resume, then ran its own turn (which pauses).
          assert.equal(inp.status, "fulfilled", String(inp.reason));
          assert.equal(inp.value.status, "awaiting_approval");
          assert.deepEqual(msgs, ["user:q", "assistant:", "tool:looked", "tool:paid", "assistant:done: looked | paid", "user:x", "assistant:", "tool:looked"]);
          assert.deepEqual(w.runs, { pay: 1, look: 2 });
        }
        release(w.rt);
      }
    });

    test("a predicate that closes the runtime ends the run cancelled; the tool never runs", async () => {
      let w;
      w = await world(mode, () => { w.rt.close(); return true; });
      await rejectsWith(assert, w.rt.run({ sessionId: "s", input: "q" }), "cancelled");
      await rejectsWith(assert, w.rt.run({ sessionId: "s", input: "q" }), "invalid_argument");
      assert.deepEqual(w.runs, { pay: 0, look: 0 });
    });

    test("an approval sent to a closed runtime is refused typed", async () => {
      const w = await world(mode);
      await w.rt.run({ sessionId: "s", input: "q" });
      w.rt.close();
      await rejectsWith(assert, w.rt.run({ sessionId: "s", approvals: [approve("pay-q")] }), "invalid_argument");
      assert.deepEqual(w.runs, { pay: 0, look: 1 });
    });

    // The app is closed inside the approved tool (before its result) or
    // inside the model's next call (after it): the run fails, the host
    // keeps the paused history it stored, and a cold runtime resumes from
    // it; the conversation comes out with each call answered once.
    for (const at of ["pay", "model"]) {
      test(`the runtime closed in the resume's ${at === "pay" ? "tool, before its result" : "model call, after the tool's result"}: a cold start resumes once`, async () => {
        const w = await world(mode);
        const paused = await w.rt.run({ sessionId: "s", input: "q" });
        const stored = paused.appended.map((m) => ({ ...m }));
        w.hooks[at] = () => { w.rt.close(); };
        await rejectsWith(assert, w.rt.run({ sessionId: "s", approvals: [approve("pay-q")] }), "cancelled");
        assert.deepEqual(w.runs, { pay: 1, look: 1 });
        const cold = await world(mode);
        const res = await cold.rt.run({ sessionId: "s", history: stored, approvals: [approve("pay-q")] });
        assert.equal(res.status, "completed");
        const conversation = contents([...stored, ...res.appended]);
        assert.deepEqual(conversation, ["user:q", "assistant:", "tool:looked", "tool:paid", "assistant:done: looked | paid"]);
        assert.deepEqual(cold.runs, { pay: 1, look: 0 });
        // And the stored conversation takes no second approval.
        const all = [...stored, ...res.appended].map((m) => ({ ...m }));
        const again = await world(mode);
        await refused(again, { sessionId: "s", history: all, approvals: [approve("pay-q")] }, "invalid_argument");
        release(cold.rt);
        release(again.rt);
      });
    }
  });

  describe(`hostile counters (${mode})`, () => {
    test("counts that change between calls for the same message: each message counted once, the runs go on", async () => {
      let calls = 0;
      const rt = await load(modeConfig(mode, { countTokens: () => (calls++ % 7) + 1 }));
      const policy = { maxContextTokens: 12 };
      for (let i = 0; i < 6; i++) {
        const r = await rt.run({ sessionId: "s", input: "m" + i, policy });
        assert.equal(r.status, "completed");
      }
      // Two messages stored per turn, the system prompt none: at most one
      // count for each stored message and each input.
      assert.ok(calls <= 12, `${calls} calls for 12 messages`);
      assert.equal((await rt.session("s")).messages.length, 12);
      release(rt);
    });

    test("a counter that closes the runtime fails the run typed and hangs nothing", async () => {
      let rt;
      let calls = 0;
      rt = await load(modeConfig(mode, { countTokens: () => { calls++; rt.close(); return 1; } }));
      await rejectsWith(assert, rt.run({ sessionId: "s", input: "hello", policy: { maxContextTokens: 100 } }), "cancelled");
      await rejectsWith(assert, rt.run({ sessionId: "s", input: "again", policy: { maxContextTokens: 100 } }), "invalid_argument");
      assert.ok(calls >= 1);
    });
  });
}

// Nothing paid twice (docs/adr/0019-tool-approvals.md, "Amendment"): a
// resume whose approved tool ran keeps the tool's result through any
// later failure of the run. The failure's error carries it as
// err.appended; approving again is refused warm and cold (the host
// stored the error's appended), three times, and pay ran once. Each
// trigger: how it makes the continuation fail, the policy of the resume,
// the config, and the code. Before, each retry ran pay again.
const payOnce = [
  ["the model throws", (w) => { w.hooks.model = () => { throw new Error("upstream 500"); }; }, undefined, {}, "model_error"],
  ["the model rejects", (w) => { w.hooks.model = () => Promise.reject(new Error("upstream 500")); }, undefined, {}, "model_error"],
  ["policy.timeoutMs in the continuation", (w) => { w.hooks.model = () => new Promise((r) => setTimeout(r, 300)); },
    { timeoutMs: 60 }, {}, "timeout"],
  // Each message counts 10: the reply and look's result fit (with the two
  // tool specs, 40), pay's result does not (50).
  ["maxContextTokens too small for the call and its result", () => {}, { maxContextTokens: 45 },
    { countTokens: () => 10 }, "limit_exceeded"],
  ["a counter that fails after the tool", () => {}, { maxContextTokens: 1000 },
    { countTokens: (m) => { if (m.role === "tool" && m.content === "paid") throw new Error("counter down"); return 10; } },
    "invalid_argument"],
];

for (const mode of runtimeModes) {
  describe(`nothing paid twice (${mode})`, () => {
    for (const [name, arm, policy, extra, code] of payOnce) {
      test(`${name}: ${code}, the result kept and reported, three approvals again refused warm and cold`, async () => {
        const w = await world(mode, () => true, extra);
        const paused = await w.rt.run({ sessionId: "s", input: "q" });
        assert.equal(paused.status, "awaiting_approval");
        arm(w);
        const resume = { sessionId: "s", approvals: [approve("pay-q")], ...(policy ? { policy } : {}) };
        const events = [];
        const err = await rejectsWith(assert, w.rt.run({ ...resume, onEvent: (ev) => events.push(ev) }), code);
        assert.deepEqual(contents(err.appended ?? []), ["tool:paid"]);
        assert.equal(err.appended[0].tool_call_id, "pay-q");
        const failed = events.find((ev) => ev.type === "run.failed");
        assert.deepEqual(contents(failed.error.appended ?? []), ["tool:paid"]);
        assert.deepEqual(contents(await messagesOf(w.rt, "s")), ["user:q", "assistant:", "tool:looked", "tool:paid"]);
        const stored = [...paused.appended, ...err.appended].map((m) => ({ ...m }));
        w.hooks.model = undefined;
        for (let i = 0; i < 3; i++) await refused(w, resume, "invalid_argument");
        const cold = await world(mode, () => true, extra);
        await refused(cold, { ...resume, history: stored }, "invalid_argument");
        assert.deepEqual(w.runs, { pay: 1, look: 1 });
        assert.deepEqual(cold.runs, { pay: 0, look: 0 });
        // The conversation goes on from the stored result.
        const next = await cold.rt.run({ sessionId: "s", history: stored, input: "more" });
        assert.equal(next.status, "awaiting_approval");
        release(w.rt);
        release(cold.rt);
      });
    }

    test("the client leaves stream() after tool.finished: the run ends, the result stays, approving again is refused", async () => {
      const w = await world(mode);
      await w.rt.run({ sessionId: "s", input: "q" });
      w.hooks.model = () => new Promise((r) => setTimeout(r, 50));
      const seen = [];
      for await (const ev of w.rt.stream({ sessionId: "s", approvals: [approve("pay-q")] })) {
        seen.push(ev);
        if (ev.type === "tool.finished") break;
      }
      assert.deepEqual(contents([seen.at(-1).message]), ["tool:paid"]);
      w.hooks.model = undefined;
      for (let i = 0; i < 3; i++) await refused(w, { sessionId: "s", approvals: [approve("pay-q")] }, "invalid_argument");
      assert.deepEqual(contents(await messagesOf(w.rt, "s")), ["user:q", "assistant:", "tool:looked", "tool:paid"]);
      assert.deepEqual(w.runs, { pay: 1, look: 1 });
      release(w.rt);
    });

    test("an AbortSignal after the tool: AbortError with the result in err.appended", async () => {
      const w = await world(mode);
      await w.rt.run({ sessionId: "s", input: "q" });
      const ctl = new AbortController();
      w.hooks.model = () => { ctl.abort(); return new Promise((r) => setTimeout(r, 50)); };
      const err = await rejectsWith(assert, w.rt.run({ sessionId: "s", approvals: [approve("pay-q")], signal: ctl.signal }), "cancelled");
      assert.equal(err.name, "AbortError");
      assert.deepEqual(contents(err.appended ?? []), ["tool:paid"]);
      await refused(w, { sessionId: "s", approvals: [approve("pay-q")] }, "invalid_argument");
      assert.deepEqual(w.runs, { pay: 1, look: 1 });
      release(w.rt);
    });

    // Item 7 of the hostile pass: the reason's check counts the whole
    // result message, its tool_call_id too.
    test("a denial reason that makes the result one byte over maxMessageBytes is refused before pay runs", async () => {
      const limit = 300;
      let pays = 0;
      const model = (req) => req.messages.at(-1).role === "user"
        ? { content: "", toolCalls: [{ id: "pay-q", name: "pay", arguments: "{}" }, { id: "mail-q", name: "mail", arguments: "{}" }] }
        : { content: "done" };
      const rt = await load(modeConfig(mode, { model, limits: { maxMessageBytes: limit }, tools: [
        { name: "pay", needsApproval: true, call: () => { pays++; return "paid"; } },
        { name: "mail", needsApproval: true, call: () => "mailed" },
      ] }));
      assert.equal((await rt.run({ sessionId: "s", input: "q" })).status, "awaiting_approval");
      const fits = "r".repeat(limit - "Tool call denied: ".length - "mail-q".length);
      const before = contents(await messagesOf(rt, "s"));
      await rejectsWith(assert, rt.run({ sessionId: "s", approvals: [approve("pay-q"), { toolCallId: "mail-q", approved: false, reason: fits + "x" }] }), "limit_exceeded");
      assert.equal(pays, 0);
      assert.deepEqual(contents(await messagesOf(rt, "s")), before);
      const res = await rt.run({ sessionId: "s", approvals: [approve("pay-q"), { toolCallId: "mail-q", approved: false, reason: fits }] });
      assert.equal(res.status, "completed");
      assert.equal(pays, 1);
      release(rt);
    });
  });
}
