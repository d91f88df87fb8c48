// Correctness of the JS peer against the seeding rules of
// docs/contract.md, so that the benchmark compares agentrt with an
// implementation that does the same work. Run with: node --test bench/baselines/
import test from "node:test";
import assert from "node:assert/strict";
import { createPeer, validateHistory } from "./peer.mjs";
import { createLean } from "./lean.mjs";
import { makeHistory } from "../history.mjs";

const u = (content, id) => (id ? { role: "user", content, id } : { role: "user", content });
const a = (content) => ({ role: "assistant", content });
const call = (...ids) => ({ role: "assistant", content: null, tool_calls: ids.map((id) => ({ id, name: "f", arguments: "{}" })) });
const res = (id, content = "r") => ({ role: "tool", content, tool_call_id: id });

async function rejects(p, code, index) {
  await assert.rejects(p, (e) => {
    assert.equal(e.code, code, e.message);
    if (index !== undefined) assert.equal(e.index, index);
    return true;
  });
}

test("cold session is seeded, warm session is not re-seeded", async () => {
  const rt = createPeer();
  const history = [u("hi"), a("hello"), { role: "system", content: "ignored" }];
  const r1 = await rt.startRunWithHistory("s", "next", history);
  assert.deepEqual(r1.seed, { mode: "cold", seeded: 2, skippedSystem: 1 });
  assert.equal(r1.reply.content, "echo: next (model received 3 messages)");
  const r2 = await rt.startRunWithHistory("s", "again", history);
  assert.deepEqual(r2.seed, { mode: "noop", seeded: 0, skippedSystem: 1 });
  assert.equal(r2.reply.content, "echo: again (model received 5 messages)");
  assert.equal(rt.getSession("s").messageCount, 6);
  const r3 = await rt.startRun("s", "plain");
  assert.equal(r3.seed.mode, "none");
});

test("invalid histories are refused with the index and change nothing", async () => {
  const cases = [
    { name: "unknown role", h: [u("x"), { role: "robot", content: "x" }], index: 1 },
    { name: "missing content", h: [{ role: "user" }], index: 0 },
    { name: "non-string content", h: [{ role: "user", content: 42 }], index: 0 },
    { name: "null message", h: [null], index: 0 },
    { name: "tool without id", h: [u("x"), call("c1"), { role: "tool", content: "r" }], index: 2 },
    { name: "orphan result", h: [u("x"), a("y"), res("c1")], index: 2 },
    { name: "call id used twice", h: [u("x"), call("c1", "c1"), res("c1")], index: 1 },
    { name: "answered twice", h: [u("x"), call("c1"), res("c1"), res("c1")], index: 3 },
    { name: "unanswered before user", h: [u("x"), call("c1"), u("y")], index: 1 },
    { name: "unanswered at end", h: [u("x"), call("c1", "c2"), res("c1")], index: 1 },
    { name: "tool_calls on user", h: [{ role: "user", content: "x", tool_calls: [{ id: "c", name: "f" }] }], index: 0 },
    { name: "null content on plain assistant", h: [{ role: "assistant", content: null }], index: 0 },
  ];
  const rt = createPeer();
  for (const c of cases) {
    const events = [];
    await rejects(rt.startRunWithHistory("s", "in", c.h, { onEvent: (e) => events.push(e) }), "invalid_history", c.index);
    assert.equal(events.length, 0, c.name);
  }
  assert.deepEqual(rt.listSessions(), []);
});

test("system messages are dropped before linkage is checked", () => {
  const v = validateHistory([u("x"), call("c1"), { role: "system", content: "s" }, res("c1"), a("ok")]);
  assert.equal(v.skippedSystem, 1);
  assert.equal(v.messages.length, 4);
});

test("limits are enforced with the index of the first message over", async () => {
  const rt = createPeer({ limits: { maxSeedMessages: 2, maxMessageBytes: 10 } });
  await rejects(rt.startRunWithHistory("s", "in", [u("a"), a("b"), u("c")]), "limit_exceeded", 2);
  await rejects(rt.startRunWithHistory("s", "in", [u("a"), a("é".repeat(6))]), "limit_exceeded", 1);
  await rejects(rt.startRun("s", "x".repeat(11)), "limit_exceeded");
  assert.deepEqual(rt.listSessions(), []);
});

