// The jsmodel section's cold-seed row alone (bench/run.mjs): a seed of
// 1,000 messages through js/glue.js with the JavaScript model that reads
// the messages, against the plain-JavaScript peer, in one Node process,
// each seed after an idle turn of the event loop and a forced collection,
// the contenders in a rotating order, as the harness seeds them. With
// AGENTRT_BASE a second build's glue is seeded too, interleaved with the
// first, against the same peer in the same process; at 41 seeds two
// glues in one process were too far apart to compare builds by, so
// compare them in separate processes, interleaved, with AGENTRT_DIST.
// With BENCH_MARKS=1 the glue runs from a copy of its bundle with
// performance.now() marks around the driver's steps (see MARKS), and
// the median of each step is printed.
//
//	node --expose-gc bench/seedrow.mjs
//
// Environment:
//
//	AGENTRT_DIST       the built dist/ directory (default: <repo>/dist)
//	AGENTRT_BASE       a second built dist/ directory, seeded interleaved
//	BENCH_SEED_N       messages per seed (default 1000)
//	BENCH_SEED_WARMUP  warm-up seeds per contender (default 10, as run.mjs)
//	BENCH_SEED_ROUNDS  measured seeds per contender (default 41, as run.mjs)
//	BENCH_MARKS=1      the marks of each glue's steps
//
// It prints medians; it asserts nothing about speed.

import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import os from "node:os";
import { makeHistory } from "./history.mjs";
import { createPeer } from "./baselines/peer.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const gc = globalThis.gc ?? (() => {});
const N = Number(process.env.BENCH_SEED_N || 1000);
const WARMUP = Number(process.env.BENCH_SEED_WARMUP || 10);
const ROUNDS = Number(process.env.BENCH_SEED_ROUNDS || 41);
const marks = process.env.BENCH_MARKS === "1";

// The model of run.mjs's jsmodel section: it reads the array and the
// latest message.
const reading = (req) => {
  const m = req.messages;
  const last = m[m.length - 1];
  if (typeof last.content !== "string" || m.length === 0) throw new Error("bench: bad request");
  return { content: "ok" };
};

// MARKS are the edits that put marks into a copy of dist/glue.js: [anchor,
// replacement], each anchor found in the bundle or the script stops. The
// steps: pre (run() to the driver's begin, the idle moment's timer
// included), idle (that timer alone), pack (packHistory with the mirror
// and the size checks), frame (the begin frame), begin (the export call:
// the copy into linear memory and the module's begin), act (decoding its
// action), post (the model, the reply's export call and the Result, to
// the caller's await).
const MARKS = [
  ["  run(request) {\n", "  run(request) {\n    globalThis.__seedrow.r0 = performance.now();\n"],
  ["  begin(t) {\n", "  begin(t) {\n    globalThis.__seedrow.add(\"pre\", globalThis.__seedrow.r0);\n"],
  ["    idleLater(inst);\n", "    { const t0 = performance.now(); idleLater(inst); globalThis.__seedrow.add(\"idle\", t0); }\n"],
  ["      if (this.#memoSession === sessionId) packed = packHistory(", "      const t0 = performance.now();\n      if (this.#memoSession === sessionId) packed = packHistory("],
  ["      this.checkSeed(packed, history, policy);\n", "      this.checkSeed(packed, history, policy);\n      globalThis.__seedrow.add(\"pack\", t0);\n"],
  ["    const frame = writeBegin(", "    const t1 = performance.now();\n    const frame = writeBegin("],
  ["    const first = this.action(this.call(this.#ex.agentrt_begin, frame));",
    "    const t2 = globalThis.__seedrow.add(\"frame\", t1);\n    const bytes = this.call(this.#ex.agentrt_begin, frame);\n" +
    "    const t3 = globalThis.__seedrow.add(\"begin\", t2);\n    const first = this.action(bytes);\n    globalThis.__seedrow.b1 = globalThis.__seedrow.add(\"act\", t3);"],
];

