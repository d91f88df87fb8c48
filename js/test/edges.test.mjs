// The edge table (testdata/edges/): each policy and limits case gives the
// same error code in the glue, over the wire (run() and the ADR entry
// point), as through the module's syscall/js API called raw, and as at
// the Go edges (httpapi, wasihost, wazero_test read the same files).
// The glue checks nothing of a policy: it sends its JSON text, which the
// module reads with the reader its syscall/js API calls (hostmsg.Policy),
// so each refusal has the same code and the same text on every path.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { loadRuntime } from "../glue.js";
import { compiledModule, wasmExecURL, root } from "./env.mjs";
import { rawAPI } from "./helpers.mjs";

async function table(kind) {
  const cases = JSON.parse(await readFile(new URL(`testdata/edges/${kind}.json`, root), "utf8"));
  assert.ok(cases.length > 0, `${kind}.json holds no case`);
  return cases;
}

// codeOf settles p and returns the error code it rejects with, or null
// when it fulfils with a completed run.
async function codeOf(p) {
  return (await refusalOf(p))?.code ?? null;
}

// refusalOf settles p and returns { code, message } of its refusal, or
// undefined when it fulfils with a completed run.
async function refusalOf(p) {
  try {
    const res = await p;
    assert.equal(res.status, "completed");
    return undefined;
  } catch (e) {
    if (!e || typeof e.code !== "string") throw e;
    return { code: e.code, message: e.message };
  }
}

test("every policy case gives the table's code in the glue and through the syscall/js API", async () => {
  const module = await compiledModule();
  const glue = await loadRuntime({ wasm: module, wasmExec: wasmExecURL });
  const api = await rawAPI(module);
  const raw = api.createRuntime({});
  try {
    for (const c of await table("policy")) {
      const want = c.code ?? null;
      const at = (edge) => `${c.name} (${edge})`;
      const viaRun = await refusalOf(glue.run({ sessionId: "edges", input: "hi", policy: c.policy }));
      const viaEntry = await refusalOf(glue.startRunWithPolicy("edges", "hi", c.policy));
      const viaAPI = await refusalOf(raw.startRunWithPolicy("edges", "hi", c.policy));
      assert.equal(viaRun?.code ?? null, want, at("glue run()"));
      assert.equal(viaEntry?.code ?? null, want, at("glue startRunWithPolicy"));
      assert.equal(viaAPI?.code ?? null, want, at("syscall/js"));
      // One text: the module's reader answers on every path, for every
      // policy that is an object (the glue's argument checks, js/args.js,
      // refuse another value as a TypeError naming the argument).
      if (c.policy !== null && typeof c.policy === "object" && !Array.isArray(c.policy)) {
        assert.equal(viaRun?.message, viaAPI?.message, at("glue run()'s text"));
        assert.equal(viaEntry?.message, viaAPI?.message, at("glue startRunWithPolicy's text"));
      }
    }
  } finally {
    glue.close();
    raw.close();
  }
});

// Values JSON has no form for, which the table cannot hold: the glue's
// JSON text stands for each so that the module's reader answers as the
// syscall/js API answers the value itself (same code, same text). Each
// field is read once.
test("policies JSON cannot carry give the syscall/js API's refusal in the glue", async () => {
  const module = await compiledModule();
  const glue = await loadRuntime({ wasm: module, wasmExec: wasmExecURL });
  const api = await rawAPI(module);
  const raw = api.createRuntime({});
  let reads = 0;
  const cases = {
    "NaN": () => ({ maxSteps: NaN }),
    "Infinity": () => ({ timeoutMs: Infinity }),
    "-Infinity": () => ({ maxContextBytes: -Infinity }),
    "a function": () => ({ seedMode: () => "reconcile" }),
    "a symbol": () => ({ repair: Symbol("x") }),
    "a bigint": () => ({ maxSteps: 3n }),
    "undefined under an unknown key": () => ({ timeoutMS: undefined }),
    "undefined in allowedTools": () => ({ allowedTools: ["a", undefined] }),
    "a function as the policy": () => () => 1,
    "an Array as the policy": () => [1],
    "a throwing getter": () => ({ get maxSteps() { throw new Error("no"); } }),
    "undefined fields": () => ({ maxSteps: undefined, repair: undefined }),
    "a getter read once": () => ({ get maxSteps() { return ++reads === 1 ? 2 : -1; } }),
  };
  try {
    for (const [name, make] of Object.entries(cases)) {
      reads = 0;
      const viaRun = await refusalOf(glue.run({ sessionId: "edges", input: "hi", policy: make() }));
      assert.ok(reads <= 1, `${name}: a getter read ${reads} times`);
      reads = 0;
      const viaEntry = await refusalOf(glue.startRunWithPolicy("edges", "hi", make()));
      reads = 0;
      const viaAPI = await refusalOf(raw.startRunWithPolicy("edges", "hi", make()));
      assert.equal(viaRun?.code, viaAPI?.code, `${name} (glue run())`);
      assert.equal(viaEntry?.code, viaAPI?.code, `${name} (glue startRunWithPolicy)`);
      // Go's syscall/js cannot read a bigint's type (it panics: "bad type
      // flag") and names a getter's throw in its own words.
      if (name !== "a throwing getter" && name !== "a bigint" && typeof make() === "object" && !Array.isArray(make())) assert.equal(viaRun?.message, viaAPI?.message, `${name}: text`);
    }
  } finally {
    glue.close();
    raw.close();
  }
});

