// The module keeps the JavaScript objects of the messages it sent to a
// model and reuses them on later turns (wasm/internal/jsedge Cache). These tests
// pin what that may and may not change: the objects are frozen, a model
// that tries to change them changes nothing, every turn sees the right
// messages, and sessions do not share or leak entries.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startInstance, encodePacked } from "../testlib/helpers.mjs";

const history = [
  { role: "user", content: "first", id: "h1" },
  { role: "assistant", content: null, id: "h2", tool_calls: [{ id: "c1", name: "look", arguments: "{\"q\":1}" }] },
  { role: "tool", content: "found", tool_call_id: "c1", id: "h3" },
  { role: "assistant", content: "done", id: "h4" },
];

// recorder returns a model that keeps every request's messages array and
// answers "reply N".
function recorder() {
  const seen = [];
  const model = (req) => {
    seen.push(req.messages);
    return { content: "reply " + seen.length };
  };
  return { seen, model };
}

test("TestCache_RequestMessages_FrozenAndReused: a message crosses once and is the same object on later turns", async () => {
  const api = await startInstance();
  const { seen, model } = recorder();
  const rt = api.createRuntime({ model });
  const r1 = await rt.startRunWithHistory("s", "one", encodePacked(history));
  const r2 = await rt.startRun("s", "two");
  assert.equal(seen.length, 2);
  assert.equal(seen[0].length, 5);
  assert.equal(seen[1].length, 7);
  for (let i = 0; i < 5; i++) assert.equal(seen[1][i], seen[0][i], `message ${i} is reused`);
  // The reply and the appended messages of turn 1 are the objects turn 2
  // sent to the model.
  assert.equal(seen[1][5], r1.reply);
  assert.equal(seen[1][4], r1.appended[0]);
  assert.equal(seen[1][5], r1.appended[1]);
  assert.equal(r2.appended[1], r2.reply);
  for (const m of seen[1]) assert.ok(Object.isFrozen(m), "message is frozen: " + JSON.stringify(m));
  const withCalls = seen[1][1];
  assert.ok(Object.isFrozen(withCalls.tool_calls));
  assert.ok(Object.isFrozen(withCalls.tool_calls[0]));
  assert.deepEqual(withCalls, { role: "assistant", content: "", id: "h2", tool_calls: [{ id: "c1", name: "look", arguments: "{\"q\":1}" }] });
});

test("TestCache_ModelMutation_ChangesNothing: a model that writes to the messages cannot change later turns", async () => {
  const api = await startInstance();
  const seen = [];
  const rt = api.createRuntime({
    model: (req) => {
      seen.push(req.messages.map((m) => m.role + ":" + m.content));
      const errors = [];
      for (const m of req.messages) {
        try { m.content = "changed"; } catch (e) { errors.push(e.name); }
        try { delete m.role; } catch (e) { errors.push(e.name); }
        if (m.tool_calls) {
          try { m.tool_calls.push({ id: "x", name: "x", arguments: "{}" }); } catch (e) { errors.push(e.name); }
          try { m.tool_calls[0].name = "changed"; } catch (e) { errors.push(e.name); }
        }
      }
      // The array itself is the model's: changing it is harmless.
      req.messages.length = 0;
      return { content: "ok " + errors.length };
    },
  });
  const r1 = await rt.startRunWithHistory("s", "one", history);
  assert.equal(r1.reply.content, "ok " + (5 * 2 + 2));
  await rt.startRun("s", "two");
  assert.deepEqual(seen[1], [
    "user:first", "assistant:", "tool:found", "assistant:done", "user:one", "assistant:ok 12", "user:two",
  ]);
  const s = rt.getSession("s");
  assert.deepEqual(s.messages[1].tool_calls, [{ id: "c1", name: "look", arguments: "{\"q\":1}" }]);
});

