// The cold start as users meet it: from the first import to the first
// answered turn of a session seeded from 1,000 stored messages (a
// JavaScript model that reads req.messages), for agentrt (glue.js and
// agentrt.wasm) against the plain-JavaScript peer (bench/baselines/
// peer.mjs) started the same way. Every sample is a fresh process (Node,
// Bun, Deno: bench/firstturn/child.mjs) or a fresh page (Chromium,
// Firefox, WebKit: bench/firstturn/page.html), and samples of every
// contender and load path alternate in a rotating order.
//
//   node bench/firstturn.mjs [--engines node,bun,deno,chromium,firefox,webkit] [--samples N] [--n 1000]
//   node bench/firstturn.mjs --blocked [--engines chromium,firefox,webkit] [--samples N] [--traces N] [--n 1000]
//
// --blocked measures, in the browsers only, what a person feels of the
// same cold start: the page's main thread's busy time and its long tasks
// (over 50 ms) from the first import to the first answered turn, for
// agentrt on the main thread, agentrt in a dedicated Web Worker
// (loadRuntime({ worker: true }), ADR 0021) and the peer on the main
// thread, cold (uncached files, a fresh page per sample, rows
// interleaved), beside rows that run no agentrt: the floor of starting an
// empty worker, and the sampler's calibration (workers computing while
// the page does nothing). bench/firstturn/blocked.mjs says how a page
// measures it. In Chromium, --traces N more samples per row (default 3)
// run without the sampler under a DevTools trace, which gives the main
// thread's own CPU time between the page's marks, step by step. It prints
// medians and asserts nothing about them.
//
// Load paths of the module:
//
//	bytes   the host reads the module's bytes (a file, or fetch into an
//	        ArrayBuffer in a page, as a webview's native side hands them
//	        over), then WebAssembly.compile
//	stream  fetch + WebAssembly.compileStreaming, over HTTP, never cached
//	cache   (browsers) compileStreaming of a module the browser's HTTP
//	        cache holds, fetched by two pages before: the engine may
//	        reuse the code it compiled then
//
// Two floor rows per engine, sampled in the same rotation on the bytes
// path, measure the floor under the bar: what agentrt.wasm costs before
// any of its code runs, and what any GOOS=js module costs to start:
//
//	floor: module     wasm_exec.js, agentrt.wasm's bytes, WebAssembly.
//	                  compile and WebAssembly.instantiate with a Go's
//	                  importObject; the instance is never run
//	floor: Go minimal the same for the minimal GOOS=js module
//	                  (wasm/runtime/testdata/minimal, built into a scratch
//	                  directory with the flags of internal/build.Module),
//	                  then go.run until its main has published
//	                  globalThis.agentrtMinimal and blocked: the Go
//	                  runtime's start with next to nothing to init
//
// Their totals are in the agentrt column and their ratios are to the
// peer's whole first turn; the "Target:" line repeats them after its
// verdict (for Node: compile + instantiate of agentrt.wasm alone, the
// module floor's total, the minimal module to idle), so a reader sees
// how far under the floor the bar lies.
//
// In a page the peer's files come over HTTP too, uncached (its bytes and
// stream rows) or from the HTTP cache (its cache row), and the minimal
// module from a path of its own. Cold URLs carry a fresh prefix per sample
// and every module a fresh custom section, so no engine reuses what it
// compiled for another sample.
//
// Per contender it prints the median of each phase: import (the glue or
// the peer and what they import; for agentrt also wasm_exec.js), download
// (the module's bytes; for stream, until the response's headers),
// compile (for stream, the rest of the download too), instantiate, Go
// start (go.run until main has published its exports and blocked: the Go
// runtime's start and every package's init), createRuntime (until
// loadRuntime resolved), first seed (run() until the model is called) and
// first model call (until run() resolved), and the total; then the ratio
// to the peer, and in a process (Node, Bun, Deno) the ratio of the CPU
// time the whole start took, all threads (less disturbed than the wall
// clock on a machine busy with other work), and the ratio of the two
// fastest samples (the least disturbed). "same turn again" is not in the total: the same first
// turn on a second cold session right after, whose difference to first
// seed + first model call is what running that code the first time cost. A separate sample per engine runs the instance with
// GODEBUG=inittrace=1 and prints the packages' init time, the part of
// Go start that is package init. It checks every first turn seeded the
// whole history cold and answered; it asserts nothing about speed.
//
// Environment: AGENTRT_DIST (default dist/), BENCH_FIRSTTURN_SAMPLES (the
// default of --samples, 5), CI (a missing engine, or a minimal module that
// does not build, fails instead of being skipped), BENCH_JSON (also write
// the figures as JSON there: every row, and per engine the floors' ratios
// to the peer under "floor").

