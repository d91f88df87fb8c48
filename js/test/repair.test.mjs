// History repair (docs/adr/0013-history-repair.md) through the glue and
// the module's array path: checkHistory and policy.repair against the
// corpus (testdata/contract/, its "problems" and "repaired"), and the glue's
// own checks of its arguments and of a repaired session over several turns.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { loadRuntime } from "../glue.js";
import { healHistory } from "../heal.js";
import { compiledModule, wasmExecURL } from "./env.mjs";
import { noHead } from "./helpers.mjs";
import { canonical, checkRepair, corpusPaths, loadCorpus, onPath } from "./corpus.mjs";

const cases = await loadCorpus();
let wasm;

// Every case is checked, and seeded with policy.repair, on each path
// (corpus.mjs, corpusPaths).
for (const path of corpusPaths) {
  describe(`repair: ${path.name}`, () => {
    let p;
    before(async () => {
      wasm ??= await compiledModule();
      p = await path.open(wasm);
    });
    after(() => p && p.close());
    cases.forEach((c, i) => {
      test(c.name, () => onPath(path, wasm, p, c, async (p) => {
        const id = `repaired-${i}`;
        const result = await checkRepair(c, p, id);
        // The healed copy (docs/adr/0016-the-host-copy-heals.md): stored
        // with the turn's messages, it has no problems and seeds a cold
        // session without repair (under the default limits: the markers
        // count as any message once they are the host's).
        if (result === undefined || !c.repaired.healed || c.limits !== undefined) return;
        const stored = [...result.seed.repaired, ...result.appended];
        assert.deepEqual(noHead(await p.check(stored)), { ok: true, problems: [] });
        const cold = await p.seed(`${id}-cold`, stored);
        assert.equal(cold.seed.mode, "cold");
        assert.equal(cold.seed.repairs, undefined);
        // The cold session holds the first one's messages, then "next" and its reply.
        assert.deepEqual(p.session(`${id}-cold`).slice(0, -2).map(canonical), p.session(id).map(canonical));
      }));
    });
  });
}

