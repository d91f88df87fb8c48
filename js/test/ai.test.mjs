// agentrt/ai's AgentrtChatTransport with the real AI SDK (ai@7, pinned):
// MockLanguageModelV4 through languageModel, tools through aiTools, and
// every stream read by readUIMessageStream and checked by
// validateUIMessages. Runs under node --test, bun test and deno test -A
// (skipped, with the reason, where `ai` cannot be loaded).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { deferred, runtimes, noHead } from "./helpers.mjs";
import { sdk, answer, scriptedModel, send, user, respond, valid, readTurn } from "./aienv.mjs";

const { load, release } = runtimes();
const skip = sdk.skip;

// A world of one counting tool that needs approval (pay), one that does
// not (look), one that throws (boom), and a model that calls the tool the
// user names and then says what it got back.
async function world(opts = {}) {
  const { tool } = sdk.ai;
  const { z } = sdk;
  const ran = { pay: 0, look: 0, boom: 0 };
  const { model, prompts } = scriptedModel(opts.script ?? ((prompt) => {
    const last = prompt[prompt.length - 1];
    if (last.role === "user") {
      const text = last.content[0].text;
      const name = ["pay", "look", "boom"].find((n) => text.includes(n));
      if (name) return answer(["On ", "it."], [{ id: `c${prompt.length}`, name, input: { amount: 5 } }]);
      return answer(["Hel", "lo ", text]);
    }
    return answer([`got ${last.content.map((p) => p.output.value).join(",")}`]);
  }));
  const tools = sdk.agentrtAI.aiTools({
    pay: tool({
      description: "pays", inputSchema: z.object({ amount: z.number() }), needsApproval: true,
      execute: async ({ amount }) => { ran.pay++; return { paid: amount }; },
    }),
    look: tool({ description: "looks", inputSchema: z.object({ amount: z.number() }), execute: async () => { ran.look++; return "seen"; } }),
    boom: tool({ description: "fails", inputSchema: z.object({ amount: z.number() }), execute: async () => { ran.boom++; throw new Error("boom failed"); } }),
  });
  const rt = await load({ systemPrompt: "sys", model: sdk.agentrtAI.languageModel(model), tools, ...opts.config });
  const transport = new sdk.agentrtAI.AgentrtChatTransport({ runtime: rt, policy: opts.policy });
  return { rt, transport, ran, prompts };
}