// markedGlue writes a copy of dist's glue.js with MARKS into dir and
// returns its path.
function markedGlue(dist, dir) {
  let s = readFileSync(join(dist, "glue.js"), "utf8");
  for (const [anchor, by] of MARKS) {
    const parts = s.split(anchor);
    if (parts.length < 2) throw new Error(`seedrow: ${join(dist, "glue.js")} has no ${JSON.stringify(anchor.trim())}: update MARKS`);
    s = parts.join(by);
  }
  const path = join(dir, "glue.js");
  writeFileSync(path, s);
  return path;
}

// The marks of the seed being timed, by step.
globalThis.__seedrow = {
  r0: 0, b1: 0, steps: {},
  add(step, since) {
    const now = performance.now();
    this.steps[step] = (this.steps[step] ?? 0) + now - since;
    return now;
  },
};

const median = (a) => [...a].sort((x, y) => x - y)[Math.ceil(a.length / 2) - 1];

async function glueContender(name, dist) {
  let gluePath = join(dist, "glue.js");
  let tmp;
  if (marks) {
    tmp = mkdtempSync(join(os.tmpdir(), "agentrt-seedrow-"));
    gluePath = markedGlue(dist, tmp);
  }
  const glue = await import(pathToFileURL(gluePath).href);
  const module = await WebAssembly.compile(readFileSync(join(dist, "agentrt.wasm")));
  const rt = await glue.loadRuntime({
    wasm: module, wasmExec: join(dist, "wasm_exec.js"), model: reading,
    limits: { maxSeedMessages: 20000, maxMessagesPerSession: 40000 },
  });
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  return {
    name, glue: true,
    seed: (id, h) => rt.run({ sessionId: id, input: "next question", history: h }),
    drop: (id) => rt.deleteSession(id),
  };
}

const dist = resolve(process.env.AGENTRT_DIST || join(root, "dist"));
const contenders = [await glueContender("glue.js", dist)];
if (process.env.AGENTRT_BASE) contenders.push(await glueContender("glue.js (base)", resolve(process.env.AGENTRT_BASE)));
const peer = createPeer({ model: reading });
contenders.push({
  name: "JS peer",
  seed: (id, h) => peer.startRunWithHistory(id, "next question", h),
  drop: (id) => peer.deleteSession(id),
});

const history = makeHistory(N);
const samples = new Map(contenders.map((c) => [c.name, []]));
const steps = new Map(contenders.map((c) => [c.name, {}]));
const idle = () => new Promise((ok) => setTimeout(ok, 0));
for (let round = 0; round < WARMUP + ROUNDS; round++) {
  for (let k = 0; k < contenders.length; k++) {
    const c = contenders[(round + k) % contenders.length];
    const id = "seed-" + round;
    await idle();
    gc();
    const m = globalThis.__seedrow;
    m.steps = {};
    const t0 = performance.now();
    const res = await c.seed(id, history);
    const t = performance.now() - t0;
    if (res.messageCount !== N + 2) throw new Error(`${c.name}: seeding gave ${res.messageCount} messages`);
    c.drop(id);
    if (round < WARMUP) continue;
    samples.get(c.name).push(t);
    if (marks && c.glue) {
      m.steps.post = t0 + t - m.b1;
      for (const [step, v] of Object.entries(m.steps)) (steps.get(c.name)[step] ??= []).push(v);
    }
  }
}

const peerMedian = median(samples.get("JS peer"));
console.log(`cold seed of ${N.toLocaleString("en")} messages, ${WARMUP} warm-up and ${ROUNDS} measured seeds per contender, load ${os.loadavg().map((v) => v.toFixed(1)).join(" ")}`);
for (const c of contenders) {
  const md = median(samples.get(c.name));
  let line = `${c.name.padEnd(16)} ${md.toFixed(3)} ms  ${(md / peerMedian).toFixed(2)}x peer`;
  const st = steps.get(c.name);
  if (Object.keys(st).length > 0) line += "\n  medians: " + Object.entries(st).map(([k, v]) => `${k} ${median(v).toFixed(3)}`).join(", ");
  console.log(line);
}
