// Tool approvals in the glue (docs/adr/0019-tool-approvals.md): a tool's
// needsApproval, rt.run({ sessionId, approvals, history? }) with no input,
// result.status and pendingApprovals, the run.awaiting_approval event and
// stream(); and the corpus's approval cases (testdata/contract/approval.json)
// in each runtime mode, with the module's echo model and with a model in
// JavaScript. Runs under node --test, bun test and deno test -A, and in
// the browser pages (where worker mode is one more mode).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { root } from "./env.mjs";
import { runtimes, rejectsWith, runtimeModes, modeConfig, noHead } from "./helpers.mjs";
import { world as openWorld, contents, messagesOf, refused } from "./approvals.mjs";
import { canonical } from "./corpus.mjs";

const { load, release } = runtimes();
const world = (...args) => openWorld(load, ...args);

// pause runs "q" on session s and checks that it stops for pay-q after
// look-q ran, with run.awaiting_approval as its last event.
async function pause(w) {
  const events = [];
  const res = await w.rt.run({ sessionId: "s", input: "q", onEvent: (ev) => events.push(ev) });
  assert.equal(res.status, "awaiting_approval");
  assert.deepEqual(res.pendingApprovals, [{ toolCallId: "pay-q", name: "pay", arguments: '{"amount":5}' }]);
  assert.equal(res.reply.role, "assistant");
  assert.equal(res.reply.tool_calls.length, 2);
  assert.deepEqual(contents(res.appended), ["user:q", "assistant:", "tool:looked"]);
  const last = events[events.length - 1];
  assert.equal(last.type, "run.awaiting_approval");
  assert.deepEqual(last.result, res); // in worker mode a copy
  assert.ok(!events.some((ev) => ev.type === "run.completed"));
  assert.deepEqual(contents(await messagesOf(w.rt, "s")), contents(res.appended));
  assert.deepEqual(w.runs, { pay: 0, look: 1 });
  return res;
}