// runtimeCases checks every case of kind ("limits", "config") in the glue
// and through the syscall/js API: a runtime of configOf(c) is refused
// with the case's code, or starts; a glue runtime that starts completes
// a turn, and so does the API's when rawTurn is set.
async function runtimeCases(kind, configOf, rawTurn) {
  const module = await compiledModule();
  const api = await rawAPI(module);
  for (const c of await table(kind)) {
    const want = c.code ?? null;
    let got = null;
    try {
      const rt = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, ...configOf(c) });
      assert.equal((await rt.run({ sessionId: "s", input: "hi" })).status, "completed");
      rt.close();
    } catch (e) {
      if (!e || typeof e.code !== "string") throw e;
      got = e.code;
    }
    assert.equal(got, want, `${c.name} (glue)`);
    const rt = api.createRuntime(configOf(c));
    if (rt instanceof Error) {
      assert.equal(rt.code, want, `${c.name} (syscall/js)`);
    } else {
      assert.equal(want, null, `${c.name} (syscall/js): a runtime, want ${want}`);
      if (rawTurn) assert.equal((await rt.startRun("s", "hi")).status, "completed");
      rt.close();
    }
  }
}

test("every limits case gives the table's code in the glue and through the syscall/js API", async () => {
  await runtimeCases("limits", (c) => ({ limits: c.limits }), true);
});

test("a timeout at its bound waits, in the glue and through the syscall/js API", async () => {
  const module = await compiledModule();
  // The model answers on a later task. core's bound on timeoutMs is the
  // longest delay setTimeout keeps: one more, and engines would fire the
  // timer after 1 ms and stop the run.
  const model = () => new Promise((r) => setTimeout(() => r({ content: "late" }), 20));
  const glue = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, model });
  const raw = (await rawAPI(module)).createRuntime({ model });
  const policy = { timeoutMs: 2 ** 31 - 1 };
  try {
    assert.equal((await glue.run({ sessionId: "t", input: "hi", policy })).reply.content, "late");
    assert.equal((await raw.startRunWithPolicy("t", "hi", policy)).reply.content, "late");
  } finally {
    glue.close();
    raw.close();
  }
});

test("every config case gives the table's code in the glue and through the syscall/js API", async () => {
  // JSON has no functions: each tool that is an object gets a call.
  const withCalls = (config) => {
    const c = { ...config };
    if (Array.isArray(c.tools)) c.tools = c.tools.map((t) => (t !== null && typeof t === "object" ? { ...t, call: () => "ok" } : t));
    return c;
  };
  await runtimeCases("config", (c) => withCalls(c.config), false);
});

// An approvals case's run: the pending history of contract.PendingHistory
// resumed with the case's approvals, or the case's history alone.
const PENDING = [{ role: "user", content: "pay" }, { role: "assistant", content: null, tool_calls: [{ id: "c1", name: "pay", arguments: "{}" }] }];

test("every approvals case gives the table's code, index and message in the glue and through the syscall/js API", async () => {
  const module = await compiledModule();
  const api = await rawAPI(module);
  const pay = () => ({ name: "pay", needsApproval: true, call: () => "paid" });
  const wrong = [];
  for (const c of await table("approvals")) {
    const want = c.code ?? null;
    const at = (edge) => `${c.name} (${edge})`;
    const history = "approvals" in c ? PENDING : c.history;
    const glue = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, tools: [pay()] });
    const raw = api.createRuntime({ tools: [pay()] });
    try {
      const request = { sessionId: "s", history: structuredClone(history) };
      if ("approvals" in c) request.approvals = structuredClone(c.approvals);
      const viaRun = await indexedRefusalOf(glue.run(request));
      const opts = "approvals" in c ? { approvals: structuredClone(c.approvals) } : undefined;
      const viaAPI = await indexedRefusalOf(raw.startRunWithHistory("s", undefined, structuredClone(history), opts));
      for (const [edge, got] of [["glue run()", viaRun], ["syscall/js", viaAPI]]) {
        if ((got?.code ?? null) !== want || (c.index !== undefined && got?.index !== c.index)) {
          wrong.push(`${at(edge)}: ${got?.code ?? null} at ${got?.index} (${got?.message}), want ${want} at ${c.index}`);
        } else if (c.message !== undefined && !got.message.endsWith(c.message)) {
          // The reader's text, Go's and the glue's alike (the name before
          // it is each edge's own).
          wrong.push(`${at(edge)}: message ${JSON.stringify(got.message)}, want one that ends ${JSON.stringify(c.message)}`);
        }
      }
    } finally {
      glue.close();
      raw.close();
    }
  }
  assert.deepEqual(wrong, []);
});

// indexedRefusalOf is refusalOf with the refusal's index (-1 for none).
async function indexedRefusalOf(p) {
  try {
    const res = await p;
    assert.equal(res.status, "completed");
    return undefined;
  } catch (e) {
    if (!e || typeof e.code !== "string") throw e;
    return { code: e.code, message: e.message, index: e.index ?? -1 };
  }
}
