// Throwing models and tools fail only their own run; the instance keeps
// serving its other sessions unchanged.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startInstance, rejection, snapshot, sleep } from "../testlib/helpers.mjs";

const history = [{ role: "user", content: "earlier" }, { role: "assistant", content: "noted" }];

test("TestModel_Throws: model_error for that run only", async (t) => {
  const api = await startInstance();
  const modes = {
    throw: () => { throw new Error("model exploded"); },
    throwString: () => { throw "plain string"; },
    reject: async () => { await sleep(1); throw new TypeError("async failure"); },
    rejectUndefined: () => Promise.reject(undefined),
    badReply: () => 42,
    badContent: () => ({ content: 5 }),
    badToolCalls: () => ({ content: "x", toolCalls: "nope" }),
    nullReply: () => null,
  };
  const rt = api.createRuntime({
    model: (req) => {
      const last = req.messages[req.messages.length - 1].content;
      const f = modes[last];
      return f ? f() : { content: "fine " + req.messages.length };
    },
  });
  await rt.startRunWithHistory("good", "hello", history);
  for (const mode of Object.keys(modes)) {
    await t.test(mode, async () => {
      const good = JSON.stringify(rt.getSession("good"));
      const events = [];
      const err = await rejection(rt.startRunWithHistory("bad-" + mode, mode, history, { onEvent: (e) => events.push(e.type) }));
      assert.ok(err instanceof Error);
      assert.equal(err.code, "model_error", err.message);
      assert.equal(events.at(-1), "run.failed");
      // The failed run rolled back to what seeding left; the other
      // session is untouched.
      assert.deepEqual(rt.getSession("bad-" + mode).messages, history);
      assert.equal(JSON.stringify(rt.getSession("good")), good);
      const ok = await rt.startRunWithHistory("good", "next", history);
      assert.equal(ok.seed.mode, "noop");
      assert.equal(ok.reply.content, "fine " + (ok.messageCount - 1));
    });
  }
  assert.equal(rt.stats().runsFailed, Object.keys(modes).length);
  assert.match((await rejection(rt.startRun("x", "throw"))).message, /model exploded/);
});

test("TestTool_Throws: tool_error for that run only, report mode hands it to the model", async () => {
  const api = await startInstance();
  const calls = [];
  const rt = api.createRuntime({
    tools: [
      { name: "boom", call() { throw new Error("tool exploded"); } },
      { name: "later", async call() { await sleep(1); throw new Error("late failure"); } },
      { name: "cyclic", call() { const o = {}; o.self = o; return o; } },
      { name: "add", description: "adds", parameters: { type: "object" }, call(args, ctx) { calls.push({ args, ctx, self: this.name }); return { sum: args.a + args.b }; } },
      { name: "text", call: async (args) => "raw " + args.q },
    ],
  });
  const good = await rt.startRun("good", "hello");
  for (const name of ["boom", "later", "cyclic"]) {
    const before = snapshot(rt);
    const events = [];
    const err = await rejection(rt.startRun("s-" + name, "/tool " + name + " {}", { onEvent: (e) => events.push(e.type) }));
    assert.equal(err.code, "tool_error", err.message);
    assert.ok(events.includes("tool.started") && events.at(-1) === "run.failed");
    assert.equal(snapshot(rt), before);
  }
  const bad = await rejection(rt.startRun("s", "/tool add {not json"));
  assert.equal(bad.code, "tool_error");
  const missing = await rejection(rt.startRun("s", "/tool nosuch {}"));
  assert.equal(missing.code, "tool_error");

  const reported = await rt.startRunWithPolicy("rep", "/tool boom {}", { toolErrors: "report" });
  assert.match(reported.reply.content, /tool boom returned: error: .*tool exploded/);

  const sum = await rt.startRun("sum", '/tool add {"a":2,"b":3}', { runId: "r-sum" });
  assert.equal(sum.appended[2].role, "tool");
  assert.equal(sum.appended[2].content, '{"sum":5}');
  assert.equal(sum.appended[2].tool_call_id, sum.appended[1].tool_calls[0].id);
  assert.deepEqual(calls[0], { args: { a: 2, b: 3 }, ctx: { runId: "r-sum", sessionId: "sum", toolCallId: sum.appended[1].tool_calls[0].id }, self: "add" });
  const text = await rt.startRun("text", '/tool text {"q":"x"}');
  assert.equal(text.appended[2].content, "raw x");
  // The first session is untouched by all of this.
  assert.deepEqual(rt.getSession("good").messages, good.appended);
});

