// agentrt's benchmark harness (docs/BENCHMARKS.md). In one Node process it
// loads the built module twice, through js/glue.js (history sent packed)
// and raw (wasm_exec.js and the global's createRuntime, history passed as
// arrays), next to the two JS baselines (bench/baselines), and measures
// each figure with the contenders alternating side by side: warm-up
// rounds, then interleaved rounds in a rotating order, medians and p99.
// It prints one table with ratios and a verdict for each target.
//
//	node --expose-gc bench/run.mjs
//
// Environment:
//
//	AGENTRT_DIST   the built dist/ directory (default: <repo>/dist)
//	BENCH_GO       output of `go test -bench` for bench/gocore (native rows)
//	BENCH_MINIMAL  a minimal syscall/js module, for the size ratio
//	BENCH_OPT      the module after wasm-opt, for its size and a smoke run
//	BENCH_JSON     write the figures as JSON to this path too
//	BENCH_QUICK=1  few rounds and small sizes: checks the harness, not speed
//	BENCH_ONLY     comma-separated sections to run (jsmodel, stringify,
//	               ifhead, seed, turn, cold, heap, size); default all.
//	               Targets of skipped sections are n/a.
//	BENCH_SEED_WARMUP  warm-up seeds per contender before the jsmodel
//	               section's cold seeds are measured (default 10)
//	BENCH_SEED_ROUNDS  measured cold seeds per contender in the jsmodel
//	               and stringify sections (default 41)
//	BENCH_NO_IDLE=1    those seeds back to back, without letting the event
//	               loop turn between them
//	BENCH_IFHEAD_BATCHES  measured batches of warm turns per contender and
//	               session size in the ifhead section (default 100)
//	BENCH_IFHEAD_BLOCK    batches per block of the ifhead section's ratios
//	               (default 10)
//
// Benchmarks print; they never assert timings.

import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import os from "node:os";
import { makeHistory, historyBytes } from "./history.mjs";
import { createLean } from "./baselines/lean.mjs";
import { createPeer } from "./baselines/peer.mjs";
import { IFHEAD_BAR, IFHEAD_SIZES, PLAIN, WITH_HEAD, ifHeadContenders, ifHeadFigure, ifHeadRatios, ifHeadTable, ifHeadTarget } from "./ifhead.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..");
const dist = resolve(process.env.AGENTRT_DIST || join(root, "dist"));
const quick = process.env.BENCH_QUICK === "1";
const gc = globalThis.gc ?? (() => {});
const only = (process.env.BENCH_ONLY || "").split(",").map((v) => v.trim()).filter(Boolean);
const want = (section) => only.length === 0 || only.includes(section);

const SEED_N = quick ? 1000 : 10000;
const SEED_ROUNDS = quick ? 3 : 25;
const SEED_WARMUP = quick ? 1 : 3;
const TURN_BATCHES = quick ? 4 : 150; // of TURN_BATCH turns each
const TURN_BATCH = 10;
const TURN_WARMUP = quick ? 1 : 15;
const COLD_SAMPLES = quick ? 2 : 6;
const HEAP_N = quick ? 10000 : 100000;

const instant = () => ({ content: "ok" });

// reading is the JavaScript model of the jsmodel section: it is handed the
// session's messages and reads the array and the latest message, as a
// model that builds its request does (its own cost does not grow with the
// session, so the figures show what delivering the messages costs).
const reading = (req) => {
  const m = req.messages;
  const last = m[m.length - 1];
  if (typeof last.content !== "string" || m.length === 0) throw new Error("bench: bad request");
  return { content: "ok" };
};

// stringifying is the model of the stringify section: it serializes every
// message it is handed (JSON.stringify of the array), as a model that
// sends the whole conversation to an HTTP API does. Its cost grows with
// the session: the figures show what reading each message object costs.
let stringified = 0;
const stringifying = (req) => {
  stringified += JSON.stringify(req.messages).length;
  return { content: "ok" };
};

const JS_SEED_NS = quick ? [1000] : [1000, 10000];
// The stringify section's seed sizes.
const STRINGIFY_NS = quick ? [1000] : [1000, 10000];
// Measured cold seeds per contender: a seed of 1,000 messages takes about
// a millisecond, and some samples hold a collection of the Go heap, so
// the median of 15 moved by a fifth between runs; BENCH_SEED_ROUNDS sets it.
const JS_SEED_ROUNDS = quick ? 2 : Number(process.env.BENCH_SEED_ROUNDS || 41);
// Seeds before the measured ones, per contender. V8 runs a module's
// functions in its baseline compiler first and optimizes the hot ones
// after some use: the module's decoding ran at about half speed for the
// first nine or so seeds, and three warm-up rounds measured that. The
// first seed of a new instance is the cold-start figure
// (bench/coldstart.mjs); BENCH_SEED_WARMUP sets this one.
const JS_SEED_WARMUP = quick ? 1 : Number(process.env.BENCH_SEED_WARMUP || 10);
const JS_TURN_SIZES = quick ? [100] : [100, 5000];
const JS_TURN_BATCHES = quick ? 3 : 40;
// The ifhead section's batches of TURN_BATCH warm turns per contender and
// size, and how many batches make one block of its ratios: 10 blocks of
// 100 turns each by default.
const IFHEAD_BATCHES = quick ? 4 : Number(process.env.BENCH_IFHEAD_BATCHES || 100);
const IFHEAD_BLOCK = quick ? 2 : Number(process.env.BENCH_IFHEAD_BLOCK || 10);

