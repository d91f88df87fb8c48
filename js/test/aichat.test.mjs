// AgentrtChatTransport under the AI SDK's own chat logic: useChat's
// engine (ai@7's AbstractChat, with a plain state object standing in for
// React's) drives the transport as a page does: send, the approval
// answered by addToolApprovalResponse and sent by sendAutomaticallyWhen,
// deny, regenerate, stop, and a reload that seeds a fresh runtime from
// the stored messages. Runs under node --test, bun test and deno test -A
// (skipped, with the reason, where `ai` cannot be loaded).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { runtimes } from "./helpers.mjs";
import { sdk, answer, scriptedModel } from "./aienv.mjs";

const { load, release } = runtimes();
const skip = sdk.skip;

// useChat's state, without React.
class State {
  status = "ready";
  error = undefined;
  messages = [];
  pushMessage = (m) => { this.messages = [...this.messages, m]; };
  popMessage = () => { this.messages = this.messages.slice(0, -1); };
  replaceMessage = (i, m) => { this.messages = this.messages.map((x, k) => (k === i ? m : x)); };
  snapshot = (v) => structuredClone(v);
}

function chat(transport, messages = []) {
  const { AbstractChat, lastAssistantMessageIsCompleteWithApprovalResponses } = sdk.ai;
  class Chat extends AbstractChat {
    constructor() {
      const state = new State();
      state.messages = messages;
      super({ id: "chat-1", transport, state, sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    }
    get all() { return this.state.messages; }
  }
  return new Chat();
}

// Resolves once the chat is idle: not submitted or streaming, twice in a row.
async function settled(c) {
  for (let quiet = 0; quiet < 2;) {
    await new Promise((r) => setTimeout(r, 10));
    quiet = c.status === "ready" || c.status === "error" ? quiet + 1 : 0;
  }
}

async function world() {
  const ran = { pay: 0 };
  const { model, prompts } = scriptedModel((prompt, n, options) => {
    const last = prompt[prompt.length - 1];
    const text = last.role === "user" ? last.content[0].text : "";
    if (text === "hang") return new Promise((_, reject) => options.abortSignal.addEventListener("abort", () => reject(new Error("stopped")), { once: true }));
    if (text === "pay") return answer(["Paying."], [{ id: `p${n}`, name: "pay" }]);
    if (last.role === "tool") return answer([`done: ${last.content[0].output.value}`]);
    return answer([`answer ${n}`]);
  });
  const tools = sdk.agentrtAI.aiTools({ pay: sdk.ai.tool({ inputSchema: sdk.z.object({}), needsApproval: true, execute: () => { ran.pay++; return "paid"; } }) });
  const rt = await load({ model: sdk.agentrtAI.languageModel(model), tools });
  return { rt, ran, prompts, transport: new sdk.agentrtAI.AgentrtChatTransport({ runtime: rt }) };
}

const payPart = (m) => m.parts.find((p) => p.type === "tool-pay");

describe("AgentrtChatTransport under the AI SDK's chat", () => {
  test("send, approve (sent automatically, the tool once, one assistant message), then a reload seeds a fresh runtime", { skip }, async () => {
    const w = await world();
    const c = chat(w.transport);
    await c.sendMessage({ text: "pay" });
    await settled(c);
    assert.equal(c.status, "ready");
    assert.equal(payPart(c.all[1]).state, "approval-requested");
    await c.addToolApprovalResponse({ id: payPart(c.all[1]).approval.id, approved: true });
    await settled(c);
    assert.equal(c.error, undefined);
    assert.equal(c.all.length, 2, "the answer continued the same assistant message");
    assert.equal(payPart(c.all[1]).state, "output-available");
    assert.equal(c.all[1].parts.at(-1).text, "done: paid");
    assert.equal(w.ran.pay, 1);
    const stored = structuredClone(c.all);
    release(w.rt);

    const w2 = await world();
    const again = chat(w2.transport, stored);
    await again.sendMessage({ text: "thanks" });
    await settled(again);
    assert.equal(again.error, undefined);
    assert.equal(again.all.length, 4);
    assert.equal((await w2.rt.session("chat-1")).messages.length, 6, "seeded from the stored chat, then the turn");
    assert.equal(w2.ran.pay, 0, "the seed ran no tool");
    release(w2.rt);
  });

  test("deny: output-denied, the tool never runs", { skip }, async () => {
    const w = await world();
    const c = chat(w.transport);
    await c.sendMessage({ text: "pay" });
    await settled(c);
    await c.addToolApprovalResponse({ id: payPart(c.all[1]).approval.id, approved: false, reason: "no" });
    await settled(c);
    assert.equal(payPart(c.all[1]).state, "output-denied");
    assert.equal(c.all[1].parts.at(-1).text, "done: Tool call denied: no");
    assert.equal(w.ran.pay, 0);
    release(w.rt);
  });

  test("regenerate: the old answer leaves the chat and the session", { skip }, async () => {
    const w = await world();
    const c = chat(w.transport);
    await c.sendMessage({ text: "hi" });
    await settled(c);
    const old = c.all[1].parts.at(-1).text;
    await c.regenerate();
    await settled(c);
    assert.equal(c.all.length, 2);
    const fresh = c.all[1].parts.at(-1).text;
    assert.notEqual(fresh, old);
    assert.deepEqual((await w.rt.session("chat-1")).messages.map((m) => m.content), ["hi", fresh]);
    release(w.rt);
  });

  test("resumeStream: a second chat on the same transport replays the run in flight to the same message", { skip }, async () => {
    let open;
    const gate = new Promise((r) => { open = r; });
    const { model, prompts } = scriptedModel(async () => {
      await gate;
      return answer(["late ", "answer"]);
    });
    const rt = await load({ model: sdk.agentrtAI.languageModel(model) });
    const transport = new sdk.agentrtAI.AgentrtChatTransport({ runtime: rt });
    const first = chat(transport);
    const sending = first.sendMessage({ text: "hi" });
    while (prompts.length === 0) await new Promise((r) => setTimeout(r, 5));
    // A remounted component: the stored user message, and a resume.
    const second = chat(transport, [structuredClone(first.all[0])]);
    const resuming = second.resumeStream();
    open();
    await Promise.all([sending, resuming]);
    await settled(first);
    await settled(second);
    assert.equal(second.error, undefined);
    assert.equal(second.all.length, 2);
    assert.deepEqual(second.all[1], first.all[1], "the same assistant message, id and parts");
    // Nothing in flight now: a resume finds nothing and changes nothing.
    await second.resumeStream();
    assert.equal(second.all.length, 2);
    release(rt);
  });

  test("stop: the run is cancelled and rolled back, and the chat goes on", { skip }, async () => {
    const w = await world();
    const c = chat(w.transport);
    const sending = c.sendMessage({ text: "hang" });
    while (w.prompts.length === 0) await new Promise((r) => setTimeout(r, 5));
    await c.stop();
    await sending;
    await settled(c);
    assert.equal(c.status, "ready");
    assert.equal(await w.rt.session("chat-1"), null, "nothing stored");
    assert.equal((await w.rt.stats()).activeRuns, 0);
    await c.sendMessage({ text: "hi" });
    await settled(c);
    assert.equal(c.error, undefined);
    assert.equal(c.all.at(-1).role, "assistant");
    release(w.rt);
  });
});