test("TestCache_GrowingSession: appended turns, tool loops, reverts, rollbacks and a sliding window each give the model its session, whatever it does to the Array", async () => {
  const api = await startInstance();
  const seen = []; // per model call: the messages as handed, copied first
  let fail = false;
  const rt = api.createRuntime({
    tools: [{ name: "look", description: "", call: () => "found" }],
    model: (req) => {
      const m = req.messages;
      seen.push([...m]);
      // The model's own Array: every way of changing it, each call.
      m.push({ role: "user", content: "junk" });
      m.reverse();
      m.unshift({ role: "user", content: "front" });
      m.splice(1, 2);
      if (fail) throw new Error("down");
      const asked = seen.at(-1).at(-1);
      if (asked.role === "user" && asked.content.startsWith("call")) {
        return { content: "", tool_calls: [{ id: "t" + seen.length, name: "look", arguments: "{}" }] };
      }
      return { content: "r" + seen.length };
    },
  });
  const text = (msgs) => msgs.map((x) => x.role + ":" + (x.content ?? "") + (x.tool_call_id ? "@" + x.tool_call_id : ""));
  // checkLast: the model's last request was the session without its
  // reply (its tail when windowed), as the same objects getSession hands
  // out.
  const checkLast = (id, windowed) => {
    const held = rt.getSession(id).messages.slice(0, -1);
    const got = seen.at(-1);
    assert.deepEqual(text(got), text(held.slice(held.length - got.length)), "the model got its session");
    if (windowed) assert.ok(got.length < held.length, "the window left messages out");
    else assert.equal(got.length, held.length);
    for (let i = 0; i < got.length; i++) assert.equal(got[i], held[held.length - got.length + i], "message " + i + " is the cached object");
  };
  const history = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: "h" + i }));
  await rt.startRunWithHistory("s", "first", history);
  checkLast("s");
  for (let turn = 0; turn < 12; turn++) {
    const r = await rt.startRun("s", (turn % 3 === 0 ? "call " : "say ") + turn, { runId: "run" + turn });
    checkLast("s");
    if (turn % 3 === 0) assert.equal(r.appended.length, 4, "a tool loop: input, call, result, reply");
    if (turn === 5) assert.equal(rt.revertRun("s", "run5"), true);
    if (turn === 8) {
      fail = true;
      const e = await rt.startRun("s", "lost").then(() => null, (err) => err);
      assert.equal(e.code, "model_error");
      fail = false;
    }
  }
  // A window that slides as the session grows: each request is the tail.
  for (let turn = 0; turn < 6; turn++) {
    await rt.startRunWithPolicy("s", "windowed " + turn, { maxContextMessages: 9 + (turn % 2) });
    checkLast("s", true);
  }
  await rt.startRun("s", "whole again");
  checkLast("s");
});

test("TestCache_GetSession_Frozen: getSession's messages are frozen, cached or not", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({ model: () => ({ content: "fine" }) });
  await rt.startRunWithHistory("s", "q", history);
  const a = rt.getSession("s");
  const b = rt.getSession("s");
  assert.equal(a.messages.length, 6);
  for (const m of a.messages) assert.ok(Object.isFrozen(m));
  // Messages the model was sent come from the cache: the same objects.
  assert.equal(a.messages[0], b.messages[0]);
  assert.deepEqual(a.messages.map((m) => m.content), ["first", "", "found", "done", "q", "fine"]);
  // The echo model never fills the cache; its session's messages are
  // frozen too.
  const echo = api.createRuntime({});
  await echo.startRunWithHistory("e", "q", history);
  for (const m of echo.getSession("e").messages) assert.ok(Object.isFrozen(m));
});

test("TestCache_Sessions_Separate: equal messages in two sessions, deleted and reseeded sessions", async () => {
  const api = await startInstance();
  const { seen, model } = recorder();
  const rt = api.createRuntime({ model });
  await rt.startRunWithHistory("a", "same", history);
  await rt.startRunWithHistory("b", "same", history);
  assert.deepEqual(seen[0], seen[1]);
  assert.notEqual(seen[0][0], seen[1][0], "sessions do not share objects");
  assert.equal(rt.deleteSession("a"), true);
  const r = await rt.startRunWithHistory("a", "again", history);
  assert.equal(r.seed.mode, "cold");
  assert.deepEqual(seen[2].map((m) => m.content), ["first", "", "found", "done", "again"]);
  // Interleaved turns on many sessions each see their own thread.
  const ids = Array.from({ length: 20 }, (_, i) => "p" + i);
  await Promise.all(ids.map((id) => rt.startRun(id, "hello " + id)));
  await Promise.all(ids.map((id) => rt.startRun(id, "bye " + id)));
  for (const id of ids) {
    const msgs = rt.getSession(id).messages.map((m) => m.content);
    assert.deepEqual(msgs.filter((c) => c.startsWith("hello") || c.startsWith("bye")), ["hello " + id, "bye " + id]);
  }
});