// ---------------------------------------------------------------------------
// Statistics and formatting

function summary(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
  return { n: s.length, median: at(0.5), p99: at(0.99), min: s[0], max: s[s.length - 1] };
}

function ms(v) {
  if (v === undefined || Number.isNaN(v)) return "-";
  if (v < 1) return (v * 1000).toFixed(1) + " µs";
  if (v < 100) return v.toFixed(2) + " ms";
  return v.toFixed(0) + " ms";
}

const x = (a, b) => (a && b ? a / b : NaN);
const fx = (r) => (Number.isFinite(r) ? (r >= 10 ? r.toFixed(0) : r.toFixed(2)) + "x" : "-");
const mb = (n) => (n / 1e6).toFixed(2) + " MB";

async function timed(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

// ---------------------------------------------------------------------------
// Loading the module

function loadGoClass() {
  const file = join(dist, "wasm_exec.js");
  if (typeof globalThis.Go !== "function") createRequire(import.meta.url)(file);
  return globalThis.Go;
}

let rawInstances = 0;

// rawRuntime starts a new Go instance of module the way a host without
// the glue does, and returns its createRuntime(config), the instance's
// memory, and how long each step took.
async function rawRuntime(module, config) {
  const Go = loadGoClass();
  const name = "agentrt_bench_" + ++rawInstances;
  const go = new Go();
  go.argv = ["agentrt"];
  go.env = { AGENTRT_GLOBAL: name };
  const t0 = performance.now();
  const instance = await WebAssembly.instantiate(module, go.importObject);
  go.run(instance);
  for (let i = 0; i < 100 && !globalThis[name]; i++) await new Promise((ok) => setTimeout(ok, 0));
  const api = globalThis[name];
  if (!api || typeof api.createRuntime !== "function") throw new Error("the module did not publish globalThis." + name);
  const t1 = performance.now();
  const rt = api.createRuntime(config);
  const t2 = performance.now();
  return { rt, memory: instance.exports.mem, version: api.version, startMs: t1 - t0, createMs: t2 - t1 };
}

// ---------------------------------------------------------------------------
// Contenders. Each has seed(sessionId, input, history) and turn(sessionId,
// input, history?) returning a Result-like object, and drop(sessionId).

function moduleContender(name, rt, packer) {
  return {
    name,
    seed: (id, input, history) => rt.startRunWithHistory(id, input, packer ? packer(history) : history),
    turn: (id, input, history) =>
      history ? rt.startRunWithHistory(id, input, packer ? packer(history) : history) : rt.startRun(id, input),
    drop: (id) => rt.deleteSession(id),
  };
}

function glueContender(name, rt) {
  return {
    name,
    seed: (id, input, history) => rt.run({ sessionId: id, input, history }),
    turn: (id, input, history) => rt.run(history ? { sessionId: id, input, history } : { sessionId: id, input }),
    drop: (id) => rt.deleteSession(id),
  };
}

function jsContender(name, rt) {
  return {
    name,
    seed: (id, input, history) => rt.startRunWithHistory(id, input, history),
    turn: (id, input, history) => (history ? rt.startRunWithHistory(id, input, history) : rt.startRun(id, input)),
    drop: (id) => rt.deleteSession(id),
  };
}

// ---------------------------------------------------------------------------
// Measurements

// seeding seeds history into a new, cold session of every contender per
// round, in a rotating order, and returns each one's samples.
async function seeding(contenders, history) {
  const samples = new Map(contenders.map((c) => [c.name, []]));
  const total = SEED_WARMUP + SEED_ROUNDS;
  for (let round = 0; round < total; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const c = contenders[(round + k) % contenders.length];
      const id = "seed-" + round;
      gc();
      let res;
      const t = await timed(async () => { res = await c.seed(id, "next question", history); });
      const seeded = res.seed ? res.seed.seeded : history.length;
      if (res.messageCount !== history.length + 2 || seeded !== history.length) {
        throw new Error(`${c.name}: seeding gave ${res.messageCount} messages (${seeded} seeded)`);
      }
      c.drop(id);
      if (round >= SEED_WARMUP) samples.get(c.name).push(t);
    }
  }
  return samples;
}

