// Every refusal rejects with the right code and index and leaves the
// runtime exactly as it was: no session created, no message added, no
// event emitted.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startInstance, rejection, snapshot, encodePacked } from "../testlib/helpers.mjs";

const call = (id, name = "lookup", args = "{}") => ({ id, name, arguments: args });

// Histories refused by validation (core's rules, reached through the edge).
const badHistories = [
  { name: "ErrUnknownRole", history: [{ role: "user", content: "a" }, { role: "robot", content: "b" }], code: "invalid_history", index: 1 },
  { name: "ErrRoleNotString", history: [{ role: 7, content: "a" }], code: "invalid_history", index: 0 },
  { name: "ErrMessageNotObject", history: [{ role: "user", content: "a" }, "hello"], code: "invalid_history", index: 1 },
  { name: "ErrMessageNull", history: [null], code: "invalid_history", index: 0 },
  { name: "ErrContentNumber", history: [{ role: "user", content: "a" }, { role: "assistant", content: 42 }], code: "invalid_history", index: 1 },
  { name: "ErrContentObject", history: [{ role: "user", content: { text: "a" } }], code: "invalid_history", index: 0 },
  { name: "ErrContentMissing", history: [{ role: "user" }], code: "invalid_history", index: 0 },
  { name: "ErrContentNullOnUser", history: [{ role: "user", content: null }], code: "invalid_history", index: 0 },
  { name: "ErrToolWithoutCallID", history: [{ role: "user", content: "a" }, { role: "assistant", content: null, tool_calls: [call("c1")] }, { role: "tool", content: "r" }], code: "invalid_history", index: 2 },
  { name: "ErrOrphanToolResult", history: [{ role: "user", content: "a" }, { role: "tool", content: "r", tool_call_id: "c9" }], code: "invalid_history", index: 1 },
  { name: "ErrDuplicateCallID", history: [{ role: "user", content: "a" }, { role: "assistant", content: "", tool_calls: [call("c1"), call("c1")] }], code: "invalid_history", index: 1 },
  { name: "ErrAnsweredTwice", history: [{ role: "user", content: "a" }, { role: "assistant", content: null, toolCalls: [call("c1")] }, { role: "tool", content: "r", toolCallId: "c1" }, { role: "tool", content: "r", toolCallId: "c1" }], code: "invalid_history", index: 3 },
  { name: "ErrUnansweredAtEnd", history: [{ role: "user", content: "a" }, { role: "assistant", content: null, tool_calls: [call("c1")] }], code: "invalid_history", index: 1 },
  { name: "ErrUnansweredBeforeUser", history: [{ role: "assistant", content: null, tool_calls: [call("c1")] }, { role: "user", content: "b" }], code: "invalid_history", index: 0 },
  { name: "ErrToolCallsNotArray", history: [{ role: "assistant", content: "x", tool_calls: "c1" }], code: "invalid_history", index: 0 },
  { name: "ErrToolCallNotObject", history: [{ role: "assistant", content: "x", tool_calls: [5] }], code: "invalid_history", index: 0 },
  { name: "ErrToolCallArgumentsNumber", history: [{ role: "assistant", content: "x", tool_calls: [{ id: "c", name: "n", arguments: 3 }] }], code: "invalid_history", index: 0 },
  { name: "ErrIDNumber", history: [{ role: "user", content: "a", id: 17 }], code: "invalid_history", index: 0 },
  { name: "ErrToolCallIDNumber", history: [{ role: "tool", content: "a", tool_call_id: 1 }], code: "invalid_history", index: 0 },
  { name: "ErrToolCallIDOnUser", history: [{ role: "user", content: "a", tool_call_id: "c1" }], code: "invalid_history", index: 0 },
  { name: "ErrMessageTooBig", history: [{ role: "user", content: "a" }, { role: "assistant", content: "x".repeat(2 << 20) }], code: "limit_exceeded", index: 1 },
  { name: "ErrHugeUnicode", history: [{ role: "user", content: "é".repeat(600000) }], code: "limit_exceeded", index: 0 },
];

