// What the suites of agentrt/ai (ai*.test.mjs) share: the real AI SDK,
// loaded from the repository's node_modules (package.json pins ai, zod,
// @ai-sdk/provider and @ai-sdk/openai), and the mock models and tools
// their tables use. Where `ai` cannot be loaded (a page without it in its
// import map), `sdk.skip` says why and the suites skip; under CI a Node
// run that cannot load it fails.
import assert from "node:assert/strict";

/** The AI SDK's modules and agentrt/ai, or { skip: reason }. */
export const sdk = await (async () => {
  try {
    const [ai, aiTest, zod, agentrtAI] = await Promise.all([
      import("ai"), import("ai/test"), import("zod"), import("../ai.js"),
    ]);
    return { ai, aiTest, z: zod.z, agentrtAI };
  } catch (e) {
    const reason = `the AI SDK cannot be loaded here (${e && e.message ? e.message.split("\n")[0] : e}): run npm ci`;
    if (globalThis.process?.env?.CI && globalThis.process?.versions?.node && !globalThis.Bun && !globalThis.Deno) {
      throw new Error(reason);
    }
    return { skip: reason };
  }
})();

/** A provider usage of the V4 spec. */
export const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 2, text: 2, reasoning: 0 },
};

/** The stream parts of an answer: text in deltas, then tool calls. */
export function answer(deltas, calls = []) {
  const parts = [{ type: "stream-start", warnings: [] }];
  if (deltas.length) {
    parts.push({ type: "text-start", id: "t" });
    for (const d of deltas) parts.push({ type: "text-delta", id: "t", delta: d });
    parts.push({ type: "text-end", id: "t" });
  }
  for (const c of calls) parts.push({ type: "tool-call", toolCallId: c.id, toolName: c.name, input: JSON.stringify(c.input ?? {}) });
  parts.push({ type: "finish", usage, finishReason: calls.length ? { unified: "tool-calls", raw: "tool_calls" } : { unified: "stop", raw: "stop" } });
  return parts;
}

/**
 * A MockLanguageModelV4 whose answers come from `script(prompt, call)`:
 * an array of stream parts, or a Promise of one, or a thrown error. The
 * prompts it was sent are in `prompts`.
 */
export function scriptedModel(script) {
  const { MockLanguageModelV4, convertArrayToReadableStream } = sdk.aiTest;
  const prompts = [];
  const model = new MockLanguageModelV4({
    doStream: async (options) => {
      prompts.push(options.prompt);
      const parts = await script(options.prompt, prompts.length, options);
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
  return { model, prompts };
}

/**
 * Reads a transport's stream: its chunks, and the message
 * readUIMessageStream builds from them (continuing `message` when given).
 */
export async function readTurn(stream, message) {
  const [a, b] = stream.tee();
  const chunks = [];
  const collected = (async () => {
    const r = b.getReader();
    for (;;) {
      const { done, value } = await r.read();
      if (done) return;
      chunks.push(value);
    }
  })();
  let last;
  let error;
  try {
    for await (const m of sdk.ai.readUIMessageStream({ stream: a, message, onError: (e) => { error = e; } })) last = m;
  } catch (e) {
    error = e;
  }
  await collected;
  return { chunks, message: last, error, types: chunks.map((c) => c.type) };
}

/** Sends one turn through a transport and reads it. */
export async function send(transport, messages, extra = {}) {
  const stream = await transport.sendMessages({
    trigger: "submit-message", chatId: "chat", messageId: undefined, messages, abortSignal: undefined, ...extra,
  });
  const last = messages[messages.length - 1];
  return readTurn(stream, last.role === "assistant" ? last : undefined);
}

/** A user UIMessage. */
export function user(id, text) {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

/** The message with its tool parts of callId set to approval-responded. */
export function respond(message, callId, approved, reason) {
  let found = false;
  const parts = message.parts.map((p) => {
    if (p.toolCallId !== callId) return p;
    found = true;
    assert.equal(p.state, "approval-requested", "the part awaits approval");
    return { ...p, state: "approval-responded", approval: { id: p.approval.id, approved, ...(reason ? { reason } : {}) } };
  });
  assert.ok(found, `a tool part of ${callId}`);
  return { ...message, parts };
}

/** Checks that the AI SDK validates the messages as they are. */
export async function valid(messages) {
  const out = await sdk.ai.validateUIMessages({ messages });
  const plain = (v) => JSON.parse(JSON.stringify(v)); // its copies list absent fields as undefined
  assert.deepEqual(plain(out), plain(messages));
}
