// agentrt/ai in a page, on the main thread and in worker mode: the built
// package (/dist/) with the real AI SDK (ai, ai/test and zod bundled by
// js/test/browser/ai.mjs, mapped by the page's import map). Each case
// reports { name, ok, error } in window.agentrtAIResults.
import { loadRuntime } from "/dist/glue.js";
import { AgentrtChatTransport, languageModel, aiTools, toUIMessages } from "/dist/ai.js";
import { readUIMessageStream, validateUIMessages, tool } from "ai";
import { MockLanguageModelV4, convertArrayToReadableStream } from "ai/test";
import { z } from "zod";

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

function answer(deltas, calls = []) {
  const parts = [];
  if (deltas.length) {
    parts.push({ type: "text-start", id: "t" });
    for (const d of deltas) parts.push({ type: "text-delta", id: "t", delta: d });
    parts.push({ type: "text-end", id: "t" });
  }
  for (const c of calls) parts.push({ type: "tool-call", toolCallId: c.id, toolName: c.name, input: "{}" });
  parts.push({ type: "finish", usage, finishReason: { unified: calls.length ? "tool-calls" : "stop", raw: "x" } });
  return parts;
}

function check(ok, what) {
  if (!ok) throw new Error(what);
}

// A world: pay needs approval and counts its runs; the model calls pay
// when asked to, hangs when asked to, and otherwise answers.
async function world(worker) {
  const ran = { pay: 0 };
  let n = 0;
  const model = new MockLanguageModelV4({
    doStream: async ({ prompt, abortSignal }) => {
      const last = prompt[prompt.length - 1];
      const text = last.role === "user" ? last.content[0].text : "";
      if (text === "hang") await new Promise((_, reject) => abortSignal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }));
      const parts = text === "pay" ? answer(["Paying."], [{ id: `p${++n}`, name: "pay" }]) : answer([`answer ${++n}`]);
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
  const tools = aiTools({ pay: tool({ inputSchema: z.object({}), needsApproval: true, execute: () => { ran.pay++; return "paid"; } }) });
  const rt = await loadRuntime({ wasm: "/dist/agentrt.wasm", model: languageModel(model), tools, ...(worker ? { worker: true } : {}) });
  return { rt, ran, transport: new AgentrtChatTransport({ runtime: rt }) };
}

async function send(transport, messages, extra = {}) {
  const stream = await transport.sendMessages({ trigger: "submit-message", chatId: "chat", messageId: undefined, messages, abortSignal: undefined, ...extra });
  const last = messages[messages.length - 1];
  let message;
  for await (const m of readUIMessageStream({ stream, message: last.role === "assistant" ? last : undefined })) message = m;
  return message;
}

const user = (id, text) => ({ id, role: "user", parts: [{ type: "text", text }] });
const toolPart = (m) => m.parts.find((p) => p.type === "tool-pay");
const responded = (m, approved) => ({ ...m, parts: m.parts.map((p) => (p.type === "tool-pay" ? { ...p, state: "approval-responded", approval: { id: p.approval.id, approved } } : p)) });

const cases = {
  async "approve: the tool runs once, the same assistant message continues"(worker) {
    const w = await world(worker);
    try {
      const messages = [user("u1", "pay")];
      const asked = await send(w.transport, messages);
      check(toolPart(asked).state === "approval-requested", `state ${toolPart(asked).state}`);
      const done = await send(w.transport, [...messages, responded(asked, true)]);
      check(done.id === asked.id, "the same message");
      check(toolPart(done).state === "output-available", `state ${toolPart(done).state}`);
      check(w.ran.pay === 1, `pay ran ${w.ran.pay} times`);
      await validateUIMessages({ messages: [...messages, done] });
      const stored = toUIMessages((await w.rt.session("chat")).messages);
      check(stored.length === 2, `stored ${stored.length}`);
    } finally {
      w.rt.close();
    }
  },
  async "deny: output-denied, the tool never runs"(worker) {
    const w = await world(worker);
    try {
      const messages = [user("u1", "pay")];
      const asked = await send(w.transport, messages);
      const done = await send(w.transport, [...messages, responded(asked, false)]);
      check(toolPart(done).state === "output-denied", `state ${toolPart(done).state}`);
      check(w.ran.pay === 0, `pay ran ${w.ran.pay} times`);
    } finally {
      w.rt.close();
    }
  },
  async "regenerate: the session holds only the new answer"(worker) {
    const w = await world(worker);
    try {
      const messages = [user("u1", "hi")];
      await send(w.transport, messages);
      const again = await send(w.transport, messages, { trigger: "regenerate-message" });
      const held = (await w.rt.session("chat")).messages.map((m) => m.content);
      check(JSON.stringify(held) === JSON.stringify(["hi", again.parts.at(-1).text]), `session ${JSON.stringify(held)}`);
    } finally {
      w.rt.close();
    }
  },
  async "warm turns: no history while the session holds the chat; a session changed meanwhile is refused by its head and the turn runs again with it"(worker) {
    const w = await world(worker);
    try {
      const runs = [];
      const rt = w.rt;
      const spy = {
        run: (r) => { runs.push(r.history !== undefined); return rt.run(r); },
        deleteSession: (id) => rt.deleteSession(id),
        cancelRun: (id) => rt.cancelRun(id),
        session: (id) => rt.session(id),
      };
      const transport = new AgentrtChatTransport({ runtime: spy });
      let messages = [];
      const turn = async (text) => {
        messages = [...messages, user(`u${messages.length}`, text)];
        const stream = await transport.sendMessages({ trigger: "submit-message", chatId: "chat", messageId: undefined, messages, abortSignal: undefined });
        const [a, b] = stream.tee();
        const counting = (async () => {
          const r = b.getReader();
          let starts = 0;
          for (;;) {
            const { done, value } = await r.read();
            if (done) return starts;
            if (value.type === "start") starts++;
          }
        })();
        let message;
        for await (const m of readUIMessageStream({ stream: a })) message = m;
        check((await counting) === 1, "one start chunk");
        messages = [...messages, message];
        return message;
      };
      await turn("hi");
      // The head of a turn that passed its history is read after it.
      await new Promise((resolve) => setTimeout(resolve, 20));
      await turn("again");
      await turn("and again");
      check(JSON.stringify(runs) === "[true,false,false]", `runs with history ${JSON.stringify(runs)}`);
      const same = async () => (await rt.checkHistory(messages)).head === (await rt.session("chat")).head;
      check(await same(), "the session is what the chat's messages seed");
      // Another client's turn on the session: refused, run again with the history.
      await rt.run({ sessionId: "chat", input: "meanwhile" });
      runs.length = 0;
      await turn("after");
      check(JSON.stringify(runs) === "[false,true]", `runs with history ${JSON.stringify(runs)}`);
      // The session deleted (as a new runtime has it): seeded again.
      await rt.deleteSession("chat");
      await new Promise((resolve) => setTimeout(resolve, 20));
      runs.length = 0;
      await turn("fresh");
      check(JSON.stringify(runs) === "[false,true]", `runs with history ${JSON.stringify(runs)}`);
      check(await same(), "seeded from the chat's messages");
      await validateUIMessages({ messages });
    } finally {
      w.rt.close();
    }
  },
  async "abort: the run is cancelled and rolled back"(worker) {
    const w = await world(worker);
    try {
      const ac = new AbortController();
      const stream = await w.transport.sendMessages({ trigger: "submit-message", chatId: "chat", messageId: undefined, messages: [user("u1", "hang")], abortSignal: ac.signal });
      const reader = stream.getReader();
      const types = [];
      setTimeout(() => ac.abort(), 50);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        types.push(value.type);
      }
      check(types.at(-1) === "abort", `chunks ${types.join(" ")}`);
      check((await w.rt.session("chat")) === null, "nothing stored");
    } finally {
      w.rt.close();
    }
  },
  async "cancel: a stream cancelled by its reader cancels the run, rolled back; the chat goes on"(worker) {
    const w = await world(worker);
    try {
      const stream = await w.transport.sendMessages({ trigger: "submit-message", chatId: "chat", messageId: undefined, messages: [user("u1", "hang")], abortSignal: undefined });
      const reader = stream.getReader();
      const first = await reader.read();
      check(first.value && first.value.type === "start", `first chunk ${JSON.stringify(first.value)}`);
      await reader.cancel();
      check((await w.rt.session("chat")) === null, "nothing stored");
      const next = await send(w.transport, [user("u2", "hi")]);
      check(next.role === "assistant", `the next turn answered ${JSON.stringify(next)}`);
    } finally {
      w.rt.close();
    }
  },
};

const results = [];
for (const mode of ["main", "worker"]) {
  for (const [name, fn] of Object.entries(cases)) {
    try {
      await fn(mode === "worker");
      results.push({ name: `${mode}: ${name}`, ok: true });
    } catch (e) {
      results.push({ name: `${mode}: ${name}`, ok: false, error: String(e && e.stack ? e.stack : e) });
    }
  }
}
window.agentrtAIResults = { done: true, results };
