// Conversation heads on the syscall/js API (docs/adr/0025-conversation-heads.md):
// every run method takes the option ifHead, a stale head is refused
// history_diverged with the current head and the messages the caller
// lacks and nothing changes, a run with ifHead has result.head, and
// getSession and checkHistory answer the head.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { startInstance, rejection, sleep, snapshot, encodePacked } from "../testlib/helpers.mjs";

const corpus = JSON.parse(readFileSync(new URL("../../../testdata/edges/heads.json", import.meta.url), "utf8"));
const HEAD_FORM = /^h1-[A-Za-z0-9_-]{22}$/;
const NEVER = "h1-AAAAAAAAAAAAAAAAAAAAAA";

// The four entry points, each called with options last.
const entryPoints = {
  startRun: (rt, sid, input, history, options) => rt.startRun(sid, input, options),
  startRunWithPolicy: (rt, sid, input, history, options) => rt.startRunWithPolicy(sid, input, {}, options),
  startRunWithHistory: (rt, sid, input, history, options) => rt.startRunWithHistory(sid, input, history, options),
  startRunWithPolicyAndHistory: (rt, sid, input, history, options) => rt.startRunWithPolicyAndHistory(sid, input, {}, history, options),
};

test("TestHeads_EntryPoints: each run method runs on the current head and refuses a stale one, changing nothing", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({});
  const plain = await rt.startRun("h", "one");
  assert.ok(!("head" in plain), "a run without ifHead has no head");
  const h1 = rt.getSession("h").head;
  assert.match(h1, HEAD_FORM);
  const events = [];
  const r2 = await rt.startRun("h", "two", { ifHead: h1, onEvent: (ev) => events.push(ev) });
  assert.equal(r2.status, "completed");
  const before = rt.getSession("h");
  assert.notEqual(before.head, h1);
  assert.equal(r2.head, before.head, "a run with ifHead has the session's head after it");
  assert.equal(events.at(-1).type, "run.completed");
  assert.equal(events.at(-1).result.head, before.head, "so has its run.completed event's result");
  const state = snapshot(rt);
  const stats = rt.stats();
  for (const [name, call] of Object.entries(entryPoints)) {
    const seen = [];
    const e = await rejection(call(rt, "h", "stale", before.messages.slice(0, 2), { ifHead: h1, onEvent: (ev) => seen.push(ev) }));
    assert.ok(e instanceof Error, name);
    assert.equal(e.code, "history_diverged", `${name}: ${e.message}`);
    assert.equal(e.head, before.head, name);
    // The caller is only behind: the messages after its head, in the
    // module's shape, frozen as every message the module hands out.
    assert.ok(Array.isArray(e.missing), name);
    assert.deepEqual(e.missing, before.messages.slice(2), name);
    assert.ok(e.missing.every(Object.isFrozen), name);
    assert.deepEqual(seen.map((ev) => ev.type), ["run.started", "run.failed"], name);
    assert.equal(seen[1].error.head, before.head, name);
    assert.deepEqual(seen[1].error.missing, before.messages.slice(2), name);
    assert.equal(snapshot(rt), state, `${name} changed the runtime`);
    assert.deepEqual(rt.getSession("h"), before, `${name} changed the session`);
  }
  assert.equal(rt.stats().runsCompleted, stats.runsCompleted);
  // A head the conversation never had: refused without missing.
  const never = await rejection(rt.startRun("h", "x", { ifHead: NEVER }));
  assert.equal(never.code, "history_diverged");
  assert.equal(never.head, before.head);
  assert.ok(!("missing" in never), "no missing when the caller is not behind");
  assert.equal(snapshot(rt), state);
  // A new session's head is the empty conversation's: another is refused
  // and no session is made.
  const cold = await rejection(rt.startRun("new", "x", { ifHead: h1 }));
  assert.equal(cold.code, "history_diverged");
  assert.equal(rt.getSession("new"), null);
  // The caller merges missing and retries with head, on every method.
  let head = before.head;
  for (const [name, call] of Object.entries(entryPoints)) {
    const res = await call(rt, "h", name, rt.getSession("h").messages, { ifHead: head });
    assert.equal(res.status, "completed", name);
    assert.equal(res.seed.mode, name.includes("History") ? "noop" : "none", name);
    assert.match(res.head, HEAD_FORM, name);
    assert.notEqual(res.head, head, name);
    assert.equal(res.head, rt.getSession("h").head, name);
    head = res.head;
  }
  assert.equal(rt.getSession("h").messageCount, 4 + 2 * 4);
  // null and undefined are no precondition.
  for (const ifHead of [null, undefined]) {
    const res = await rt.startRun("h", "free", { ifHead });
    assert.equal(res.status, "completed");
    assert.ok(!("head" in res));
  }
  rt.close();
});

