// Where the time of seeding through js/glue.js goes: packing alone, the
// module alone (pre-packed bytes, on an instance of its own), and the
// glue's whole run, each sample after a forced collection as in
// bench/run.mjs, interleaved.
//
//	AGENTRT_DIST=<built dist> node --expose-gc bench/seedparts.mjs
//
// It prints medians; it asserts nothing about speed.

import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { makeHistory } from "./history.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const dist = resolve(process.env.AGENTRT_DIST || join(root, "dist"));
const gc = globalThis.gc ?? (() => {});
const N = 10000, ROUNDS = 25, WARMUP = 3;

const glue = await import(pathToFileURL(join(dist, "glue.js")).href);
const module = await WebAssembly.compile(readFileSync(join(dist, "agentrt.wasm")));
createRequire(import.meta.url)(join(dist, "wasm_exec.js"));

async function rawRuntime() {
  const go = new globalThis.Go();
  const name = "agentrt_seedparts";
  go.env = { AGENTRT_GLOBAL: name };
  go.argv = ["agentrt"];
  const instance = await WebAssembly.instantiate(module, go.importObject);
  go.run(instance);
  for (let i = 0; i < 100 && !globalThis[name]; i++) await new Promise((ok) => setTimeout(ok, 0));
  return globalThis[name].createRuntime({});
}

const history = makeHistory(N);
const packed = glue.packHistory(history);
const raw = await rawRuntime();
const viaGlue = await glue.loadRuntime({ wasm: module, wasmExec: join(dist, "wasm_exec.js") });
const samples = { pack: [], module: [], glue: [] };

function check(res, who) {
  if (res.messageCount !== N + 2) throw new Error(`${who}: ${res.messageCount} messages`);
}

for (let round = 0; round < WARMUP + ROUNDS; round++) {
  const id = "s" + round;
  gc();
  let t = performance.now();
  glue.packHistory(history);
  const pack = performance.now() - t;
  gc();
  t = performance.now();
  check(await raw.startRunWithHistory(id, "next question", packed), "module");
  const mod = performance.now() - t;
  raw.deleteSession(id);
  gc();
  t = performance.now();
  check(await viaGlue.run({ sessionId: id, input: "next question", history }), "glue");
  const whole = performance.now() - t;
  viaGlue.deleteSession(id);
  if (round >= WARMUP) {
    samples.pack.push(pack);
    samples.module.push(mod);
    samples.glue.push(whole);
  }
}

const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(`seeding ${N} messages (${packed.length} bytes packed), medians of ${ROUNDS}, each after a forced collection:`);
console.log(`  packHistory alone                 ${median(samples.pack).toFixed(2)} ms`);
console.log(`  module alone, pre-packed bytes    ${median(samples.module).toFixed(2)} ms`);
console.log(`  glue.js run (packing + module)    ${median(samples.glue).toFixed(2)} ms`);
process.exit(0);
