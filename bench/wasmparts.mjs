// Measures the building blocks of a turn through a GOOS=js module, one by
// one (see bench/wasmparts/main.go): the cost of a JavaScript -> Go call,
// of a goroutine handoff inside one, of a Promise made and resolved from
// Go, of js.Values made (each registers a Go finalizer), and of a warm
// core turn inside the module. It prints the mean time of one operation,
// the median of several rounds.
//
//	node --expose-gc bench/wasmparts.mjs
//
// WASMPARTS_WASM names a module built already; otherwise it is built
// with the Go on PATH into a temporary directory. Benchmarks print; they
// never assert timings.

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { readFileSync } from "node:fs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const gc = globalThis.gc ?? (() => {});
const ROUNDS = 7;

function build() {
  if (process.env.WASMPARTS_WASM) return { wasm: process.env.WASMPARTS_WASM, cleanup() {} };
  const dir = mkdtempSync(join(tmpdir(), "wasmparts-"));
  const wasm = join(dir, "wasmparts.wasm");
  execFileSync("go", ["build", "-trimpath", "-ldflags=-s -w", "-o", wasm, "./bench/wasmparts"], {
    cwd: root, env: { ...process.env, GOOS: "js", GOARCH: "wasm" }, stdio: "inherit",
  });
  return { wasm, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

async function load(wasm) {
  const goroot = execFileSync("go", ["env", "GOROOT"], { encoding: "utf8" }).trim();
  createRequire(import.meta.url)(join(goroot, "lib", "wasm", "wasm_exec.js"));
  const go = new globalThis.Go();
  const { instance } = await WebAssembly.instantiate(readFileSync(wasm), go.importObject);
  go.run(instance);
  for (let i = 0; i < 100 && !globalThis.wasmparts; i++) await new Promise((ok) => setTimeout(ok, 0));
  if (!globalThis.wasmparts) throw new Error("the module did not publish globalThis.wasmparts");
  return globalThis.wasmparts;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

// measure runs op (which does `per` operations) `times` times per round
// and returns the median over rounds of the mean µs per operation.
async function measure(op, times, per = 1) {
  for (let i = 0; i < Math.max(1, times / 10); i++) await op();
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    gc();
    const t0 = performance.now();
    for (let i = 0; i < times; i++) await op();
    rounds.push(((performance.now() - t0) * 1000) / (times * per));
  }
  return median(rounds);
}

async function main() {
  const b = build();
  try {
    const p = await load(b.wasm);
    const rows = [];
    const row = (name, us) => rows.push([name, us]);
    const jsNoop = () => undefined;
    // Synchronous calls are wrapped so that `await` costs the same in
    // every row; the first row is that floor.
    row("JS: await of a plain function call (the loop's floor)", await measure(() => jsNoop(), 20000));
    row("JS: new Promise + resolve + await", await measure(() => new Promise((ok) => ok()), 20000));
    row("JS -> Go call that returns at once", await measure(() => p.noop(), 20000));
    row("JS -> Go call with a goroutine handoff (go + chan)", await measure(() => p.handoff(), 20000));
    row("JS -> Go call with three nested goroutine handoffs", await measure(() => p.handoff3(), 20000));
    row("JS -> Go, Promise from a Go executor, resolved at once", await measure(() => p.promiseSync(), 20000));
    row("JS -> Go, Promise from a Go executor, resolved in a goroutine", await measure(() => p.promiseGo(), 20000));
    row("JS -> Go, Promise.resolve() from Go", await measure(() => p.promiseResolve(), 20000));
    const n = 10000;
    row("Go -> JS call returning a number (Math.abs), each", await measure(() => p.numbers(n), 5, n));
    row("Go -> JS call of a JS function, each", await measure(() => p.callJS(jsNoop, n), 5, n));
    row("js.ValueOf(string) from Go (a finalizer), each", await measure(() => p.strings(n), 5, n));
    row("Object.new() from Go (a finalizer), each", await measure(() => p.objects(n), 5, n));
    p.keep(20000);
    row("js.ValueOf(string), with 20,000 js.Values alive, each", await measure(() => p.strings(n), 5, n));
    row("Object.new(), with 20,000 js.Values alive, each", await measure(() => p.objects(n), 5, n));
    row("core warm turn in wasm, echo, Start + Wait (no JS), each", await measure(() => p.coreTurn(1000), 3, 1000));
    row("core warm turn in wasm, echo, Execute (no JS), each", await measure(() => p.coreExecute(1000), 3, 1000));
    console.log(`wasmparts: node ${process.version}; mean µs per operation, median of ${ROUNDS} rounds\n`);
    for (const [name, us] of rows) console.log(name.padEnd(64) + us.toFixed(2).padStart(9) + " µs");
  } finally {
    b.cleanup();
  }
  process.exit(0); // the Go instance never exits on its own
}

main().catch((e) => {
  console.error("wasmparts:", e && e.stack ? e.stack : e);
  process.exit(1);
});
