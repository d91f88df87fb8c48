// The WASI module (agentrt-wasi.wasm) under node:wasi, with no
// wasm_exec.js: the ADR scenario, a JavaScript model and tool over the
// wire, and bad input through the exports. Runs under `node --test`,
// `bun test` and `deno test -A`, each with its own node:wasi.
import { describe, test, before } from "node:test";
import assert from "node:assert/strict";
import { canonical, loadCorpus } from "./corpus.mjs";
import { Instance, Refused, check, compiledWasi, writeConfig } from "./wasihost.mjs";
import { Writer, readRefused, writeBegin, writeModelReply } from "../wire.js";

const h = [
  { role: "system", content: "an old system prompt, skipped" },
  { role: "user", content: "What is 2+2?" },
  { role: "assistant", content: "4" },
  { role: "user", content: "And 3+3?" },
  { role: "assistant", content: "6" },
];

// echoModel answers as the module's echo model does, in JavaScript.
async function echoModel({ messages }) {
  const last = messages[messages.length - 1];
  return { content: `echo: ${last.content} (model received ${messages.length} messages)` };
}

const plain = (ms) => ms.map((m) => m.content);

describe("agentrt-wasi.wasm under node:wasi", () => {
  before(async () => { await compiledWasi(); });

  for (const [name, config] of [["module echo", { echo: true }], ["JavaScript model", { model: echoModel }]]) {
    // Ensure a cold session is seeded once, a warm one is not, and a new
    // instance is cold again.
    test(`ADR scenario: cold, noop, cold after a new instance (${name})`, async () => {
      const rt = (await Instance.start()).runtime({ systemPrompt: "You are terse.", ...config });
      const events = [];
      let r = await rt.run("conv-1", "And 4+4?", { history: h, events });
      assert.deepEqual(r.seed, { mode: "cold", seeded: 4, skippedSystem: 1 });
      assert.equal(r.reply.content, "echo: And 4+4? (model received 5 messages)");
      assert.equal(r.messageCount, 6);
      assert.deepEqual(events.filter((e) => e.type === "session.seeded").map((e) => e.seed.mode), ["cold"]);

      const h2 = [...h, ...r.appended];
      r = await rt.run("conv-1", "And 5+5?", { history: h2 });
      assert.equal(r.seed.mode, "noop");
      assert.equal(r.seed.seeded, 0);
      assert.equal(r.reply.content, "echo: And 5+5? (model received 7 messages)");
      assert.deepEqual(plain(rt.session("conv-1").messages), ["What is 2+2?", "4", "And 3+3?", "6", "And 4+4?",
        "echo: And 4+4? (model received 5 messages)", "And 5+5?", "echo: And 5+5? (model received 7 messages)"]);

      const h3 = [...h2, ...r.appended];
      const rt2 = (await Instance.start()).runtime({ systemPrompt: "You are terse.", ...config });
      r = await rt2.run("conv-1", "And 6+6?", { history: h3 });
      assert.equal(r.seed.mode, "cold");
      assert.equal(r.seed.seeded, 8);
      assert.equal(r.reply.content, "echo: And 6+6? (model received 9 messages)");
    });
  }

  // Ensure a JavaScript model's tool call reaches a JavaScript tool, and
  // the model is handed the whole session on every call.
  test("model and tool round trip", async () => {
    const seen = [];
    const model = async ({ messages }) => {
      seen.push(plain(messages));
      const last = messages[messages.length - 1];
      if (last.role === "user") return { toolCalls: [{ id: "c1", name: "clock", arguments: "{}" }] };
      return { content: `it is ${last.content}` };
    };
    const rt = (await Instance.start()).runtime({ model, tools: [{ name: "clock", call: async () => "noon" }] });
    const r = await rt.run("s", "time?", { history: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] });
    assert.equal(r.reply.content, "it is noon");
    assert.deepEqual(seen, [["hi", "hello", "time?"], ["hi", "hello", "time?", "", "noon"]]);
    const r2 = await rt.run("s", "again?");
    assert.equal(r2.reply.content, "it is noon");
    assert.equal(seen[2].length, 7);
    assert.equal(r2.messageCount, 10);
  });

  // Ensure the glue's turn driver keeps its state private (no own
  // fields a caller could overwrite, getters without setters) and answers
  // what quick turns ask of it: the session's mirror, the turns in flight
  // and the module's limits.
  test("the turn driver's state is private; quick turns ask it through methods", async () => {
    const rt = (await Instance.start()).runtime({ model: echoModel });
    const d = rt.driver;
    assert.deepEqual(Object.keys(d), []);
    assert.equal(d.mirrors.get("s"), undefined);
    const r = await rt.run("s", "one", { history: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] });
    assert.equal(r.messageCount, 4);
    assert.deepEqual(plain(d.mirrors.get("s").msgs), ["hi", "hello", "one", r.reply.content]);
    assert.equal(d.inFlight("s"), 0);
    assert.equal(d.quick.quickable("s", "two"), true);
    assert.equal(d.quick.quickable("s", "x".repeat(d.limits.maxMessageBytes)), false);
    const r2 = await rt.run("s", "two");
    assert.equal(r2.reply.content, "echo: two (model received 5 messages)");
    assert.deepEqual(plain(d.mirrors.get("s").msgs), plain(rt.session("s").messages));
    for (const name of ["limits", "model", "system", "quick"]) {
      assert.throws(() => { d[name] = null; }, TypeError, name);
    }
    assert.equal(d.model, echoModel);
  });

  // Ensure bad input gets typed errors and leaves the instance serving.
  test("bad input: typed errors, the instance stays alive", async () => {
    const inst = await Instance.start();
    const rt = inst.runtime({ echo: true });
    await assert.rejects(rt.run("s", "x", { history: [{ role: "user", content: "a" }, { role: "robot", content: "b" }] }),
      (e) => e instanceof Refused && e.code === "invalid_history" && e.index === 1);
    await assert.rejects(rt.run("s", "x", { policy: { maxSteps: -1 } }), (e) => e.code === "invalid_argument");
    const raw = (name, num, bytes) => readRefused(inst.exchange(name, num, bytes));
    assert.equal(raw("agentrt_begin", rt.num, new TextEncoder().encode("not a frame")).code, "invalid_argument");
    assert.equal(raw("agentrt_begin", 99, writeBegin(new Writer(), { sessionId: "s", input: "x" })).code, "invalid_argument");
    assert.equal(raw("agentrt_feed", rt.num, writeModelReply(new Writer(), 4242, { content: "", toolCalls: [] })).code, "invalid_argument");
    const full = writeBegin(new Writer(), { sessionId: "s", input: "x" });
    assert.equal(raw("agentrt_begin", rt.num, full.subarray(0, full.length - 2)).code, "invalid_argument");
    const bad = new Uint8Array([0x41, 0x52, 0x43, 1, 0, 9]);
    inst.write(bad);
    const n = inst.x.agentrt_create(bad.length);
    assert.ok(n < 0);
    assert.equal(readRefused(inst.output(-n)).code, "invalid_argument");
    assert.throws(() => inst.runtime({ tools: [{ name: "t" }, { name: "t" }] }), (e) => e.code === "invalid_argument");
    assert.deepEqual(rt.sessions(), []);
    const r = await rt.run("s", "still here?");
    assert.equal(r.reply.content, "echo: still here? (model received 1 messages)");
    assert.equal(rt.stats().sessions, 1);
    assert.ok(check(inst.exchange("agentrt_session", rt.num, new TextEncoder().encode("s"))));
    assert.ok(writeConfig(new Writer()).length > 4);
  });
});