// Arguments refused before anything is read.
const badCalls = [
  { name: "ErrSessionIDNumber", call: (rt) => rt.startRun(5, "x"), code: "invalid_argument" },
  { name: "ErrSessionIDEmpty", call: (rt) => rt.startRun("", "x"), code: "invalid_argument" },
  { name: "ErrSessionIDHuge", call: (rt) => rt.startRun("s".repeat(100000), "x"), code: "invalid_argument" },
  { name: "ErrInputMissing", call: (rt) => rt.startRun("s"), code: "invalid_argument" },
  { name: "ErrInputObject", call: (rt) => rt.startRun("s", { text: "x" }), code: "invalid_argument" },
  { name: "ErrInputHuge", call: (rt) => rt.startRun("s", "x".repeat(3 << 20)), code: "limit_exceeded" },
  { name: "ErrPolicyString", call: (rt) => rt.startRunWithPolicy("s", "x", "fast"), code: "invalid_argument" },
  { name: "ErrPolicyArray", call: (rt) => rt.startRunWithPolicy("s", "x", []), code: "invalid_argument" },
  { name: "ErrPolicySeedMode", call: (rt) => rt.startRunWithPolicy("s", "x", { seedMode: "always" }), code: "invalid_argument" },
  { name: "ErrPolicySeedModeType", call: (rt) => rt.startRunWithPolicy("s", "x", { seedMode: 1 }), code: "invalid_argument" },
  { name: "ErrPolicyMaxStepsNegative", call: (rt) => rt.startRunWithPolicy("s", "x", { maxSteps: -1 }), code: "invalid_argument" },
  { name: "ErrPolicyMaxStepsFraction", call: (rt) => rt.startRunWithPolicy("s", "x", { maxSteps: 1.5 }), code: "invalid_argument" },
  { name: "ErrPolicyMaxStepsString", call: (rt) => rt.startRunWithPolicy("s", "x", { maxSteps: "3" }), code: "invalid_argument" },
  { name: "ErrPolicyTimeoutNaN", call: (rt) => rt.startRunWithPolicy("s", "x", { timeoutMs: NaN }), code: "invalid_argument" },
  { name: "ErrPolicyTimeoutHuge", call: (rt) => rt.startRunWithPolicy("s", "x", { timeoutMs: 2 ** 60 }), code: "invalid_argument" },
  { name: "ErrPolicyAllowedTools", call: (rt) => rt.startRunWithPolicy("s", "x", { allowedTools: "all" }), code: "invalid_argument" },
  { name: "ErrPolicyAllowedToolsItem", call: (rt) => rt.startRunWithPolicy("s", "x", { allowedTools: ["a", 2] }), code: "invalid_argument" },
  { name: "ErrPolicyOnBusy", call: (rt) => rt.startRunWithPolicy("s", "x", { onBusy: "wait" }), code: "invalid_argument" },
  { name: "ErrOptionsOnEvent", call: (rt) => rt.startRun("s", "x", { onEvent: "log" }), code: "invalid_argument" },
  { name: "ErrOptionsRunID", call: (rt) => rt.startRun("s", "x", { runId: 3 }), code: "invalid_argument" },
  { name: "ErrOptionsInspect", call: (rt) => rt.startRun("s", "x", { inspect: "yes" }), code: "invalid_argument" },
  { name: "ErrOptionsNumber", call: (rt) => rt.startRun("s", "x", 7), code: "invalid_argument" },
  { name: "ErrHistoryMissing", call: (rt) => rt.startRunWithHistory("s", "x"), code: "invalid_argument" },
  { name: "ErrHistoryString", call: (rt) => rt.startRunWithHistory("s", "x", "[]"), code: "invalid_argument" },
  { name: "ErrHistoryObject", call: (rt) => rt.startRunWithHistory("s", "x", { length: 1, 0: { role: "user", content: "a" } }), code: "invalid_argument" },
  { name: "ErrPackedMagic", call: (rt) => rt.startRunWithHistory("s", "x", new Uint8Array([1, 2, 3, 4, 0])), code: "invalid_history" },
  { name: "ErrPackedEmpty", call: (rt) => rt.startRunWithHistory("s", "x", new Uint8Array(0)), code: "invalid_history" },
  { name: "ErrPackedTruncated", call: (rt) => rt.startRunWithHistory("s", "x", encodePacked([{ role: "user", content: "hello" }]).slice(0, 8)), code: "invalid_history", index: 0 },
  { name: "ErrPackedBadUTF8", call: (rt) => rt.startRunWithHistory("s", "x", new Uint8Array([0x41, 0x52, 0x48, 1, 1, 0, 1, 2, 0xc3, 0x28])), code: "invalid_history", index: 0 },
  { name: "ErrPackedUnknownRole", call: (rt) => rt.startRunWithHistory("s", "x", encodePacked([{ role: "user", content: "a" }, { role: "wizard", content: "b" }])), code: "invalid_history", index: 1 },
  { name: "ErrPackedCountHuge", call: (rt) => rt.startRunWithHistory("s", "x", new Uint8Array([0x41, 0x52, 0x48, 1, 0xff, 0xff, 0xff, 0x7f])), code: "limit_exceeded", index: 100000 },
];