test("TestCache_FailedAndEvicted: rolled-back turns and evicted sessions leave the next turns right", async () => {
  const api = await startInstance();
  let fail = true;
  const seen = [];
  const rt = api.createRuntime({
    limits: { maxSessions: 2 },
    model: (req) => {
      seen.push(req.messages.map((m) => m.content));
      if (fail) throw new Error("down");
      return { content: "up" };
    },
  });
  const e = await rt.startRun("s", "lost").then(() => null, (err) => err);
  assert.equal(e.code, "model_error");
  assert.equal(rt.getSession("s"), null);
  fail = false;
  await rt.startRun("s", "kept");
  assert.deepEqual(seen.at(-1), ["kept"]);
  // Evict s by filling the store, then seed it again.
  await rt.startRun("t", "x");
  await rt.startRun("u", "y");
  assert.equal(rt.getSession("s"), null, "s was evicted");
  await rt.startRunWithHistory("s", "back", [{ role: "user", content: "kept" }, { role: "assistant", content: "up" }]);
  assert.deepEqual(seen.at(-1), ["kept", "up", "back"]);
});

test("TestStats_HeapAlloc: stats() reports the Go heap; {gc: true} collects first; bad options are ignored", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({});
  const s = rt.stats();
  assert.equal(typeof s.heapAlloc, "number");
  assert.ok(s.heapAlloc > 0);
  const after = rt.stats({ gc: true });
  assert.ok(after.heapAlloc > 0);
  for (const bad of [null, 1, "gc", { gc: 1 }, { get gc() { throw new Error("boom"); } }]) {
    assert.equal(typeof rt.stats(bad).heapAlloc, "number");
  }
});

test("TestStats_HeapPerMessage: a stored message costs at most its text x 1.5 + 64 bytes of Go heap", async () => {
  // The budget of docs/BENCHMARKS.md, checked on the module itself: seed
  // 20,000 messages of about 200 bytes (every tenth with a tool call and
  // its result), collect, and compare heapAlloc with the text stored.
  const api = await startInstance();
  const n = 20000;
  const rt = api.createRuntime({ limits: { maxSeedMessages: n, maxMessagesPerSession: 2 * n } });
  const words = ["alpha", "beta", "café", "delta", "über", "runtime", "session", "history"];
  const history = [];
  let text = 0;
  const add = (m) => {
    history.push(m);
    text += new TextEncoder().encode((m.content ?? "") + (m.id ?? "") + (m.tool_call_id ?? "")).length;
    for (const c of m.tool_calls ?? []) text += c.id.length + c.name.length + c.arguments.length;
  };
  for (let i = 0; history.length < n; i++) {
    let content = "";
    while (content.length < 200) content += words[(i * 7 + content.length) % words.length] + " ";
    if (i % 10 === 9 && history.length + 3 <= n) {
      add({ role: "assistant", content: null, id: "a" + i, tool_calls: [{ id: "c" + i, name: "look", arguments: "{\"q\":" + i + "}" }] });
      add({ role: "tool", content, tool_call_id: "c" + i, id: "t" + i });
      add({ role: "assistant", content, id: "b" + i });
    } else {
      add({ role: i % 2 ? "assistant" : "user", content, id: "m" + i });
    }
  }
  const before = rt.stats({ gc: true }).heapAlloc;
  const r = await rt.startRunWithHistory("big", "next", encodePacked(history));
  assert.equal(r.seed.seeded, n);
  const after = rt.stats({ gc: true }).heapAlloc;
  const perMessage = (after - before) / n;
  const budget = (text / n) * 1.5 + 64;
  assert.ok(perMessage <= budget, `heap per message ${perMessage.toFixed(1)} B, budget ${budget.toFixed(1)} B`);
  assert.ok(perMessage >= text / n, `heap per message ${perMessage.toFixed(1)} B is less than the text (${(text / n).toFixed(1)} B): not measuring the store`);
});

test("TestCache_EchoRuntime_ResultsFrozen: without a JavaScript model, results are frozen and correct too", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({});
  const r1 = await rt.startRunWithHistory("s", "one", history);
  const r2 = await rt.startRun("s", "two");
  for (const r of [r1, r2]) {
    assert.ok(Object.isFrozen(r.reply));
    for (const m of r.appended) assert.ok(Object.isFrozen(m));
    assert.deepEqual(r.appended.at(-1), r.reply);
  }
  assert.equal(r2.reply.content, "echo: two (model received 7 messages)");
  assert.deepEqual(rt.getSession("s").messages.slice(-2).map((m) => m.content), ["two", r2.reply.content]);
});
