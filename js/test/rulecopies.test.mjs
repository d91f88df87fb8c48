// The copies of core's rules the glue keeps for speed, before a copy to
// the module (docs/adr/0017-one-module-api.md, step 8), held to the
// module's answers: each case runs in the glue and through the module's
// syscall/js API, whose answer is core's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadRuntime } from "../glue.js";
import { compiledModule, wasmExecURL } from "./env.mjs";
import { rawAPI } from "./helpers.mjs";

const TOOLS = ["a", "b", "c", "é"].map((name) => ({
  name, description: `tool ${name}`, parameters: { type: "object" }, call: () => "ok",
}));

// js/tools.js filters the specs a model is told of by policy.allowedTools
// itself: the module's model action carries no list of tools, so that a
// turn copies none. Core filters them the same way (Policy.toolAllowed):
// every tool whose name the list holds, in the configuration's order.
test("a model is told of the same tools in the glue as in the module, for every allowedTools", async () => {
  const module = await compiledModule();
  const seen = { glue: [], raw: [] };
  const model = (where) => (req) => {
    seen[where].push(req.tools.map((t) => t.name));
    return { content: "ok" };
  };
  const glue = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, model: model("glue"), tools: TOOLS });
  const raw = (await rawAPI(module)).createRuntime({ model: model("raw"), tools: TOOLS });
  const lists = [undefined, null, [], ["a"], ["c", "a"], ["a", "a"], ["zz"], ["é", "b", "zz"], ["A"], [""]];
  try {
    for (const [i, allowedTools] of lists.entries()) {
      const policy = allowedTools === undefined ? undefined : { allowedTools };
      assert.equal((await glue.run({ sessionId: `s${i}`, input: "hi", policy })).status, "completed");
      assert.equal((await raw.startRunWithPolicy(`s${i}`, "hi", policy ?? null)).status, "completed");
      assert.deepEqual(seen.glue[i], seen.raw[i], `allowedTools ${JSON.stringify(allowedTools)}`);
    }
  } finally {
    glue.close();
    raw.close();
  }
});

// js/args.js refuses a host's run id with a generated id's prefix before
// a turn begins (the glue's own "glue:" and core's "agentrt:",
// core.GeneratedRunIDPrefix): the module refuses core's the same way.
test("a run id with core's generated prefix is refused in the glue as in the module", async () => {
  const module = await compiledModule();
  const glue = await loadRuntime({ wasm: module, wasmExec: wasmExecURL });
  const raw = (await rawAPI(module)).createRuntime({});
  const codeOf = async (f) => {
    try {
      await f();
      return null;
    } catch (e) {
      return e.code;
    }
  };
  try {
    for (const runId of ["agentrt:1", "agentrt:", "agentrt", "Agentrt:1", "x-agentrt:1"]) {
      const inGlue = await codeOf(() => glue.run({ sessionId: "s", input: "hi", runId }));
      const inModule = await codeOf(() => raw.startRun("s", "hi", { runId }));
      assert.equal(inGlue, inModule, runId);
    }
  } finally {
    glue.close();
    raw.close();
  }
});

// The glue refuses an input, a model's reply and a tool's output over
// maxMessageBytes itself (js/request.js: utf8Over, replyOver, toolOver),
// before it is copied into the module's memory; the module counts the
// same bytes (UTF-8, a lone surrogate as U+FFFD) and refuses the same
// messages with the same code, and an input with the same text.
test("message sizes are counted and refused in the glue as in the module", async () => {
  const module = await compiledModule();
  const limits = { maxMessageBytes: 8 };
  const texts = ["12345678", "123456789", "éééé", "éééé1", "😀😀", "😀😀1", "\uD800\uD800", "\uD800\uD800\uD800", "\uDE00😀1", "€€€"];
  const refusal = async (f) => {
    try {
      const res = await f();
      return res.status === "completed" ? null : { code: res.error?.code ?? res.status };
    } catch (e) {
      return { code: e.code, message: e.message };
    }
  };
  const api = await rawAPI(module);
  for (const text of texts) {
    const at = JSON.stringify(text);
    // The input.
    {
      const model = () => ({ content: "ok" });
      const glue = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, limits, model });
      const raw = api.createRuntime({ limits, model });
      const inGlue = await refusal(() => glue.run({ sessionId: "s", input: text }));
      const inModule = await refusal(() => raw.startRun("s", text));
      assert.deepEqual(inGlue, inModule, `input ${at}`);
      glue.close();
      raw.close();
    }
    // A model's reply and a tool's output (the tool message counts the
    // call's id "c" too).
    for (const kind of ["reply", "tool"]) {
      let n = 0;
      const model = () => (kind === "reply" ? { content: text } :
        n++ === 0 ? { content: "", toolCalls: [{ id: "c", name: "t", arguments: "{}" }] } : { content: "ok" });
      const tools = [{ name: "t", call: () => text }];
      const glue = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, limits, model, tools });
      const inGlue = await refusal(() => glue.run({ sessionId: "s", input: "hi" }));
      glue.close();
      n = 0;
      const raw = api.createRuntime({ limits, model, tools });
      const inModule = await refusal(() => raw.startRun("s", "hi"));
      raw.close();
      assert.equal(inGlue?.code, inModule?.code, `${kind} ${at}`);
    }
  }
});