test("TestModel_Promise: awaited without blocking the event loop; deltas become model.delta", async () => {
  const api = await startInstance();
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  const rt = api.createRuntime({
    systemPrompt: "sys",
    tools: [{ name: "t", description: "d", parameters: '{"type":"object"}', call: () => "r" }],
    model: async (req) => {
      assert.equal(typeof req.runId, "string");
      assert.equal(req.sessionId, "s");
      assert.equal(req.system, "sys");
      assert.deepEqual(req.tools, [{ name: "t", description: "d", parameters: { type: "object" } }]);
      req.delta("Hel");
      await sleep(20);
      req.delta("lo");
      req.delta("");
      return { content: "Hello" };
    },
  });
  const events = [];
  const p = rt.startRun("s", "hi", { onEvent: (e) => events.push(e) });
  const before = ticks;
  const r = await p;
  clearInterval(timer);
  assert.ok(ticks > before, "timers ran while the model was awaited");
  assert.equal(r.reply.content, "Hello");
  const deltas = events.filter((e) => e.type === "model.delta");
  assert.deepEqual(deltas.map((e) => [e.delta, e.step]), [["Hel", 1], ["lo", 1]]);
  assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
  for (const e of events) {
    assert.equal(e.runId, r.runId);
    assert.equal(e.sessionId, "s");
  }
  assert.deepEqual(events.map((e) => e.type), ["run.started", "message.appended", "model.delta", "model.delta", "message.appended", "run.completed"]);
  assert.deepEqual(events.at(-1).result, r);
});

test("TestModel_ToolCalls: a JS model's toolCalls (either spelling, object arguments) run tools", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({
    tools: [{ name: "get", call: (a) => ({ got: a }) }],
    model: (req) => {
      const last = req.messages.at(-1);
      if (last.role === "tool") return { content: "result " + last.content };
      return last.content === "go"
        ? { content: null, toolCalls: [{ id: "a", name: "get", arguments: { k: 1 } }] }
        : { tool_calls: [{ name: "get" }] };
    },
  });
  const r = await rt.startRun("s", "go", { inspect: true });
  assert.equal(r.reply.content, 'result {"got":{"k":1}}');
  assert.deepEqual(r.appended[1], { role: "assistant", content: "", tool_calls: [{ id: "a", name: "get", arguments: '{"k":1}' }] });
  assert.equal(r.modelCalls.length, 2);
  assert.deepEqual(r.modelCalls[1].messages, r.appended.slice(0, 3));
  const r2 = await rt.startRun("s", "go again");
  assert.equal(r2.appended[1].tool_calls[0].arguments, "{}");
  assert.equal(r2.modelCalls[0].messages, undefined);
});

test("TestRuntime_CancelRun: cancelled run rejects, second cancel is false, session rolled back", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({ model: () => new Promise(() => {}) });
  const events = [];
  const p = rt.startRun("s", "wait forever", { runId: "r1", onEvent: (e) => events.push(e.type) });
  await sleep(5);
  assert.equal(rt.stats().activeRuns, 1);
  assert.equal(rt.cancelRun("r1"), true);
  assert.equal(rt.cancelRun("r1"), false);
  const err = await rejection(p);
  assert.equal(err.code, "cancelled");
  assert.equal(events.at(-1), "run.cancelled");
  assert.equal(rt.getSession("s"), null);
  assert.equal(rt.stats().activeRuns, 0);
  // close cancels and refuses new runs; sessions stay readable.
  const q = rt.startRun("t", "x");
  rt.close();
  assert.equal((await rejection(q)).code, "cancelled");
  assert.equal((await rejection(rt.startRun("t", "x"))).code, "invalid_argument");
});

test("TestRuntime_Timeout: timeoutMs fails the run with timeout", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({ model: () => new Promise(() => {}) });
  const err = await rejection(rt.startRunWithPolicy("s", "x", { timeoutMs: 5 }));
  assert.equal(err.code, "timeout");
  assert.equal(rt.getSession("s"), null);
});

test("TestRuntime_OnEventThrows: a throwing event handler does not break the run", async () => {
  const api = await startInstance();
  const rt = api.createRuntime();
  const r = await rt.startRun("s", "hi", { onEvent: () => { throw new Error("handler bug"); } });
  assert.equal(r.reply.content, "echo: hi (model received 1 messages)");
  // A handler may call back into the runtime while the run goes on.
  const seen = [];
  await rt.startRun("s", "again", { onEvent: (e) => seen.push(rt.getSession("s")?.messageCount ?? 0) });
  assert.ok(seen.length > 3);
});
