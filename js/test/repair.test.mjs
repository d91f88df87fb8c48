// History repair (docs/adr/0013-history-repair.md) through the glue and
// the module's array path: checkHistory and policy.repair against the
// corpus (testdata/contract/, its "problems" and "repaired"), and the glue's
// own checks of its arguments and of a repaired session over several turns.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { loadRuntime } from "../glue.js";
import { compiledModule, wasmExecURL } from "./env.mjs";
import { canonical, loadCorpus } from "./corpus.mjs";

const cases = await loadCorpus();
let wasm;

// The paths: check(history) answers checkHistory; repair(id, history)
// runs "next" on a new session with policy.repair and inspect, and
// returns { result, messages } (messages: the session's).
const paths = [
  {
    name: "glue (packed)",
    async open() {
      const rt = await loadRuntime({ wasm, wasmExec: wasmExecURL });
      return {
        check: (history) => rt.checkHistory(history),
        async repair(id, history) {
          const result = await rt.run({ sessionId: id, input: "next", history, policy: { repair: true }, inspect: true });
          return { result, messages: rt.session(id).messages };
        },
        close: () => rt.close(),
      };
    },
  },
  {
    name: "module (array)",
    async open() {
      const rt = await loadRuntime({ wasm, wasmExec: wasmExecURL });
      const raw = globalThis[rt.globalName].createRuntime({});
      return {
        check: (history) => raw.checkHistory(history),
        async repair(id, history) {
          const result = await raw.startRunWithPolicyAndHistory(id, "next", { repair: true }, history, { inspect: true });
          return { result, messages: raw.getSession(id).messages };
        },
        close: () => {
          raw.close();
          rt.close();
        },
      };
    },
  },
];

// checkProblems is internal/contract's CheckProblems.
function checkProblems(c, got) {
  assert.equal(typeof got.ok, "boolean");
  const problems = got.problems.map((p) => ({ code: p.code, index: p.index, message: p.message, repair: p.repair }));
  if (c.problems) {
    assert.equal(got.ok, false);
    assert.deepEqual(problems, c.problems);
  } else if (c.error) {
    assert.equal(got.ok, false);
    const [first] = problems;
    assert.deepEqual({ code: first.code, index: first.index, message: first.message }, c.error);
  } else {
    assert.deepEqual(got, { ok: true, problems: [] });
  }
}

for (const path of paths) {
  describe(`repair: ${path.name}`, () => {
    let p;
    before(async () => {
      wasm ??= await compiledModule();
      p = await path.open();
    });
    after(() => p && p.close());
    cases.forEach((c, i) => {
      test(c.name, async () => {
        checkProblems(c, p.check(structuredClone(c.history)));
        if (!c.repaired) return;
        let out;
        let err;
        try {
          out = await p.repair(`repaired-${i}`, structuredClone(c.history));
        } catch (e) {
          err = e;
        }
        if (c.repaired.error) {
          assert.ok(err instanceof Error, "accepted with repair; want a refusal");
          assert.deepEqual({ code: err.code, index: err.index, message: err.message }, c.repaired.error);
          return;
        }
        if (err) assert.fail(`refused with repair: ${err.code} at ${err.index}: ${err.message}`);
        assert.deepEqual(out.result.seed.repairs ?? [], c.repaired.repairs);
        assert.deepEqual(out.result.modelCalls[0].messages.map(canonical), c.repaired.request.map(canonical));
        assert.deepEqual(out.messages.slice(0, -1).map(canonical), c.repaired.request.map(canonical));
      });
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
});