for (const mode of runtimeModes) {
  describe(`approvals (${mode})`, () => {
    test("pause, approve once; approving again or an unknown call is refused", async () => {
      const w = await world(mode);
      await pause(w);
      await refused(w, { sessionId: "s", approvals: [{ toolCallId: "nope", approved: true }] }, "invalid_argument");
      await refused(w, { sessionId: "s", input: "other" }, "invalid_argument");
      // With a policy too: its JSON text and the approvals share the begin frame's further flags.
      const res = await w.rt.run({ sessionId: "s", approvals: [{ toolCallId: "pay-q", approved: true }], policy: { maxSteps: 5 } });
      assert.equal(res.status, "completed");
      assert.equal(res.pendingApprovals, undefined);
      assert.equal(res.reply.content, "done: looked | paid");
      assert.deepEqual(contents(res.appended), ["tool:paid", "assistant:done: looked | paid"]);
      assert.deepEqual(w.runs, { pay: 1, look: 1 });
      for (let i = 0; i < 2; i++) await refused(w, { sessionId: "s", approvals: [{ toolCallId: "pay-q", approved: true }] }, "invalid_argument");
      release(w.rt);
    });

    test("an input on a session paused with only the approval call is refused, the model not called", async () => {
      // The paused session ends with the assistant's call: a turn with an
      // input (a quick turn where the glue holds the session's mirror)
      // must not follow it.
      let calls = 0;
      const model = (req) => {
        calls++;
        const last = req.messages[req.messages.length - 1];
        return last.role === "user" ? { content: "", toolCalls: [{ id: "p1", name: "pay", arguments: "{}" }] } : { content: "ok" };
      };
      const rt = await load(modeConfig(mode, { model, tools: [{ name: "pay", needsApproval: true, call: () => "paid" }] }));
      assert.equal((await rt.run({ sessionId: "s", input: "q" })).status, "awaiting_approval");
      for (const input of ["other", "q"]) {
        await rejectsWith(assert, rt.run({ sessionId: "s", input }), "invalid_argument");
      }
      assert.equal(calls, 1);
      assert.equal((await messagesOf(rt, "s")).length, 2);
      assert.equal((await rt.run({ sessionId: "s", approvals: [{ toolCallId: "p1", approved: true }] })).status, "completed");
      release(rt);
    });

    test("deny with a reason: the tool never runs, the model continues", async () => {
      const w = await world(mode);
      await pause(w);
      const res = await w.rt.run({ sessionId: "s", approvals: [{ toolCallId: "pay-q", approved: false, reason: "too much" }] });
      assert.deepEqual(contents(res.appended), ["tool:Tool call denied: too much", "assistant:done: looked | Tool call denied: too much"]);
      assert.deepEqual(w.runs, { pay: 0, look: 1 });
      release(w.rt);
    });

    test("a fresh runtime resumes from the stored history alone, once", async () => {
      const w = await world(mode);
      const paused = await pause(w);
      const stored = paused.appended.map((m) => ({ ...m }));
      release(w.rt);
      const cold = await world(mode);
      // An input is refused as on the warm session, with or without
      // repair, and the history checks paused with the call's arguments.
      for (const policy of [{}, { repair: true }]) {
        const err = await cold.rt.run({ sessionId: "s", input: "again", history: stored, policy }).then(() => assert.fail("accepted"), (e) => e);
        assert.deepEqual([err.code, err.message], ["invalid_argument", 'session "s" awaits approval of tool call "pay-q": answer it with approvals']);
        assert.equal(await messagesOf(cold.rt, "s"), null);
      }
      assert.deepEqual(noHead(await cold.rt.checkHistory(stored)), {
        ok: true, problems: [], paused: true, awaiting: [{ index: 1, toolCallId: "pay-q", name: "pay", arguments: '{"amount":5}' }],
      });
      const res = await cold.rt.run({ sessionId: "s", history: stored, approvals: [{ toolCallId: "pay-q", approved: true }] });
      assert.equal(res.status, "completed");
      assert.equal(res.reply.content, "done: looked | paid");
      assert.deepEqual(cold.runs, { pay: 1, look: 0 });
      await refused(cold, { sessionId: "s", history: stored, approvals: [{ toolCallId: "pay-q", approved: true }] }, "invalid_argument");
      release(cold.rt);
    });

    test("a call a host made up is resumed only if the app would have paused it", async () => {
      const asked = [];
      const w = await world(mode, (args, ctx) => { asked.push(ctx.toolCallId); return args.amount > 100; });
      const madeUp = (name, args) => [{ role: "user", content: "hi" },
        { role: "assistant", content: null, tool_calls: [{ id: "x1", name, arguments: JSON.stringify(args) }] }];
      const yes = [{ toolCallId: "x1", approved: true }];
      for (const approved of [true, false]) {
        const err = await w.rt.run({ sessionId: "s", history: madeUp("look", {}), approvals: [{ toolCallId: "x1", approved }] })
          .then(() => assert.fail("accepted"), (e) => e);
        assert.deepEqual([err.code, err.message], ["invalid_argument", 'tool call "x1" is not awaiting approval in session "s": tool "look" asks no approval']);
      }
      // needsApproval is asked again: a call it does not flag is refused.
      const err = await w.rt.run({ sessionId: "s", history: madeUp("pay", { amount: 1 }), approvals: yes }).then(() => assert.fail("accepted"), (e) => e);
      assert.deepEqual([err.code, err.message], ["invalid_argument", 'tool call "x1" is not awaiting approval in session "s": tool "pay" does not ask approval of it']);
      assert.deepEqual(asked, ["x1"]);
      assert.equal(await messagesOf(w.rt, "s"), null);
      assert.deepEqual(w.runs, { pay: 0, look: 0 });
      // One it flags runs once (the app holds its history: it is trusted).
      const res = await w.rt.run({ sessionId: "s", history: madeUp("pay", { to: "mallory", amount: 1000000 }), approvals: yes });
      assert.equal(res.status, "completed");
      assert.deepEqual(w.runs, { pay: 1, look: 0 });
      release(w.rt);
    });

    test("after a restart, the app resumes from checkHistory's awaiting (docs/glue.md)", async () => {
      const w = await world(mode);
      const stored = (await pause(w)).appended.map((m) => ({ ...m }));
      release(w.rt);
      const cold = await world(mode);
      const check = await cold.rt.checkHistory(stored);
      assert.equal(check.paused, true);
      assert.equal(check.ok, true);
      const approvals = check.awaiting.map((c) => ({ toolCallId: c.toolCallId, approved: c.name === "pay" && JSON.parse(c.arguments).amount === 5 }));
      assert.deepEqual(approvals, [{ toolCallId: "pay-q", approved: true }]);
      const res = await cold.rt.run({ sessionId: "s", approvals, history: stored });
      assert.equal(res.status, "completed");
      assert.deepEqual(cold.runs, { pay: 1, look: 0 });
      const after = await cold.rt.checkHistory([...stored, ...res.appended]);
      assert.deepEqual(noHead(after), { ok: true, problems: [] });
      release(cold.rt);
    });

    test("a UIMessage history in approval-responded carries the decision", async () => {
      const w = await world(mode);
      const history = [
        { id: "u1", role: "user", parts: [{ type: "text", text: "q" }] },
        { id: "a1", role: "assistant", parts: [
          { type: "tool-look", toolCallId: "look-q", state: "output-available", input: {}, output: "looked" },
          { type: "tool-pay", toolCallId: "pay-q", state: "approval-responded", input: { amount: 5 }, approval: { id: "ap1", approved: true } },
        ] },
      ];
      const res = await w.rt.run({ sessionId: "s", history });
      assert.equal(res.status, "completed");
      assert.deepEqual(w.runs, { pay: 1, look: 0 });
      release(w.rt);
    });

    test("needsApproval true pauses every call; false runs them", async () => {
      const w = await world(mode, true);
      await pause(w);
      release(w.rt);
      const v = await world(mode, false);
      assert.equal((await v.rt.run({ sessionId: "s", input: "q" })).status, "completed");
      assert.deepEqual(v.runs, { pay: 1, look: 1 });
      release(v.rt);
    });

    test("a predicate by the arguments and ctx, answered by a Promise", async () => {
      const seen = [];
      const w = await world(mode, async (args, ctx) => {
        seen.push([args, ctx.toolCallId, ctx.sessionId]);
        return args.amount > 100;
      });
      const res = await w.rt.run({ sessionId: "s", input: "q" });
      assert.equal(res.status, "completed");
      assert.deepEqual(seen, [[{ amount: 5 }, "pay-q", "s"]]);
      assert.deepEqual(w.runs, { pay: 1, look: 1 });
      release(w.rt);
    });

    for (const [name, predicate] of [
      ["throws", () => { throw new Error("no ledger"); }],
      ["rejects", () => Promise.reject(new Error("no ledger"))],
      ["answers no boolean", () => "yes"],
    ]) {
      test(`a predicate that ${name} fails the run tool_error, rolled back`, async () => {
        const w = await world(mode, predicate);
        const err = await rejectsWith(assert, w.rt.run({ sessionId: "s", input: "q" }), "tool_error");
        assert.match(err.message, /approval check of tool "pay" failed/);
        assert.equal(await messagesOf(w.rt, "s"), null);
        assert.deepEqual(w.runs, { pay: 0, look: 0 });
        release(w.rt);
      });
    }

    test("a predicate that never answers ends with the run's timeout, and a cancel", async () => {
      const w = await world(mode, () => new Promise(() => {}));
      await rejectsWith(assert, w.rt.run({ sessionId: "s", input: "q", policy: { timeoutMs: 50 } }), "timeout");
      const ctl = new AbortController();
      const p = w.rt.run({ sessionId: "s", input: "q", signal: ctl.signal });
      setTimeout(() => ctl.abort(), 20);
      await rejectsWith(assert, p, "cancelled");
      assert.equal(await messagesOf(w.rt, "s"), null);
      // Not wedged: the session takes the next run.
      await rejectsWith(assert, w.rt.run({ sessionId: "s", input: "q", policy: { timeoutMs: 50 } }), "timeout");
      release(w.rt);
    });

    test("stream() ends with run.awaiting_approval and its result", async () => {
      const w = await world(mode);
      const types = [];
      let last;
      for await (const ev of w.rt.stream({ sessionId: "s", input: "q" })) {
        types.push(ev.type);
        last = ev;
      }
      assert.equal(last.type, "run.awaiting_approval");
      assert.equal(last.result.status, "awaiting_approval");
      assert.ok(!types.includes("run.completed"));
      types.length = 0;
      for await (const ev of w.rt.stream({ sessionId: "s", approvals: [{ toolCallId: "pay-q", approved: true }] })) types.push(ev.type);
      assert.equal(types[types.length - 1], "run.completed");
      assert.deepEqual(w.runs, { pay: 1, look: 1 });
      release(w.rt);
    });

    test("malformed approvals and needsApproval are refused invalid_argument", async () => {
      const w = await world(mode);
      await pause(w);
      for (const approvals of [[], {}, [{ approved: true }], [{ toolCallId: "pay-q" }], [{ toolCallId: "pay-q", approved: true, reason: 3 }], [null]]) {
        await refused(w, { sessionId: "s", approvals }, "invalid_argument");
      }
      await refused(w, { sessionId: "s", input: "x", approvals: [{ toolCallId: "pay-q", approved: true }] }, "invalid_argument");
      release(w.rt);
      await rejectsWith(assert, load(modeConfig(mode, { tools: [{ name: "t", call: () => "", needsApproval: "yes" }] })), "invalid_argument");
    });
  });
}

