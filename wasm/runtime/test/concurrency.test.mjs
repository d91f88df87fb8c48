// Concurrency and isolation: many first turns racing on one cold session,
// several runtimes in one instance, several instances in one process.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startInstance, rejection, sleep, encodePacked } from "../testlib/helpers.mjs";

const history = [
  { role: "user", content: "one" },
  { role: "assistant", content: "two" },
  { role: "user", content: "three" },
  { role: "assistant", content: "four" },
];

test("TestRuntime_ConcurrentColdTurns: 50 first turns on one cold session seed once", async () => {
  const api = await startInstance();
  let inFlight = 0;
  let maxInFlight = 0;
  const rt = api.createRuntime({
    model: async (req) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await sleep(1);
      inFlight--;
      return { content: "seen " + req.messages.length };
    },
  });
  const runs = [];
  for (let i = 0; i < 50; i++) {
    // Half array, half packed: the same history either way.
    runs.push(rt.startRunWithHistory("race", "turn " + i, i % 2 ? history : encodePacked(history)));
  }
  const results = await Promise.all(runs);
  assert.equal(maxInFlight, 1, "runs on one session go one at a time");
  const modes = results.map((r) => r.seed.mode);
  assert.equal(modes.filter((m) => m === "cold").length, 1);
  assert.equal(modes.filter((m) => m === "noop").length, 49);
  assert.equal(results.filter((r) => r.seed.seeded === 4).length, 1);
  const s = rt.getSession("race");
  assert.equal(s.messageCount, 4 + 50 * 2);
  assert.deepEqual(s.messages.slice(0, 4), history);
  // Each turn's model saw the seeded turns once, plus the turns before it.
  const seen = results.map((r) => r.modelCalls[0].messageCount).sort((a, b) => a - b);
  assert.deepEqual(seen, Array.from({ length: 50 }, (_, i) => 5 + 2 * i));
  assert.equal(rt.stats().activeRuns, 0);
});

test("TestRuntime_ConcurrentMixed: good, refused and failing calls interleaved", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({
    model: async (req) => {
      await sleep(0);
      if (req.messages.at(-1).content === "fail") throw new Error("no");
      return { content: "ok" };
    },
  });
  const jobs = [];
  for (let i = 0; i < 60; i++) {
    const sid = "s" + (i % 5);
    if (i % 3 === 0) jobs.push(rt.startRunWithHistory(sid, "hi", history).then(() => "ok", (e) => e.code));
    if (i % 3 === 1) jobs.push(rt.startRunWithHistory(sid, "hi", [{ role: "bot", content: "x" }]).then(() => "ok", (e) => e.code));
    if (i % 3 === 2) jobs.push(rt.startRun(sid, "fail").then(() => "ok", (e) => e.code));
  }
  const codes = await Promise.all(jobs);
  assert.equal(codes.filter((c) => c === "ok").length, 20);
  assert.equal(codes.filter((c) => c === "invalid_history").length, 20);
  assert.equal(codes.filter((c) => c === "model_error").length, 20);
  for (let i = 0; i < 5; i++) {
    const s = rt.getSession("s" + i);
    assert.equal(s.messageCount, 4 + 2 * s.messages.filter((m) => m.content === "ok").length);
    assert.deepEqual(s.messages.slice(0, 4), history);
  }
});

test("TestRuntime_Independence: runtimes of one instance share nothing", async () => {
  const api = await startInstance();
  const a = api.createRuntime({ systemPrompt: "A" });
  const b = api.createRuntime({ systemPrompt: "B", model: (req) => ({ content: "b:" + req.system }) });
  await a.startRunWithHistory("same", "to a", history);
  await b.startRun("same", "to b");
  assert.equal(a.getSession("same").messageCount, 6);
  assert.equal(b.getSession("same").messageCount, 2);
  assert.equal(b.getSession("same").messages[1].content, "b:B");
  a.close();
  assert.equal((await rejection(a.startRun("same", "x"))).code, "invalid_argument");
  assert.equal((await b.startRun("same", "still")).messageCount, 4);
  assert.equal(a.deleteSession("same"), true);
  assert.equal(b.getSession("same").messageCount, 4);
});

test("TestModule_Instances: several instances in one process stay independent", async () => {
  const one = await startInstance("agentrt_one");
  const two = await startInstance("agentrt_two");
  assert.notEqual(one, two);
  assert.equal(globalThis.agentrt_one, one);
  const r1 = one.createRuntime();
  const r2 = two.createRuntime({ model: () => { throw new Error("two is broken"); } });
  await r1.startRunWithHistory("s", "hello", history);
  assert.equal((await rejection(r2.startRunWithHistory("s", "hello", history))).code, "model_error");
  assert.equal((await rejection(r2.startRunWithHistory("s", "x", [{ role: 1 }]))).code, "invalid_history");
  assert.equal(r1.getSession("s").messageCount, 6);
  assert.deepEqual(r2.getSession("s").messages, history);
  // Interleaved runs on both instances.
  const all = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? r1.startRun("p" + i, "x") : one.createRuntime().startRun("q" + i, "y"))));
  assert.equal(all.length, 20);
  assert.deepEqual(r2.listSessions(), ["s"]);
  assert.equal(r1.listSessions().length, 11);
});