// setup returns a runtime with one warm session and a model that can be
// held busy.
async function setup(limits) {
  const api = await startInstance();
  const rt = api.createRuntime({ limits });
  await rt.startRunWithHistory("warm", "hi", [{ role: "user", content: "before" }, { role: "assistant", content: "yes" }]);
  return rt;
}

test("TestRuntime_StartRunWithHistory_Refusals: code, index, nothing changed, no events", async (t) => {
  const rt = await setup({ maxMessageBytes: 1 << 20 });
  for (const tc of badHistories) {
    for (const [form, conv] of [["array", (h) => h], ["packed", encodePacked]]) {
      // Wrong JS types exist only on the array path.
      if (form === "packed" && /NotString|NotObject|Null$|Number|Object$|NotArray/.test(tc.name)) continue;
      await t.test(tc.name + "/" + form, async () => {
        for (const session of ["warm", "cold-" + tc.name]) {
          const before = snapshot(rt);
          const events = [];
          const err = await rejection(rt.startRunWithHistory(session, "now", conv(tc.history), { onEvent: (e) => events.push(e) }));
          assert.ok(err instanceof Error, "a real Error");
          assert.equal(err.code, tc.code, err.message);
          assert.equal(err.index, tc.index, err.message);
          assert.equal(typeof err.message, "string");
          assert.ok(err.message.length > 0 && err.message.length < 2000);
          assert.deepEqual(events, []);
          assert.equal(snapshot(rt), before, "the runtime is unchanged");
        }
      });
    }
  }
});

test("TestRuntime_Arguments_Refusals: code, no index, nothing changed", async (t) => {
  const rt = await setup();
  for (const tc of badCalls) {
    await t.test(tc.name, async () => {
      const before = snapshot(rt);
      const stats = rt.stats();
      const err = await rejection(tc.call(rt));
      assert.ok(err instanceof Error);
      assert.equal(err.code, tc.code, err.message);
      assert.equal(err.index, tc.index, err.message);
      assert.equal(snapshot(rt), before);
      assert.equal(rt.stats().runsFailed, stats.runsFailed, "a refused run is not a failed run");
    });
  }
});

test("TestRuntime_SeedLimits: maxSeedMessages and maxSeedBytes from the config", async () => {
  const rt = await setup({ maxSeedMessages: 3, maxSeedBytes: 10 });
  const before = snapshot(rt);
  const four = [{ role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "c" }, { role: "assistant", content: "d" }];
  for (const h of [four, encodePacked(four)]) {
    const err = await rejection(rt.startRunWithHistory("s", "x", h));
    assert.equal(err.code, "limit_exceeded");
    assert.equal(err.index, 3);
  }
  const bytes = [{ role: "user", content: "aaaaaa" }, { role: "assistant", content: "bbbbbb" }];
  const err = await rejection(rt.startRunWithHistory("s", "x", bytes));
  assert.equal(err.code, "limit_exceeded");
  assert.equal(err.index, 1);
  assert.equal(snapshot(rt), before);
});