test("TestHeads_BadIfHead: a head that is not a string, or not a head, is invalid_argument and changes nothing", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({});
  await rt.startRun("h", "one");
  const state = snapshot(rt);
  const throwing = { get ifHead() { throw new Error("no head"); } };
  const bad = [
    ["", /options\.ifHead must not be empty/],
    ["nope", /ifHead is not a head/],
    ["h1-AAAAAAAAAAAAAAAAAAAAA", /ifHead is not a head/], // 21 characters
    ["h1-AAAAAAAAAAAAAAAAAAAAAAA", /ifHead is not a head/], // 23
    ["h1-AAAAAAAAAAAAAAAAAAAAA+", /ifHead is not a head/], // not base64url
    ["h2-AAAAAAAAAAAAAAAAAAAAAA", /ifHead is not a head/],
    [42, /options\.ifHead must be a string/],
    [true, /options\.ifHead must be a string/],
    [{}, /options\.ifHead must be a string/],
    [[NEVER], /options\.ifHead must be a string/],
    [Symbol("h"), /options\.ifHead must be a string/],
    [() => NEVER, /options\.ifHead must be a string/],
  ];
  for (const [ifHead, text] of bad) {
    for (const [name, call] of Object.entries(entryPoints)) {
      for (const sid of ["h", "cold"]) {
        const e = await rejection(call(rt, sid, "x", [{ role: "user", content: "a" }], { ifHead }));
        assert.equal(e.code, "invalid_argument", `${name} ${String(ifHead)}`);
        assert.match(e.message, text, `${name} ${String(ifHead)}`);
        assert.ok(!("head" in e) && !("missing" in e));
      }
    }
  }
  const e = await rejection(rt.startRun("h", "x", throwing));
  assert.equal(e.code, "invalid_argument");
  assert.equal(snapshot(rt), state, "a refused ifHead changed the runtime");
  assert.equal(rt.getSession("cold"), null);
  rt.close();
});

test("TestHeads_Corpus: the head corpus (testdata/edges/heads.json) through the syscall/js API", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({});
  assert.equal(Object.keys(corpus.shapes).length, 3);
  for (const [name, h] of Object.entries(corpus.shapes)) {
    assert.equal(rt.checkHistory(h).head, corpus.head, name);
  }
  const module = corpus.shapes.module;
  assert.equal(rt.checkHistory(encodePacked(module)).head, corpus.head, "packed");
  for (const p of corpus.prefixes) {
    const head = p.head || rt.checkHistory(module.slice(0, p.messages)).head;
    for (const history of [module, encodePacked(module)]) {
      const e = await rejection(rt.startRunWithHistory("s", "next", history, { ifHead: head }));
      assert.equal(e.code, "history_diverged", `prefix ${p.messages}`);
      assert.equal(e.head, corpus.head);
      assert.equal(e.missing.length, p.missing, `prefix ${p.messages}`);
      assert.deepEqual(e.missing.map((m) => [m.role, m.content, m.tool_call_id]),
        module.slice(p.messages).map((m) => [m.role, m.content, m.tool_call_id]), `prefix ${p.messages}`);
      assert.equal(rt.getSession("s"), null, `prefix ${p.messages} made a session`);
    }
  }
  for (const ed of corpus.edits) {
    assert.notEqual(rt.checkHistory(ed.history).head, corpus.head, ed.name);
    const e = await rejection(rt.startRunWithHistory("s", "next", ed.history, { ifHead: corpus.head }));
    assert.equal(e.code, "history_diverged", ed.name);
    assert.equal(e.head, rt.checkHistory(ed.history).head, ed.name);
    assert.ok(!("missing" in e), ed.name);
    assert.equal(rt.getSession("s"), null, ed.name);
  }
  assert.equal(rt.checkHistory(corpus.awaiting.history).head, corpus.awaiting.head);
  assert.deepEqual(rt.listSessions(), []);
  for (const [name, h] of Object.entries(corpus.shapes)) {
    const res = await rt.startRunWithHistory(name, "next", h, { ifHead: corpus.head });
    assert.equal(res.status, "completed", name);
    assert.equal(res.seed.mode, "cold", name);
    assert.equal(res.head, rt.getSession(name).head, name);
  }
  // One conversation in three shapes: one head after the same turn.
  assert.equal(new Set(Object.keys(corpus.shapes).map((n) => rt.getSession(n).head)).size, 1);
  rt.close();
});

