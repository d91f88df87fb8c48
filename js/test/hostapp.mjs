// The host app that js/test/hostkill.test.mjs plays on the glue and
// wasm/runtime/test/hostkill.test.mjs on the module's syscall/js API: its
// durable store, its model and tools, how it picks each step, and the
// invariants it checks after each. The two suites supply the runtime
// (start, run, kill) and the engine's history check.
//
// The app keeps each conversation's durable history as docs/glue.md tells
// hosts to (the result's appended messages, a paused run's too), runs
// turns with models and tools that throw, reject, settle twice or hang
// until the run's timeout, a "pay" tool that needs approval, approved or
// denied later, and is killed at random points: before a run, inside the
// model's call, inside a tool's call, and after a run answered but
// before the app stored it. After every step:
//
// - every model call saw exactly the stored conversation followed by the
//   messages of the turn in progress (nothing forgotten, nothing twice);
// - the stored history checks ok, or its only problems are the calls
//   awaiting approval at its end;
// - a tool ran at most once per model call that asked for it, and "pay"
//   at most once per approval sent (a resume the app was killed in may
//   have run it: at least once across a crash, ADR 0019 point 5);
// - every failure has a code, never internal;
// - a live runtime's session is the stored conversation.
import assert from "node:assert/strict";

/** mulberry32: a small seeded PRNG, returning numbers in [0, 1). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// FAULTS are how a step's model or tools misbehave; most steps have none.
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

/**
 * hostApp returns the app of a seed. kill() is the suite's: it ends the
 * live runtime (its runs then fail) and must call app.killed(). The
 * suite's loop, per step: app.next() gives the step (or null when the app
 * is killed before the run), the suite runs it, app.settle(step, result,
 * error, alive) stores it, and app.check(step, historyCheck, session)
 * checks the invariants.
 */
