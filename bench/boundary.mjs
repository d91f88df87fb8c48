// The two ways of handing a JavaScript model the session's messages that
// docs/adr/0007-js-boundary.md weighs, measured on the module's exports
// directly (no glue), in one process, interleaved:
//
//   mirror  the host keeps the session's messages as JavaScript objects,
//           built from the history it packs on a cold seed; the module
//           sends only what the mirror lacks (docs/wire.md, "Mirrors")
//   packed  the module sends the window's messages packed on every model
//           call and JavaScript decodes them (no mirror: mirrorGen 0)
//
//	node --expose-gc bench/boundary.mjs      (after `make build`)
//
// It prints medians per cold seed (1k and 10k messages) and per warm turn
// (100 and 5,000 messages). Benchmarks print; they never assert timings.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { makeHistory } from "./history.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const dist = resolve(process.env.AGENTRT_DIST || join(here, "..", "dist"));
const W = await import(pathToFileURL(join(dist, "wire.js")).href);
const H = await import(pathToFileURL(join(dist, "history.js")).href);
await import(pathToFileURL(join(dist, "wasm_exec.js")).href);
const gc = globalThis.gc ?? (() => {});
const quick = process.env.BENCH_QUICK === "1";

const module = await WebAssembly.compile(readFileSync(join(dist, "agentrt.wasm")));
const go = new globalThis.Go();
go.env = { AGENTRT_GLOBAL: "agentrt_boundary" };
const instance = await WebAssembly.instantiate(module, go.importObject);
go.run(instance);
const ex = instance.exports;
const core = globalThis.agentrt_boundary.createRuntime({ model: () => ({ content: "ok" }), limits: { maxSeedMessages: 20000, maxMessagesPerSession: 40000 } });
const n = core.fastPath;
const w = new W.Writer(1 << 20);

function call(fn, frame) {
  const at = ex.agentrt_in(frame.length);
  new Uint8Array(ex.mem.buffer, at, frame.length).set(frame);
  const size = fn(n, frame.length); // may grow memory: view mem.buffer after it
  return W.readAction(new Uint8Array(ex.mem.buffer, ex.agentrt_out(), size));
}

// turn runs one turn with a model that reads the messages; mirror is the
// session's mirror { gen, msgs } (or null for the packed way).
function turn(id, input, history, mirror) {
  let packed, fromHistory;
  if (history) {
    if (mirror) {
      fromHistory = [];
      packed = H.packHistory(history, undefined, (r) => {
        if (r.role !== "system") fromHistory.push(Object.freeze({ role: r.role, content: r.content ?? "" }));
      });
    } else packed = H.packHistory(history);
  }
  let a = call(ex.agentrt_begin, W.writeBegin(w.reset(), {
    sessionId: id, input, history: packed, historyMirror: fromHistory !== undefined,
    mirrorGen: mirror ? mirror.gen : 0, mirrorLen: mirror ? mirror.msgs.length : 0,
  }));
  let messages;
  if (mirror) {
    if (a.adopt) { mirror.gen = a.generation; mirror.msgs = fromHistory; }
    if (mirror.gen !== a.generation || mirror.msgs.length < a.from) mirror.msgs = [];
    mirror.msgs.length = a.from;
    for (const m of a.tail) mirror.msgs.push(m);
    mirror.gen = a.generation;
    messages = mirror.msgs.slice(a.start, a.end);
  } else messages = a.tail.slice(a.start - a.from);
  if (messages.length === 0 || typeof messages[messages.length - 1].content !== "string") throw new Error("bad window");
  a = call(ex.agentrt_feed, W.writeModelReply(w.reset(), a.handle, { content: "ok", toolCalls: [] }));
  if (a.kind !== W.ACTION.done) throw new Error("turn did not complete");
  return a.result;
}

const median = (s) => [...s].sort((x, y) => x - y)[Math.floor(s.length / 2)];
const fmt = (v) => (v < 1 ? (v * 1000).toFixed(1) + " µs" : v.toFixed(2) + " ms");
const ways = ["mirror", "packed"];

for (const size of quick ? [1000] : [1000, 10000]) {
  const h = makeHistory(size);
  const S = { mirror: [], packed: [] };
  for (let r = 0; r < (quick ? 3 : 15); r++) {
    for (const way of r % 2 ? ways : [...ways].reverse()) {
      core.deleteSession("c");
      gc();
      const t0 = performance.now();
      turn("c", "next question", h, way === "mirror" ? { gen: 0, msgs: [] } : null);
      if (r > 1) S[way].push(performance.now() - t0);
    }
  }
  console.log(`cold seed ${size}: mirror ${fmt(median(S.mirror))}, packed ${fmt(median(S.packed))}`);
}
for (const size of quick ? [100] : [100, 5000]) {
  const prior = makeHistory(size).slice(0, size - 2);
  const S = { mirror: [], packed: [] };
  for (let r = 0; r < (quick ? 6 : 40); r++) {
    for (const way of r % 2 ? ways : [...ways].reverse()) {
      core.deleteSession("w");
      const mirror = way === "mirror" ? { gen: 0, msgs: [] } : null;
      turn("w", "warm up", prior, mirror);
      gc();
      for (let i = 0; i < 10; i++) {
        const t0 = performance.now();
        turn("w", "next", undefined, mirror);
        if (r > 3) S[way].push(performance.now() - t0);
      }
    }
  }
  console.log(`warm turn ${size}: mirror ${fmt(median(S.mirror))}, packed ${fmt(median(S.packed))}`);
}
process.exit(0);
