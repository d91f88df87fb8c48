// The turns bench/aitransport.mjs times, shared by its Node run and its
// page (bench/aitransport.html): no Node import here.
//
// Three contenders, interleaved (each round runs them in a rotated
// order), each on a session of its own holding the same conversation:
//   - stream: the turn through rt.stream, its events read to the end;
//   - transport: the same turn through AgentrtChatTransport, its
//     UIMessageChunks read to the end;
//   - floor: no runtime at all, a ReadableStream of the chunks the
//     transport sends for this turn, enqueued and read to the end: what
//     the platform's streams cost the transport whatever it does.

/** UIMessages of the conversation before each turn. */
export const PRIOR = 20;

/** Turns of a chat before it starts again from PRIOR messages. */
export const CHAT_TURNS = 20;

/** The bench's JavaScript model: three deltas, then the whole answer. */
export function model(req) {
  req.delta("The answer ");
  req.delta("is ");
  req.delta("forty-two.");
  return { content: "The answer is forty-two." };
}

function priorMessages() {
  const prior = [];
  for (let i = 0; i < PRIOR / 2; i++) {
    prior.push({ id: `u${i}`, role: "user", parts: [{ type: "text", text: `question ${i}` }] });
    prior.push({ id: `a${i}`, role: "assistant", parts: [{ type: "step-start" }, { type: "text", text: `answer ${i}` }] });
  }
  return prior;
}

async function readAll(stream) {
  const reader = stream.getReader();
  const chunks = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(value);
  }
}

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
}

/** Median, quartiles and p99 of samples (ms). */
export function summary(v) {
  const s = [...v].sort((a, b) => a - b);
  return { median: quantile(s, 0.5), p25: quantile(s, 0.25), p75: quantile(s, 0.75), p99: quantile(s, 0.99), n: s.length };
}

/**
 * Times the contenders on rt; returns { stream, transport, floor } (each a
 * summary), ratio (the transport's median over rt.stream's), blocks (that
 * ratio in each of `blocks` consecutive runs of rounds, for its spread),
 * overFloor (the transport's median less the floor's, over rt.stream's)
 * and the counts of events and chunks of one turn. A sample is the mean
 * of `batch` turns in a row: a page's clock is coarse (5 µs to 1 ms).
 * `parts` adds rt.run's turn with no stream, without and with the
 * transport's policy (fig.run, fig.runReconcile), and the latter with its
 * events enqueued into a ReadableStream and read (fig.runStream).
 */
