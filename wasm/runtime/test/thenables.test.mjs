// Hostile thenables and late delta calls from a model: the first
// settlement counts, and nothing is printed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startInstance, rejection, sleep } from "../testlib/helpers.mjs";

// captureConsole records console.error/warn/log while f runs.
async function captureConsole(f) {
  const lines = [];
  const saved = { error: console.error, warn: console.warn, log: console.log };
  for (const k of Object.keys(saved)) console[k] = (...a) => lines.push(a.map(String).join(" "));
  try {
    await f();
  } finally {
    Object.assign(console, saved);
  }
  return lines;
}

test("TestModel_Thenables: settling twice, throwing after resolving, late delta", async () => {
  const api = await startInstance();
  let lateDelta;
  const modes = {
    // then resolves, then throws: the resolution counts.
    throwAfterResolve: () => ({ then(ok) { ok({ content: "resolved" }); throw new Error("after"); } }),
    // then resolves twice and rejects: the first counts.
    settleTwice: () => ({ then(ok, bad) { ok({ content: "first" }); ok({ content: "second" }); bad(new Error("late")); } }),
    // settles later, twice.
    settleTwiceLater: () => ({ then(ok) { setTimeout(() => { ok("later"); ok("again"); }, 1); } }),
    // rejects, then resolves: the rejection counts.
    rejectThenResolve: () => ({ then(ok, bad) { bad(new Error("no")); ok("yes"); } }),
    // then throws before settling: a rejection.
    throwBefore: () => ({ then() { throw new Error("before"); } }),
    // keeps delta and calls it after answering.
    lateDelta: (req) => { lateDelta = req.delta; req.delta("early "); return "done"; },
  };
  const rt = api.createRuntime({ model: (req) => modes[req.messages.at(-1).content](req) });
  const lines = await captureConsole(async () => {
    assert.equal((await rt.startRun("a", "throwAfterResolve")).reply.content, "resolved");
    assert.equal((await rt.startRun("b", "settleTwice")).reply.content, "first");
    assert.equal((await rt.startRun("c", "settleTwiceLater")).reply.content, "later");
    const err = await rejection(rt.startRun("d", "rejectThenResolve"));
    assert.equal(err.code, "model_error");
    assert.match(err.message, /no/);
    const err2 = await rejection(rt.startRun("e", "throwBefore"));
    assert.equal(err2.code, "model_error");
    assert.match(err2.message, /before/);
    const deltas = [];
    const r = await rt.startRun("f", "lateDelta", { onEvent: (e) => { if (e.type === "model.delta") deltas.push(e.delta); } });
    assert.equal(r.reply.content, "done");
    lateDelta("late");
    lateDelta("later");
    await sleep(5);
    assert.deepEqual(deltas, ["early "]);
  });
  assert.deepEqual(lines, [], "nothing printed");
  assert.equal((await rt.startRun("g", "lateDelta")).status, "completed");
});