// warmTurns times single turns on a session kept between 100 and 120
// messages (reseeded, untimed, every TURN_BATCH turns), with the host
// passing its 98 prior turns again when withHistory is set.
async function warmTurns(contenders, history98, withHistory) {
  const samples = new Map(contenders.map((c) => [c.name, []]));
  const total = TURN_WARMUP + TURN_BATCHES;
  for (let round = 0; round < total; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const c = contenders[(round + k) % contenders.length];
      c.drop("warm");
      const r0 = await c.seed("warm", "warm up", history98);
      if (r0.messageCount !== 100) throw new Error(`${c.name}: warm session has ${r0.messageCount} messages`);
      gc();
      const out = samples.get(c.name);
      for (let i = 0; i < TURN_BATCH; i++) {
        let res;
        const t = await timed(async () => { res = await c.turn("warm", "next", withHistory ? history98 : undefined); });
        if (res.reply.content !== "ok" || res.messageCount !== 102 + 2 * i) {
          throw new Error(`${c.name}: turn ${i} gave ${res.messageCount} messages`);
        }
        if (round >= TURN_WARMUP) out.push(t);
      }
    }
  }
  return samples;
}

// idle lets the event loop turn once: a host's turns are apart, and its
// event loop runs its timers between them (the glue's is Go's idle
// moment, js/idle.js). BENCH_NO_IDLE=1 seeds back to back, as the
// harness did before.
const noIdle = process.env.BENCH_NO_IDLE === "1";
const idle = () => (noIdle ? undefined : new Promise((resolve) => setTimeout(resolve, 0)));

// seedingN is seeding with rounds rounds (the jsmodel and stringify
// sections), each seed after an idle event loop and a forced collection.
async function seedingN(contenders, history, rounds) {
  const samples = new Map(contenders.map((c) => [c.name, []]));
  for (let round = 0; round < JS_SEED_WARMUP + rounds; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const c = contenders[(round + k) % contenders.length];
      const id = "jseed-" + round;
      await idle();
      gc();
      let res;
      const t = await timed(async () => { res = await c.seed(id, "next question", history); });
      if (res.messageCount !== history.length + 2) throw new Error(`${c.name}: seeding gave ${res.messageCount} messages`);
      c.drop(id);
      if (round >= JS_SEED_WARMUP) samples.get(c.name).push(t);
    }
  }
  return samples;
}

// warmTurnsOn times single turns on a session of prior.length + 2
// messages and more (reseeded, untimed, every TURN_BATCH turns), with the
// host passing prior again when withHistory is set.
async function warmTurnsOn(contenders, prior, withHistory, batches) {
  const samples = new Map(contenders.map((c) => [c.name, []]));
  const n = prior.length + 2;
  for (let round = 0; round < TURN_WARMUP + batches; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const c = contenders[(round + k) % contenders.length];
      c.drop("warm");
      const r0 = await c.seed("warm", "warm up", prior);
      if (r0.messageCount !== n) throw new Error(`${c.name}: warm session has ${r0.messageCount} messages`);
      gc();
      const out = samples.get(c.name);
      for (let i = 0; i < TURN_BATCH; i++) {
        let res;
        const t = await timed(async () => { res = await c.turn("warm", "next", withHistory ? prior : undefined); });
        if (res.reply.content !== "ok" || res.messageCount !== n + 2 + 2 * i) {
          throw new Error(`${c.name}: turn ${i} gave ${res.messageCount} messages`);
        }
        if (round >= TURN_WARMUP) out.push(t);
      }
    }
  }
  return samples;
}

// coldStarts times, from the compiled module, a new instance to its first
// completed run, raw and through the glue, alternating.
async function coldStarts(module, glue) {
  const raw = [], viaGlue = [], parts = { start: [], create: [], run: [] };
  for (let i = 0; i < COLD_SAMPLES; i++) {
    gc();
    raw.push(await timed(async () => {
      const r = await rawRuntime(module, {});
      const t = performance.now();
      const res = await r.rt.startRun("s", "hello");
      parts.start.push(r.startMs);
      parts.create.push(r.createMs);
      parts.run.push(performance.now() - t);
      if (res.status !== "completed") throw new Error("cold run did not complete");
      r.rt.close();
    }));
    if (glue) {
      gc();
      viaGlue.push(await timed(async () => {
        const rt = await glue.loadRuntime({ wasm: module, wasmExec: join(dist, "wasm_exec.js") });
        await rt.run({ sessionId: "s", input: "hello" });
        rt.close();
      }));
    }
  }
  return { raw, viaGlue, parts };
}