export async function measure({ rt, AgentrtChatTransport, rounds = 400, warmup = 50, blocks = 5, batch = 1, parts = false, now = () => performance.now() }) {
  const transport = new AgentrtChatTransport({ runtime: rt });
  const prior = priorMessages();
  const input = { id: "u-next", role: "user", parts: [{ type: "text", text: "and now?" }] };
  const messages = [...prior, input];
  // The chunks of one turn, for the floor and the counts.
  const chunks = await readAll(await transport.sendMessages({ trigger: "submit-message", chatId: "probe", messages, abortSignal: undefined }));
  let events = 0;
  for await (const ev of rt.stream({ sessionId: "probe-s", input: "and now?", history: prior })) events += ev ? 1 : 0;
  if (chunks.length === 0 || chunks[chunks.length - 1].type !== "finish") throw new Error(`the transport's turn sent ${JSON.stringify(chunks)}`);

  // Each of the two contenders keeps its chat as useChat does: a new
  // array each turn, the messages before kept as they were, the answer
  // appended as a UIMessage, built from what the turn streamed. Every
  // CHAT_TURNS turns the chat starts again from the prior messages on an
  // empty session (untimed), so a turn's history stays 20 to 60 messages
  // (to 80 in a page, whose samples are batches of turns).
  const chats = { stream: { id: "s", messages: prior, turns: 0 }, transport: { id: "t", messages: prior, turns: 0 } };
  let asked = 0;
  const ask = () => ({ id: `q${++asked}`, role: "user", parts: [{ type: "text", text: "and now?" }] });
  const answered = (id, text) => ({ id, role: "assistant", parts: [{ type: "step-start" }, { type: "text", text, state: "done" }] });
  const fresh = async (chat) => {
    if (chat.turns < CHAT_TURNS) return;
    await rt.deleteSession(chat.id);
    chat.messages = prior;
    chat.turns = 0;
  };
  const fns = {
    async stream() {
      const chat = chats.stream;
      const q = ask();
      let text = "";
      let runId = "";
      for await (const ev of rt.stream({ sessionId: chat.id, input: "and now?", history: chat.messages })) {
        if (ev.type === "model.delta") text += ev.delta;
        else if (ev.type === "run.started") runId = ev.runId;
      }
      chat.messages = [...chat.messages, q, answered(runId, text)];
      chat.turns++;
    },
    async transport() {
      const chat = chats.transport;
      const messages = [...chat.messages, ask()];
      const stream = await transport.sendMessages({ trigger: "submit-message", chatId: chat.id, messageId: undefined, messages, abortSignal: undefined });
      const reader = stream.getReader();
      let text = "";
      let id = "";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (value.type === "text-delta") text += value.delta;
        else if (value.type === "start") id = value.messageId;
      }
      chat.messages = [...messages, answered(id, text)];
      chat.turns++;
    },
    async floor() {
      const stream = new ReadableStream({
        start(c) {
          for (const chunk of chunks) c.enqueue(chunk);
          c.close();
        },
      });
      const reader = stream.getReader();
      for (;;) {
        const { done } = await reader.read();
        if (done) return;
      }
    },
  };
  if (parts) {
    // Where the transport's time goes: its run without a stream or
    // chunks, with the transport's policy (seed mode reconcile) and
    // without (rt.stream's default).
    const reconcile = { seedMode: "reconcile" };
    const none = () => {};
    fns.run = () => rt.run({ sessionId: "r", input: "and now?", history: prior, onEvent: none });
    fns.runReconcile = () => rt.run({ sessionId: "rr", input: "and now?", history: messages.slice(0, -1), policy: reconcile, onEvent: none });
    // The transport's run with its events enqueued as they are into a
    // ReadableStream made before it, read to the end: no mapping.
    fns.runStream = async () => {
      let ctl;
      const stream = new ReadableStream({ start(c) { ctl = c; } });
      rt.run({ sessionId: "rs", input: "and now?", history: messages.slice(0, -1), policy: reconcile, onEvent: (ev) => ctl.enqueue(ev) })
        .then(() => ctl.close(), (e) => ctl.error(e));
      const reader = stream.getReader();
      for (;;) {
        const { done } = await reader.read();
        if (done) return;
      }
    };
  }
  // The sessions of the parts' rows, emptied as often as the chats are.
  const partSessions = { run: "r", runReconcile: "rr", runStream: "rs" };
  const names = Object.keys(fns);
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < warmup + rounds; i++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length];
      const fn = fns[name];
      const chat = chats[name];
      if (chat !== undefined) await fresh(chat);
      else if (partSessions[name] !== undefined && i % CHAT_TURNS === 0) await rt.deleteSession(partSessions[name]);
      const t0 = now();
      for (let j = 0; j < batch; j++) await fn();
      const dt = (now() - t0) / batch;
      if (i >= warmup) samples[name].push(dt);
    }
  }
  const fig = { stream: summary(samples.stream), transport: summary(samples.transport), floor: summary(samples.floor) };
  if (parts) {
    fig.run = summary(samples.run);
    fig.runReconcile = summary(samples.runReconcile);
    fig.runStream = summary(samples.runStream);
  }
  fig.ratio = fig.transport.median / fig.stream.median;
  fig.overFloor = (fig.transport.median - fig.floor.median) / fig.stream.median;
  const per = Math.floor(rounds / blocks);
  fig.blocks = [];
  for (let b = 0; b < blocks && per > 0; b++) {
    const part = (n) => summary(samples[n].slice(b * per, (b + 1) * per)).median;
    fig.blocks.push(part("transport") / part("stream"));
  }
  fig.events = events;
  fig.chunks = chunks.length;
  return fig;
}
