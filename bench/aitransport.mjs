// The AI SDK transport's cost (docs/ai-sdk.md, "Bench"): the same warm
// turn through AgentrtChatTransport (its stream of UIMessageChunks read
// to the end) and through rt.stream (its events read to the end), on one
// runtime, interleaved, each on a session of its own that holds the same
// conversation. The model is a JavaScript function that streams three
// deltas; each turn passes the chat's UIMessages as its history (a warm
// session: seed mode noop), as useChat does. Target: the transport's
// median <= 1.2x rt.stream's.
//
//   node bench/aitransport.mjs [--rounds N]      (after `make build`)
//
// BENCH_JSON=path also writes the figures as JSON. Needs `npm ci` (ai).
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const dist = resolve(process.env.AGENTRT_DIST || "dist");
const { loadRuntime } = await import(pathToFileURL(`${dist}/glue.js`).href);
const { AgentrtChatTransport } = await import(pathToFileURL(`${dist}/ai.js`).href);

const arg = process.argv.indexOf("--rounds");
const rounds = arg > 0 ? Number(process.argv[arg + 1]) : 400;
const WARMUP = 50;
const PRIOR = 20; // UIMessages of the conversation before each turn

const model = (req) => {
  req.delta("The answer ");
  req.delta("is ");
  req.delta("forty-two.");
  return { content: "The answer is forty-two." };
};
const rt = await loadRuntime({ wasm: readFileSync(`${dist}/agentrt.wasm`), wasmExec: pathToFileURL(`${dist}/wasm_exec.js`), model });
const transport = new AgentrtChatTransport({ runtime: rt });

const prior = [];
for (let i = 0; i < PRIOR / 2; i++) {
  prior.push({ id: `u${i}`, role: "user", parts: [{ type: "text", text: `question ${i}` }] });
  prior.push({ id: `a${i}`, role: "assistant", parts: [{ type: "step-start" }, { type: "text", text: `answer ${i}` }] });
}
const input = { id: "u-next", role: "user", parts: [{ type: "text", text: "and now?" }] };

async function viaTransport() {
  const stream = await transport.sendMessages({ trigger: "submit-message", chatId: "t", messageId: undefined, messages: [...prior, input], abortSignal: undefined });
  const reader = stream.getReader();
  let n = 0;
  for (;;) {
    const { done } = await reader.read();
    if (done) return n;
    n++;
  }
}

async function viaStream() {
  let n = 0;
  for await (const ev of rt.stream({ sessionId: "s", input: "and now?", history: prior })) n += ev ? 1 : 0;
  return n;
}

const samples = { transport: [], stream: [] };
for (let i = 0; i < WARMUP + rounds; i++) {
  for (const [name, fn] of i % 2 ? [["transport", viaTransport], ["stream", viaStream]] : [["stream", viaStream], ["transport", viaTransport]]) {
    const t0 = performance.now();
    await fn();
    const dt = performance.now() - t0;
    if (i >= WARMUP) samples[name].push(dt);
  }
}
rt.close();

function summary(v) {
  const s = [...v].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], p99: s[Math.min(s.length - 1, Math.floor(s.length * 0.99))], n: s.length };
}
const fig = { transport: summary(samples.transport), stream: summary(samples.stream) };
fig.ratio = fig.transport.median / fig.stream.median;
const us = (v) => `${(v * 1000).toFixed(0)} µs`;
const pad = (s, n) => String(s).padEnd(n);
console.log(`AI SDK transport: a warm turn, ${PRIOR} prior UIMessages, 3 deltas (${rounds} interleaved rounds after ${WARMUP}), node ${process.version}`);
console.log(`${pad("", 44)}${pad("median", 10)}${pad("p99", 10)}n`);
console.log(`  ${pad("rt.stream, events read", 42)}${pad(us(fig.stream.median), 10)}${pad(us(fig.stream.p99), 10)}${fig.stream.n}`);
console.log(`  ${pad("AgentrtChatTransport, chunks read", 42)}${pad(us(fig.transport.median), 10)}${pad(us(fig.transport.p99), 10)}${fig.transport.n}   ${fig.ratio.toFixed(2)}x rt.stream`);
console.log(`  ${fig.ratio <= 1.2 ? "MET " : "MISS"}  the transport's turn <= 1.2x rt.stream's     ${fig.ratio.toFixed(2)}x`);
if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(fig, null, 2) + "\n");
process.exit(0); // the Go instance never exits on its own
