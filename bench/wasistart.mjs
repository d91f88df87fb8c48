// The start of the WASI module's two builds under node:wasi: the
// pre-initialized dist/agentrt-wasi.wasm (Wizer's snapshot, taken after
// _initialize) and the plain dist/agentrt-wasi-plain.wasm, whose host runs
// _initialize itself. Each round times, for both builds in alternating
// order, a new instance from the compiled module to ready: instantiate
// with the WASI imports, initialize (the plain build's _initialize: the Go
// runtime's start and every package's init; nothing for the snapshot),
// and agentrt_create with an empty config frame. It also prints each
// file's size, raw and gzip -9, and the compile time of each.
//
//   node bench/wasistart.mjs [--rounds N]
//
// Needs a built dist/ ($AGENTRT_DIST; `make build`). It checks that each
// new instance creates runtime 0 (a fresh instance, not a reused one);
// it asserts nothing about speed.

import { readFileSync, existsSync } from "node:fs";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { WASI } from "node:wasi";

const here = dirname(fileURLToPath(import.meta.url));
const dist = resolve(process.env.AGENTRT_DIST || join(here, "..", "dist"));
let rounds = 30;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--rounds") rounds = Math.max(1, Number(argv[++i]) | 0);
  else throw new Error(`unknown argument ${argv[i]}`);
}

const builds = [
  { name: "pre-initialized (agentrt-wasi.wasm)", file: "agentrt-wasi.wasm" },
  { name: "plain (agentrt-wasi-plain.wasm)", file: "agentrt-wasi-plain.wasm" },
];
// The config frame of docs/wasi.md: "ARC", version 1, no system prompt,
// the host's model, no tools, six default limits.
const CONFIG = Uint8Array.of(0x41, 0x52, 0x43, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (x) => (x >= 10 ? x.toFixed(1) : x.toFixed(2));

async function start(module) {
  const t0 = performance.now();
  const wasi = new WASI({ version: "preview1", args: [], env: {}, returnOnExit: true });
  const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi.wasiImport });
  const t1 = performance.now();
  if (typeof wasi.initialize === "function") wasi.initialize(instance);
  else {
    wasi.setMemory(instance.exports.memory);
    instance.exports._initialize?.();
  }
  const t2 = performance.now();
  const x = instance.exports;
  const p = x.agentrt_in(CONFIG.length);
  new Uint8Array(x.memory.buffer, p, CONFIG.length).set(CONFIG);
  const rt = x.agentrt_create(CONFIG.length);
  const t3 = performance.now();
  if (rt !== 0) throw new Error(`agentrt_create answered ${rt}, want runtime 0 of a new instance`);
  return { instantiate: t1 - t0, initialize: t2 - t1, create: t3 - t2, ready: t3 - t0 };
}

for (const b of builds) {
  const path = join(dist, b.file);
  if (!existsSync(path)) {
    console.error(`wasistart: ${path} is missing: run \`make build\``);
    process.exit(2);
  }
  b.bytes = readFileSync(path);
  const t = performance.now();
  b.module = await WebAssembly.compile(b.bytes);
  b.compile = performance.now() - t;
  b.exportsInit = WebAssembly.Module.exports(b.module).some((e) => e.name === "_initialize");
  b.samples = [];
}
for (let r = 0; r < rounds + 2; r++) {
  for (let k = 0; k < builds.length; k++) {
    const b = builds[(r + k) % builds.length];
    const s = await start(b.module);
    if (r >= 2) b.samples.push(s); // two warm-up rounds
  }
}

console.log(`WASI module start under node:wasi (node ${process.version}), ${rounds} rounds, builds alternating; median (ms)`);
console.log("| build | _initialize export | raw | gzip -9 | compile (once) | instantiate | initialize | agentrt_create | instantiate to ready |");
console.log("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const b of builds) {
  const m = (k) => fmt(median(b.samples.map((s) => s[k])));
  const kb = (n) => (n / 1000).toFixed(0) + " KB";
  console.log(`| ${b.name} | ${b.exportsInit ? "yes" : "no"} | ${kb(b.bytes.length)} | ${kb(gzipSync(b.bytes, { level: 9 }).length)} | ${fmt(b.compile)} | ${m("instantiate")} | ${m("initialize")} | ${m("create")} | ${m("ready")} |`);
}
const [snap, plain] = builds.map((b) => median(b.samples.map((s) => s.ready)));
const [snapMin, plainMin] = builds.map((b) => Math.min(...b.samples.map((s) => s.ready)));
console.log(`\npre-initialized / plain, instantiate to ready: median ${(snap / plain).toFixed(2)}x (${fmt(snap)} / ${fmt(plain)} ms), ` +
  `minimum ${(snapMin / plainMin).toFixed(2)}x (${fmt(snapMin)} / ${fmt(plainMin)} ms; the least disturbed by other work)`);