import { execFileSync, spawn } from "node:child_process";
import { createServer } from "node:http";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ENGINES as BROWSERS, CI } from "../web-demo/test/browsers.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const dist = path.resolve(process.env.AGENTRT_DIST || path.join(root, "dist"));

const RUNTIMES = {
  node: { bin: process.execPath, args: [] },
  bun: { bin: path.join(root, "node_modules/@oven/bun-linux-x64/bin/bun"), args: [] },
  deno: { bin: path.join(root, "node_modules/.bin/deno"), args: ["run", "-A"] },
};
const ALL = ["node", "bun", "deno", "chromium", "firefox", "webkit"];
const opts = { engines: ALL, samples: Number(process.env.BENCH_FIRSTTURN_SAMPLES || 5), n: 1000, traces: 3 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--engines") opts.engines = String(argv[++i]).split(",").filter(Boolean);
  else if (argv[i] === "--samples") opts.samples = Math.max(1, Number(argv[++i]) | 0);
  else if (argv[i] === "--blocked") opts.blocked = true;
  else if (argv[i] === "--traces") opts.traces = Math.max(0, Number(argv[++i]) | 0);
  else if (argv[i] === "--n") opts.n = Math.max(10, Number(argv[++i]) | 0);
  else throw new Error(`unknown argument ${argv[i]}`);
}
if (opts.blocked && !argv.includes("--engines")) opts.engines = ["chromium", "firefox", "webkit"];
for (const e of opts.engines) if (!ALL.includes(e)) throw new Error(`unknown engine ${e}: want some of ${ALL.join(",")}`);

