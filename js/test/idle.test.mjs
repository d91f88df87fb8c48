// Go's idle time (js/idle.js): the module's collector finishes a cycle
// begun during a turn once the host's event loop turns, so a run of cold
// seeds does not grow the Go heap by what a lingering mark phase keeps.
import { test } from "node:test";
import assert from "node:assert/strict";
import { idleLater, idleNow } from "../idle.js";
import { runtimes } from "./helpers.mjs";

const { load } = runtimes();
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

function fakeInstance() {
  return { dead: false, idle: false, go: { exited: false, resumes: 0, _resume() { this.resumes++; } } };
}

test("idleLater resumes Go once per idle event loop, and never a dead or exited instance", async () => {
  const inst = fakeInstance();
  idleLater(inst);
  idleLater(inst);
  idleLater(inst);
  assert.equal(inst.go.resumes, 0, "resumed before the event loop turned");
  await turn();
  assert.equal(inst.go.resumes, 1);
  assert.equal(inst.idle, false);
  idleLater(inst);
  await turn();
  assert.equal(inst.go.resumes, 2);

  idleLater(inst);
  inst.dead = true;
  await turn();
  assert.equal(inst.go.resumes, 2, "a dead instance was resumed");
  inst.dead = false;
  idleLater(inst);
  inst.go.exited = true;
  await turn();
  assert.equal(inst.go.resumes, 2, "an exited Go program was resumed");
});

test("idleLater swallows a failing resume and stays usable", async () => {
  const inst = fakeInstance();
  inst.go._resume = () => {
    inst.go.resumes++;
    throw new Error("Go program has already exited");
  };
  idleLater(inst);
  await turn();
  assert.equal(inst.go.resumes, 1);
  idleLater(inst);
  await turn();
  assert.equal(inst.go.resumes, 2);
});

test("idleNow resumes Go at once, never a dead or exited instance, and swallows a failing resume", () => {
  const inst = fakeInstance();
  idleNow(inst);
  assert.equal(inst.go.resumes, 1);
  inst.dead = true;
  idleNow(inst);
  inst.dead = false;
  inst.go.exited = true;
  idleNow(inst);
  assert.equal(inst.go.resumes, 1, "a dead instance or an exited Go program was resumed");
  inst.go.exited = false;
  inst.go._resume = () => {
    inst.go.resumes++;
    throw new Error("Go program has already exited");
  };
  idleNow(inst);
  assert.equal(inst.go.resumes, 2);
});

// history returns n valid messages of about 250 bytes each.
function history(n) {
  const words = "the runtime keeps sessions in memory while the host stores durable history café über".split(" ");
  const out = [];
  for (let i = 0; i < n; i++) {
    let s = "";
    for (let k = 0; s.length < 250; k++) s += words[(i * 7 + k * 3) % words.length] + " ";
    out.push({ role: i % 2 ? "assistant" : "user", content: s, id: "m" + i });
  }
  return out;
}

test("cold seeds with the event loop turning between them keep the Go heap near its live size", async () => {
  const rt = await load({ model: () => ({ content: "ok" }), limits: { maxSeedMessages: 20000, maxMessagesPerSession: 40000 } });
  const small = history(1000), large = history(10000);
  for (let i = 0; i < 40; i++) {
    const r = await rt.run({ sessionId: "s" + i, input: "q", history: small });
    assert.equal(r.messageCount, 1002);
    assert.equal(rt.deleteSession("s" + i), true);
    await turn();
  }
  for (let i = 0; i < 12; i++) {
    const r = await rt.run({ sessionId: "l" + i, input: "q", history: large });
    assert.equal(r.messageCount, 10002);
    assert.equal(rt.deleteSession("l" + i), true);
    await turn();
  }
  // Without the idle moments one collection stayed in its mark phase
  // over these seeds, keeping all they allocated: 66 MB here. With them
  // each cycle ends within a seed or two (the live heap is one session).
  const heap = rt.stats().heapAlloc;
  assert.ok(heap < 40 << 20, `the Go heap holds ${(heap / 1e6).toFixed(1)} MB`);
});

test("seeds and deletes back to back, the event loop never turning, keep the Go heap near its live size: a control call is Go's idle moment", async () => {
  const rt = await load({ model: () => ({ content: "ok" }), limits: { maxSeedMessages: 20000, maxMessagesPerSession: 40000 } });
  const small = history(1000), large = history(10000);
  for (let i = 0; i < 40; i++) {
    const r = await rt.run({ sessionId: "s" + i, input: "q", history: small });
    assert.equal(r.messageCount, 1002);
    assert.equal(rt.deleteSession("s" + i), true);
  }
  for (let i = 0; i < 12; i++) {
    const r = await rt.run({ sessionId: "l" + i, input: "q", history: large });
    assert.equal(r.messageCount, 10002);
    assert.equal(rt.deleteSession("l" + i), true);
  }
  // The awaits above are microtasks only: no idle moment of idleLater
  // came. When the control calls went over the wire exports and gave Go
  // no turn, one collection stayed in its mark phase over all of these
  // seeds and the heap grew with everything they allocated.
  const heap = rt.stats().heapAlloc;
  assert.ok(heap < 40 << 20, `the Go heap holds ${(heap / 1e6).toFixed(1)} MB`);
});
