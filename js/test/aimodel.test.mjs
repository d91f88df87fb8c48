// agentrt/ai's languageModel, aiTools and toUIMessages with the real AI
// SDK (ai@7 pinned): @ai-sdk/openai's chat model against a local
// OpenAI-compatible server on 127.0.0.1, MockLanguageModelV4 and V3,
// zod and jsonSchema() tools, UIMessages seeded back; and every part type
// the pinned ai declares, read by the glue and by the module. Runs under
// node --test, bun test and deno test -A (skipped, with the reason, where
// `ai` cannot be loaded).
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFile, readdir } from "node:fs/promises";
import { toModuleHistory } from "../glue.js";
import { runtimes, deferred, noHead } from "./helpers.mjs";
import { root } from "./env.mjs";
import { sdk, answer, scriptedModel, send, user, respond, valid } from "./aienv.mjs";

const { load, release } = runtimes();
const skip = sdk.skip;

// The local OpenAI-compatible server: each request is recorded, and
// answered by the next of `answers` (SSE data payloads, or a function).
const fake = { requests: [], answers: [], url: "", server: null };

function chunk(delta, finish = null) {
  return { id: "x", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] };
}

before(async () => {
  if (skip) return;
  fake.server = createServer((req, res) => {
    let body = "";
    req.on("data", (b) => { body += b; });
    req.on("end", () => {
      fake.requests.push(JSON.parse(body || "null"));
      const a = fake.answers.shift();
      if (typeof a === "function") return a(req, res);
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const d of a ?? []) res.write(`data: ${typeof d === "string" ? d : JSON.stringify(d)}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${fake.server.address().port}/v1`;
});

after(async () => {
  if (!fake.server) return;
  fake.server.closeAllConnections?.();
  await new Promise((resolve) => fake.server.close(resolve));
});

async function openaiChat() {
  const { createOpenAI } = await import("@ai-sdk/openai");
  return createOpenAI({ baseURL: fake.url, apiKey: "sk-test" }).chat("m");
}

describe("languageModel", () => {
  test("@ai-sdk/openai's model on a local server: prompt, tools, streamed deltas and tool calls", { skip }, async () => {
    fake.requests.length = 0;
    fake.answers.push(
      [chunk({ role: "assistant", content: "Let" }), chunk({ content: " me look." }),
        chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "look", arguments: "" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":"x"}' } }] }), chunk({}, "tool_calls")],
      [chunk({ role: "assistant", content: "Found it." }), chunk({}, "stop")],
    );
    let looked;
    const tools = sdk.agentrtAI.aiTools({
      look: sdk.ai.tool({ description: "looks up", inputSchema: sdk.ai.jsonSchema({ type: "object", properties: { q: { type: "string" } }, required: ["q"] }),
        execute: async (input) => { looked = input; return { hits: 1 }; } }),
    });
    const rt = await load({ systemPrompt: "Be brief.", model: sdk.agentrtAI.languageModel(await openaiChat()), tools });
    const deltas = [];
    let result;
    for await (const ev of rt.stream({ sessionId: "s", input: "find x" })) {
      if (ev.type === "model.delta") deltas.push(ev.delta);
      if (ev.type === "run.completed") result = ev.result;
    }
    assert.deepEqual(deltas, ["Let", " me look.", "Found it."]);
    assert.deepEqual(looked, { q: "x" });
    assert.deepEqual(result.appended.map((m) => [m.role, m.content]), [["user", "find x"], ["assistant", "Let me look."], ["tool", '{"hits":1}'], ["assistant", "Found it."]]);
    assert.deepEqual(result.appended[1].tool_calls, [{ id: "call_1", name: "look", arguments: '{"q":"x"}' }]);
    const [first, second] = fake.requests;
    assert.equal(first.model, "m");
    assert.equal(first.stream, true);
    assert.deepEqual(first.messages, [{ role: "system", content: "Be brief." }, { role: "user", content: "find x" }]);
    assert.deepEqual(first.tools.map((t) => [t.type, t.function.name, t.function.description, t.function.parameters.required]), [["function", "look", "looks up", ["q"]]]);
    assert.deepEqual(second.messages.slice(2).map((m) => m.role), ["assistant", "tool"]);
    assert.equal(second.messages[2].tool_calls[0].id, "call_1");
    assert.deepEqual(second.messages[3], { role: "tool", tool_call_id: "call_1", content: '{"hits":1}' });
    release(rt);
  });

  test("a provider failure is model_error with the provider's message", { skip }, async () => {
    fake.answers.push((req, res) => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "the model m does not exist", type: "invalid_request_error" } }));
    });
    const rt = await load({ model: sdk.agentrtAI.languageModel(await openaiChat()) });
    await assert.rejects(rt.run({ sessionId: "s", input: "hi" }), (e) => e.code === "model_error" && /the model m does not exist/.test(e.message));
    assert.equal(rt.session("s"), null);
    release(rt);
  });

  test("the run's signal aborts the provider's call", { skip }, async () => {
    const arrived = deferred();
    const closed = deferred();
    fake.answers.push((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify(chunk({ role: "assistant", content: "partial" }))}\n\n`);
      arrived.resolve();
      res.on("close", () => closed.resolve());
    });
    const rt = await load({ model: sdk.agentrtAI.languageModel(await openaiChat()) });
    const ac = new AbortController();
    const run = rt.run({ sessionId: "s", input: "hi", signal: ac.signal });
    await arrived.promise;
    ac.abort();
    await assert.rejects(run, (e) => e.code === "cancelled");
    await closed.promise; // the upstream request ended
    release(rt);
  });

  test("MockLanguageModelV3 works too; strings, other specs and bad options are refused typed", { skip }, async () => {
    const { MockLanguageModelV3, convertArrayToReadableStream } = sdk.aiTest;
    const v3 = new MockLanguageModelV3({ doStream: async () => ({ stream: convertArrayToReadableStream(answer(["v3 ", "ok"])) }) });
    const rt = await load({ model: sdk.agentrtAI.languageModel(v3) });
    assert.equal((await rt.run({ sessionId: "s", input: "hi" })).reply.content, "v3 ok");
    release(rt);
    for (const bad of ["openai/gpt-4o", null, {}, { specificationVersion: "v2", doStream() {} }]) {
      assert.throws(() => sdk.agentrtAI.languageModel(bad), (e) => e instanceof TypeError && e.code === "invalid_argument");
    }
    assert.throws(() => sdk.agentrtAI.languageModel(v3, 5), (e) => e.code === "invalid_argument");
  });

  test("call options reach the provider; a denied call reaches it as its text", { skip }, async () => {
    const { model, prompts } = scriptedModel(() => answer(["ok"]));
    let seen;
    const spy = { ...model, specificationVersion: model.specificationVersion, doStream: (o) => { seen = o; return model.doStream(o); } };
    const rt = await load({ model: sdk.agentrtAI.languageModel(spy, { temperature: 0.25 }) });
    await rt.run({ sessionId: "s", input: "hi", history: [
      { role: "user", content: "pay" },
      { role: "assistant", content: "", tool_calls: [{ id: "c1", name: "pay", arguments: "{}" }] },
      { role: "tool", tool_call_id: "c1", content: "Tool call denied." },
      { role: "assistant", content: "Not paid." },
    ] });
    assert.equal(seen.temperature, 0.25);
    assert.ok(seen.abortSignal, "the run's signal");
    assert.deepEqual(prompts[0].map((m) => m.role), ["user", "assistant", "tool", "assistant", "user"]);
    assert.deepEqual(prompts[0][1].content, [{ type: "tool-call", toolCallId: "c1", toolName: "pay", input: {} }]);
    assert.deepEqual(prompts[0][2].content[0], { type: "tool-result", toolCallId: "c1", toolName: "pay", output: { type: "text", value: "Tool call denied." } });
    release(rt);
  });
});

describe("aiTools", () => {
  test("zod and jsonSchema() schemas as JSON Schema; input validated before execute; needsApproval asked with the input", { skip }, async () => {
    const { tool, jsonSchema } = sdk.ai;
    const { z } = sdk;
    const asked = [];
    const tools = sdk.agentrtAI.aiTools({
      pay: tool({ description: "pays", inputSchema: z.object({ amount: z.number().max(100) }), needsApproval: (input, o) => { asked.push([input, o.toolCallId]); return input.amount > 10; },
        execute: async ({ amount }, o) => `paid ${amount} for ${o.toolCallId}` }),
      raw: tool({ inputSchema: jsonSchema({ type: "object", properties: { a: { type: "integer" } } }), execute: () => 1 }),
    });
    assert.deepEqual(tools.map((t) => t.name), ["pay", "raw"]);
    assert.equal(tools[0].description, "pays");
    assert.equal(tools[0].parameters.properties.amount.type, "number");
    assert.deepEqual(tools[1].parameters, { type: "object", properties: { a: { type: "integer" } } });
    assert.equal(await tools[0].call({ amount: 5 }, { toolCallId: "c9" }), "paid 5 for c9");
    await assert.rejects(tools[0].call({ amount: "5" }, { toolCallId: "c9" }), (e) => e.code === "tool_error" && /invalid input/.test(e.message));
    assert.equal(await tools[0].needsApproval({ amount: 50 }, { toolCallId: "c1" }), true);
    assert.equal(await tools[0].needsApproval({ amount: 5 }, { toolCallId: "c2" }), false);
    assert.deepEqual(asked, [[{ amount: 50 }, "c1"], [{ amount: 5 }, "c2"]]);
  });

  test("a tool without execute, a provider tool, or no tool set is refused typed", { skip }, () => {
    const { tool } = sdk.ai;
    const cases = [undefined, [], { a: 3 }, { a: tool({ inputSchema: sdk.z.object({}) }) }, { a: { type: "provider", id: "x.y", args: {}, execute() {} } }];
    for (const bad of cases) assert.throws(() => sdk.agentrtAI.aiTools(bad), (e) => e instanceof TypeError && e.code === "invalid_argument");
  });
});

// A conversation with every tool state: a result, a reported error, a
// denial, and a call still waiting for approval.
function conversation() {
  return [
    { role: "user", content: "hi" },
    { role: "assistant", content: "Looking.", tool_calls: [{ id: "c1", name: "look", arguments: '{"q":"x"}' }, { id: "c2", name: "boom", arguments: "{}" }] },
    { role: "tool", content: '{"hits":1}', tool_call_id: "c1" },
    { role: "tool", content: "error: boom failed", tool_call_id: "c2" },
    { role: "assistant", content: "", tool_calls: [{ id: "c3", name: "pay", arguments: '{"amount":5}' }] },
    { role: "tool", content: "Tool call denied: no", tool_call_id: "c3" },
    { role: "assistant", content: "Not paid." },
    { role: "user", content: "pay then" },
    { role: "assistant", content: "Paying.", tool_calls: [{ id: "c4", name: "pay", arguments: "not json" }] },
  ];
}

describe("toUIMessages", () => {
  test("tool parts carry the state their results imply; ids are stable and unique; the AI SDK accepts them", { skip }, async () => {
    const ui = sdk.agentrtAI.toUIMessages(conversation());
    assert.deepEqual(ui.map((m) => m.role), ["user", "assistant", "user", "assistant"]);
    const tools = ui.flatMap((m) => m.parts.filter((p) => p.type.startsWith("tool-")));
    assert.deepEqual(tools.map((p) => [p.toolCallId, p.state]), [["c1", "output-available"], ["c2", "output-error"], ["c3", "output-denied"], ["c4", "approval-requested"]]);
    assert.deepEqual(tools[0].output, { hits: 1 });
    assert.equal(tools[2].approval.reason, "no");
    assert.equal(tools[3].input, "not json");
    assert.deepEqual(sdk.agentrtAI.toUIMessages(conversation()), ui, "stable");
    assert.equal(new Set(ui.map((m) => m.id)).size, ui.length, "unique");
    assert.notEqual(sdk.agentrtAI.toUIMessages(conversation(), { idPrefix: "r2-" })[0].id, ui[0].id);
    await valid(ui);
    assert.throws(() => sdk.agentrtAI.toUIMessages("x"), (e) => e.code === "invalid_argument");
  });

  test("seeded back: the same session messages, a cold seed on a fresh runtime, a noop on a warm one, and checkHistory ok", { skip }, async () => {
    const held = conversation().slice(0, 7); // the waiting call left out: a seed refuses it without approvals
    const ui = sdk.agentrtAI.toUIMessages(held);
    assert.deepEqual(toModuleHistory(ui).map(({ role, content, tool_call_id, tool_calls }) => ({ role, content, tool_call_id, tool_calls })),
      held.map(({ role, content, tool_call_id, tool_calls }) => ({ role, content, tool_call_id, tool_calls })));
    const rt = await load({});
    assert.deepEqual(noHead(await rt.checkHistory(ui)), { ok: true, problems: [] });
    const cold = await rt.run({ sessionId: "s", input: "next", history: ui });
    assert.equal(cold.seed.mode, "cold");
    assert.deepEqual(rt.session("s").messages.slice(0, held.length).map((m) => [m.role, m.content]), held.map((m) => [m.role, m.content]));
    const all = [...held, ...cold.appended];
    const warm = await rt.run({ sessionId: "s", input: "again", history: sdk.agentrtAI.toUIMessages(all) });
    assert.equal(warm.seed.mode, "noop");
    // With the waiting call: checkHistory lists it as awaiting approval.
    const check = rt.checkHistory(sdk.agentrtAI.toUIMessages(conversation()));
    assert.deepEqual(check.awaiting.map((a) => a.toolCallId), ["c4"]);
    release(rt);
  });

  test("a chat stored as toUIMessages of the session resumes through the transport", { skip }, async () => {
    const ran = { pay: 0 };
    const tools = sdk.agentrtAI.aiTools({ pay: sdk.ai.tool({ inputSchema: sdk.z.object({}), needsApproval: true, execute: () => { ran.pay++; return "paid"; } }) });
    let n = 0;
    const { model } = scriptedModel(() => (++n === 1 ? answer(["Paying."], [{ id: "p1", name: "pay" }]) : answer(["Paid."])));
    const rt = await load({ model: sdk.agentrtAI.languageModel(model), tools });
    const r = await rt.run({ sessionId: "chat", input: "pay" });
    const stored = sdk.agentrtAI.toUIMessages(r.appended);
    rt.deleteSession("chat"); // a reload: the stored UIMessages are all there is
    const transport = new sdk.agentrtAI.AgentrtChatTransport({ runtime: rt });
    const t = await send(transport, [stored[0], respond(stored[1], "p1", true)]);
    assert.equal(t.message.parts.find((p) => p.type === "tool-pay").state, "output-available");
    assert.equal(ran.pay, 1);
    release(rt);
  });
});

// The part types of UIMessagePart in the pinned ai's type definitions,
// each followed to its declaration; template literals get "x".
async function declaredPartTypes() {
  const dir = new URL("node_modules/ai/dist/", root);
  let src = "";
  for (const f of (await readdir(dir)).filter((f) => f.endsWith(".d.ts"))) src += await readFile(new URL(f, dir), "utf8");
  const union = src.match(/^type UIMessagePart<[^=]*>\s*=\s*([^;]+);/m);
  assert.ok(union, "UIMessagePart in ai's type definitions");
  return union[1].split("|").map((m) => m.trim().replace(/<.*$/, "")).map((name) => {
    const at = src.search(new RegExp(`^type ${name}\\b[^=]*=`, "m"));
    assert.ok(at >= 0, `the declaration of ${name}`);
    const f = src.slice(at).match(/type:\s*(?:'([^']+)'|`([^`]+)`)/);
    return (f[1] ?? f[2]).replace(/\$\{[^}]*\}/g, "x");
  });
}

describe("the part types of the pinned ai", () => {
  test("every one is read by the glue and by the module, never refused", { skip }, async () => {
    const types = await declaredPartTypes();
    for (const t of ["text", "custom", "reasoning-file", "steering-message", "tool-x", "dynamic-tool", "data-x"]) assert.ok(types.includes(t), `${t} in ${types}`);
    const rt = await load({});
    for (const type of types) {
      const part = { type, text: "t", toolName: "x", toolCallId: "c1", state: "output-available", input: {}, output: "o", kind: "acme.x",
        mediaType: "image/png", url: "https://example.com/a.png", id: "p1", parts: [{ type: "text", text: "steer" }], sourceId: "s1", title: "t", data: 1 };
      const history = [{ id: "u", role: "user", parts: [{ type: "text", text: "q" }] }, { id: "a", role: "assistant", parts: [part] }];
      assert.doesNotThrow(() => toModuleHistory(history), `the glue reads ${type}`);
      assert.equal(rt.checkHistory(history).ok, true, `checkHistory reads ${type}`);
      const r = await rt.run({ sessionId: `s-${type}`, input: "next", history });
      assert.equal(r.seed.mode, "cold", `the module seeds ${type}`);
    }
    release(rt);
  });
});
