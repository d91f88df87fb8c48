// The glue over the module's control exports (docs/wire.md, "Control
// exports"): the runtime is created by agentrt_create, sessions read,
// deleted, listed, runs cancelled and stats read through them answer as
// the runtime object's methods do, and a history, packed or an Array, is
// checked by agentrt_check as the runtime object checks it.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { runtimes, rejectsWith } from "./helpers.mjs";
import { packHistory } from "../glue.js";

const { load } = runtimes();

// raw is a runtime of the module's syscall/js API in rt's instance.
function raw(rt, config) {
  return globalThis[rt.globalName].createRuntime(config);
}

describe("control exports from the glue", () => {
  test("a packed history is checked as its Array form is", async () => {
    const rt = await load({ limits: { maxSeedMessages: 4 } });
    const call = { id: "c1", name: "clock", arguments: "{}" };
    const histories = [
      [],
      [{ role: "user", content: "a" }, { role: "assistant", content: "b" }],
      [{ role: "user", content: "a" }, { role: "tool", tool_call_id: "x", content: "c" }],
      [{ role: "user", content: "a" }, { role: "assistant", content: null, tool_calls: [call] }, { role: "user", content: "b" }],
      [{ role: "user", content: "a", id: "1" }, { role: "user", content: "b", id: "1" }],
      [{ role: "system", content: "s" }, { role: "user", content: "a" }],
    ];
    for (const h of histories) {
      assert.deepEqual(rt.checkHistory(packHistory(h)), rt.checkHistory(h), JSON.stringify(h));
    }
  });

  test("an Array history is checked as the runtime object checks it", async () => {
    const rt = await load({ limits: { maxSeedMessages: 4 } });
    const obj = raw(rt, { limits: { maxSeedMessages: 4 } });
    const call = { id: "c1", name: "clock", arguments: "{}" };
    const tools = (id) => ({
      id, role: "assistant",
      parts: [{ type: "text", text: "let me" }, { type: "tool-t", toolCallId: "c" + id, state: "output-available", input: {}, output: "r" }, { type: "text", text: "done" }],
    });
    const throwing = { role: "user", get content() { throw new Error("no content"); } };
    const histories = [
      [],
      [{ role: "user", content: "a" }, { role: "tool", tool_call_id: "x", content: "c" }],
      [{ role: "user", content: "a" }, { role: "assistant", content: null, tool_calls: [call] }, { role: "user", content: "b" }],
      [42],
      [{ role: "user", content: "a" }, { role: 5, content: "b" }],
      // More host messages than maxSeedMessages, a bad one among them:
      // the count is refused first.
      [42, { role: "user", content: "a" }, { role: "user", content: "b" }, { role: "user", content: "c" }, { role: "user", content: "d" }],
      // Three host messages that pack to more than maxSeedMessages.
      [{ id: "u1", role: "user", parts: [{ type: "text", text: "q" }] }, tools("a1"), tools("a2")],
    ];
    // Both carry the history's head: the glue's from the check-report
    // frame, the syscall/js API's from the same check.
    histories.forEach((h, i) => {
      const check = rt.checkHistory(h);
      assert.deepEqual(check, obj.checkHistory(h), `history ${i}`);
      if (check.problems.length === 0) assert.match(check.head, /^h1-[A-Za-z0-9_-]{22}$/, `history ${i}`);
    });
    // A getter that throws: the same code and index; the text is the
    // packer's, as the glue's run reports it.
    const h = [{ role: "user", content: "a" }, throwing];
    const strip = (c) => c.problems.map((p) => [p.code, p.index, p.repair]);
    assert.deepEqual(strip(rt.checkHistory(h)), strip(obj.checkHistory(h)));
    await assert.rejects(rt.run({ sessionId: "g", input: "x", history: h }), (e) => e.message === rt.checkHistory(h).problems[0].message);
    obj.close();
  });

  test("a runtime is created from its config over the wire, refused with the runtime object's errors", async () => {
    const cyclic = {};
    cyclic.self = cyclic;
    const configs = [
      { limits: { maxSessions: -1 } },
      { limits: { maxSessions: 1.5 } },
      { limits: { maxSessions: Number.NaN } },
      { limits: { maxSessionz: 1 } },
      { tools: [{ name: "t", call() {}, parameters: cyclic }] },
      { tools: [{ name: "t", call() {}, parameters: 42 }] },
      { tools: [{ name: "t", call() {}, parameters: () => {} }] },
      { tools: [{ name: "t", call() {}, description: 42 }] },
      { tools: [{ name: "t", call() {} }, { name: "t", call() {} }] },
    ];
    const rt = await load();
    for (const config of configs) {
      const want = raw(rt, config);
      assert.ok(want instanceof Error, JSON.stringify(Object.keys(config)));
      await assert.rejects(load(config), (e) => e.code === want.code && e.message === want.message, want.message);
    }
  });

  test("stats answer as the runtime object's, the budget included", async () => {
    const limits = { maxTotalBytes: 1 << 20 };
    const rt = await load({ limits });
    const obj = raw(rt, { limits });
    await rt.run({ sessionId: "s", input: "hello" });
    await obj.startRun("s", "hello");
    const got = rt.stats();
    const want = obj.stats();
    assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort());
    for (const k of Object.keys(want)) if (k !== "heapAlloc") assert.equal(got[k], want[k], k);
    assert.ok(got.budgetUsed > 0);
    assert.equal(got.budgetBytes, 1 << 20);
    obj.close();
  });

  test("a packed history over maxSeedMessages is the run's refusal, and changes nothing", async () => {
    const rt = await load({ limits: { maxSeedMessages: 2 } });
    const packed = packHistory([{ role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "c" }]);
    const check = rt.checkHistory(packed);
    assert.equal(check.ok, false);
    assert.equal(check.problems.length, 1);
    const [p] = check.problems;
    assert.equal(p.code, "limit_exceeded");
    assert.equal(p.repair, null);
    await rejectsWith(assert, rt.run({ sessionId: "s", input: "x", history: packed }), p.code, p.index);
    assert.deepEqual(rt.listSessions(), []);
  });

  test("sessions, deletion, listing and cancel answer as the runtime object's methods", async () => {
    const rt = await load();
    await rt.run({ sessionId: "b", input: "one" });
    const r = await rt.run({ sessionId: "a", input: "é" });
    assert.deepEqual(rt.listSessions(), ["a", "b"]);
    const s = rt.session("a");
    const { head, ...rest } = s;
    assert.deepEqual(rest, { id: "a", messageCount: 2, messages: [{ role: "user", content: "é" }, { role: "assistant", content: r.reply.content }] });
    assert.equal(head, rt.checkHistory(s.messages).head, "a session's head is its messages' head");
    assert.notEqual(head, rt.session("b").head);
    assert.ok(s.messages.every((m) => Object.isFrozen(m)));
    assert.equal(rt.session("none"), null);
    assert.equal(rt.cancelRun("no-such-run"), false);
    assert.equal(rt.deleteSession("a"), true);
    assert.equal(rt.deleteSession("a"), false);
    assert.equal(rt.session("a"), null);
    assert.deepEqual(rt.listSessions(), ["b"]);
    assert.throws(() => rt.session(42), (e) => e.code === "invalid_argument");
  });
});
