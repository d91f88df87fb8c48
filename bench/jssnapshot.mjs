// What pre-initializing the GOOS=js module could save at most (docs/adr/
// 0015-cold-start.md). One start writes the memory image of an instance
// that has published its exports; then fresh Node processes (this file
// runs itself as the child), alternating, time on the compiled
// agentrt.wasm
//
//	start    WebAssembly.instantiate, then go.run until main has published
//	         the module's exports (the Go runtime's start and every
//	         package's init): what a snapshot would skip
//	restore  the floor of a snapshot's start: WebAssembly.instantiate of
//	         the same module, then copying the memory image taken at that
//	         moment into the new instance's memory (grown to its size)
//
// and prints the image's size: the memory at ready, its bytes outside
// runs of zeros (what a snapshot would carry as data segments), and
// those bytes gzipped. The restore is a floor, not a working start: a
// GOOS=js instance also holds state outside its memory (its wasm globals,
// and the JavaScript values wasm_exec.js keeps for it by id), which a
// snapshot would have to rebuild too.
//
//   node bench/jssnapshot.mjs [--samples N]

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(process.env.AGENTRT_DIST || path.join(here, "..", "dist"));

async function child(mode, imagePath) {
  const require = createRequire(import.meta.url);
  require(path.join(dist, "wasm_exec.js"));
  const module = await WebAssembly.compile(readFileSync(path.join(dist, "agentrt.wasm")));
  const go = new globalThis.Go();
  go.argv = ["agentrt"];
  go.env = { AGENTRT_GLOBAL: "agentrt_snapshot_probe" };
  if (mode === "restore") {
    const image = readFileSync(imagePath);
    const t0 = performance.now();
    const inst = await WebAssembly.instantiate(module, go.importObject);
    const mem = inst.exports.mem;
    const pages = (image.length - mem.buffer.byteLength) / 65536;
    if (pages > 0) mem.grow(pages);
    new Uint8Array(mem.buffer).set(image);
    console.log(JSON.stringify({ ms: performance.now() - t0 }));
    process.exit(0);
  }
  const t0 = performance.now();
  const inst = await WebAssembly.instantiate(module, go.importObject);
  go.run(inst);
  const ms = performance.now() - t0;
  if (typeof globalThis.agentrt_snapshot_probe?.createRuntime !== "function") throw new Error("the module did not publish");
  if (mode === "image") writeFileSync(imagePath, new Uint8Array(inst.exports.mem.buffer));
  console.log(JSON.stringify({ ms }));
  process.exit(0);
}

// imageStats returns the bytes a snapshot would carry: runs of non-zero
// bytes, joined across gaps of zeros shorter than a segment's header.
function imageStats(image) {
  let carried = 0, segments = 0;
  const parts = [];
  for (let i = 0; i < image.length; ) {
    if (image[i] === 0) { i++; continue; }
    let j = i, zeros = 0;
    while (j < image.length && zeros < 16) { zeros = image[j] === 0 ? zeros + 1 : 0; j++; }
    const end = j - zeros;
    carried += end - i; segments++;
    parts.push(image.subarray(i, end));
    i = j;
  }
  return { memory: image.length, carried, segments, gzip: gzipSync(Buffer.concat(parts), { level: 9 }).length };
}

if (process.argv[2] === "--child") {
  await child(process.argv[3], process.argv[4]);
} else {
  let samples = 9;
  const a = process.argv.slice(2);
  for (let i = 0; i < a.length; i++) {
    if (a[i] === "--samples") samples = Math.max(1, Number(a[++i]) | 0);
    else throw new Error(`unknown argument ${a[i]}`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), "agentrt-jssnapshot-"));
  const imagePath = path.join(dir, "image.bin");
  const run = (mode) => {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child", mode, imagePath], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout.trim().split("\n").pop()).ms;
  };
  try {
    run("image");
    const start = [], restore = [];
    for (let i = 0; i < samples; i++) {
      if (i % 2) { restore.push(run("restore")); start.push(run("start")); }
      else { start.push(run("start")); restore.push(run("restore")); }
    }
    const st = imageStats(readFileSync(imagePath));
    const med = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
    const f = (x) => x.toFixed(1);
    console.log(`GOOS=js module, ${samples} fresh Node ${process.version} processes per row, alternating, median (ms)`);
    console.log(`  instantiate + Go start to published (what a snapshot skips): ${f(med(start))}`);
    console.log(`  instantiate + copy the memory image in (a snapshot's floor): ${f(med(restore))}`);
    console.log(`  image: memory ${(st.memory / 1e6).toFixed(2)} MB at ready, ${(st.carried / 1e6).toFixed(2)} MB outside zero runs in ${st.segments} segments, ${(st.gzip / 1e3).toFixed(0)} KB gzip`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