test("TestHeads_RepairedAndBrokenHistories: ifHead is checked against what the history would seed", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({});
  const orphan = [{ role: "user", content: "a" }, { role: "tool", tool_call_id: "x", content: "r" }, { role: "assistant", content: "b" }];
  const repaired = [{ role: "user", content: "a" }, { role: "assistant", content: "b" }];
  const stored = rt.checkHistory(orphan).head;
  const fixed = rt.checkHistory(repaired).head;
  assert.match(stored, HEAD_FORM, "a broken history has the head of its messages as stored");
  assert.notEqual(stored, fixed);
  // Unrepaired, the history is refused first, as without ifHead.
  const broken = await rejection(rt.startRunWithHistory("o", "x", orphan, { ifHead: stored }));
  assert.deepEqual([broken.code, broken.index], ["invalid_history", 1]);
  assert.ok(!("head" in broken));
  // Repaired, the run runs on the repaired conversation: its head is
  // the one to name, and the stored one is refused.
  const e = await rejection(rt.startRunWithPolicyAndHistory("o", "x", { repair: true }, orphan, { ifHead: stored }));
  assert.equal(e.code, "history_diverged");
  assert.equal(e.head, fixed);
  assert.equal(rt.getSession("o"), null);
  const res = await rt.startRunWithPolicyAndHistory("o", "x", { repair: true }, orphan, { ifHead: fixed });
  assert.equal(res.status, "completed");
  assert.deepEqual(res.seed.repaired, repaired);
  assert.equal(res.head, rt.getSession("o").head);
  assert.equal(res.head, rt.checkHistory([...res.seed.repaired, ...res.appended]).head, "the head of what the host stores");
  // A history that is not one: the argument is refused, no head read.
  const notHistory = await rejection(rt.startRunWithHistory("o", "x", "nope", { ifHead: NEVER }));
  assert.equal(notHistory.code, "invalid_argument");
  rt.close();
});

test("TestHeads_Concurrent: of two runs on one head at once, one runs and the other is refused with its turn as missing", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({
    model: async (req) => {
      await sleep(5);
      return { content: "re: " + req.messages.at(-1).content };
    },
  });
  await rt.startRun("c", "start");
  const head = rt.getSession("c").head;
  const runs = ["a", "b", "c", "d"].map((input) => rt.startRun("c", input, { ifHead: head }).then((r) => r, (e) => e));
  const out = await Promise.all(runs);
  const won = out.filter((r) => !(r instanceof Error));
  const lost = out.filter((r) => r instanceof Error);
  assert.equal(won.length, 1, "one run on the head");
  assert.equal(lost.length, 3);
  const s = rt.getSession("c");
  assert.equal(s.messageCount, 4);
  assert.equal(won[0].head, s.head);
  for (const e of lost) {
    assert.equal(e.code, "history_diverged");
    assert.equal(e.head, s.head);
    assert.deepEqual(e.missing, won[0].appended);
  }
  // Cold: runs with the same history and its head, at once, on a new
  // session: one seeds and runs, the others are behind by its turn.
  const history = [{ role: "user", content: "q" }, { role: "assistant", content: "r" }];
  const h = rt.checkHistory(history).head;
  const cold = await Promise.all([1, 2, 3].map((i) => rt.startRunWithHistory("cold", "turn " + i, history, { ifHead: h }).then((r) => r, (e) => e)));
  const seeded = cold.filter((r) => !(r instanceof Error));
  assert.equal(seeded.length, 1);
  assert.equal(seeded[0].seed.mode, "cold");
  for (const e of cold.filter((r) => r instanceof Error)) {
    assert.equal(e.code, "history_diverged");
    assert.deepEqual(e.missing, seeded[0].appended);
  }
  assert.equal(rt.getSession("cold").messageCount, 4);
  // Merging missing and retrying, every client's turn lands once.
  const clients = ["x", "y", "z"].map((name) => ({ name, messages: [...rt.getSession("c").messages], head: rt.getSession("c").head }));
  await Promise.all(clients.map(async (cl) => {
    for (let i = 0; i < 5; i++) {
      for (;;) {
        try {
          const res = await rt.startRun("c", `${cl.name}${i}`, { ifHead: cl.head });
          cl.messages.push(...res.appended);
          cl.head = res.head;
          break;
        } catch (e) {
          assert.equal(e.code, "history_diverged");
          cl.messages.push(...e.missing);
          cl.head = e.head;
        }
      }
    }
  }));
  const end = rt.getSession("c");
  assert.equal(end.messageCount, 4 + 3 * 5 * 2);
  for (const cl of clients) {
    assert.deepEqual(cl.messages, end.messages.slice(0, cl.messages.length), cl.name);
    assert.equal(rt.checkHistory(cl.messages).head, cl.head, cl.name);
  }
  const inputs = end.messages.filter((m) => m.role === "user").map((m) => m.content);
  for (const cl of clients) {
    assert.deepEqual(inputs.filter((c) => c.startsWith(cl.name)), [0, 1, 2, 3, 4].map((i) => cl.name + i), cl.name);
  }
  rt.close();
});