const PHASES = [
  ["import", "import"], ["download", "download"], ["compile", "compile"], ["instantiate", "instantiate"],
  ["gostart", "Go start"], ["create", "createRuntime"], ["seed", "first seed"], ["model", "first model call"],
  ["again", "same turn again"],
];
const median = (xs) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const ms = (x) => (!Number.isFinite(x) ? "-" : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

// salted appends a custom section with a random name to a module's bytes:
// the same code, bytes no engine has compiled before.
function salted(bytes) {
  const name = Buffer.from("agentrt-salt-" + Math.random().toString(36).slice(2));
  const body = Buffer.concat([Buffer.from([name.length]), name]);
  const size = [];
  for (let v = body.length; ; ) {
    const b = v & 0x7f;
    v >>>= 7;
    if (v) size.push(b | 0x80);
    else { size.push(b); break; }
  }
  return Buffer.concat([bytes, Buffer.from([0, ...size]), body]);
}

const TYPES = { ".js": "text/javascript", ".mjs": "text/javascript", ".html": "text/html; charset=utf-8", ".wasm": "application/wasm", ".json": "application/json" };

// serve answers /<mode>/<prefix>/dist/... from dist, /<mode>/<prefix>/
// bench/... from bench/ and /<mode>/<prefix>/minimal/... from dir (where
// the minimal module is built): mode "c" uncached (every .wasm salted),
// mode "w" cacheable for a day (and never salted).
async function serve(dir) {
  const roots = { dist, bench: here, minimal: dir };
  const server = createServer((req, res) => {
    const m = new URL(req.url, "http://x").pathname.match(/^\/([cw])\/[\w-]+\/(dist|bench|minimal)\/([\w./-]+)$/);
    const file = m && !m[3].includes("..") ? path.join(roots[m[2]], m[3]) : "";
    if (!file || !existsSync(file)) { res.writeHead(404).end(); return; }
    const cold = m[1] === "c";
    const body = cold && file.endsWith(".wasm") ? salted(readFileSync(file)) : readFileSync(file);
    res.writeHead(200, {
      "content-type": TYPES[path.extname(file)] || "application/octet-stream",
      "content-length": body.length,
      "cache-control": cold ? "no-store" : "public, max-age=86400",
    });
    res.end(body);
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    stop: () => new Promise((ok) => { server.closeAllConnections?.(); server.close(ok); }),
  };
}

let prefixes = 0;
// urls returns the probe's URLs under a fresh prefix (mode "c") or the
// fixed cacheable one (mode "w").
function urls(base, mode) {
  const p = `${base}/${mode}/${mode === "c" ? "s" + ++prefixes : "fixed"}`;
  return {
    glue: `${p}/dist/glue.js`, wasm: `${p}/dist/agentrt.wasm`, wasmExec: `${p}/dist/wasm_exec.js`,
    peer: `${p}/bench/baselines/peer.mjs`, page: `${p}/bench/firstturn/page.html`, minimal: `${p}/minimal/minimal.wasm`,
  };
}

function fileURLs(dir) {
  const d = pathToFileURL(dist + path.sep).href;
  return {
    glue: d + "glue.js", wasm: d + "agentrt.wasm", wasmExec: d + "wasm_exec.js",
    peer: pathToFileURL(path.join(root, "bench/baselines/peer.mjs")).href, minimal: pathToFileURL(path.join(dir, "minimal.wasm")).href,
  };
}

// buildMinimal builds wasm/runtime/testdata/minimal (the smallest GOOS=js
// module: it publishes a global and blocks) into dir/minimal.wasm, with
// the flags of internal/build.Module, and says why when it could not.
function buildMinimal(dir) {
  try {
    execFileSync("go", ["build", "-trimpath", "-ldflags=-s -w", "-o", path.join(dir, "minimal.wasm"), "./wasm/runtime/testdata/minimal"], {
      cwd: root, env: { ...process.env, GOOS: "js", GOARCH: "wasm", CGO_ENABLED: "0" }, stdio: ["ignore", "ignore", "pipe"],
    });
    return "";
  } catch (e) {
    return String(e.stderr || e.message || e).trim().split("\n")[0];
  }
}

function runChild(rt, o) {
  return new Promise((resolve, reject) => {
    const p = spawn(rt.bin, [...rt.args, path.join(here, "firstturn/child.mjs"), JSON.stringify(o)], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "", err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    p.on("error", reject);
    p.on("close", () => {
      const line = out.trim().split("\n").pop() || "";
      try {
        const r = JSON.parse(line);
        if (r.error) reject(new Error(r.error));
        else resolve(r);
      } catch {
        reject(new Error(`no result (stdout ${JSON.stringify(out.slice(-300))}, stderr ${JSON.stringify(err.slice(-300))})`));
      }
    });
  });
}

async function runPage(browser, o, keeper) {
  // WebDriver opens a window from the current one, which must be open.
  if (keeper && browser.session) await keeper.bringToFront();
  const page = await browser.newPage();
  try {
    page.setDefaultTimeout?.(120_000);
    await page.goto(o.page + "#" + encodeURIComponent(JSON.stringify(o)));
    await page.waitForFunction(() => window.result !== undefined, { timeout: 120_000 });
    const r = await page.evaluate(() => window.result);
    if (r.error) throw new Error(r.error);
    return r;
  } finally {
    await page.close().catch(() => {});
  }
}

// The floors, on the bytes path: who -> label.
const FLOORS = { module: "floor: module", minimal: "floor: Go minimal" };

// The cells of one engine: [label, who, path, mode]; the floor of the
// minimal module only when it was built.
function cells(browser) {
  const floors = [["floor: module", "module", "bytes", "c"], ...(minimal === "" ? [["floor: Go minimal", "minimal", "bytes", "c"]] : [])];
  if (!browser) return [["agentrt", "agentrt", "bytes"], ["agentrt", "agentrt", "stream"], ...floors, ["peer", "peer", "-"]];
  return [
    ["agentrt", "agentrt", "bytes", "c"], ["agentrt", "agentrt", "stream", "c"], ["agentrt", "agentrt", "cache", "w"],
    ...floors, ["peer", "peer", "cold", "c"], ["peer", "peer", "cache", "w"],
  ];
}

async function measure(engine, sample, initSample) {
  const table = new Map();
  const list = cells(engine.browser);
  for (const [, who, p] of list) table.set(`${who}/${p}`, []);
  for (let r = 0; r < opts.samples; r++) {
    for (let k = 0; k < list.length; k++) {
      const [, who, p, mode] = list[(r + k) % list.length];
      table.get(`${who}/${p}`).push(await sample(who, p === "cache" ? "stream" : p, mode));
    }
  }
  let init;
  try {
    init = await initSample();
  } catch (e) {
    init = { error: String(e.message || e).split("\n")[0] };
  }
  return { table, init };
}

// The steps a --blocked page marks (blocked.mjs), in order, and the names
// of the spans between them in the traced table.
const MARKS = ["start", "imported", "loaded", "model", "end"];
const SPANS = [["import", "import"], ["load", "to ready"], ["seed", "turn to the model"], ["answer", "model call to the answer"]];

// runBlocked runs one --blocked sample in a fresh page and returns its
// figures, awaiting the page's window.done once (no polling on the
// measured thread). With trace (Chromium), the sampler is off and the
// figures come from a DevTools trace: traced(buffer).
async function runBlocked(browser, o, keeper, trace) {
  if (keeper && browser.session) await keeper.bringToFront();
  const page = await browser.newPage();
  try {
    page.setDefaultTimeout?.(120_000);
    if (trace) await page.tracing.start({ categories: ["devtools.timeline", "disabled-by-default-devtools.timeline", "blink.user_timing", "toplevel"] });
    await page.goto(o.page + "#" + encodeURIComponent(JSON.stringify({ ...o, sampler: !trace })));
    const r = await page.evaluate(() => window.done);
    const buf = trace ? await page.tracing.stop() : null;
    if (r.error) throw new Error(r.error);
    return trace ? { ...r, ...traced(buf) } : r;
  } finally {
    await page.close().catch(() => {});
  }
}

// traced reads a trace of one blocked page: the main thread's CPU time
// between the page's marks (the thread clock, tts, of each mark: time the
// thread ran, not time it waited for a core), and its tasks over 50 ms
// of wall time between the first and the last mark.
function traced(buf) {
  const events = JSON.parse(new TextDecoder().decode(buf)).traceEvents;
  const marks = {};
  for (const e of events) if (e.cat === "blink.user_timing" && e.name.startsWith("blocked:")) marks[e.name.slice(8)] = e;
  const start = marks.start, end = marks.end;
  if (!start || !end || start.tts === undefined) throw new Error("traced: the trace has no marks with thread times");
  const cpu = { busyCpu: (end.tts - start.tts) / 1000 };
  const at = MARKS.filter((m) => marks[m]);
  // A page that marks no steps (the empty worker's) is one span: to ready.
  if (at.length === 2) at.splice(1, 0, "imported");
  marks.imported ??= start;
  for (const [k] of SPANS) cpu[k] = NaN;
  for (let i = 0; i + 1 < at.length; i++) {
    const span = { start: "import", imported: "load", loaded: "seed", model: "answer" }[at[i]];
    cpu[span] = (marks[at[i + 1]].tts - marks[at[i]].tts) / 1000;
  }
  // The outermost slices of the page's main thread (its tasks, whatever
  // each engine build names them) that overlap the window.
  const tasks = [];
  let until = -Infinity;
  for (const e of events.filter((e) => e.ph === "X" && e.pid === start.pid && e.tid === start.tid).sort((a, b) => a.ts - b.ts)) {
    if (e.ts < until) continue;
    until = e.ts + e.dur;
    if (until > start.ts && e.ts < end.ts) tasks.push(e);
  }
  const long = tasks.filter((t) => Math.min(t.ts + t.dur, end.ts) - Math.max(t.ts, start.ts) > 50_000);
  cpu.longTasksTrace = long.length;
  cpu.longestCpu = long.length ? Math.max(...long.map((t) => (t.tdur ?? 0) / 1000)) : 0;
  return cpu;
}

// blockedRows measures the main thread during cold starts (--blocked)
// and prints its tables; it returns when done.
async function blockedRows() {
  const WHO = [["main", "agentrt, main thread"], ["worker", "agentrt, in a worker"],
    ["workerbytes", "agentrt, in a worker, bytes from the page"], ["peer", "peer, main thread"],
    ["newworker", "floor: new Worker alone"],
    ["compute1", "calibration: 1 worker computing 300 ms"], ["compute2", "calibration: 2 workers computing 300 ms"]];
  const server = await serve(dist);
  const out = [], traces = [], notes = [];
  out.push(`the page's main thread from the first import to the first answered turn, seeded from ${opts.n.toLocaleString("en")} messages; cold (uncached files, fresh page each); ${opts.samples} samples per row, rows interleaved; medians (ms)`);
  out.push("");
  out.push("| engine | contender | first turn | main thread busy | long tasks (> 50 ms) | longest task | busy: " + SPANS.map(([, l]) => l).join(" | ") + " |");
  out.push("| --- | --- | ---: | ---: | ---: | ---: | " + SPANS.map(() => "---:").join(" | ") + " |");
  traces.push(`Chromium, traced (DevTools trace, no sampler; ${opts.traces} samples per row, rows interleaved): the main thread's CPU time between the page's marks, medians (ms)`);
  traces.push("");
  traces.push("| contender | first turn | main thread CPU | " + SPANS.map(([, l]) => l).join(" | ") + " | long tasks (> 50 ms wall) | CPU of the longest |");
  traces.push("| --- | ---: | ---: | " + SPANS.map(() => "---:").join(" | ") + " | ---: | ---: |");
  try {
    for (const name of opts.engines) {
      const engine = BROWSERS.find((e) => e.name === name);
      if (!engine) { notes.push(`${name}: --blocked measures browsers only: skipped`); continue; }
      const missing = engine.missing();
      if (missing) {
        if (CI) throw new Error(`${name}: ${missing} is missing (CI is set)`);
        notes.push(`${name}: ${missing} is missing: skipped`);
        continue;
      }
      process.stderr.write(`firstturn --blocked: ${name}...\n`);
      const launched = await engine.launch(dist);
      try {
        const keeper = await launched.browser.newPage();
        const sample = (who, trace) => {
          const u = urls(server.url, "c");
          return runBlocked(launched.browser, {
            n: opts.n, who, ...u, page: u.page.replace(/page\.html$/, "blocked.html"),
            emptyWorker: u.page.replace(/page\.html$/, "empty-worker.mjs"),
            computeWorker: u.page.replace(/page\.html$/, "compute-worker.mjs"),
          }, keeper, trace);
        };
        const table = new Map(WHO.map(([who]) => [who, []]));
        for (let r = 0; r < opts.samples; r++) {
          for (let k = 0; k < WHO.length; k++) {
            const who = WHO[(r + k) % WHO.length][0];
            table.get(who).push(await sample(who, false));
          }
        }
        for (const [who, label] of WHO) {
          const xs = table.get(who);
          const med = (k) => median(xs.map((x) => x[k]));
          const by = { import: "busyImport", load: "busyLoad", seed: "busySeed", answer: "busyAnswer" };
          out.push(`| ${name} | ${label} | ${ms(med("total"))} | ${ms(med("busy"))} | ${med("longTasks")} | ${ms(med("longest"))} | ` +
            SPANS.map(([k]) => ms(med(by[k]))).join(" | ") + " |");
        }
        if (name === "chromium" && opts.traces > 0) {
          const tr = new Map(WHO.map(([who]) => [who, []]));
          for (let r = 0; r < opts.traces; r++) {
            for (let k = 0; k < WHO.length; k++) {
              const who = WHO[(r + k) % WHO.length][0];
              tr.get(who).push(await sample(who, true));
            }
          }
          for (const [who, label] of WHO) {
            const xs = tr.get(who);
            const med = (k) => median(xs.map((x) => x[k]));
            traces.push(`| ${label} | ${ms(med("total"))} | ${ms(med("busyCpu"))} | ` + SPANS.map(([k]) => ms(med(k))).join(" | ") +
              ` | ${med("longTasksTrace")} | ${ms(med("longestCpu"))} |`);
          }
        }
        await keeper.close().catch(() => {});
      } catch (e) {
        if (CI) throw e;
        notes.push(`${name}: failed: ${String(e.message || e).split("\n")[0]}`);
      } finally {
        await launched.close();
      }
    }
  } finally {
    await server.stop();
  }
  if (opts.engines.includes("chromium") && opts.traces > 0) out.push("", ...traces);
  for (const n of notes) out.push("note: " + n);
  console.log(out.join("\n"));
}

if (opts.blocked) {
  await blockedRows();
  process.exit(0);
}

const results = {};
const problems = [];
const scratch = await mkdtemp(path.join(tmpdir(), "agentrt-firstturn-"));
const server = await serve(scratch);
// Why the minimal module could not be built ("" once it was).
let minimal = "not built";
try {
  if (!existsSync(path.join(dist, "agentrt.wasm")) || !existsSync(path.join(dist, "glue.js"))) {
    throw new Error(`${dist}/agentrt.wasm or glue.js is missing: run \`make build\``);
  }
  process.stderr.write("firstturn: building the minimal module...\n");
  minimal = buildMinimal(scratch);
  if (minimal) {
    if (CI) throw new Error(`the minimal module did not build (CI is set): ${minimal}`);
    problems.push(`the minimal module did not build, no "floor: Go minimal" rows: ${minimal}`);
  }
  for (const name of opts.engines) {
    const rt = RUNTIMES[name];
    if (rt) {
      if (!existsSync(rt.bin)) {
        const msg = `${name}: ${rt.bin} is missing`;
        if (CI) throw new Error(msg + " (CI is set)");
        problems.push(msg + ": skipped");
        continue;
      }
      const base = { n: opts.n, ...fileURLs(scratch) };
      const sample = (who, p) => runChild(rt, {
        ...base, who, path: p,
        ...(p === "stream" ? { wasm: urls(server.url, "c").wasm } : who === "minimal" ? { wasm: base.minimal } : {}),
      });
      process.stderr.write(`firstturn: ${name}...\n`);
      results[name] = await measure({ browser: false }, sample, () => runChild(rt, { ...base, who: "agentrt", path: "bytes", inittrace: true }));
      continue;
    }
    const engine = BROWSERS.find((e) => e.name === name);
    const missing = engine.missing();
    if (missing) {
      if (CI) throw new Error(`${name}: ${missing} is missing (CI is set)`);
      problems.push(`${name}: ${missing} is missing: skipped`);
      continue;
    }
    process.stderr.write(`firstturn: ${name}...\n`);
    const launched = await engine.launch(scratch);
    try {
      // A page kept open all along: WebDriver ends the session when its
      // last window closes.
      const keeper = await launched.browser.newPage();
      const sample = (who, p, mode) => {
        const u = urls(server.url, mode);
        return runPage(launched.browser, { n: opts.n, who, path: p, ...u, ...(who === "minimal" ? { wasm: u.minimal } : {}) }, keeper);
      };
      // Two loads put the cacheable files in the HTTP cache (and let the
      // engine cache the module's code) before the first sample.
      for (let i = 0; i < 2; i++) {
        await sample("agentrt", "stream", "w");
        await sample("peer", "-", "w");
      }
      results[name] = await measure({ browser: true }, sample, () => runPage(launched.browser, { n: opts.n, who: "agentrt", path: "bytes", inittrace: true, ...urls(server.url, "c") }, keeper));
      await keeper.close().catch(() => {});
    } catch (e) {
      if (CI) throw e;
      problems.push(`${name}: failed: ${String(e.message || e).split("\n")[0]}`);
    } finally {
      await launched.close();
    }
  }
} finally {
  await server.stop();
  await rm(scratch, { recursive: true, force: true });
}

// Print.
const out = [];
out.push(`first answered turn after a cold start, seeded from ${opts.n.toLocaleString("en")} messages, JS model reading req.messages; ${opts.samples} samples per row, fresh process or page each, rows interleaved; medians (ms); node ${process.version}`);
out.push("");
out.push("| engine | load path | agentrt | peer | ratio | CPU ratio | ratio of minimums | " + PHASES.map(([, l]) => l).join(" | ") + " |");
out.push("| --- | --- | ---: | ---: | ---: | ---: | ---: | " + PHASES.map(() => "---:").join(" | ") + " |");
const json = { date: new Date().toISOString(), n: opts.n, samples: opts.samples, engines: {} };
for (const [name, r] of Object.entries(results)) {
  const j = (json.engines[name] = { rows: {}, init: r.init });
  for (const [key, samples] of r.table) {
    const med = Object.fromEntries([...PHASES.map(([k]) => k), "total", "cpu"].map((k) => [k, median(samples.map((s) => s[k]))]));
    j.rows[key] = { median: med, totals: samples.map((s) => s.total) };
  }
  const peerOf = (p) => j.rows[p === "cache" ? "peer/cache" : RUNTIMES[name] ? "peer/-" : "peer/cold"].median;
  for (const [key, row] of Object.entries(j.rows)) {
    const [who, p] = key.split("/");
    if (who === "peer") {
      out.push(`| ${name} | ${p === "-" ? "file" : p} (peer) | | ${ms(row.median.total)} | | | | ` + PHASES.map(([k]) => ms(row.median[k])).join(" | ") + " |");
      continue;
    }
    const peer = peerOf(p);
    const peerRow = Object.values(j.rows).find((r) => r.median === peer);
    row.ratio = row.median.total / peer.total;
    row.cpuRatio = row.median.cpu / peer.cpu;
    row.minRatio = Math.min(...row.totals) / Math.min(...peerRow.totals);
    const cr = Number.isFinite(row.cpuRatio) ? row.cpuRatio.toFixed(1) + "x" : "-";
    out.push(`| ${name} | ${FLOORS[who] ?? p} | ${ms(row.median.total)} | ${ms(peer.total)} | ${row.ratio.toFixed(1)}x | ${cr} | ${row.minRatio.toFixed(1)}x | ` + PHASES.map(([k]) => ms(row.median[k])).join(" | ") + " |");
  }
}
out.push("");
out.push("package init (GODEBUG=inittrace=1, one bytes sample per engine; part of Go start): sum, and the costliest packages");
for (const [name, r] of Object.entries(results)) {
  if (r.init?.error) out.push(`  ${name}: not measured (${r.init.error})`);
  else out.push(`  ${name}: ${ms(r.init.init)} ms over ${r.init.packages} packages; ` + r.init.top.slice(0, 3).map((p) => `${p.pkg.replace("github.com/agentrt/agentrt/", "")} ${ms(p.ms)} ms (${p.allocs} allocs)`).join(", ") +
    `; glue.packHistory of the history: first call ${ms(r.init.packFirst)} ms, second ${ms(r.init.packSecond)} ms`);
}
// The floors against the peer's whole first turn, per engine: the module
// read, compiled and instantiated (and compile + instantiate alone), and
// the minimal Go module to idle.
for (const [name, j] of Object.entries(json.engines)) {
  const mod = j.rows["module/bytes"], min = j.rows["minimal/bytes"];
  if (!mod && !min) continue;
  const peer = j.rows[RUNTIMES[name] ? "peer/-" : "peer/cold"].median.total;
  j.floor = {
    module: mod?.ratio ?? null,
    compileInstantiate: mod ? (mod.median.compile + mod.median.instantiate) / peer : null,
    minimal: min?.ratio ?? null,
  };
}
const x = (r) => (Number.isFinite(r) ? r.toFixed(1) + "x" : "not measured");
const node = json.engines.node?.rows["agentrt/bytes"];
if (node) {
  out.push("");
  const r = node.ratio;
  const f = json.engines.node.floor;
  const floor = f ? `; floor: compile+instantiate of agentrt.wasm alone is ${x(f.compileInstantiate)} the peer (${x(f.module)} with wasm_exec.js and reading the bytes); the minimal Go module to idle ${x(f.minimal)}` : "";
  out.push(`Target: Node, bytes in memory to the first answered turn <= 3x the peer (goal 1.5x): ${r <= 3 ? "MET " : "MISS"} ${r.toFixed(2)}x (CPU ${node.cpuRatio.toFixed(2)}x, minimums ${node.minRatio.toFixed(2)}x)` + floor);
}
for (const p of problems) out.push("note: " + p);
console.log(out.join("\n"));
if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(json, null, 2) + "\n");