// The host-message corpus (testdata/contract/), as js/test/contract.test.mjs
// runs it on the glue: each case seeds a fresh session with its history
// and the input "next"; the messages before the new turn must be the
// case's session, or the run must be refused with the case's code, index
// and message, leaving no session behind.
const corpus = await loadCorpus();

for (const [name, config] of [["module echo", { echo: true }], ["JavaScript model", { model: echoModel }]]) {
  describe(`contract: agentrt-wasi.wasm under node:wasi (${name})`, () => {
    let rt0;
    let inst;
    before(async () => {
      inst = await Instance.start();
      rt0 = inst.runtime(config);
    });
    corpus.forEach((c, i) => {
      test(c.name, async () => {
        // A case that sets limits gets a runtime of its own.
        const rt = c.limits === undefined ? rt0 : inst.runtime({ ...config, limits: c.limits });
        const id = `case-${i}`;
        let result;
        let err;
        try {
          result = await rt.run(id, "next", { history: structuredClone(c.history) });
        } catch (e) {
          err = e;
        }
        if (c.error) {
          assert.ok(err instanceof Error, `accepted; want ${JSON.stringify(c.error)}`);
          assert.deepEqual({ code: err.code, index: err.index, message: err.message }, c.error);
          assert.equal(rt.session(id), null, "a refused history left a session behind");
          return;
        }
        if (err) assert.fail(`refused with ${err.code} at ${err.index}: ${err.message}`);
        const held = rt.session(id).messages.slice(0, -2).map(canonical);
        assert.deepEqual(held, c.session.map(canonical));
        assert.equal(result.seed.seeded, held.length);
        assert.equal(result.seed.skippedSystem, c.skippedSystem ?? 0);
      });
    });
  });
}
