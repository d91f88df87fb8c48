// The ADR reference scenario on the real module: a cold session's run sees
// the seeded turns plus the current input; a second turn on the warm
// session is not re-seeded.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startInstance, startDefault, encodePacked } from "../testlib/helpers.mjs";

const history = [
  { role: "user", content: "What is the capital of France?" },
  { role: "assistant", content: "Paris." },
  { role: "user", content: "And of Italy?" },
  { role: "assistant", content: "Rome." },
];

test("TestColdStartedSessionIsSeededFromSuppliedHistory: seeded once, the model saw the seeded turns once", async () => {
  const api = await startInstance();
  const seen = [];
  const rt = api.createRuntime({
    systemPrompt: "Be brief.",
    model: (req) => {
      seen.push({ system: req.system, messages: req.messages.map((m) => m.role + ":" + m.content) });
      return { content: "reply " + seen.length };
    },
  });
  const first = await rt.startRunWithHistory("chat-1", "And of Spain?", history);
  assert.equal(first.status, "completed");
  assert.deepEqual(first.seed, { mode: "cold", seeded: 4, skippedSystem: 0 });
  assert.equal(first.messageCount, 6);
  assert.deepEqual(first.reply, { role: "assistant", content: "reply 1" });
  assert.deepEqual(first.modelCalls, [{ step: 1, messageCount: 5 }]);
  assert.deepEqual(seen[0].messages, [
    "user:What is the capital of France?", "assistant:Paris.", "user:And of Italy?", "assistant:Rome.", "user:And of Spain?",
  ]);
  assert.equal(seen[0].system, "Be brief.");

  // The host sends the same history again (it does not know the session
  // is warm): nothing is re-seeded.
  const second = await rt.startRunWithHistory("chat-1", "And of Portugal?", history);
  assert.deepEqual(second.seed, { mode: "noop", seeded: 0, skippedSystem: 0 });
  assert.equal(second.messageCount, 8);
  assert.equal(seen[1].messages.length, 7);
  const counts = new Map();
  for (const m of seen[1].messages) counts.set(m, (counts.get(m) ?? 0) + 1);
  for (const h of history) assert.equal(counts.get(h.role + ":" + h.content), 1, "seeded turn seen once: " + h.content);

  const s = rt.getSession("chat-1");
  assert.equal(s.id, "chat-1");
  assert.equal(s.messageCount, 8);
  assert.deepEqual(s.messages.slice(0, 4), history);
});

test("TestADR_EchoModel: the built-in model says how many messages it received", async () => {
  const api = await startInstance();
  for (const model of [undefined, "echo", null]) {
    const rt = api.createRuntime(model === undefined ? {} : { model });
    const r1 = await rt.startRunWithHistory("s", "hi", encodePacked(history));
    assert.equal(r1.reply.content, "echo: hi (model received 5 messages)");
    assert.equal(r1.seed.mode, "cold");
    const r2 = await rt.startRunWithHistory("s", "again", encodePacked(history));
    assert.equal(r2.seed.mode, "noop");
    assert.equal(r2.reply.content, "echo: again (model received 7 messages)");
  }
});

test("TestModule_DefaultGlobal: without AGENTRT_GLOBAL the object is globalThis.agentrt", async () => {
  const api = await startDefault();
  assert.equal(typeof api.version, "string");
  assert.match(api.version, /^\d+\.\d+\.\d+/);
  assert.equal(typeof api.createRuntime, "function");
  const rt = api.createRuntime();
  const r = await rt.startRun("x", "hello");
  assert.equal(r.seed.mode, "none");
  assert.deepEqual(r.appended.map((m) => m.role), ["user", "assistant"]);
});

test("TestModule_EntryPoints: the four ADR entry points and their argument order", async () => {
  const api = await startInstance();
  const rt = api.createRuntime();
  const a = await rt.startRun("s1", "one", { runId: "r-a" });
  assert.equal(a.runId, "r-a");
  assert.equal(a.seed.mode, "none");
  const b = await rt.startRunWithPolicy("s1", "two", { maxContextMessages: 1 }, { runId: "r-b" });
  assert.equal(b.runId, "r-b");
  assert.equal(b.reply.content, "echo: two (model received 1 messages)");
  const c = await rt.startRunWithHistory("s2", "three", [{ role: "user", content: "zero" }, { role: "assistant", content: "ok" }], { runId: "r-c" });
  assert.equal(c.runId, "r-c");
  assert.equal(c.seed.mode, "cold");
  const d = await rt.startRunWithPolicyAndHistory("s2", "four", { seedMode: "reconcile" },
    [{ role: "user", content: "zero" }, { role: "assistant", content: "ok" }, { role: "user", content: "three" },
     { role: "assistant", content: c.reply.content }, { role: "user", content: "extra" }, { role: "assistant", content: "more" }]);
  assert.deepEqual(d.seed, { mode: "appended", seeded: 2, skippedSystem: 0 });
  assert.deepEqual(rt.listSessions(), ["s1", "s2"]);
  assert.equal(rt.deleteSession("s1"), true);
  assert.equal(rt.deleteSession("s1"), false);
  assert.equal(rt.getSession("s1"), null);
  const st = rt.stats();
  assert.equal(st.sessions, 1);
  assert.equal(st.messages, 8);
  assert.equal(st.activeRuns, 0);
  assert.equal(st.runsCompleted, 4);
});
