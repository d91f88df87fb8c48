// The memory budget (maxTotalBytes): the default limits cannot exhaust the
// instance's memory, whatever a host sends. Under the old defaults (1000
// sessions of 64 MiB, no total) 1 MiB inputs over many sessions ended the
// Go program with "fatal error: out of memory" after about 1200-1900 turns.
//
// TestBudget_DefaultsSurviveMemoryPressure runs 2,000 turns, past the old
// failure point, and takes about 35 s on one core (AGENTRT_QUICK=1 cuts it
// to 300 turns). It is the one long run of this pressure: the glue's suite
// runs 300 turns of it through the wire exports (reliability-node.test.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { startInstance, rejection, snapshot } from "../testlib/helpers.mjs";

const MiB = 1 << 20;

test("TestBudget_DefaultsSurviveMemoryPressure: 1 MiB inputs over 1000 sessions, past the old failure point", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({});
  const turns = process.env.AGENTRT_QUICK ? 300 : 2000;
  // The echo reply repeats the input: leave room for its prefix and suffix
  // under maxMessageBytes.
  const input = "m".repeat(MiB - 1024);
  let peak = 0;
  for (let i = 0; i < turns; i++) {
    const r = await rt.startRun("s" + (i % 1000), input);
    assert.equal(r.status, "completed");
    const st = rt.stats();
    assert.ok(st.budgetUsed <= st.budgetBytes, `turn ${i}: budgetUsed ${st.budgetUsed} > ${st.budgetBytes}`);
    peak = Math.max(peak, st.heapAlloc);
  }
  const st = rt.stats({ gc: true });
  assert.equal(st.budgetBytes, 16 * MiB);
  assert.ok(st.evictions > 0, "old sessions were evicted");
  assert.ok(st.sessions < 1000, `sessions ${st.sessions}`);
  // The instance answers, small turns included.
  const r = await rt.startRun("after", "still alive?");
  assert.match(r.reply.content, /^echo: still alive\?/);
  // The Go heap stayed within a few budgets (the collector lets it grow to
  // about twice what is live, plus the turn in flight).
  assert.ok(peak < 4 * st.budgetBytes + 16 * MiB, `peak heapAlloc ${peak}`);
  console.log(`# ${turns} turns: peak heapAlloc ${(peak / MiB).toFixed(1)} MiB, budget ${st.budgetBytes / MiB} MiB, evictions ${st.evictions}`);
});

test("TestBudget_Refusals: a turn that cannot fit is refused with limit_exceeded and changes nothing", async () => {
  const api = await startInstance();
  const budget = 64 * 1024;
  const rt = api.createRuntime({ limits: { maxTotalBytes: budget } });
  await rt.startRun("keep", "x");
  const before = snapshot(rt);
  // An input larger than the whole budget.
  let err = await rejection(rt.startRun("big", "i".repeat(budget)));
  assert.equal(err.code, "limit_exceeded", err.message);
  assert.equal(snapshot(rt), before);
  // A history larger than the whole budget.
  err = await rejection(rt.startRunWithHistory("big", "x", [{ role: "user", content: "h".repeat(budget) }, { role: "assistant", content: "a" }]));
  assert.equal(err.code, "limit_exceeded", err.message);
  assert.equal(snapshot(rt), before);
  // A reply that cannot fit fails the run and rolls it back.
  const rt2 = api.createRuntime({ limits: { maxTotalBytes: budget }, model: (req) => (req.sessionId === "big" ? "r".repeat(budget) : "ok") });
  await rt2.startRun("keep", "x");
  const before2 = snapshot(rt2);
  err = await rejection(rt2.startRun("big", "x"));
  assert.equal(err.code, "limit_exceeded", err.message);
  assert.equal(snapshot(rt2), before2);
  const st = rt2.stats();
  assert.equal(st.evictions, 0);
  assert.equal(st.budgetBytes, budget);
  assert.ok(st.budgetUsed > st.bytes && st.budgetUsed < budget, JSON.stringify(st));
});

test("TestBudget_EvictsLeastRecentlyUsed: room is made from the idle sessions used longest ago", async () => {
  const api = await startInstance();
  const size = 10 * 1024;
  const rt = api.createRuntime({ limits: { maxTotalBytes: 5 * size }, model: () => "ok" });
  const input = "x".repeat(size);
  for (const id of ["a", "b", "c", "a", "d"]) await rt.startRun(id, input);
  assert.deepEqual(rt.listSessions(), ["a", "c", "d"]);
  assert.equal(rt.stats().evictions, 1);
});

test("TestRuntime_RevertRun: a completed turn is cut when it is the tail; otherwise the session is dropped", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({});
  const history = [{ role: "user", content: "u1" }, { role: "assistant", content: "a1" }];
  const r = await rt.startRunWithHistory("s", "x", history, { runId: "r1" });
  assert.equal(r.messageCount, 4);
  assert.equal(rt.revertRun("s", "r1"), true);
  assert.deepEqual(rt.getSession("s").messages, history);
  // Reverted once: a second revert drops the session instead.
  assert.equal(rt.revertRun("s", "r1"), false);
  assert.equal(rt.getSession("s"), null);
  // A turn something newer was built on: the session is dropped.
  await rt.startRun("t", "one", { runId: "t1" });
  await rt.startRun("t", "two", { runId: "t2" });
  assert.equal(rt.revertRun("t", "t1"), false);
  assert.equal(rt.getSession("t"), null);
  // Bad arguments answer false and change nothing.
  await rt.startRun("u", "one", { runId: "u1" });
  for (const args of [[], ["u"], [1, "u1"], ["u", 1]]) assert.equal(rt.revertRun(...args), false);
  assert.equal(rt.getSession("u").messages.length, 2);
  // The next turn after a revert sees the host's history, not the lost turn.
  assert.equal(rt.revertRun("u", "u1"), true);
  assert.equal(rt.getSession("u"), null);
});

test("TestRuntime_RunIDs: an empty runId and the reserved prefix are refused", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({});
  const before = snapshot(rt);
  let err = await rejection(rt.startRun("s", "x", { runId: "" }));
  assert.equal(err.code, "invalid_argument");
  assert.match(err.message, /runId/);
  err = await rejection(rt.startRun("s", "x", { runId: "agentrt:run-1" }));
  assert.equal(err.code, "invalid_argument");
  assert.equal(snapshot(rt), before);
  const r = await rt.startRun("s", "x");
  assert.match(r.runId, /^agentrt:run-\d+$/);
  assert.equal((await rt.startRun("s", "y", { runId: "run-1" })).runId, "run-1");
});
