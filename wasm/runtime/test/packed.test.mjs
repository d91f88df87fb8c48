// The array path and the packed path give identical sessions and results
// for the same history.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startInstance, encodePacked } from "../testlib/helpers.mjs";

const history = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "héllo wörld — 日本語 👋🏽", id: "m1" },
  { role: "assistant", content: null, tool_calls: [
    { id: "call_1", name: "weather", arguments: '{"city":"Zürich"}' },
    { id: "call_2", name: "clock", arguments: { tz: "UTC" } },
  ], id: "m2" },
  { role: "tool", tool_call_id: "call_2", content: "12:00" },
  { role: "tool", toolCallId: "call_1", content: "☀️ 21°C", id: "m4" },
  { role: "assistant", content: "Sunny, noon.", toolCalls: [] },
  { role: "system", content: "late system note" },
  { role: "user", content: "" },
  { role: "assistant", content: "\u0000 nul and \ud83d\ude00 pair" },
];

test("TestPacked_SameSessionAsArray: identical sessions, results and model inputs", async () => {
  const api = await startInstance();
  const seen = { array: [], packed: [] };
  const make = (key) => api.createRuntime({ model: (req) => { seen[key].push(req.messages); return { content: "ok" }; } });
  const ra = make("array");
  const rp = make("packed");
  const a = await ra.startRunWithHistory("s", "next", history, { runId: "r", inspect: true });
  const p = await rp.startRunWithHistory("s", "next", encodePacked(history), { runId: "r", inspect: true });
  assert.deepEqual(p, a);
  assert.deepEqual(a.seed, { mode: "cold", seeded: 7, skippedSystem: 2 });
  assert.deepEqual(rp.getSession("s"), ra.getSession("s"));
  assert.deepEqual(seen.packed, seen.array);
  const msgs = ra.getSession("s").messages;
  assert.deepEqual(msgs[1], { role: "assistant", content: "", id: "m2", tool_calls: [
    { id: "call_1", name: "weather", arguments: '{"city":"Zürich"}' },
    { id: "call_2", name: "clock", arguments: '{"tz":"UTC"}' },
  ] });
  assert.equal(msgs[0].content, history[1].content);
  assert.equal(msgs[3].content, "☀️ 21°C");
  assert.equal(msgs[6].content, history[8].content);
  // Warm: either form is a no-op.
  const a2 = await ra.startRunWithHistory("s", "again", encodePacked(history));
  const p2 = await rp.startRunWithHistory("s", "again", history);
  assert.equal(a2.seed.mode, "noop");
  assert.deepEqual(p2.seed, a2.seed);
  assert.deepEqual(rp.getSession("s"), ra.getSession("s"));
});

test("TestPacked_Large: 10,000 messages of about 250 bytes seed the same either way", async () => {
  const api = await startInstance();
  const text = "The quick brown fox jumps over the lazy dog; ".repeat(6).slice(0, 240);
  const big = Array.from({ length: 10000 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: i + " " + text, id: "id" + i }));
  const ra = api.createRuntime();
  const rp = api.createRuntime();
  const a = await ra.startRunWithHistory("big", "go", big);
  const p = await rp.startRunWithHistory("big", "go", encodePacked(big));
  assert.deepEqual(p.seed, { mode: "cold", seeded: 10000, skippedSystem: 0 });
  assert.deepEqual(p, a);
  assert.equal(ra.stats().bytes, rp.stats().bytes);
  assert.deepEqual(rp.getSession("big").messages.slice(9990), ra.getSession("big").messages.slice(9990));
});
