// Two builds in one Node process: each build's glue and module loaded
// side by side (two module graphs, two instances), their warm turns
// alternating batch by batch, and the quotient of the medians. Where
// bench/vs.mjs runs each build in a fresh process of its own and divides
// by the peer in that process, this takes out the variation between
// processes (a JIT's choices, the machine's load at that moment): on the
// 2-core machine three runs gave the same ratio to within 0.03, where
// the pairs of bench/vs.mjs spread over 0.9-1.4x (docs/BENCHMARKS.md,
// "Against another build").
//
//   node --expose-gc bench/vs/together.mjs --base DIR [--this DIR] [--size N] [--rounds N]
//
// Each round, in a rotating order, each build deletes and seeds its
// session of size-2 messages (untimed), then runs 10 warm turns with a
// JavaScript model that reads its messages (a model of its own per
// build, so that their feedback is not shared); the first 3 turns after
// the seed are left out (the forced collection before them makes them
// slow in both builds), and the first 10 rounds are warm-up. It prints
// one line of JSON: each build's median turn in microseconds and this
// build's against the base's.

import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { makeHistory } from "../history.mjs";

/** Reads the command line; throws on a bad argument, by name. */
export function parseArgs(argv) {
  const o = { base: undefined, this: resolve("dist"), size: 100, rounds: 100 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith("--")) throw new Error(`${a} needs a value`);
      return v;
    };
    const whole = (v, min) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < min) throw new Error(`${a} must be a whole number of at least ${min}, not ${v}`);
      return n;
    };
    if (a === "--base") o.base = value();
    else if (a === "--this") o.this = value();
    else if (a === "--size") o.size = whole(value(), 3);
    else if (a === "--rounds") o.rounds = whole(value(), 1);
    else throw new Error(`unknown argument ${a}`);
  }
  if (o.base === undefined) throw new Error("--base DIR (the base build's dist/) is required");
  return o;
}

const WARMUP = 10;
const TURNS = 10;
const SKIP = 3;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[(s.length - 1) >> 1] : NaN;
};

// The model each build is handed: the same text, a function of its own.
const MODEL = `const m = req.messages; const last = m[m.length - 1];
if (m.length === 0 || typeof last.content !== "string") throw new Error("together: bad request");
return { content: "ok" };`;

async function load(dir, tag) {
  const glue = await import(`${pathToFileURL(join(dir, "glue.js")).href}?${tag}`);
  const module = await WebAssembly.compile(readFileSync(join(dir, "agentrt.wasm")));
  const model = new Function("req", `// ${tag}\n${MODEL}`);
  const limits = { maxSeedMessages: 20000, maxMessagesPerSession: 40000 };
  return glue.loadRuntime({ wasm: module, wasmExec: join(dir, "wasm_exec.js"), model, limits });
}

/** Runs the measurement; returns { this, base, ratio } (microseconds, quotient). */
export async function measure(o) {
  const gc = globalThis.gc ?? (() => {});
  const builds = [
    { name: "this", rt: await load(o.this, "this"), t: [] },
    { name: "base", rt: await load(o.base, "base"), t: [] },
  ];
  const prior = makeHistory(o.size).slice(0, o.size - 2);
  for (let round = 0; round < WARMUP + o.rounds; round++) {
    for (let k = 0; k < builds.length; k++) {
      const b = builds[(round + k) % builds.length];
      await b.rt.deleteSession("warm");
      const seeded = await b.rt.run({ sessionId: "warm", input: "warm up", history: prior });
      if (seeded.messageCount !== o.size) throw new Error(`${b.name}: the session has ${seeded.messageCount} messages`);
      gc();
      for (let j = 0; j < TURNS; j++) {
        const t0 = performance.now();
        const res = await b.rt.run({ sessionId: "warm", input: "next" });
        const t = performance.now() - t0;
        if (res.reply.content !== "ok") throw new Error(`${b.name}: turn ${j} answered ${res.reply.content}`);
        if (round >= WARMUP && j >= SKIP) b.t.push(t);
      }
    }
  }
  for (const b of builds) b.rt.close();
  const us = (b) => median(b.t) * 1000;
  return { this: us(builds[0]), base: us(builds[1]), ratio: median(builds[0].t) / median(builds[1].t), turns: builds[0].t.length };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`together: ${e.message}`);
    process.exit(2);
  }
  const r = await measure(o);
  console.log(JSON.stringify(r));
  // A Go instance never exits on its own.
  process.exit(0);
}
