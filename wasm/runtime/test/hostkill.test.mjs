// The host app of js/test/hostkill.test.mjs, on the module's syscall/js
// API: a host that calls createRuntime's run methods itself, keeps each
// conversation's durable history (the result's appended messages, a
// paused run's too), runs turns with models and tools that throw,
// reject, settle twice or hang until the run's timeout, a "pay" tool
// that needs approval, approved or denied later, and is killed at random
// points: before a run, inside the model's call, inside a tool's call,
// and after a run answered but before the app stored it. A kill closes
// the runtime and leaves its instance (or drops both); the next step
// starts a fresh instance, whose sessions seed from the stored history.
// After every step:
//
// - every model call saw exactly the stored conversation followed by the
//   messages of the turn in progress: the message objects a request
//   carries are extended turn by turn while the session's generation
//   holds (internal/jsedge's Cache), so a wrong extension shows here;
// - the stored history checks ok, or its only problems are the calls
//   awaiting approval at its end;
// - a tool ran at most once per model call that asked for it, and "pay"
//   at most once per approval sent;
// - every failure has a code, never internal;
// - a live runtime's session is the stored conversation.
//
// Seeded: AGENTRT_HOSTKILL_SEED replays a seed (it is in the test's
// name), AGENTRT_HOSTKILL_STEPS sets the steps.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startInstance } from "../testlib/helpers.mjs";

const SEED = Number(process.env.AGENTRT_HOSTKILL_SEED ?? Math.floor(Math.random() * 2 ** 31));
const STEPS = Number(process.env.AGENTRT_HOSTKILL_STEPS ?? 60);

// mulberry32: a small seeded PRNG.
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FAULTS = ["model-throws", "model-rejects", "model-settles-twice", "model-hangs", "tool-throws", "tool-rejects",
  "kill-model", "kill-model", "kill-tool", "kill-tool"];
const CONVERSATIONS = ["a", "b", "c"];

/** The messages as lines of role, content, call id and calls. */
const text = (msgs) => msgs.map((m) => `${m.role}:${JSON.stringify(m.content ?? "")}` +
  (m.tool_call_id ? ` @${m.tool_call_id}` : "") + (m.tool_calls ?? []).map((c) => ` ->${c.id}:${c.name}`).join("")).join("\n");

/** A message in the module's shape, as the app stores it. */
const stored = (m) => {
  const out = { role: m.role, content: m.content ?? "" };
  if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
  if (m.tool_calls?.length) out.tool_calls = m.tool_calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
  return out;
};