describe("repair: the glue", () => {
  let rt;
  before(async () => {
    wasm ??= await compiledModule();
    rt = await loadRuntime({ wasm, wasmExec: wasmExecURL });
  });
  after(() => rt && rt.close());

  test("bad arguments are refused with invalid_argument", async () => {
    for (const bad of [undefined, null, 5, "history", { length: 0 }]) {
      assert.throws(() => rt.checkHistory(bad), (e) => e instanceof TypeError && e.code === "invalid_argument" && /history/.test(e.message));
    }
    await assert.rejects(rt.run({ sessionId: "bad", input: "x", policy: { repair: "yes" } }),
      (e) => e.code === "invalid_argument" && /policy\.repair/.test(e.message));
    assert.equal(rt.session("bad"), null);
    // The module's own checkHistory returns the Error (it cannot throw),
    // and its policy reader refuses a repair that is not a boolean.
    const raw = globalThis[rt.globalName].createRuntime({});
    try {
      const e = raw.checkHistory(5);
      assert.ok(e instanceof Error && e.code === "invalid_argument", `module answered ${e}`);
      await assert.rejects(raw.startRunWithPolicy("bad", "x", { repair: 1 }),
        (err) => err.code === "invalid_argument" && /policy\.repair/.test(err.message));
    } finally {
      raw.close();
    }
  });

  test("a message of the wrong shape is a problem, not an exception", () => {
    assert.deepEqual(rt.checkHistory([{ role: "user", content: "q" }, "x"]),
      { ok: false, problems: [{ code: "invalid_history", index: 1, message: "message must be an object", repair: null }] });
  });

  test("the same broken history on later turns is a noop, and the model sees the fix", async () => {
    const broken = [
      { id: "u1", role: "user", parts: [{ type: "text", text: "Delete a.txt" }] },
      { id: "a1", role: "assistant", parts: [{ type: "tool-delete", toolCallId: "d1", state: "approval-requested", input: { f: "a.txt" } }] },
    ];
    const seen = [];
    const model = (req) => {
      seen.push(req.messages.map(canonical));
      return "ok";
    };
    const rt2 = await loadRuntime({ wasm, wasmExec: wasmExecURL, model });
    try {
      for (const seedMode of ["if-empty", "reconcile"]) {
        await assert.rejects(rt2.run({ sessionId: `s-${seedMode}`, input: "go", history: broken, policy: { seedMode } }),
          (e) => e.code === "invalid_history" && e.index === 1);
        let stored = structuredClone(broken);
        const first = await rt2.run({ sessionId: `s-${seedMode}`, input: "go", history: stored, policy: { repair: true, seedMode } });
        assert.deepEqual(first.seed.repairs, [{ kind: "missing_tool_result", index: 1, toolCallId: "d1" }]);
        const marker = { role: "tool", content: "Tool call interrupted: no result was recorded.", tool_call_id: "d1", id: "a1" };
        assert.deepEqual(seen.at(-1)[2], marker);
        stored = [...stored, ...first.appended];
        for (const input of ["again", "and again"]) {
          const next = await rt2.run({ sessionId: `s-${seedMode}`, input, history: stored, policy: { repair: true, seedMode } });
          assert.equal(next.seed.mode, "noop");
          assert.equal(next.seed.repairs, undefined);
          const sent = seen.at(-1);
          assert.deepEqual(sent[2], marker);
          assert.equal(sent.filter((m) => m.role === "tool").length, 1);
          assert.deepEqual(sent.at(-1), { role: "user", content: input });
          stored = [...stored, ...next.appended];
        }
      }
    } finally {
      rt2.close();
    }
  });

  test("healHistory renders the edits and ignores those outside the history", () => {
    const h = [{ role: "user", content: "q" }, null, { id: "m", role: "assistant", parts: [null, { type: "tool-f", toolCallId: "c1", state: "input-available", input: {} }] }];
    const out = healHistory(h, [
      { op: "drop", index: 1 },
      { op: "insert", index: 3, call: 2, toolCallId: "c1", id: "m" },
      { op: "insert", index: 1, call: 1, toolCallId: "c2", id: "" },
      { op: "drop", index: 9 },
    ]);
    assert.equal(out[0], h[0]);
    assert.deepEqual(out[1], { role: "tool", tool_call_id: "c2", content: "Tool call interrupted: no result was recorded." });
    assert.deepEqual(out[2].parts, [null, { type: "tool-f", toolCallId: "c1", state: "output-error", input: {}, errorText: "Tool call interrupted: no result was recorded." }]);
    assert.equal(h[2].parts[1].state, "input-available");
    assert.equal(out.length, 3);
  });

  test("stream(): the healed copy is on run.completed's result, not on session.seeded", async () => {
    const history = [{ role: "user", content: "hi" }, { role: "assistant", content: null, toolCalls: [{ id: "c1", name: "f", arguments: "{}" }] }];
    const seen = {};
    for await (const ev of rt.stream({ sessionId: "heal-stream", input: "go", history, policy: { repair: true } })) seen[ev.type] = ev;
    assert.equal(seen["session.seeded"].seed.repaired, undefined);
    const repaired = seen["run.completed"].result.seed.repaired;
    assert.equal(repaired[0], history[0]);
    assert.deepEqual(repaired.slice(2), [{ role: "tool", toolCallId: "c1", content: "Tool call interrupted: no result was recorded." }]);
  });

  test("the host's copy heals: stored, it needs no repair, warm or after a restart", async () => {
    // docs/adr/0016-the-host-copy-heals.md: the host's loop.
    const broken = [
      { id: "u1", role: "user", parts: [{ type: "text", text: "Delete a.txt" }] },
      { id: "a1", role: "assistant", parts: [{ type: "tool-delete", toolCallId: "d1", state: "approval-requested", input: { f: "a.txt" } }] },
      { id: "u1", role: "user", parts: [{ type: "text", text: "Delete a.txt" }] },
      { role: "user", content: "and b.txt", id: "u2" },
    ];
    for (const seedMode of ["if-empty", "reconcile"]) {
      const rt1 = await loadRuntime({ wasm, wasmExec: wasmExecURL });
      let stored = structuredClone(broken);
      const kept = [stored[0], stored[3]];
      try {
        const r = await rt1.run({ sessionId: "s", input: "go", history: stored, policy: { repair: true, seedMode } });
        assert.deepEqual(r.seed.repairs, [{ kind: "duplicate_message", index: 2 }, { kind: "missing_tool_result", index: 1, toolCallId: "d1" }]);
        // Kept messages are the host's own objects; the UIMessage with
        // the call is a copy whose tool part holds the marker.
        assert.equal(r.seed.repaired.length, 3);
        assert.equal(r.seed.repaired[0], kept[0]);
        assert.equal(r.seed.repaired[2], kept[1]);
        assert.deepEqual(r.seed.repaired[1].parts[0], { type: "tool-delete", toolCallId: "d1", state: "output-error", input: { f: "a.txt" },
          errorText: "Tool call interrupted: no result was recorded." });
        assert.equal(stored[1].parts[0].state, "approval-requested", "the host's object was changed");
        if (r.seed.repaired) stored = r.seed.repaired;
        stored.push(...r.appended);
        assert.deepEqual(noHead(await rt1.checkHistory(stored)), { ok: true, problems: [] });
        // Warm: the stored copy is the session, without repair.
        const warm = await rt1.run({ sessionId: "s", input: "again", history: stored, policy: { seedMode } });
        assert.equal(warm.seed.mode, "noop");
        assert.equal(warm.seed.repaired, undefined);
        stored.push(...warm.appended);
      } finally {
        rt1.close();
      }
      // After a restart: a fresh runtime seeds it without repair.
      const rt2 = await loadRuntime({ wasm, wasmExec: wasmExecURL });
      try {
        const cold = await rt2.run({ sessionId: "s", input: "later", history: stored, policy: { seedMode } });
        assert.equal(cold.seed.mode, "cold");
        assert.equal(cold.seed.seeded, 8);
        assert.equal(cold.seed.repairs, undefined);
      } finally {
        rt2.close();
      }
    }
  });
});
