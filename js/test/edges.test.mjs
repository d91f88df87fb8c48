// The edge table (testdata/edges/): each policy and limits case gives the
// same error code in the glue, over the wire (run() and the ADR entry
// point), as through the module's syscall/js API called raw, and as at
// the Go edges (httpapi, wasihost, wazero_test read the same files).
// The glue keeps a copy of the policy's type checks (js/request.js,
// checkPolicy: a frame carries only integers and strings); this holds it
// to the module's answers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { loadRuntime } from "../glue.js";
import { compiledModule, wasmExecURL, root } from "./env.mjs";

async function table(kind) {
  const cases = JSON.parse(await readFile(new URL(`testdata/edges/${kind}.json`, root), "utf8"));
  assert.ok(cases.length > 0, `${kind}.json holds no case`);
  return cases;
}

let seq = 0;

// rawRuntime starts a Go instance of the module and returns its
// syscall/js API object (globalThis.agentrt under another name).
async function rawAPI(module) {
  const name = `agentrt_edges_${++seq}`;
  if (typeof globalThis.Go !== "function") await import(wasmExecURL.href);
  const go = new globalThis.Go();
  go.env = { AGENTRT_GLOBAL: name };
  const instance = await WebAssembly.instantiate(module, go.importObject);
  go.run(instance);
  for (let i = 0; i < 100 && !globalThis[name]; i++) await new Promise((r) => setTimeout(r, 0));
  return globalThis[name];
}

// codeOf settles p and returns the error code it rejects with, or null
// when it fulfils with a completed run.
async function codeOf(p) {
  try {
    const res = await p;
    assert.equal(res.status, "completed");
    return null;
  } catch (e) {
    if (!e || typeof e.code !== "string") throw e;
    return e.code;
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
      assert.equal(await codeOf(glue.run({ sessionId: "edges", input: "hi", policy: c.policy })), want, at("glue run()"));
      assert.equal(await codeOf(glue.startRunWithPolicy("edges", "hi", c.policy)), want, at("glue startRunWithPolicy"));
      assert.equal(await codeOf(raw.startRunWithPolicy("edges", "hi", c.policy)), want, at("syscall/js"));
    }
  } finally {
    glue.close();
    raw.close();
  }
});

test("every limits case gives the table's code in the glue and through the syscall/js API", async () => {
  const module = await compiledModule();
  const api = await rawAPI(module);
  for (const c of await table("limits")) {
    const want = c.code ?? null;
    let got = null;
    try {
      const rt = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, limits: c.limits });
      assert.equal((await rt.run({ sessionId: "s", input: "hi" })).status, "completed");
      rt.close();
    } catch (e) {
      if (!e || typeof e.code !== "string") throw e;
      got = e.code;
    }
    assert.equal(got, want, `${c.name} (glue)`);
    const rt = api.createRuntime({ limits: c.limits });
    if (rt instanceof Error) {
      assert.equal(rt.code, want, `${c.name} (syscall/js)`);
    } else {
      assert.equal(want, null, `${c.name} (syscall/js): a runtime, want ${want}`);
      assert.equal((await rt.startRun("s", "hi")).status, "completed");
      rt.close();
    }
  }
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
  const module = await compiledModule();
  const api = await rawAPI(module);
  // JSON has no functions: each tool that is an object gets a call.
  const withCalls = (config) => {
    const c = { ...config };
    if (Array.isArray(c.tools)) c.tools = c.tools.map((t) => (t !== null && typeof t === "object" ? { ...t, call: () => "ok" } : t));
    return c;
  };
  for (const c of await table("config")) {
    const want = c.code ?? null;
    let got = null;
    try {
      const rt = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, ...withCalls(c.config) });
      assert.equal((await rt.run({ sessionId: "s", input: "hi" })).status, "completed");
      rt.close();
    } catch (e) {
      if (!e || typeof e.code !== "string") throw e;
      got = e.code;
    }
    assert.equal(got, want, `${c.name} (glue)`);
    const rt = api.createRuntime(withCalls(c.config));
    if (rt instanceof Error) {
      assert.equal(rt.code, want, `${c.name} (syscall/js)`);
    } else {
      assert.equal(want, null, `${c.name} (syscall/js): a runtime, want ${want}`);
      rt.close();
    }
  }
});
