// A run's precondition on the conversation's head (ifHead,
// docs/adr/0025-conversation-heads.md) is carried by core, the HTTP API
// and the durable worker. The module's edges do not carry it yet, so the
// glue (both modes, every entry point) and the syscall/js API refuse it
// with invalid_argument rather than run without it: a run that drops its
// precondition would write over another client's turn. Nothing changes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runtimes, runtimeModes, modeConfig, rawAPI } from "./helpers.mjs";
import { compiledModule } from "./env.mjs";

const { load } = runtimes();

async function refusal(p) {
  try {
    await p;
  } catch (e) {
    return e;
  }
  return null;
}

for (const mode of runtimeModes) {
  test(`ifHead is refused, not ignored, by every entry point of the glue (${mode})`, async () => {
    const rt = await load(modeConfig(mode, { model: "echo" }));
    const calls = {
      "run()": () => rt.run({ sessionId: "h", input: "hi", ifHead: "h1-AAAAAAAAAAAAAAAAAAAAAA" }),
      "stream()": async () => { for await (const _ of rt.stream({ sessionId: "h", input: "hi", ifHead: "h1-x" })) { /* drained */ } },
      startRun: () => rt.startRun("h", "hi", { ifHead: "h1-x" }),
      startRunWithHistory: () => rt.startRunWithHistory("h", "hi", [], { ifHead: "h1-x" }),
      startRunWithPolicy: () => rt.startRunWithPolicy("h", "hi", {}, { ifHead: "h1-x" }),
      startRunWithPolicyAndHistory: () => rt.startRunWithPolicyAndHistory("h", "hi", {}, [], { ifHead: "h1-x" }),
    };
    for (const [name, call] of Object.entries(calls)) {
      const e = await refusal(call());
      assert.ok(e, `${name} ran with ifHead`);
      assert.equal(e.code, "invalid_argument", name);
      assert.match(e.message, /ifHead is not carried to the module yet/, name);
    }
    assert.equal(await rt.session("h"), null, "a refused run made no session");
    const ok = await rt.run({ sessionId: "h", input: "hi", ifHead: undefined });
    assert.equal(ok.status, "completed", "ifHead: undefined is no precondition");
  });
}

test("ifHead is refused by the syscall/js API's entry points", async () => {
  const api = await rawAPI(await compiledModule());
  const raw = api.createRuntime({});
  try {
    for (const [name, call] of Object.entries({
      startRun: () => raw.startRun("h", "hi", { ifHead: "h1-x" }),
      startRunWithHistory: () => raw.startRunWithHistory("h", "hi", [], { ifHead: "h1-x" }),
    })) {
      const e = await refusal(call());
      assert.ok(e, `${name} ran with ifHead`);
      assert.equal(e.code, "invalid_argument", name);
      assert.match(e.message, /ifHead is not carried to the module yet/, name);
    }
    const r = await raw.startRun("h", "hi", { ifHead: null });
    assert.equal(r.status, "completed");
  } finally {
    raw.close();
  }
});