test("wrong argument types are refused, never thrown synchronously", async () => {
  const rt = createPeer();
  await rejects(rt.startRun(42, "x"), "invalid_argument");
  await rejects(rt.startRun("", "x"), "invalid_argument");
  await rejects(rt.startRun("s", null), "invalid_argument");
  await rejects(rt.startRunWithHistory("s", "x", "not an array"), "invalid_argument");
  await rejects(rt.startRunWithPolicy("s", "x", { seedMode: "sometimes" }), "invalid_argument");
  await rejects(rt.startRunWithPolicy("s", "x", { maxSteps: -1 }), "invalid_argument");
  assert.deepEqual(rt.listSessions(), []);
  assert.throws(() => createPeer({ model: 3 }), (e) => e.code === "invalid_argument");
});

test("reconcile: prefix is a no-op, a longer history appends, a diverged one replaces", async () => {
  const rt = createPeer();
  const policy = { seedMode: "reconcile" };
  await rt.startRunWithPolicyAndHistory("s", "q1", policy, [u("h1"), a("h2")]);
  const held = rt.getSession("s").messages; // h1 h2 q1 reply
  let r = await rt.startRunWithPolicyAndHistory("s", "q2", policy, held.slice(0, 2));
  assert.equal(r.seed.mode, "noop");
  const longer = [...rt.getSession("s").messages, u("other tab"), a("answer")];
  r = await rt.startRunWithPolicyAndHistory("s", "q3", policy, longer);
  assert.deepEqual(r.seed, { mode: "appended", seeded: 2, skippedSystem: 0 });
  r = await rt.startRunWithPolicyAndHistory("s", "q4", policy, [u("different")]);
  assert.deepEqual(r.seed, { mode: "replaced", seeded: 1, skippedSystem: 0 });
  assert.equal(rt.getSession("s").messageCount, 3);
});

test("the current input already at the end of the history is not appended twice", async () => {
  const rt = createPeer();
  const r = await rt.startRunWithHistory("s", "now", [u("before"), a("ok"), u("now")]);
  assert.equal(r.reply.content, "echo: now (model received 3 messages)");
  assert.equal(r.appended.length, 1);
});

test("runs on one session queue; racing cold turns seed once; reject mode refuses", async () => {
  const rt = createPeer();
  const h = [u("a"), a("b")];
  const [r1, r2] = await Promise.all([rt.startRunWithHistory("s", "1", h), rt.startRunWithHistory("s", "2", h)]);
  assert.equal(r1.seed.mode, "cold");
  assert.equal(r2.seed.mode, "noop");
  assert.equal(r2.messageCount, 6);
  let release;
  const slow = createPeer({ model: () => new Promise((ok) => { release = () => ok({ content: "done" }); }) });
  const first = slow.startRun("s", "1");
  await rejects(slow.startRunWithPolicy("s", "2", { onBusy: "reject" }), "session_busy");
  await new Promise((ok) => setImmediate(ok));
  release();
  await first;
  const again = await Promise.all([slow.startRunWithPolicy("s", "3", { onBusy: "reject" }), (async () => {
    await new Promise((ok) => setImmediate(ok));
    release();
  })()]);
  assert.equal(again[0].messageCount, 4);
});

test("events are numbered from 1 and end with run.completed", async () => {
  const rt = createPeer();
  const events = [];
  const r = await rt.startRunWithHistory("s", "hi there", [u("a"), a("b")], { onEvent: (e) => events.push(e) });
  assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
  assert.equal(events[0].type, "run.started");
  assert.equal(events[1].type, "session.seeded");
  assert.ok(events.some((e) => e.type === "model.delta"));
  assert.equal(events.at(-1).type, "run.completed");
  assert.equal(events.at(-1).result, r);
  assert.ok(events.every((e) => e.runId === r.runId && e.sessionId === "s"));
});