test(`a host of the syscall/js API killed at random never loses, duplicates or corrupts a conversation (seed ${SEED})`, async () => {
  const rand = prng(SEED);
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const store = Object.fromEntries(CONVERSATIONS.map((c) => [c, []]));
  const asked = new Map(), runs = new Map(), approved = new Map();
  const bump = (m, k) => m.set(k, (m.get(k) ?? 0) + 1);
  const seenWrong = [];
  let api = null, rt = null, warm = new Set(), step = 0, nextId = 0;
  let expect = [], fault = "";
  const counts = { kills: 0, completed: 0, resumes: 0 };

  const kill = () => {
    counts.kills++;
    rt.close();
    rt = null;
    if (rand() < 0.5) api = null; // the instance dropped too
  };
  const model = (req) => {
    const got = req.messages.map(stored);
    if (text(got.slice(0, expect.length)) !== text(expect) || got.length - expect.length > 6) {
      seenWrong.push(`step ${step}: the model was shown\n${text(got)}\nthe stored conversation is\n${text(expect)}`);
    }
    switch (fault) {
      case "model-throws": throw new Error("the model is down");
      case "model-rejects": return Promise.reject(new Error("the model is down"));
      case "model-hangs": return new Promise(() => {});
      case "kill-model": kill(); return new Promise(() => {});
    }
    const last = req.messages[req.messages.length - 1];
    let reply = { content: "hi after " + req.messages.length };
    if (last.role !== "user") reply = { content: "done after " + req.messages.length };
    else {
      const toolCalls = [];
      for (const name of ["look", "pay"]) {
        if (last.content.startsWith("tool " + name) || last.content.startsWith("tool both")) {
          const id = `${name}-${++nextId}`;
          bump(asked, id);
          toolCalls.push({ id, name, arguments: "{}" });
        }
      }
      if (toolCalls.length) reply = { content: "", toolCalls };
    }
    if (fault === "model-settles-twice") {
      return { then(ok, fail) { ok(reply); ok({ content: "second" }); fail(new Error("third")); } };
    }
    return reply;
  };
  const tool = (out) => (args, ctx) => {
    bump(runs, ctx.toolCallId);
    switch (fault) {
      case "tool-throws": throw new Error("the tool is down");
      case "tool-rejects": return Promise.reject(new Error("the tool is down"));
      case "kill-tool": kill(); return new Promise(() => {});
    }
    return out;
  };
  const tools = [
    { name: "look", description: "", call: tool("looked") },
    { name: "pay", description: "", needsApproval: () => true, call: tool("paid") },
  ];

  // checker answers checkHistory for the app, whatever happens to rt.
  const checker = (await startInstance()).createRuntime({});
  for (step = 0; step < STEPS; step++) {
    if (rt === null) {
      api ??= await startInstance();
      rt = api.createRuntime({ model, tools });
      warm = new Set();
    }
    const id = pick(CONVERSATIONS);
    const check = checker.checkHistory(store[id]);
    let input, options;
    if (check.awaiting?.length) {
      counts.resumes++;
      options = { approvals: check.awaiting.map((c) => {
        const ok = rand() < 2 / 3;
        if (ok) bump(approved, c.toolCallId);
        return { toolCallId: c.toolCallId, approved: ok };
      }) };
    } else {
      input = pick(["hello", "tool look", "tool pay", "tool both"]) + " " + step;
    }
    const policy = { timeoutMs: 100 };
    const withHistory = !warm.has(id) || rand() < 0.5;
    expect = store[id];
    fault = rand() < FAULTS.length / 24 ? pick(FAULTS) : "";
    if (rand() < 1 / 25) {
      kill(); // before the run
      continue;
    }
    let result = null, error = null;
    try {
      result = await (withHistory
        ? rt.startRunWithPolicyAndHistory(id, input, policy, store[id], options)
        : rt.startRunWithPolicy(id, input, policy, options));
    } catch (e) {
      error = e;
    }
    if (rt === null) {
      // Killed inside a call: nothing of the run is stored.
      assert.ok(error instanceof Error && error.code, `step ${step}: a killed run answered ${JSON.stringify(result)}`);
      assert.notEqual(error.code, "internal", `step ${step}: ${error.message}`);
    } else if (error !== null) {
      assert.ok(["model_error", "tool_error", "timeout"].includes(error.code), `step ${step}: ${error.code}: ${error.message}`);
    } else if (rand() < 1 / 12) {
      kill(); // after the run, before the app stored its result
    } else {
      assert.equal(result.seed.repairs, undefined, `step ${step}: a stored history needed repairs`);
      store[id] = [...store[id], ...result.appended.map(stored)];
      warm.add(id);
      counts.completed++;
    }

    assert.deepEqual(seenWrong, []);
    const c = checker.checkHistory(store[id]);
    const awaiting = new Set((c.awaiting ?? []).map((w) => w.index));
    for (const p of c.problems) {
      assert.ok(p.repair === "missing_tool_result" && awaiting.has(p.index), `step ${step}: the stored ${id} has a problem: ${JSON.stringify(p)}`);
    }
    for (const [call, n] of runs) {
      const limit = call.startsWith("pay") ? approved.get(call) ?? 0 : asked.get(call) ?? 0;
      assert.ok(n <= limit, `step ${step}: ${call} ran ${n} times for ${limit} ${call.startsWith("pay") ? "approvals" : "asks"}`);
    }
    for (const m of store[id]) {
      if (m.role === "tool" && m.content === "paid") assert.ok(runs.get(m.tool_call_id) > 0, `step ${step}: ${m.tool_call_id} stored as paid, never ran`);
    }
    if (rt !== null && warm.has(id)) {
      const s = rt.getSession(id);
      assert.equal(text((s?.messages ?? []).map(stored)), text(store[id]), `step ${step}: the live session ${id} is not what the app stored`);
    }
  }
  rt?.close();
  checker.close();
  if (process.env.AGENTRT_HOSTKILL_VERBOSE) console.log(SEED, JSON.stringify(counts), runs.size, "tool runs");
  assert.ok(counts.kills > 0 && counts.completed > 0 && counts.resumes > 0, `too few kills, runs or resumes to test anything: ${JSON.stringify(counts)}`);
});