test("TestRuntime_SessionBusy: onBusy reject refuses while a run holds the session", async () => {
  const api = await startInstance();
  let release;
  const gate = new Promise((r) => (release = r));
  const rt = api.createRuntime({ model: async () => { await gate; return { content: "done" }; } });
  const first = rt.startRun("s", "one", { runId: "held" });
  const before = snapshot(rt);
  const err = await rejection(rt.startRunWithPolicyAndHistory("s", "two", { onBusy: "reject" }, [{ role: "user", content: "a" }, { role: "assistant", content: "b" }]));
  assert.equal(err.code, "session_busy");
  assert.equal(err.index, undefined);
  // History is validated before the busy check.
  const bad = await rejection(rt.startRunWithPolicyAndHistory("s", "two", { onBusy: "reject" }, [{ role: "bot", content: "a" }]));
  assert.equal(bad.code, "invalid_history");
  assert.equal(snapshot(rt), before);
  // A run id that is active is refused too.
  const dup = await rejection(rt.startRun("elsewhere", "x", { runId: "held" }));
  assert.equal(dup.code, "invalid_argument");
  release();
  assert.equal((await first).reply.content, "done");
  assert.equal(rt.getSession("s").messageCount, 2);
});

test("TestCreateRuntime_BadConfig: returns an Error with invalid_argument, never throws", async () => {
  const api = await startInstance();
  const bad = [
    "echo", 5, [], { model: "gpt" }, { model: 3 }, { systemPrompt: 1 }, { tools: {} },
    { tools: [{ name: "t" }] }, { tools: [{ name: 1, call() {} }] }, { tools: [5] },
    { tools: [{ name: "t", call() {} }, { name: "t", call() {} }] }, { tools: [{ name: "", call() {} }] },
    { tools: [{ name: "t", call() {}, parameters: 5 }] },
    { limits: { maxSessions: -1 } }, { limits: { maxSessions: "1" } }, { limits: 3 },
  ];
  for (const cfg of bad) {
    const r = api.createRuntime(cfg);
    assert.ok(r instanceof Error, "config " + JSON.stringify(cfg));
    assert.equal(r.code, "invalid_argument", JSON.stringify(cfg) + ": " + r.message);
  }
  // The instance still works.
  const rt = api.createRuntime({});
  assert.equal((await rt.startRun("s", "ok")).reply.content, "echo: ok (model received 1 messages)");
});

test("TestRuntime_SyncMethods_WrongTypes: answer null/false, never throw", async () => {
  const api = await startInstance();
  const rt = api.createRuntime();
  for (const v of [undefined, null, 5, {}, [], "missing"]) {
    assert.equal(rt.getSession(v), null);
    assert.equal(rt.deleteSession(v), false);
    assert.equal(rt.cancelRun(v), false);
  }
  assert.deepEqual(rt.listSessions(), []);
});

test("TestRuntime_ThrowingGetters: a getter or Proxy that throws is a refusal, not a crash", async () => {
  const api = await startInstance();
  const rt = api.createRuntime();
  await rt.startRun("warm", "hi");
  const before = snapshot(rt);
  const boom = () => { throw new Error("getter boom"); };
  const evilMessage = { get role() { return boom(); }, content: "x" };
  const evilArray = new Proxy([{ role: "user", content: "a" }], { get: (t, k) => (k === "0" ? boom() : t[k]) });
  const evilPolicy = { get seedMode() { return boom(); } };
  const evilOptions = { get onEvent() { return boom(); } };
  const cases = [
    [rt.startRunWithHistory("s", "x", [{ role: "user", content: "a" }, { role: "assistant", content: "b" }, evilMessage]), "invalid_history", 2],
    [rt.startRunWithHistory("s", "x", evilArray), "invalid_history", 0],
    [rt.startRunWithPolicy("s", "x", evilPolicy), "invalid_argument", undefined],
    [rt.startRun("s", "x", evilOptions), "invalid_argument", undefined],
  ];
  for (const [p, code, index] of cases) {
    const err = await rejection(p);
    assert.equal(err.code, code, err.message);
    assert.equal(err.index, index);
    assert.match(err.message, /getter boom/);
  }
  const cfg = api.createRuntime({ get model() { return boom(); } });
  assert.ok(cfg instanceof Error);
  assert.equal(cfg.code, "invalid_argument");
  const badReply = api.createRuntime({ model: () => ({ get content() { return boom(); } }) });
  assert.equal((await rejection(badReply.startRun("s", "x"))).code, "model_error");
  assert.equal(snapshot(rt), before);
  assert.equal((await rt.startRun("warm", "still here")).messageCount, 4);
});