test("a failing model rolls the turn back and removes a session it created", async () => {
  let fail = true;
  const rt = createPeer({ model: (req) => { if (fail) throw new Error("boom"); return { content: "n=" + req.messages.length }; } });
  await rejects(rt.startRun("fresh", "x"), "model_error");
  assert.deepEqual(rt.listSessions(), []);
  await rejects(rt.startRunWithHistory("s", "x", [u("a"), a("b")]), "model_error");
  assert.equal(rt.getSession("s").messageCount, 2, "seeding stays");
  fail = false;
  const r = await rt.startRun("s", "x");
  assert.equal(r.reply.content, "n=3");
  assert.equal(rt.stats().runsFailed, 2);
});

test("tool loop: echo calls a tool; unknown tools fail or are reported; maxSteps", async () => {
  const rt = createPeer({ tools: [{ name: "add", call: ({ a, b }) => a + b }] });
  const r = await rt.startRun("s", '/tool add {"a":2,"b":3}');
  assert.equal(r.reply.content, "tool add returned: 5 (model received 3 messages)");
  assert.deepEqual(r.appended.map((m) => m.role), ["user", "assistant", "tool", "assistant"]);
  await rejects(rt.startRun("s", "/tool nope"), "tool_error");
  assert.equal(rt.getSession("s").messageCount, 4);
  const rep = await rt.startRunWithPolicy("s", "/tool nope", { toolErrors: "report" });
  assert.match(rep.reply.content, /tool nope returned: error: /);
  await rejects(rt.startRunWithPolicy("s", "/tool add {}", { maxSteps: 1 }), "limit_exceeded");
  await rejects(rt.startRunWithPolicy("s", "/tool add {}", { allowedTools: [] }), "tool_error");
});

test("windowing keeps tool blocks whole and the session keeps everything", async () => {
  let seen;
  const rt = createPeer({ model: (req) => { seen = req.messages; return { content: "ok" }; } });
  const h = [u("a"), a("b"), u("c"), call("c1", "c2"), res("c1"), res("c2"), a("d")];
  await rt.startRunWithPolicyAndHistory("s", "e", { maxContextMessages: 3 }, h);
  assert.deepEqual(seen.map((m) => m.content), ["d", "e"]);
  await rt.startRunWithPolicy("s", "f", { maxContextMessages: 6 });
  assert.deepEqual(seen.map((m) => m.content), ["d", "e", "ok", "f"]);
  assert.equal(rt.getSession("s").messageCount, 11);
});

test("cancel is idempotent and rolls back; timeout fails the run", async () => {
  const rt = createPeer({ model: () => new Promise(() => {}) });
  const p = rt.startRun("s", "x", { runId: "r1" });
  await new Promise((ok) => setImmediate(ok));
  assert.equal(rt.cancelRun("r1"), true);
  assert.equal(rt.cancelRun("r1"), false);
  await rejects(p, "cancelled");
  assert.deepEqual(rt.listSessions(), []);
  await rejects(rt.startRunWithPolicy("s", "x", { timeoutMs: 5 }), "timeout");
  assert.equal(rt.stats().activeRuns, 0);
});

test("LRU eviction keeps maxSessions", async () => {
  const rt = createPeer({ limits: { maxSessions: 2 } });
  for (const id of ["a", "b", "c"]) await rt.startRun(id, "x");
  assert.deepEqual(rt.listSessions(), ["b", "c"]);
  assert.equal(rt.stats().evictions, 1);
});

test("the peer and the lean store hold the benchmark history as given", async () => {
  const h = makeHistory(1000);
  const peer = createPeer(), lean = createLean();
  await peer.startRunWithHistory("s", "q", h);
  await lean.startRunWithHistory("s", "q", h);
  const norm = (m) => ({ ...m, content: m.content ?? "" });
  assert.deepEqual(peer.getSession("s").messages.slice(0, 1000), h.map(norm));
  assert.deepEqual(lean.getSession("s").messages.slice(0, 1000), h.map(norm));
  h[0].content = "changed by the host";
  assert.notEqual(peer.getSession("s").messages[0].content, h[0].content);
});