export function hostApp(seed, kill) {
  const rand = prng(seed);
  const pick = (xs) => xs[Math.floor(rand() * xs.length)];
  const store = Object.fromEntries(CONVERSATIONS.map((c) => [c, []]));
  const asked = new Map(), runs = new Map(), approved = new Map();
  const bump = (m, k) => m.set(k, (m.get(k) ?? 0) + 1);
  const seenWrong = [];
  let warm = new Set(), step = 0, nextId = 0, expect = [], fault = "";
  const counts = { kills: 0, completed: 0, resumes: 0, toolRuns: 0 };

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
    let reply = { content: (last.role === "user" ? "hi after " : "done after ") + req.messages.length };
    if (last.role === "user") {
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
      // A thenable that fulfils twice and then rejects: the first wins.
      return { then(ok, fail) { ok(reply); ok({ content: "second" }); fail(new Error("third")); } };
    }
    return reply;
  };
  const tool = (out) => (args, ctx) => {
    bump(runs, ctx.toolCallId);
    counts.toolRuns++;
    switch (fault) {
      case "tool-throws": throw new Error("the tool is down");
      case "tool-rejects": return Promise.reject(new Error("the tool is down"));
      case "kill-tool": kill(); return new Promise(() => {});
    }
    return out;
  };

  return {
    counts,
    /** The config's model and tools. */
    model,
    tools: [
      { name: "look", description: "", call: tool("looked") },
      { name: "pay", description: "", needsApproval: () => true, call: tool("paid") },
    ],
    /** Whether a kill also drops the instance (for a suite that can). */
    coin: () => rand() < 0.5,
    /** removed(s): the runtime's session of step s is deleted. */
    removed(s) {
      warm.delete(s.id);
      counts.removed = (counts.removed ?? 0) + 1;
    },
    /** The suite calls killed() from its kill, and started() on a fresh runtime. */
    killed() {
      counts.kills++;
    },
    started() {
      warm = new Set();
    },
    /**
     * next picks step n with the history check of a conversation
     * (check(history) => HistoryCheck): { id, input?, approvals?, history
     * (the stored one, or undefined when the app sends none) }, or
     * { id, remove: true } when the app deletes the runtime's session
     * (the stored history stays: the next run seeds from it; the suite
     * calls removed(s) once it is gone), or null when the app is killed
     * before the run.
     */
    async next(n, check) {
      step = n;
      const id = pick(CONVERSATIONS);
      if (warm.has(id) && rand() < 1 / 20) return { id, remove: true };
      const s = { id, input: undefined, approvals: undefined, history: undefined };
      const awaiting = (await check(store[id])).awaiting ?? [];
      if (awaiting.length) {
        counts.resumes++;
        s.approvals = awaiting.map((c) => {
          const ok = rand() < 2 / 3;
          if (ok) bump(approved, c.toolCallId);
          return { toolCallId: c.toolCallId, approved: ok };
        });
      } else {
        s.input = pick(["hello", "tool look", "tool pay", "tool both"]) + " " + n;
      }
      if (!warm.has(id) || rand() < 0.5) s.history = store[id];
      expect = store[id];
      fault = rand() < FAULTS.length / 24 ? pick(FAULTS) : "";
      if (rand() < 1 / 25) {
        kill(); // before the run
        return null;
      }
      return s;
    },
    /**
     * settle stores what step s's run answered: alive is false when the
     * app was killed inside it. It reports whether the app is to be killed
     * now, after the run and before storing (then nothing is stored).
     */
    settle(s, result, error, alive) {
      if (!alive) {
        assert.ok(error instanceof Error && error.code, `step ${step}: a killed run answered ${JSON.stringify(result)}`);
        assert.notEqual(error.code, "internal", `step ${step}: ${error.message}`);
        return false;
      }
      if (error !== null) {
        assert.ok(["model_error", "tool_error", "timeout"].includes(error.code), `step ${step}: ${error.code}: ${error.message}`);
        if (error.appended !== undefined) {
          // A resume that failed after its approved tool ran keeps the
          // result: the app stores it (or is killed before it could).
          if (rand() < 1 / 12) return true;
          store[s.id] = [...store[s.id], ...error.appended.map(stored)];
          warm.add(s.id);
        }
        return false;
      }
      if (rand() < 1 / 12) return true;
      assert.equal(result.seed.repairs, undefined, `step ${step}: a stored history needed repairs`);
      store[s.id] = [...store[s.id], ...result.appended.map(stored)];
      warm.add(s.id);
      counts.completed++;
      return false;
    },
    /**
     * check checks the invariants after step s: c is the engine's check
     * of the stored history, session the live runtime's session (null
     * when there is none, or it is cold).
     */
    check(s, c, session) {
      assert.deepEqual(seenWrong, []);
      const awaiting = new Set((c.awaiting ?? []).map((w) => w.index));
      for (const p of c.problems) {
        assert.ok(p.repair === "missing_tool_result" && awaiting.has(p.index), `step ${step}: the stored ${s.id} has a problem: ${JSON.stringify(p)}`);
      }
      for (const [call, n] of runs) {
        const limit = call.startsWith("pay") ? approved.get(call) ?? 0 : asked.get(call) ?? 0;
        assert.ok(n <= limit, `step ${step}: ${call} ran ${n} times for ${limit} ${call.startsWith("pay") ? "approvals" : "asks"}`);
      }
      for (const m of store[s.id]) {
        if (m.role === "tool" && m.content === "paid") assert.ok(runs.get(m.tool_call_id) > 0, `step ${step}: ${m.tool_call_id} stored as paid, never ran`);
      }
      if (session !== undefined && warm.has(s.id)) {
        assert.equal(text((session?.messages ?? []).map(stored)), text(store[s.id]), `step ${step}: the live session ${s.id} is not what the app stored`);
      }
    },
    /** The stored history of conversation id. */
    stored: (id) => store[id],
    /** Fails unless the steps met kills, completed runs and resumes. */
    enough() {
      assert.ok(counts.kills > 0 && counts.completed > 0 && counts.resumes > 0, `too few kills, runs or resumes to test anything: ${JSON.stringify(counts)}`);
    },
  };
}
