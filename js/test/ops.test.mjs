// The operations' edge table (testdata/edges/ops.json,
// docs/adr/0024-one-definition-per-operation.md): the glue's Runtime, in
// both modes, and the module's syscall/js Runtime object have every
// operation the table gives them and no method it does not name, so an
// operation left out of one of them, or added to one only, fails here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { root } from "./env.mjs";
import { runtimes, runtimeModes, modeConfig } from "./helpers.mjs";

const { load } = runtimes();
const ops = JSON.parse(await readFile(new URL("testdata/edges/ops.json", root), "utf8"));

// surface returns the names the table gives surface, sorted.
function surface(name) {
  const out = [...ops.turns[name]];
  for (const op of ops.operations) if (op[name]) out.push(op[name]);
  return out.sort();
}

// methodsOf returns the names of the functions among the own properties
// of o and of its class's prototype (not the constructor), sorted.
function methodsOf(o) {
  const names = new Set();
  for (const p of [o, Object.getPrototypeOf(o)]) {
    if (p === Object.prototype || p === null) continue;
    for (const n of Object.getOwnPropertyNames(p)) {
      const d = Object.getOwnPropertyDescriptor(p, n);
      if (n !== "constructor" && typeof d.value === "function") names.add(n);
    }
  }
  return [...names].sort();
}

test("the glue's Runtime has the table's operations and turns, and nothing else", async () => {
  const rt = await load();
  assert.deepEqual(methodsOf(rt), surface("glue"));
});

for (const mode of runtimeModes) {
  test(`every glue operation of the table answers (${mode})`, async () => {
    const rt = await load(modeConfig(mode));
    for (const op of ops.operations) {
      if (!op.glue || op.glue === "close") continue;
      assert.equal(typeof rt[op.glue], "function", op.glue);
    }
    await rt.run({ sessionId: "s", input: "x" });
    assert.deepEqual(await rt.listSessions(), ["s"]);
    assert.equal((await rt.session("s")).messageCount, 2);
    assert.equal((await rt.stats()).sessions, 1);
    assert.equal((await rt.checkHistory([])).ok, true);
    assert.equal(await rt.cancelRun("none"), false);
    assert.equal(await rt.deleteSession("s"), true);
  });
}

test("the module's syscall/js Runtime object has the table's operations and turns, and nothing else", async () => {
  const rt = await load();
  const raw = globalThis[rt.globalName].createRuntime({});
  assert.ok(!(raw instanceof Error), String(raw));
  try {
    assert.deepEqual(methodsOf(raw), surface("module"));
  } finally {
    raw.close();
  }
});
