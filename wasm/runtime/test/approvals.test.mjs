// Nothing paid twice on the module's syscall/js API
// (docs/adr/0019-tool-approvals.md, "Amendment: nothing paid twice"): a
// resume whose approved tool ran keeps the tool's result through any
// later failure of the run; the rejection's Error (and the run.failed or
// run.cancelled event's) carries it as `appended`; approving again is
// refused warm three times and cold once, from the history the host
// stored with it, and pay ran once. And a denial reason's size check
// counts its whole result message, tool_call_id included.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { startInstance } from "../testlib/helpers.mjs";

const contents = (msgs) => (msgs ?? []).map((m) => `${m.role}:${m.content}`);

// world is a runtime whose model asks, for each user message, for a
// "pay" and a "mail" call, both needing approval, and answers tool
// results through hooks.model when a test sets it.
async function world(api, config = {}) {
  const runs = { pay: 0, mail: 0 };
  const hooks = {};
  const model = (req) => {
    const last = req.messages[req.messages.length - 1];
    if (last.role === "user") {
      return { content: "", toolCalls: [
        { id: `pay-${last.content}`, name: "pay", arguments: "{}" },
        { id: `mail-${last.content}`, name: "mail", arguments: "{}" },
      ] };
    }
    return hooks.model ? Promise.resolve().then(hooks.model).then(() => "done") : "done";
  };
  const rt = api.createRuntime({ model, ...config, tools: [
    { name: "pay", needsApproval: true, call: () => { runs.pay++; return "paid"; } },
    { name: "mail", needsApproval: true, call: () => { runs.mail++; return "mailed"; } },
  ] });
  return { rt, runs, hooks };
}

const approvals = [{ toolCallId: "pay-q", approved: true }, { toolCallId: "mail-q", approved: false, reason: "no" }];

async function refusedCode(p) {
  try {
    await p;
  } catch (e) {
    return e.code;
  }
  return "resolved";
}

const triggers = [
  ["the model throws", (w) => { w.hooks.model = () => { throw new Error("upstream 500"); }; }, undefined, "model_error"],
  ["policy.timeoutMs in the continuation", (w) => { w.hooks.model = () => new Promise((r) => setTimeout(r, 300)); },
    { timeoutMs: 60 }, "timeout"],
  ["cancelRun after tool.finished", (w) => { w.cancelOn = true; w.hooks.model = () => new Promise((r) => setTimeout(r, 100)); },
    undefined, "cancelled"],
  ["maxContextTokens too small for the call and its results", () => {}, { maxContextTokens: 30 }, "limit_exceeded"],
];

describe("nothing paid twice on the syscall/js API", () => {
  for (const [name, arm, policy, code] of triggers) {
    test(`${name}: ${code}, the result kept and reported, approving again refused warm and cold`, async () => {
      const api = await startInstance();
      const w = await world(api);
      const paused = await w.rt.startRun("s", "q");
      assert.equal(paused.status, "awaiting_approval");
      arm(w);
      let failed;
      const onEvent = (ev) => {
        if (w.cancelOn && ev.type === "tool.finished" && ev.toolCall.name === "pay") w.rt.cancelRun(ev.runId);
        if (ev.type === "run.failed" || ev.type === "run.cancelled") failed = ev.error;
      };
      let err;
      try {
        await w.rt.startRunWithPolicy("s", undefined, policy ?? {}, { approvals, onEvent });
        assert.fail("the resume completed");
      } catch (e) {
        err = e;
      }
      assert.equal(err.code, code, err.message);
      const kept = ["tool:paid", "tool:Tool call denied: no"];
      assert.deepEqual(contents(err.appended), kept);
      assert.deepEqual(contents(failed && failed.appended), kept);
      assert.deepEqual(contents(w.rt.getSession("s").messages), ["user:q", "assistant:", ...kept]);
      const stored = [...paused.appended, ...err.appended].map((m) => ({ ...m }));
      w.hooks.model = undefined;
      w.cancelOn = false;
      for (let i = 0; i < 3; i++) {
        assert.equal(await refusedCode(w.rt.startRunWithPolicy("s", undefined, policy ?? {}, { approvals })), "invalid_argument");
      }
      const cold = await world(await startInstance());
      assert.equal(await refusedCode(cold.rt.startRunWithHistory("s", undefined, stored, { approvals })), "invalid_argument");
      assert.deepEqual(w.runs, { pay: 1, mail: 0 });
      assert.deepEqual(cold.runs, { pay: 0, mail: 0 });
      w.rt.close();
      cold.rt.close();
    });
  }

  test("a denial reason one byte over maxMessageBytes with its tool_call_id is refused before pay runs", async () => {
    const limit = 300;
    const w = await world(await startInstance(), { limits: { maxMessageBytes: limit } });
    await w.rt.startRun("s", "q");
    const fits = "r".repeat(limit - "Tool call denied: ".length - "mail-q".length);
    const over = [{ toolCallId: "pay-q", approved: true }, { toolCallId: "mail-q", approved: false, reason: fits + "x" }];
    assert.equal(await refusedCode(w.rt.startRun("s", undefined, { approvals: over })), "limit_exceeded");
    assert.deepEqual(w.runs, { pay: 0, mail: 0 });
    assert.equal(w.rt.getSession("s").messages.length, 2);
    const res = await w.rt.startRun("s", undefined, { approvals: [over[0], { ...over[1], reason: fits }] });
    assert.equal(res.status, "completed");
    assert.deepEqual(w.runs, { pay: 1, mail: 0 });
    w.rt.close();
  });
});
