// The glue over the module's control exports (docs/wire.md, "Control
// exports"): sessions read, deleted, listed and runs cancelled through
// them answer as the runtime object did, and a packed history is
// checked by agentrt_check as its Array form is by the runtime object.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { runtimes, rejectsWith } from "./helpers.mjs";
import { packHistory } from "../glue.js";

const { load } = runtimes();

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
    assert.deepEqual(s, { id: "a", messageCount: 2, messages: [{ role: "user", content: "é" }, { role: "assistant", content: r.reply.content }] });
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
