// rt.tag(sessionId, value?): a session's tag set and read on the glue in
// both modes and on the module's syscall/js Runtime object.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runtimes, runtimeModes, modeConfig } from "./helpers.mjs";

const { load } = runtimes();

for (const mode of runtimeModes) {
  test(`the glue sets and reads a session's tag (${mode})`, async () => {
    const rt = await load(modeConfig(mode));
    assert.equal(await rt.tag("s"), null);
    await rt.run({ sessionId: "s", input: "x" });
    assert.equal(await rt.tag("s"), "");
    assert.equal(await rt.tag("s", "blué"), "blué");
    assert.equal(await rt.tag("s", null), "blué");
    await assert.rejects(async () => rt.tag("s", 1), { code: "invalid_argument" });
    await rt.deleteSession("s");
    assert.equal(await rt.tag("s"), null);
  });
}

test("the syscall/js Runtime object sets and reads a session's tag", async () => {
  const rt = await load();
  const raw = globalThis[rt.globalName].createRuntime({});
  try {
    assert.equal(raw.tag("s"), null);
    await raw.startRun("s", "x");
    assert.equal(raw.tag("s"), "");
    assert.equal(raw.tag("s", "blue"), "blue");
    assert.equal(raw.tag("s", undefined), "blue");
    const e = raw.tag("s", 1);
    assert.ok(e instanceof Error && e.code === "invalid_argument", String(e));
    assert.match(e.message, /tag: the arguments must be \(sessionId: string, value\?: string\)/);
  } finally {
    raw.close();
  }
});
