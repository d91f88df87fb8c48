// One run of bench/vs.mjs in a fresh Node process: one build's glue and
// module (the dist/ directory given) against the plain-JavaScript peer,
// with a JavaScript model that reads the messages it is handed, on the
// four rows of the side-by-side table: cold seeds of 1,000 and 10,000
// messages and warm turns on sessions of 100 and 5,000 messages. The two
// contenders alternate in a rotating order after warm-up rounds, as in
// bench/run.mjs's jsmodel section. It prints one line of JSON: per row,
// the medians of both contenders in milliseconds.
//
//   node --expose-gc bench/vs/child.mjs '{"dist":"...","short":false}'

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { makeHistory } from "../history.mjs";
import { createPeer } from "../baselines/peer.mjs";

const o = JSON.parse(process.argv[2] ?? "{}");
const gc = globalThis.gc ?? (() => {});

// Rounds per row; short is the developer's quick check.
const SEED_WARMUP = o.short ? 6 : 10;
const SEED_ROUNDS = o.short ? 11 : 31;
const TURN_WARMUP = o.short ? 8 : 15;
const TURN_BATCHES = o.short ? 12 : 30;
const TURN_BATCH = 10;

const reading = (req) => {
  const m = req.messages;
  const last = m[m.length - 1];
  if (m.length === 0 || typeof last.content !== "string") throw new Error("vs: bad request");
  return { content: "ok" };
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[(s.length - 1) >> 1] : NaN;
};
const idle = () => new Promise((resolve) => setTimeout(resolve, 0));

async function timed(fn) {
  const t0 = performance.now();
  const r = await fn();
  return [performance.now() - t0, r];
}

// seeding times a cold seed of history per contender and round, each
// after an idle event loop and a forced collection.
async function seeding(contenders, history) {
  const out = contenders.map(() => []);
  for (let round = 0; round < SEED_WARMUP + SEED_ROUNDS; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const i = (round + k) % contenders.length;
      const c = contenders[i];
      const id = "seed-" + round;
      await idle();
      gc();
      const [t, res] = await timed(() => c.seed(id, "next question", history));
      if (res.messageCount !== history.length + 2) throw new Error(`${c.name}: seeding gave ${res.messageCount} messages`);
      c.drop(id);
      if (round >= SEED_WARMUP) out[i].push(t);
    }
  }
  return out.map(median);
}

// turns times warm turns on a session of prior.length + 2 messages and
// more, reseeded (untimed) every TURN_BATCH turns.
async function turns(contenders, prior, batches) {
  const out = contenders.map(() => []);
  const n = prior.length + 2;
  for (let round = 0; round < TURN_WARMUP + batches; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const i = (round + k) % contenders.length;
      const c = contenders[i];
      c.drop("warm");
      const r0 = await c.seed("warm", "warm up", prior);
      if (r0.messageCount !== n) throw new Error(`${c.name}: warm session has ${r0.messageCount} messages`);
      gc();
      for (let j = 0; j < TURN_BATCH; j++) {
        const [t, res] = await timed(() => c.turn("warm", "next"));
        if (res.reply.content !== "ok" || res.messageCount !== n + 2 + 2 * j) {
          throw new Error(`${c.name}: turn ${j} gave ${res.messageCount} messages`);
        }
        if (round >= TURN_WARMUP) out[i].push(t);
      }
    }
  }
  return out.map(median);
}

try {
  const glue = await import(pathToFileURL(join(o.dist, "glue.js")).href);
  const module = await WebAssembly.compile(readFileSync(join(o.dist, "agentrt.wasm")));
  const limits = { maxSeedMessages: 20000, maxMessagesPerSession: 40000 };
  const rt = await glue.loadRuntime({ wasm: module, wasmExec: join(o.dist, "wasm_exec.js"), model: reading, limits });
  const peer = createPeer({ model: reading });
  const contenders = [
    {
      name: "agentrt",
      seed: (id, input, history) => rt.run({ sessionId: id, input, history }),
      turn: (id, input) => rt.run({ sessionId: id, input }),
      drop: (id) => rt.deleteSession(id),
    },
    {
      name: "peer",
      seed: (id, input, history) => peer.startRunWithHistory(id, input, history),
      turn: (id, input) => peer.startRun(id, input),
      drop: (id) => peer.deleteSession(id),
    },
  ];
  const rows = {};
  // o.rows, when given, names the rows to run (their keys below).
  const want = (key) => !Array.isArray(o.rows) || o.rows.includes(key);
  for (const n of [1000, 10000].filter((n) => want("seed" + n))) {
    const [a, p] = await seeding(contenders, makeHistory(n));
    rows["seed" + n] = { agentrt: a, peer: p };
  }
  for (const n of [100, 5000].filter((n) => want("turn" + n))) {
    const [a, p] = await turns(contenders, makeHistory(n).slice(0, n - 2), n > 1000 ? Math.ceil(TURN_BATCHES / 2) : TURN_BATCHES);
    rows["turn" + n] = { agentrt: a, peer: p };
  }
  rt.close();
  console.log(JSON.stringify({ rows }));
} catch (e) {
  console.log(JSON.stringify({ error: String(e && e.stack ? e.stack : e) }));
}
// A Go instance never exits on its own.
process.exit(0);