// heapPerMessage seeds HEAP_N messages into a fresh instance and reports
// how much its linear memory grew (an upper bound of the Go heap: memory
// never shrinks and holds garbage not yet collected), and the module's
// own heap figure (stats().heapAlloc after a collection) if it reports
// one.
async function heapPerMessage(module, packer) {
  const limits = { maxMessagesPerSession: 2 * HEAP_N, maxSeedMessages: HEAP_N, maxSessionBytes: 1 << 30, maxSeedBytes: 1 << 30, maxTotalBytes: 2 ** 31 };
  const r = await rawRuntime(module, { limits });
  await r.rt.startRun("warm", "hello");
  const history = makeHistory(HEAP_N);
  const text = historyBytes(history);
  const arg = packer ? packer(history) : history;
  // stats({gc: true}) collects garbage before reading the heap, so that
  // heapAlloc counts live objects (modules without it ignore the option).
  const st0 = r.rt.stats({ gc: true });
  const before = r.memory.buffer.byteLength;
  const res = await r.rt.startRunWithHistory("big", "next question", arg);
  if (res.seed.seeded !== HEAP_N) throw new Error("heap: seeded " + res.seed.seeded);
  const after = r.memory.buffer.byteLength;
  const st1 = r.rt.stats({ gc: true });
  const heapKey = ["heapAlloc", "heapBytes", "goHeapBytes"].find((k) => typeof st1[k] === "number");
  r.rt.close();
  return {
    n: HEAP_N, textPerMsg: text / HEAP_N, growthPerMsg: (after - before) / HEAP_N,
    memBefore: before, memAfter: after,
    heapPerMsg: heapKey ? (st1[heapKey] - st0[heapKey]) / HEAP_N : undefined, heapKey,
  };
}

// smokeOptimized loads the wasm-opt output raw, seeds and runs a turn, and
// checks the reply against the unoptimized module's.
async function smokeOptimized(module, optBytes, packer) {
  const optModule = await WebAssembly.compile(optBytes);
  const h = makeHistory(100);
  const replies = [];
  for (const m of [module, optModule]) {
    const r = await rawRuntime(m, {});
    const a = await r.rt.startRunWithHistory("s", "hi", h);
    const b = await r.rt.startRunWithHistory("p", "hi", packer ? packer(h) : h);
    replies.push(a.reply.content + " | " + b.reply.content + " | " + a.messageCount);
    r.rt.close();
  }
  const ok = replies[0] === replies[1];
  return { ok, detail: ok ? replies[0] : replies.join(" vs ") };
}

function fileSize(path) {
  if (!path || !existsSync(path)) return undefined;
  const b = readFileSync(path);
  return { raw: b.length, gzip: gzipSync(b, { level: 9 }).length };
}