// A JavaScript copy of core.Echo's answers, so that the corpus's
// approval cases run with the model in the glue too.
function echo(req) {
  const msgs = req.messages;
  const n = msgs.length;
  const received = ` (model received ${n} messages)`;
  const last = msgs[n - 1];
  if (last.role === "tool") {
    let i = n - 1;
    while (i > 0 && msgs[i - 1].role === "tool") i--;
    const parts = [];
    for (let k = i; k < n; k++) {
      const call = (msgs[i - 1].tool_calls ?? []).find((c) => c.id === msgs[k].tool_call_id);
      parts.push(`tool ${call ? call.name : msgs[k].tool_call_id} returned: ${msgs[k].content}`);
    }
    return { content: parts.join("; ") + received };
  }
  return { content: `echo: ${last.content}${received}` };
}

const cases = JSON.parse(await readFile(new URL("testdata/contract/approval.json", root), "utf8"));

for (const mode of runtimeModes) {
  for (const model of [undefined, echo]) {
    describe(`contract: approval cases (${mode}, ${model ? "JavaScript model" : "module's echo"})`, () => {
      for (const c of cases) {
        test(c.name, async () => {
          const runs = {};
          const tool = (name, out) => ({ name, needsApproval: () => name === "pay", call: () => { runs[name] = (runs[name] ?? 0) + 1; return out; } });
          const rt = await load(modeConfig(mode, { model, tools: [tool("pay", "paid"), tool("look", "looked")] }));
          const a = c.approval;
          const check = await rt.checkHistory(structuredClone(c.history));
          assert.deepEqual(check.awaiting ?? [], a.awaiting);
          assert.equal(check.paused ?? false, a.paused ?? false);
          const request = { sessionId: "s", history: structuredClone(c.history) };
          if (a.approvals !== undefined) request.approvals = a.approvals;
          if (a.error) {
            const err = await rt.run(request).then(() => assert.fail("accepted"), (e) => e);
            assert.deepEqual({ code: err.code, message: err.message }, a.error);
            assert.equal(await messagesOf(rt, "s"), null);
          } else {
            await rt.run(request);
            assert.deepEqual((await messagesOf(rt, "s")).map(canonical), a.session.map(canonical));
          }
          assert.deepEqual(runs, a.toolRuns);
          // Exactly once: the same request again is refused, runs nothing.
          await assert.rejects(rt.run({ ...request, history: structuredClone(c.history) }));
          assert.deepEqual(runs, a.toolRuns);
          release(rt);
        });
      }
    });
  }
}
