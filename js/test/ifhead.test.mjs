// A run's precondition on the conversation's head (ifHead,
// docs/adr/0025-conversation-heads.md) at the glue, in every mode and
// entry point: a stale head is refused history_diverged with the current
// head and the messages the caller lacks, and nothing changes; the
// current head runs; the syscall/js API refuses it the same way.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { runtimes, runtimeModes, modeConfig, rawAPI } from "./helpers.mjs";
import { compiledModule } from "./env.mjs";

const { load } = runtimes();
const corpus = JSON.parse(readFileSync(new URL("../../testdata/edges/heads.json", import.meta.url), "utf8"));

async function refusal(p) {
  try {
    await p;
  } catch (e) {
    return e;
  }
  return null;
}

for (const mode of runtimeModes) {
  test(`ifHead runs on the current head and refuses a stale one at every entry point (${mode})`, async () => {
    const rt = await load(modeConfig(mode, { model: "echo" }));
    await rt.run({ sessionId: "h", input: "one" });
    const h1 = (await rt.session("h")).head;
    assert.match(h1, /^h1-[A-Za-z0-9_-]{22}$/);
    const r2 = await rt.run({ sessionId: "h", input: "two", ifHead: h1 });
    assert.equal(r2.status, "completed");
    const before = await rt.session("h");
    assert.notEqual(before.head, h1);
    assert.equal(r2.head, before.head, "a run with ifHead has the session's head after it");
    const calls = {
      "run()": () => rt.run({ sessionId: "h", input: "x", ifHead: h1 }),
      "stream()": async () => { for await (const _ of rt.stream({ sessionId: "h", input: "x", ifHead: h1 })) { /* drained */ } },
      startRun: () => rt.startRun("h", "x", { ifHead: h1 }),
      startRunWithHistory: () => rt.startRunWithHistory("h", "x", before.messages.slice(0, 2), { ifHead: h1 }),
      startRunWithPolicy: () => rt.startRunWithPolicy("h", "x", {}, { ifHead: h1 }),
      startRunWithPolicyAndHistory: () => rt.startRunWithPolicyAndHistory("h", "x", {}, before.messages.slice(0, 2), { ifHead: h1 }),
    };
    for (const [name, call] of Object.entries(calls)) {
      const e = await refusal(call());
      assert.ok(e, `${name} ran on a stale head`);
      assert.equal(e.code, "history_diverged", `${name}: ${e.message}`);
      // A warm session is what a run with history runs on too (seedMode
      // if-empty): the same head and missing.
      assert.equal(e.head, before.head, name);
      assert.deepEqual(e.missing, before.messages.slice(2), name);
      assert.deepEqual(await rt.session("h"), before, `${name} changed the session`);
    }
    // A head the conversation never had: refused without missing.
    const e = await refusal(rt.run({ sessionId: "h", input: "x", ifHead: "h1-AAAAAAAAAAAAAAAAAAAAAA" }));
    assert.equal(e.code, "history_diverged");
    assert.equal(e.head, before.head);
    assert.equal(e.missing, undefined);
    // Not a head, or not a string: invalid_argument.
    assert.equal((await refusal(rt.run({ sessionId: "h", input: "x", ifHead: "nope" }))).code, "invalid_argument");
    assert.equal((await refusal(rt.run({ sessionId: "h", input: "x", ifHead: 42 }))).code, "invalid_argument");
    assert.deepEqual(await rt.session("h"), before);
    // The caller merges missing and retries with head: it runs.
    const ok = await rt.run({ sessionId: "h", input: "three", ifHead: e.head });
    assert.equal(ok.status, "completed");
    const after = await rt.session("h");
    assert.equal(after.messageCount, 6);
    assert.equal(ok.head, after.head);
    // Every entry point's result has it.
    for (const [name, call] of Object.entries({
      startRun: (h) => rt.startRun("h", "x", { ifHead: h }),
      startRunWithPolicy: (h) => rt.startRunWithPolicy("h", "x", {}, { ifHead: h }),
      "stream()": async (h) => {
        let res;
        for await (const ev of rt.stream({ sessionId: "h", input: "x", ifHead: h })) if (ev.type === "run.completed") res = ev.result;
        return res;
      },
    })) {
      const res = await call((await rt.session("h")).head);
      assert.equal(res.head, (await rt.session("h")).head, name);
    }
    const none = await rt.run({ sessionId: "h", input: "four", ifHead: undefined });
    assert.equal(none.status, "completed", "ifHead: undefined is no precondition");
  });

  test(`the head corpus at the glue (${mode})`, async () => {
    const rt = await load(modeConfig(mode, { model: "echo" }));
    for (const [name, h] of Object.entries(corpus.shapes)) assert.equal((await rt.checkHistory(h)).head, corpus.head, name);
    const module = corpus.shapes.module;
    for (const p of corpus.prefixes) {
      const head = p.head || (await rt.checkHistory(module.slice(0, p.messages))).head;
      const e = await refusal(rt.run({ sessionId: "s", input: "next", history: module, ifHead: head }));
      assert.ok(e, `prefix ${p.messages} ran`);
      assert.equal(e.code, "history_diverged", `prefix ${p.messages}`);
      assert.equal(e.head, corpus.head);
      assert.equal(e.missing.length, p.missing, `prefix ${p.messages}`);
      assert.deepEqual(e.missing.map((m) => m.content), module.slice(p.messages).map((m) => m.content));
      assert.equal(await rt.session("s"), null, `prefix ${p.messages} made a session`);
    }
    for (const ed of corpus.edits) {
      const e = await refusal(rt.run({ sessionId: "s", input: "next", history: ed.history, ifHead: corpus.head }));
      assert.equal(e && e.code, "history_diverged", ed.name);
      assert.equal(e.missing, undefined, ed.name);
    }
    assert.equal((await rt.checkHistory(corpus.awaiting.history)).head, corpus.awaiting.head);
    const res = await rt.run({ sessionId: "s", input: "next", history: module, ifHead: corpus.head });
    assert.equal(res.status, "completed");
  });
}

test("the syscall/js API refuses a stale ifHead as the glue does: the same head and missing", async () => {
  const module = await compiledModule();
  const api = await rawAPI(module);
  const raw = api.createRuntime({});
  const rt = await load({ wasm: module, model: "echo" });
  try {
    for (const [name, run] of Object.entries({
      glue: (input, ifHead) => rt.run({ sessionId: "h", input, ifHead }),
      "syscall/js": (input, ifHead) => raw.startRun("h", input, ifHead === undefined ? undefined : { ifHead }),
    })) {
      await run("one");
      const session = () => (name === "glue" ? rt.session("h") : raw.getSession("h"));
      const h1 = (await session()).head;
      const two = await run("two", h1);
      assert.equal(two.head, (await session()).head, name);
      const e = await refusal(run("stale", h1));
      assert.equal(e.code, "history_diverged", name);
      assert.equal(e.head, two.head, name);
      assert.deepEqual(e.missing, two.appended, name);
    }
    assert.deepEqual(raw.getSession("h"), await rt.session("h"), "one conversation, one head on both edges");
  } finally {
    raw.close();
  }
});