// goResults parses `go test -bench -benchmem` output: name -> metrics.
function goResults(path) {
  const out = new Map();
  if (!path || !existsSync(path)) return out;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const m = line.match(/^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$/);
    if (!m) continue;
    const metrics = {};
    for (const [, v, unit] of m[3].matchAll(/([\d.]+) (\S+)/g)) metrics[unit] = Number(v);
    out.set(m[1], metrics);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Main

async function main() {
  const wasmPath = join(dist, "agentrt.wasm");
  if (!existsSync(wasmPath)) {
    console.error(`bench: ${wasmPath} is missing: run \`make build\` first (or set AGENTRT_DIST)`);
    process.exit(2);
  }
  const gluePath = join(dist, "glue.js");
  const glue = existsSync(gluePath) ? await import(pathToFileURL(gluePath).href) : null;
  const packer = glue && glue.packHistory;
  const bytes = readFileSync(wasmPath);
  const compileSamples = [];
  let module;
  for (let i = 0; i < (quick ? 1 : 5); i++) {
    compileSamples.push(await timed(async () => { module = await WebAssembly.compile(bytes); }));
  }

  const history = makeHistory(SEED_N);
  const history98 = makeHistory(100).slice(0, 98);
  const go = goResults(process.env.BENCH_GO);
  const rows = [];
  const fig = { date: new Date().toISOString(), node: process.version, cpu: os.cpus()[0]?.model, quick };

  // A JavaScript model that reads the messages (the path every real host
  // takes): glue.js (the fast path), the raw module (syscall/js) and the
  // JS peer, with the same model.
  fig.jsmodel = { seed: {}, turn: {} };
  if (want("jsmodel") && glue) {
    const limits = { maxSeedMessages: 20000, maxMessagesPerSession: 40000 };
    const jsRaw = await rawRuntime(module, { model: reading, limits });
    const jsGlue = await glue.loadRuntime({ wasm: module, wasmExec: join(dist, "wasm_exec.js"), model: reading, limits });
    const contenders = [
      glueContender("glue.js (fast path)", jsGlue),
      moduleContender("raw module (syscall/js, packed)", jsRaw.rt, packer),
      jsContender("JS peer", createPeer({ model: reading })),
    ];
    for (const n of JS_SEED_NS) {
      const h = makeHistory(n);
      const S = await seedingN(contenders, h, JS_SEED_ROUNDS);
      const peer = summary(S.get("JS peer")).median;
      rows.push({ section: `JS model that reads the messages: seed ${n.toLocaleString("en")} messages into a cold session (after ${JS_SEED_WARMUP} warm-up seeds)` });
      for (const c of contenders) {
        const sm = summary(S.get(c.name));
        rows.push({ name: c.name, ...sm, ratios: `${fx(x(sm.median, peer))} peer` });
      }
      fig.jsmodel.seed[n] = Object.fromEntries([...S].map(([k, v]) => [k, summary(v)]));
    }
    for (const size of JS_TURN_SIZES) {
      for (const withHistory of size === 100 ? [false, true] : [false]) {
        const prior = makeHistory(size).slice(0, size - 2);
        const S = await warmTurnsOn(contenders, prior, withHistory, size > 1000 ? Math.ceil(JS_TURN_BATCHES / 2) : JS_TURN_BATCHES);
        const peer = summary(S.get("JS peer"));
        const key = `${size}${withHistory ? "+history" : ""}`;
        rows.push({ section: withHistory
          ? `JS model that reads the messages: warm turn on a ${size}-message session, host passes its prior turns again (noop seed)`
          : `JS model that reads the messages: warm turn on a ${size}-message session` });
        for (const c of contenders) {
          const sm = summary(S.get(c.name));
          rows.push({ name: c.name, ...sm, ratios: `${fx(x(sm.median, peer.median))} peer (p99 ${fx(x(sm.p99, peer.p99))})` });
        }
        fig.jsmodel.turn[key] = Object.fromEntries([...S].map(([k, v]) => [k, summary(v)]));
      }
    }
    jsRaw.rt.close(); jsGlue.close();
  }

  // A JavaScript model that stringifies every message it is handed: the
  // glue against the peer, side by side, as in the jsmodel section.
  fig.stringify = { seed: {} };
  if (want("stringify") && glue) {
    const limits = { maxSeedMessages: 20000, maxMessagesPerSession: 40000 };
    const sGlue = await glue.loadRuntime({ wasm: module, wasmExec: join(dist, "wasm_exec.js"), model: stringifying, limits });
    const contenders = [
      glueContender("glue.js (fast path)", sGlue),
      jsContender("JS peer", createPeer({ model: stringifying })),
    ];
    for (const n of STRINGIFY_NS) {
      const S = await seedingN(contenders, makeHistory(n), JS_SEED_ROUNDS);
      const peer = summary(S.get("JS peer")).median;
      rows.push({ section: `JS model that stringifies the messages: seed ${n.toLocaleString("en")} messages into a cold session (after ${JS_SEED_WARMUP} warm-up seeds)` });
      for (const c of contenders) {
        const sm = summary(S.get(c.name));
        rows.push({ name: c.name, ...sm, ratios: `${fx(x(sm.median, peer))} peer` });
      }
      fig.stringify.seed[n] = Object.fromEntries([...S].map(([k, v]) => [k, summary(v)]));
    }
    sGlue.close();
  }

  // What ifHead costs a warm turn (ADR 0025): the glue with the jsmodel
  // section's model, each turn with ifHead set to the previous result's
  // head against the same turn without, alternating batch by batch in one
  // runtime (bench/ifhead.mjs).
  fig.ifhead = {};
  if (want("ifhead") && glue) {
    const limits = { maxSeedMessages: 20000, maxMessagesPerSession: 40000 };
    const hGlue = await glue.loadRuntime({ wasm: module, wasmExec: join(dist, "wasm_exec.js"), model: reading, limits });
    for (const size of IFHEAD_SIZES) {
      const prior = makeHistory(size).slice(0, size - 2);
      const check = await hGlue.checkHistory(prior);
      if (!check.ok || typeof check.head !== "string") throw new Error("bench: the ifhead section's history has no head: " + JSON.stringify(check.problems));
      const contenders = ifHeadContenders(hGlue, check.head);
      const S = await warmTurnsOn(contenders, prior, false, IFHEAD_BATCHES);
      const f = ifHeadFigure(size, S.get(PLAIN), S.get(WITH_HEAD), IFHEAD_BLOCK * TURN_BATCH);
      rows.push({ section: `JS model that reads the messages: warm turn on a ${size.toLocaleString("en")}-message session, ifHead the previous result's head against none (ADR 0025)` });
      // The medians of bench/ifhead.mjs (the two middle samples' mean), as
      // its Markdown table prints them.
      rows.push({ name: PLAIN, ...summary(S.get(PLAIN)), median: f.plainMs, ratios: "" });
      rows.push({ name: WITH_HEAD, ...summary(S.get(WITH_HEAD)), median: f.ifHeadMs, ratios: ifHeadRatios(f) });
      fig.ifhead[size] = { ...f, [PLAIN]: summary(S.get(PLAIN)), [WITH_HEAD]: summary(S.get(WITH_HEAD)) };
    }
    hGlue.close();
  }

  // Seeding.
  let sGlue, sPeer, sLean, sField, sMain;
  const probe = await rawRuntime(module, {});
  const version = probe.version;
  probe.rt.close();
  if (want("seed")) {
  const seedRaw = await rawRuntime(module, {});
  const seedGlue = glue ? await glue.loadRuntime({ wasm: module, wasmExec: join(dist, "wasm_exec.js") }) : null;
  const seeders = [
    seedGlue && glueContender("glue.js (packed)", seedGlue),
    packer && moduleContender("raw module, packed", seedRaw.rt, packer),
    moduleContender("raw module, per-field arrays", seedRaw.rt, null),
    jsContender("lean JS store", createLean()),
    jsContender("JS peer", createPeer()),
  ].filter(Boolean);
  const seedS = await seeding(seeders, history);
  const seedMed = (n) => seedS.get(n) && summary(seedS.get(n)).median;
  const goSeed = go.get("BenchmarkSeed10000")?.["ns/op"] / 1e6;
  sGlue = seedMed("glue.js (packed)"); sPeer = seedMed("JS peer"); sLean = seedMed("lean JS store");
  sField = seedMed("raw module, per-field arrays");
  sMain = sGlue ?? seedMed("raw module, packed");
  rows.push({ section: `Echo model: seed ${SEED_N.toLocaleString("en")} messages into a cold session (${(historyBytes(history) / SEED_N).toFixed(0)} B avg, one run)` });
  for (const c of seeders) {
    const s = summary(seedS.get(c.name));
    rows.push({ name: c.name, ...s, ratios: `${fx(x(s.median, sLean))} lean, ${fx(x(s.median, sPeer))} peer, ${fx(x(s.median, goSeed))} Go` });
  }
  if (goSeed) rows.push({ name: "native Go core (go test, mean)", median: goSeed, ratios: "" });
  fig.seed = Object.fromEntries([...seedS].map(([k, v]) => [k, summary(v)]));
  fig.seed.nativeGoMs = goSeed;
  seedRaw.rt.close(); seedGlue?.close();
  }

  // Warm turns.
  fig.turn = {};
  if (want("turn")) {
  const turnRaw = await rawRuntime(module, { model: instant });
  const turnGlue = glue ? await glue.loadRuntime({ wasm: module, wasmExec: join(dist, "wasm_exec.js"), model: instant }) : null;
  const turners = [
    turnGlue && glueContender("glue.js", turnGlue),
    moduleContender("raw module", turnRaw.rt, null),
    jsContender("lean JS store", createLean({ model: instant })),
    jsContender("JS peer", createPeer({ model: instant })),
  ].filter(Boolean);
  for (const withHistory of [false, true]) {
    const key = withHistory ? "withHistory" : "plain";
    const turnS = await warmTurns(turners, history98, withHistory);
    const med = (n) => turnS.get(n) && summary(turnS.get(n)).median;
    const goTurn = go.get(withHistory ? "BenchmarkWarmTurn100History" : "BenchmarkWarmTurn100")?.["ns/op"] / 1e6;
    rows.push({ section: withHistory
      ? "Warm turn, host passes its 98 prior turns again (noop seed), JS model answers at once without reading"
      : "Warm turn on a 100-message session, JS model answers at once without reading" });
    for (const c of turners) {
      const s = summary(turnS.get(c.name));
      rows.push({ name: c.name, ...s, ratios: `${fx(x(s.median, med("lean JS store")))} lean, ${fx(x(s.median, med("JS peer")))} peer (p99 ${fx(x(s.p99, summary(turnS.get("JS peer")).p99))}), ${fx(x(s.median, goTurn))} Go` });
    }
    if (goTurn) rows.push({ name: "native Go core (go test, mean)", median: goTurn, ratios: "" });
    fig.turn[key] = Object.fromEntries([...turnS].map(([k, v]) => [k, summary(v)]));
    fig.turn[key].nativeGoMs = goTurn;
  }
  turnRaw.rt.close(); turnGlue?.close();
  }

  // Cold start.
  if (want("cold")) {
  const cold = await coldStarts(module, glue);
  const cs = summary(compileSamples);
  rows.push({ section: "Cold start (samples alternate raw and glue)" });
  rows.push({ name: "compile agentrt.wasm (WebAssembly.compile)", ...cs, ratios: "" });
  rows.push({ name: "raw: instantiate + Go start", ...summary(cold.parts.start), ratios: "" });
  rows.push({ name: "raw: createRuntime", ...summary(cold.parts.create), ratios: "" });
  rows.push({ name: "raw: first run (echo)", ...summary(cold.parts.run), ratios: "" });
  rows.push({ name: "raw: compiled module -> first run done", ...summary(cold.raw), ratios: "" });
  if (cold.viaGlue.length) rows.push({ name: "glue: loadRuntime(module) -> first run done", ...summary(cold.viaGlue), ratios: fx(x(summary(cold.viaGlue).median, summary(cold.raw).median)) + " raw" });
  fig.cold = { compile: cs, raw: summary(cold.raw), glue: cold.viaGlue.length ? summary(cold.viaGlue) : undefined,
    start: summary(cold.parts.start), create: summary(cold.parts.create), run: summary(cold.parts.run) };
  }

  // Heap per stored message.
  const goHeap = go.get("BenchmarkHeapPerMessage");
  const budget = (t) => t * 1.5 + 64;
  let heap;
  if (want("heap")) {
    heap = await heapPerMessage(module, packer);
    fig.heap = { ...heap, goHeapPerMsg: goHeap?.["heapB/msg"], goTextPerMsg: goHeap?.["textB/msg"] };
  }

  // Module size.
  const size = fileSize(wasmPath);
  let minimal, opt, smoke;
  if (want("size")) {
    minimal = fileSize(process.env.BENCH_MINIMAL);
    opt = fileSize(process.env.BENCH_OPT);
    if (opt) smoke = await smokeOptimized(module, readFileSync(process.env.BENCH_OPT), packer);
  }
  fig.size = { module: size, minimal, opt, optSmoke: smoke };

  // Print.
  const head = `agentrt benchmarks: ${fig.date}, node ${fig.node}, ${fig.cpu}, ${os.cpus().length} cpus, module ${version ?? "?"}${quick ? " (QUICK: not figures)" : ""}`;
  const lines = [head, ""];
  const pad = (s, n) => String(s).padEnd(n);
  const lpad = (s, n) => String(s).padStart(n);
  lines.push(pad("", 46) + lpad("median", 10) + lpad("p99", 10) + lpad("n", 6) + "   ratio (median)");
  for (const r of rows) {
    if (r.section) { lines.push("", r.section); continue; }
    lines.push(pad("  " + r.name, 46) + lpad(ms(r.median), 10) + lpad(r.p99 !== undefined ? ms(r.p99) : "-", 10) + lpad(r.n ?? "", 6) + "   " + r.ratios);
  }
  if (heap) {
    lines.push("", "Heap per stored message (" + heap.n.toLocaleString("en") + " messages seeded, " + heap.textPerMsg.toFixed(1) + " text B/msg; budget text x 1.5 + 64 = " + budget(heap.textPerMsg).toFixed(0) + " B)");
    if (goHeap) lines.push(`  native Go core, HeapAlloc after GC              ${goHeap["heapB/msg"].toFixed(1)} B/msg`);
    if (heap.heapPerMsg !== undefined) lines.push(pad(`  module stats().${heap.heapKey} after GC`, 48) + `${heap.heapPerMsg.toFixed(1)} B/msg`);
    lines.push(`  module linear memory growth (peak, upper bound) ${heap.growthPerMsg.toFixed(1)} B/msg (${mb(heap.memBefore)} -> ${mb(heap.memAfter)})`);
  }
  lines.push("", "Module size (gzip -9)");
  lines.push(`  agentrt.wasm                                   ${mb(size.raw)} raw, ${mb(size.gzip)} gzip`);
  if (minimal) lines.push(`  minimal syscall/js module                      ${mb(minimal.raw)} raw, ${mb(minimal.gzip)} gzip  (agentrt ${fx(x(size.gzip, minimal.gzip))} gzip)`);
  if (opt) lines.push(`  agentrt.wasm after wasm-opt -Oz                ${mb(opt.raw)} raw, ${mb(opt.gzip)} gzip  (${((1 - opt.raw / size.raw) * 100).toFixed(1)}% raw, ${((1 - opt.gzip / size.gzip) * 100).toFixed(1)}% gzip smaller; smoke run ${smoke.ok ? "identical" : "DIFFERS: " + smoke.detail})`);

  // Targets.
  const t = fig.turn.plain ?? { "JS peer": {} };
  const verdict = (ok) => (ok === undefined ? "n/a " : ok ? "MET " : "MISS");
  const jm = (sec, key, who) => fig.jsmodel[sec][key]?.[who]?.median;
  const st = (n, who) => fig.stringify.seed[n]?.[who]?.median;
  const G = "glue.js (fast path)", P = "JS peer";
  const targets = [
    ["JS model: cold seed 1k via glue.js <= 1.0x the JS peer", x(jm("seed", 1000, G), jm("seed", 1000, P)), (r) => r <= 1.0],
    ["JS model: cold seed 10k via glue.js <= 1.0x the JS peer", x(jm("seed", 10000, G), jm("seed", 10000, P)), (r) => r <= 1.0],
    ["stringifying model: cold seed 1k via glue.js <= 1.0x the peer", x(st(1000, G), st(1000, P)), (r) => r <= 1.0],
    ["stringifying model: cold seed 10k via glue.js <= 1.0x the peer", x(st(10000, G), st(10000, P)), (r) => r <= 1.0],
    ["JS model: warm turn, 100 messages <= 1.5x the JS peer", x(jm("turn", "100", G), jm("turn", "100", P)), (r) => r <= 1.5],
    ["JS model: warm turn, 5,000 messages <= 1.0x the JS peer", x(jm("turn", "5000", G), jm("turn", "5000", P)), (r) => r <= 1.0],
    ["JS model: warm turn, 5,000 <= 2x glue.js's own on 100", x(jm("turn", "5000", G), jm("turn", "100", G)), (r) => r <= 2],
    ["JS model: warm turn with history again <= 1.5x the peer", x(jm("turn", "100+history", G), jm("turn", "100+history", P)), (r) => r <= 1.5],
    ["echo: seeding via glue.js <= 1.0x the JS peer", x(sMain, sPeer), (r) => r <= 1.0],
    ["seeding via glue.js <= 3x the lean store", x(sMain, sLean), (r) => r <= 3],
    ["seeding via glue.js >= 10x faster than per-field arrays", x(sField, sMain), (r) => r >= 10],
    ["warm turn (median) <= 1.5x the JS peer", x(t["glue.js"]?.median ?? t["raw module"]?.median, t["JS peer"].median), (r) => r <= 1.5],
    ["warm turn (p99) <= 1.5x the JS peer", x(t["glue.js"]?.p99 ?? t["raw module"]?.p99, t["JS peer"].p99), (r) => r <= 1.5],
    ["module gzip <= 1.3x the minimal syscall/js module", minimal ? x(size.gzip, minimal.gzip) : NaN, (r) => r <= 1.3],
    ["heap/msg <= text x 1.5 + 64 (native Go HeapAlloc)", goHeap ? x(goHeap["heapB/msg"], budget(goHeap["textB/msg"])) : NaN, (r) => r <= 1],
    ["heap/msg <= text x 1.5 + 64 (module stats().heapAlloc)", heap?.heapPerMsg !== undefined ? x(heap.heapPerMsg, budget(heap.textPerMsg)) : NaN, (r) => r <= 1],
    ["heap/msg <= text x 1.5 + 64 (module memory growth)", heap ? x(heap.growthPerMsg, budget(heap.textPerMsg)) : NaN, (r) => r <= 1],
    ...IFHEAD_SIZES.map((n) => [ifHeadTarget(n), fig.ifhead[n]?.ratio ?? NaN, (r) => r <= IFHEAD_BAR]),
  ];
  fig.targets = [];
  lines.push("", "Targets");
  for (const [what, r, ok] of targets) {
    const met = Number.isFinite(r) ? ok(r) : undefined;
    fig.targets.push({ what, ratio: r, met });
    lines.push(`  ${verdict(met)}  ${pad(what, 62)} ${fx(r)}`);
  }
  const ifh = Object.values(fig.ifhead);
  if (ifh.length) {
    lines.push("", `ifHead on a warm turn through the glue (ADR 0025), interleaved in batches of ${TURN_BATCH}, blocks of ${IFHEAD_BLOCK} batches:`);
    lines.push(ifHeadTable(ifh));
  }
  const wr = go.get("BenchmarkWorker_Turn/reused"), wp = go.get("BenchmarkWorker_Turn/per-request");
  fig.worker = { reused: wr, perRequest: wp };
  if (wr) {
    lines.push("", "Worker turn over HTTP on workerd (wasm/worker/workerd BenchmarkWorker_Turn, 10-message history)");
    lines.push(`  one reused Go instance per isolate             p50 ${ms(wr["p50-ms"])}, p99 ${ms(wr["p99-ms"])}`);
    if (wp) lines.push(`  a new Go instance per request                  p50 ${ms(wp["p50-ms"])}, p99 ${ms(wp["p99-ms"])}  (${fx(x(wp["p50-ms"], wr["p50-ms"]))} reused, p50)`);
  } else {
    lines.push("", "Worker per-turn latency on workerd: not measured in this run (see the \"Worker\" section of docs/BENCHMARKS.md).");
  }
  console.log(lines.join("\n"));
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(fig, null, 2) + "\n");
  process.exit(0); // Go instances never exit on their own.
}

main().catch((e) => {
  console.error("bench:", e && e.stack ? e.stack : e);
  process.exit(1);
});