describe("AgentrtChatTransport", () => {
  test("deltas a JavaScript model gives in one go are one text-delta chunk; deltas apart are a chunk each", { skip }, async () => {
    let gap = false;
    const rt = await load({
      model: async (req) => {
        req.delta("The answer ");
        req.delta("is ");
        if (gap) await new Promise((resolve) => setTimeout(resolve, 1));
        req.delta("forty-two.");
        return "The answer is forty-two.";
      },
    });
    const transport = new sdk.agentrtAI.AgentrtChatTransport({ runtime: rt });
    const text = (t) => t.chunks.filter((c) => c.type === "text-delta").map((c) => c.delta);
    let t = await send(transport, [user("u1", "q")]);
    assert.deepEqual(t.types, ["start", "start-step", "text-start", "text-delta", "text-end", "finish-step", "finish"]);
    assert.deepEqual(text(t), ["The answer is forty-two."]);
    assert.deepEqual(t.message.parts.filter((p) => p.type === "text").map((p) => p.text), ["The answer is forty-two."]);
    await valid([user("u1", "q"), t.message]);
    // A delta after the model awaited: the ones before it went first.
    gap = true;
    t = await send(transport, [user("u1", "q"), t.message, user("u2", "again")]);
    assert.deepEqual(text(t), ["The answer is ", "forty-two."]);
    assert.deepEqual(t.message.parts.filter((p) => p.type === "text").map((p) => p.text), ["The answer is forty-two."]);
    release(rt);
  });

  test("a turn streams start, steps, text and finish, and the AI SDK accepts the message", { skip }, async () => {
    const w = await world();
    const messages = [user("u1", "hi")];
    const t = await send(w.transport, messages);
    assert.deepEqual(t.types, ["start", "start-step", "text-start", "text-delta", "text-delta", "text-delta", "text-end", "finish-step", "finish"]);
    assert.equal(t.error, undefined);
    assert.equal(t.message.role, "assistant");
    assert.deepEqual(t.message.parts.filter((p) => p.type === "text").map((p) => p.text), ["Hello hi"]);
    assert.equal(t.chunks[0].messageId, t.message.id);
    await valid([...messages, t.message]);
    // The session holds the turn; the system prompt reached the provider.
    assert.deepEqual((await w.rt.session("chat")).messages.map((m) => [m.role, m.content]), [["user", "hi"], ["assistant", "Hello hi"]]);
    assert.deepEqual(w.prompts[0][0], { role: "system", content: "sys" });
    release(w.rt);
  });

  test("each answer has a message id of its own, across turns and transports", { skip }, async () => {
    const w = await world();
    const other = new sdk.agentrtAI.AgentrtChatTransport({ runtime: w.rt });
    const first = await send(w.transport, [user("u1", "hi")]);
    const second = await send(w.transport, [user("u1", "hi"), first.message, user("u2", "again")]);
    const third = await send(other, [user("v1", "hi")], { chatId: "other" });
    const ids = [first, second, third].map((t) => t.chunks[0].messageId);
    for (const id of ids) assert.ok(typeof id === "string" && id.length >= 16, `id ${id}`);
    assert.equal(new Set(ids).size, 3, `ids ${ids}`);
    release(w.rt);
  });

  test("a tool call streams its input and output in the step that called it", { skip }, async () => {
    const w = await world();
    const messages = [user("u1", "look")];
    const t = await send(w.transport, messages);
    assert.deepEqual(t.types, ["start", "start-step", "text-start", "text-delta", "text-delta", "text-end", "tool-input-available",
      "tool-output-available", "finish-step", "start-step", "text-start", "text-delta", "text-end", "finish-step", "finish"]);
    const part = t.message.parts.find((p) => p.type === "tool-look");
    assert.equal(part.state, "output-available");
    assert.deepEqual(part.input, { amount: 5 });
    assert.equal(part.output, "seen");
    assert.equal(w.ran.look, 1);
    await valid([...messages, t.message]);
    // The model was told the result.
    assert.deepEqual(w.prompts[1].at(-1).content[0].output, { type: "text", value: "seen" });
    release(w.rt);
  });

  test("a tool that throws: tool-output-error, then the run's error chunk with code tool_error; reported, the run goes on", { skip }, async () => {
    const w = await world();
    const t = await send(w.transport, [user("u1", "boom")]);
    assert.ok(t.types.includes("tool-output-error"), t.types.join(" "));
    assert.equal(t.types.at(-1), "error");
    assert.match(t.chunks.at(-1).errorText, /^tool_error: /);
    assert.match(t.chunks.at(-1).errorText, /boom failed/);
    assert.equal((await w.rt.session("chat")), null, "the failed turn is rolled back");
    release(w.rt);

    const r = await world({ policy: { toolErrors: "report" } });
    const messages = [user("u1", "boom")];
    const t2 = await send(r.transport, messages);
    assert.equal(t2.types.at(-1), "finish");
    const part = t2.message.parts.find((p) => p.type === "tool-boom");
    assert.equal(part.state, "output-error");
    assert.match(part.errorText, /^error: .*boom failed/);
    await valid([...messages, t2.message]);
    release(r.rt);
  });

  test("approval: a request, then the approved tool runs exactly once and the chunks continue the same message", { skip }, async () => {
    const w = await world();
    const messages = [user("u1", "pay")];
    const t = await send(w.transport, messages);
    assert.deepEqual(t.types.slice(-4), ["tool-input-available", "tool-approval-request", "finish-step", "finish"]);
    const asked = t.message.parts.find((p) => p.type === "tool-pay");
    assert.equal(asked.state, "approval-requested");
    assert.equal(w.ran.pay, 0);
    await valid([...messages, t.message]);

    const responded = respond(t.message, asked.toolCallId, true);
    const again = [...messages, responded];
    assert.ok(sdk.ai.lastAssistantMessageIsCompleteWithApprovalResponses({ messages: again }));
    const r = await send(w.transport, again);
    assert.equal(r.error, undefined);
    assert.equal(r.types[0], "start");
    assert.equal(r.chunks[0].messageId, t.message.id, "the same assistant message");
    assert.equal(r.message.id, t.message.id);
    const done = r.message.parts.find((p) => p.type === "tool-pay");
    assert.equal(done.state, "output-available");
    assert.deepEqual(done.output, { paid: 5 });
    assert.equal(w.ran.pay, 1);
    assert.deepEqual(r.message.parts.filter((p) => p.type === "text").map((p) => p.text), ["On it.", 'got {"paid":5}']);
    await valid([...messages, r.message]);

    // The same approval sent again is refused, typed, and runs nothing.
    await assert.rejects(w.transport.sendMessages({ trigger: "submit-message", chatId: "chat", messageId: responded.id, messages: again, abortSignal: undefined }),
      (e) => e.code === "invalid_argument" || e.code === "invalid_history");
    assert.equal(w.ran.pay, 1);
    release(w.rt);
  });

  test("a resume that asks again: each approval runs its call once, all in one assistant message", { skip }, async () => {
    let calls = 0;
    const w = await world({
      script: (prompt) => {
        const last = prompt[prompt.length - 1];
        if (last.role === "user" || (last.role === "tool" && calls < 2)) return answer(["Paying."], [{ id: `p${++calls}`, name: "pay", input: { amount: calls } }]);
        return answer(["All paid."]);
      },
    });
    const messages = [user("u1", "pay twice")];
    const first = await send(w.transport, messages);
    const second = await send(w.transport, [...messages, respond(first.message, "p1", true)]);
    assert.deepEqual(second.message.parts.filter((p) => p.type === "tool-pay").map((p) => [p.toolCallId, p.state]), [["p1", "output-available"], ["p2", "approval-requested"]]);
    assert.equal(w.ran.pay, 1);
    const third = await send(w.transport, [...messages, respond(second.message, "p2", true)]);
    assert.deepEqual(third.message.parts.filter((p) => p.type === "tool-pay").map((p) => [p.toolCallId, p.state]), [["p1", "output-available"], ["p2", "output-available"]]);
    assert.equal(third.message.id, first.message.id);
    assert.equal(w.ran.pay, 2);
    assert.equal(third.message.parts.at(-1).text, "All paid.");
    await valid([...messages, third.message]);
    // Stored and seeded into a fresh runtime, the chat reads back whole.
    const fresh = await load({});
    assert.deepEqual(noHead(await fresh.checkHistory([...messages, third.message])), { ok: true, problems: [] });
    release(fresh);
    release(w.rt);
  });

  test("approval after a reload: a fresh runtime seeds the chat's messages and the tool runs once", { skip }, async () => {
    const w = await world();
    const messages = [user("u1", "pay")];
    const t = await send(w.transport, messages);
    release(w.rt);
    const w2 = await world();
    const asked = t.message.parts.find((p) => p.type === "tool-pay");
    const r = await send(w2.transport, [...messages, respond(t.message, asked.toolCallId, true)]);
    assert.equal(r.message.parts.find((p) => p.type === "tool-pay").state, "output-available");
    assert.equal(w2.ran.pay, 1);
    release(w2.rt);
  });

  test("denial: output-denied, the tool never runs and the model is told", { skip }, async () => {
    const w = await world();
    const messages = [user("u1", "pay")];
    const t = await send(w.transport, messages);
    const asked = t.message.parts.find((p) => p.type === "tool-pay");
    const r = await send(w.transport, [...messages, respond(t.message, asked.toolCallId, false, "too much")]);
    assert.ok(r.types.includes("tool-output-denied"), r.types.join(" "));
    const part = r.message.parts.find((p) => p.type === "tool-pay");
    assert.equal(part.state, "output-denied");
    assert.equal(w.ran.pay, 0);
    assert.deepEqual(w.prompts.at(-1).at(-1).content[0].output, { type: "text", value: "Tool call denied: too much" });
    await valid([...messages, r.message]);
    release(w.rt);
  });

  test("regenerate replaces the last answer: the session and later prompts hold only the new one", { skip }, async () => {
    let n = 0;
    const w = await world({
      script: (prompt) => answer([`answer ${++n} to ${prompt.filter((m) => m.role !== "system").length} messages`]),
    });
    const messages = [user("u1", "q1")];
    const first = await send(w.transport, messages);
    messages.push(first.message);
    messages.push(user("u2", "q2"));
    const second = await send(w.transport, messages);
    assert.equal(second.message.parts.at(-1).text, "answer 2 to 3 messages");
    // useChat's regenerate: the answer is dropped, the user message resent.
    const again = await send(w.transport, messages, { trigger: "regenerate-message", messageId: second.message.id });
    assert.equal(again.message.parts.at(-1).text, "answer 3 to 3 messages");
    assert.notEqual(again.message.id, second.message.id);
    assert.deepEqual(w.prompts[2].map((m) => m.role), ["system", "user", "assistant", "user"]);
    const held = (await w.rt.session("chat")).messages.map((m) => m.content);
    assert.deepEqual(held, ["q1", "answer 1 to 1 messages", "q2", "answer 3 to 3 messages"]);
    messages.push(again.message, user("u3", "q3"));
    await send(w.transport, messages);
    const seen = JSON.stringify(w.prompts[3]);
    assert.ok(!seen.includes("answer 2"), "a later prompt never sees the old answer");
    assert.ok(seen.includes("answer 3"));
    release(w.rt);
  });

  test("warm turns pass no history while the session is what the last turn left; any change behind the transport's back seeds it again", { skip }, async () => {
    const w = await world({ script: (prompt) => answer([`answer to ${prompt.filter((m) => m.role !== "system").map((m) => m.content.map((p) => p.text ?? "").join("")).join("|")}`]) });
    const runs = [];
    const spy = {
      run: (r) => { runs.push({ history: r.history !== undefined, ifHead: r.ifHead }); return w.rt.run(r); },
      deleteSession: (id) => w.rt.deleteSession(id),
      cancelRun: (id) => w.rt.cancelRun(id),
      session: (id) => w.rt.session(id),
    };
    const transport = new sdk.agentrtAI.AgentrtChatTransport({ runtime: spy });
    let messages = [user("u1", "q1")];
    const turn = async () => {
      const t = await send(transport, messages);
      assert.equal(t.types.at(-1), "finish", JSON.stringify(t.chunks));
      // useChat's state: a new array each change, the old messages kept.
      messages = [...messages, t.message];
      return t;
    };
    await turn();
    messages = [...messages, user("u2", "q2")];
    await turn();
    messages = [...messages, user("u3", "q3")];
    await turn();
    assert.deepEqual(runs.map((r) => r.history), [true, false, false], "warm turns carry no history");
    assert.ok(runs[1].ifHead && runs[2].ifHead, "but the head they expect");
    const cold = await world({ script: (prompt) => answer([`answer to ${prompt.filter((m) => m.role !== "system").map((m) => m.content.map((p) => p.text ?? "").join("")).join("|")}`]) });
    const held = (await w.rt.session("chat")).messages;
    assert.deepEqual(held.map((m) => m.content), ["q1", "answer to q1", "q2", "answer to q1|answer to q1|q2", "q3", "answer to q1|answer to q1|q2|answer to q1|answer to q1|q2|q3"]);
    assert.equal((await w.rt.checkHistory(messages)).head, (await w.rt.session("chat")).head, "the session is what the chat's messages seed");
    release(cold.rt);

    // Another client ran a turn on the session: refused by its head, run
    // again with the history, as a transport without warm turns runs it
    // (a session that holds the chat's messages and more keeps them).
    await w.rt.run({ sessionId: "chat", input: "behind its back" });
    runs.length = 0;
    messages = [...messages, user("u4", "q4")];
    const t4 = await turn();
    assert.deepEqual(runs.map((r) => r.history), [false, true]);
    assert.equal(t4.chunks.filter((c) => c.type === "start").length, 1, "one start chunk");
    assert.ok(JSON.stringify(w.prompts.at(-1)).includes("behind its back"));

    // The session deleted (as a new runtime would have it): seeded again.
    await w.rt.deleteSession("chat");
    runs.length = 0;
    messages = [...messages, user("u5", "q5")];
    await turn();
    assert.deepEqual(runs.map((r) => r.history), [false, true]);
    assert.equal((await w.rt.checkHistory(messages)).head, (await w.rt.session("chat")).head);

    // The app edited the last answer in place of useChat's: the history
    // goes with the turn, and the model sees the edit.
    runs.length = 0;
    const edited = { ...messages.at(-1), parts: [{ type: "text", text: "an edited answer" }] };
    messages = [...messages.slice(0, -1), edited, user("u6", "q6")];
    await turn();
    assert.deepEqual(runs.map((r) => r.history), [true]);
    assert.ok(JSON.stringify(w.prompts.at(-1)).includes("an edited answer"));
    assert.equal((await w.rt.checkHistory(messages)).head, (await w.rt.session("chat")).head);

    // A caller that pushes onto the array it passed: the same answers.
    runs.length = 0;
    messages.push(user("u7", "q7"));
    const t = await send(transport, messages);
    messages.push(t.message, user("u8", "q8"));
    messages.push((await send(transport, messages)).message);
    assert.deepEqual(runs.map((r) => r.history), [false, false]);
    assert.equal((await w.rt.checkHistory(messages)).head, (await w.rt.session("chat")).head);
    release(w.rt);
  });

  test("a warm turn refused for its head runs again with its history, whichever comes first, run.started or the refusal", { skip }, async () => {
    // Worker mode delivers a run's events and its answer by messages: the
    // refusal of a warm turn can come before or after its run.started.
    for (const [order, change] of [["refusal first", "deleted"], ["refusal first", "another turn"], ["run.started first", "deleted"], ["run.started first", "another turn"]]) {
      const w = await world();
      const runs = [];
      const later = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
      const remote = {
        run(r) {
          runs.push(r.history !== undefined);
          const onEvent = r.onEvent;
          const events = [];
          const p = w.rt.run({ ...r, onEvent: (ev) => events.push(ev) });
          const deliver = () => later(0).then(() => { for (const ev of events) onEvent(ev); });
          return p.then(async (res) => { await deliver(); return res; }, async (e) => {
            if (order === "refusal first") {
              deliver();
              throw e;
            }
            await deliver();
            await later(1);
            throw e;
          });
        },
        deleteSession: (id) => w.rt.deleteSession(id),
        cancelRun: (id) => w.rt.cancelRun(id),
        session: (id) => w.rt.session(id),
      };
      const transport = new sdk.agentrtAI.AgentrtChatTransport({ runtime: remote });
      let messages = [user("u1", "hi")];
      const first = await send(transport, messages);
      messages = [...messages, first.message, user("u2", "again")];
      await later(5); // the head of a turn with history is read after it
      if (change === "deleted") await w.rt.deleteSession("chat");
      else await w.rt.run({ sessionId: "chat", input: "meanwhile" });
      const second = await send(transport, messages);
      assert.deepEqual(runs, [true, false, true], order);
      // One start chunk: the refused run's run.started sent none of its own.
      assert.deepEqual(second.types.filter((t) => t !== "text-delta"), ["start", "start-step", "text-start", "text-end", "finish-step", "finish"], `${order}, ${change}`);
      assert.deepEqual(second.message.parts.filter((p) => p.type === "text").map((p) => p.text), ["Hello again"], `${order}, ${change}`);
      await valid([...messages, second.message]);
      if (change === "deleted") assert.equal((await w.rt.checkHistory([...messages, second.message])).head, (await w.rt.session("chat")).head, order);
      else assert.deepEqual((await w.rt.session("chat")).messages.map((m) => m.content).slice(-3), ["Hello meanwhile", "again", "Hello again"], order);
      release(w.rt);
    }
  });

  test("after a failed turn the warm session holds what the chat holds: the model sees what a fresh runtime would", { skip }, async () => {
    // useChat keeps a failed turn's user message and its empty answer;
    // the runtime rolled the turn back. The next turn's model must see the
    // chat's messages, warm or cold.
    const script = (prompt) => {
      const last = prompt[prompt.length - 1];
      if (last.role === "user" && last.content[0].text.includes("fail")) throw new Error("upstream down");
      return answer(["ok"]);
    };
    const warm = await world({ script });
    const messages = [user("u1", "hi")];
    const first = await send(warm.transport, messages);
    messages.push(first.message, user("u2", "please fail"));
    const failed = await send(warm.transport, messages);
    assert.ok(failed.error, "the turn failed");
    messages.push({ id: "a2", role: "assistant", parts: [] }, user("u3", "next"));
    await send(warm.transport, messages);
    const cold = await world({ script });
    await send(cold.transport, messages);
    const shown = (w) => w.prompts.at(-1).filter((m) => m.role !== "system").map((m) => m.role);
    assert.deepEqual(shown(warm), shown(cold));
    assert.deepEqual(shown(warm), ["user", "assistant", "user", "assistant", "user"]);
    release(warm.rt);
    release(cold.rt);
  });

  test("abortSignal cancels the run and rolls it back; the chat goes on", { skip }, async () => {
    const started = deferred();
    let hang = true;
    const w = await world({
      script: (prompt, call, options) => {
        if (!hang) return answer(["fine"]);
        started.resolve();
        return new Promise((_, reject) => options.abortSignal.addEventListener("abort", () => reject(options.abortSignal.reason), { once: true }));
      },
    });
    const ac = new AbortController();
    const stream = await w.transport.sendMessages({ trigger: "submit-message", chatId: "chat", messageId: undefined, messages: [user("u1", "hi")], abortSignal: ac.signal });
    const reading = readTurn(stream);
    await started.promise;
    ac.abort();
    const t = await reading;
    assert.equal(t.types.at(-1), "abort", t.types.join(" "));
    assert.equal(await w.rt.session("chat"), null, "rolled back: nothing stored");
    assert.equal((await w.rt.stats()).runsCancelled, 1);
    hang = false;
    const next = await send(w.transport, [user("u1", "hi")]);
    assert.equal(next.types.at(-1), "finish");
    release(w.rt);
  });

  test("a stream cancelled by its reader cancels the run too", { skip }, async () => {
    const started = deferred();
    const w = await world({
      script: (prompt, call, options) => {
        started.resolve();
        return new Promise((_, reject) => options.abortSignal.addEventListener("abort", () => reject(new Error("stopped")), { once: true }));
      },
    });
    const stream = await w.transport.sendMessages({ trigger: "submit-message", chatId: "chat", messageId: undefined, messages: [user("u1", "hi")], abortSignal: undefined });
    const reader = stream.getReader();
    await reader.read();
    await started.promise;
    await reader.cancel();
    assert.equal(await w.rt.session("chat"), null);
    assert.equal((await w.rt.stats()).activeRuns, 0);
    release(w.rt);
  });

  test("reconnectToStream replays a run in flight from its start, and is null when none is", { skip }, async () => {
    const gate = deferred();
    const started = deferred();
    const w = await world({
      script: async () => {
        started.resolve();
        await gate.promise;
        return answer(["late"]);
      },
    });
    assert.equal(await w.transport.reconnectToStream({ chatId: "chat" }), null);
    assert.equal(w.transport.resumeStreamIsReplay, true);
    const stream = await w.transport.sendMessages({ trigger: "submit-message", chatId: "chat", messageId: undefined, messages: [user("u1", "hi")], abortSignal: undefined });
    const reading = readTurn(stream);
    await started.promise;
    const again = await w.transport.reconnectToStream({ chatId: "chat" });
    assert.ok(again, "a stream for the run in flight");
    const replay = readTurn(again);
    gate.resolve();
    const [t, r] = await Promise.all([reading, replay]);
    assert.deepEqual(r.chunks, t.chunks, "the same chunks, from the start");
    assert.deepEqual(r.message, t.message);
    assert.equal(await w.transport.reconnectToStream({ chatId: "chat" }), null, "none once it ended");
    assert.equal(await w.transport.reconnectToStream({ chatId: "other" }), null);
    release(w.rt);
  });

  test("model failures end the stream with model_error, never internal: throw, reject, error part, settle twice", { skip }, async () => {
    const { MockLanguageModelV4, convertArrayToReadableStream } = sdk.aiTest;
    const cases = {
      throws: () => { throw new Error("provider down"); },
      rejects: async () => { throw new Error("provider down"); },
      "error part": async () => ({ stream: convertArrayToReadableStream([{ type: "stream-start", warnings: [] }, { type: "error", error: new Error("provider down") }]) }),
      "settles twice": () => ({ then(ok, fail) { fail(new Error("provider down")); ok({ stream: convertArrayToReadableStream(answer(["x"])) }); } }),
    };
    for (const [name, doStream] of Object.entries(cases)) {
      const model = new MockLanguageModelV4({ doStream });
      const rt = await load({ model: sdk.agentrtAI.languageModel(model) });
      const transport = new sdk.agentrtAI.AgentrtChatTransport({ runtime: rt });
      const t = await send(transport, [user("u1", "hi")]);
      assert.equal(t.types.at(-1), "error", `${name}: ${t.types.join(" ")}`);
      assert.match(t.chunks.at(-1).errorText, /^model_error: .*agentrt\/ai: provider down$/, name);
      assert.ok(t.error, `${name}: useChat's reader sees the error`);
      release(rt);
    }
  });

  test("a model that hangs ends with its policy's timeout, a tool that hangs too", { skip }, async () => {
    const { MockLanguageModelV4 } = sdk.aiTest;
    const model = new MockLanguageModelV4({ doStream: () => new Promise(() => {}) });
    const rt = await load({ model: sdk.agentrtAI.languageModel(model) });
    const transport = new sdk.agentrtAI.AgentrtChatTransport({ runtime: rt, policy: { timeoutMs: 50 } });
    const t = await send(transport, [user("u1", "hi")]);
    assert.match(t.chunks.at(-1).errorText, /^timeout: /);
    release(rt);

    const w = await world({ policy: { timeoutMs: 50 } });
    const tools = sdk.agentrtAI.aiTools({ look: sdk.ai.tool({ inputSchema: sdk.z.object({}), execute: () => new Promise(() => {}) }) });
    const rt2 = await load({ model: sdk.agentrtAI.languageModel(scriptedModel(() => answer([], [{ id: "c1", name: "look" }])).model), tools });
    const t2 = await send(new sdk.agentrtAI.AgentrtChatTransport({ runtime: rt2, policy: { timeoutMs: 50 } }), [user("u1", "look")]);
    assert.match(t2.chunks.at(-1).errorText, /^timeout: /);
    assert.equal(await rt2.session("chat"), null);
    release(rt2);
    release(w.rt);
  });

  test("a tool whose execute settles twice or yields: the first answer, and the last value yielded", { skip }, async () => {
    const tools = sdk.agentrtAI.aiTools({
      twice: sdk.ai.tool({ inputSchema: sdk.z.object({}), execute: () => ({ then(ok, fail) { ok("first"); ok("second"); fail(new Error("late")); } }) }),
      gen: sdk.ai.tool({ inputSchema: sdk.z.object({}), execute: async function* () { yield "partial"; yield "final"; } }),
    });
    let step = 0;
    const { model } = scriptedModel((prompt) => (++step === 1 ? answer([], [{ id: "a", name: "twice" }, { id: "b", name: "gen" }]) : answer(["ok"])));
    const rt = await load({ model: sdk.agentrtAI.languageModel(model), tools });
    const t = await send(new sdk.agentrtAI.AgentrtChatTransport({ runtime: rt }), [user("u1", "go")]);
    assert.deepEqual(t.message.parts.filter((p) => p.type.startsWith("tool-")).map((p) => [p.state, p.output]), [["output-available", "first"], ["output-available", "final"]]);
    release(rt);
  });

  test("bad arguments are TypeErrors with code invalid_argument, and change nothing", { skip }, async () => {
    const w = await world();
    const { AgentrtChatTransport } = sdk.agentrtAI;
    for (const bad of [undefined, {}, { runtime: {} }, { runtime: w.rt, policy: 3 }]) {
      assert.throws(() => new AgentrtChatTransport(bad), (e) => e instanceof TypeError && e.code === "invalid_argument");
    }
    const base = { trigger: "submit-message", chatId: "chat", messageId: undefined, messages: [user("u1", "hi")], abortSignal: undefined };
    for (const extra of [{ trigger: "resume" }, { chatId: "" }, { messages: [] }, { messages: [{ id: "a", role: "assistant", parts: [] }] }, { messages: [3] }]) {
      await assert.rejects(w.transport.sendMessages({ ...base, ...extra }), (e) => e instanceof TypeError && e.code === "invalid_argument");
    }
    // A new message while a call awaits approval is refused, typed, warm
    // and cold alike (the documented "awaits approval" error), and changes
    // nothing.
    const paused = await world();
    const asked = await send(paused.transport, [user("u1", "pay")]);
    const held = (await paused.rt.session("chat")).messages;
    const refused = await send(paused.transport, [user("u1", "pay"), asked.message, user("u2", "never mind")]);
    assert.deepEqual(refused.types, ["start", "error"]);
    assert.match(String(refused.error?.message ?? refused.error), /invalid_argument.*awaits approval of tool call/);
    assert.deepEqual((await paused.rt.session("chat")).messages, held);
    const cold = await world();
    const coldRefused = await send(cold.transport, [user("u1", "pay"), asked.message, user("u2", "never mind")]);
    assert.match(String(coldRefused.error?.message ?? coldRefused.error), /invalid_argument.*awaits approval of tool call/);
    assert.equal(paused.ran.pay + cold.ran.pay, 0);
    release(cold.rt);
    release(paused.rt);
    // A history the runtime refuses rejects typed, before any stream.
    await assert.rejects(w.transport.sendMessages({ ...base, messages: [{ id: "x", role: "user", parts: [{ type: "hologram" }] }, user("u1", "hi")] }),
      (e) => e.code === "invalid_history" && e.index === 0);
    assert.equal(await w.rt.session("chat"), null);
    await assert.rejects(w.transport.reconnectToStream({}), (e) => e.code === "invalid_argument");
    release(w.rt);
  });
});
