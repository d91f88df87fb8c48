// The AI SDK transport's cost (docs/ai-sdk.md, "Bench"; docs/BENCHMARKS.md,
// "AI SDK transport"): the same warm turn through AgentrtChatTransport (its
// stream of UIMessageChunks read to the end) and through rt.stream (its
// events read to the end), on one runtime, interleaved, each on a session
// of its own that holds the same conversation, beside the floor: a
// ReadableStream of the same chunks with no runtime at all, enqueued and
// read. The model is a JavaScript function that streams three deltas; each
// turn passes the chat's UIMessages as its history (a warm session), as
// useChat does. Target: the transport's median <= 1.2x rt.stream's.
// The turns are bench/aitransport-turns.mjs's.
//
//   node bench/aitransport.mjs [--rounds N]                 (after `make build`)
//   node bench/aitransport.mjs --browser [--browsers chromium,firefox,webkit] [--rounds N]
//
// --parts adds three rows: rt.run's turn with no stream, without and with
// the transport's seed mode (reconcile), and the latter's events enqueued
// into a ReadableStream (no mapping), for where the time goes.
//
// --browser runs the same turns in a page of each browser (bench/aitransport.html,
// served cross-origin isolated so that its clock is fine; a sample there is
// the mean of 10 turns in a row). A browser that is not installed is skipped.
// BENCH_JSON=path also writes the figures as JSON. Needs `npm ci` (ai).
import { execFileSync } from "node:child_process";
import { createReadStream, existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { measure, model, PRIOR } from "./aitransport-turns.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.resolve(process.env.AGENTRT_DIST || "dist");

const opts = { rounds: undefined, browser: false, browsers: ["chromium", "firefox", "webkit"], parts: false };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--rounds") opts.rounds = Math.max(10, Number(argv[++i]) | 0);
  else if (argv[i] === "--browser") opts.browser = true;
  else if (argv[i] === "--parts") opts.parts = true;
  else if (argv[i] === "--browsers") {
    opts.browser = true;
    opts.browsers = String(argv[++i]).split(",").filter(Boolean);
  } else throw new Error(`unknown argument ${argv[i]}`);
}

const us = (v) => `${(v * 1000).toFixed(0)} µs`;
const pad = (s, n) => String(s).padEnd(n);

function table(label, fig, batch) {
  const spread = (f) => `${us(f.p25)}-${us(f.p75)}`;
  console.log(`AI SDK transport in ${label}: a warm turn, ${PRIOR} prior UIMessages, 3 deltas, ${fig.events} events against ${fig.chunks} chunks (${fig.stream.n} interleaved samples${batch > 1 ? ` of ${batch} turns each` : ""})`);
  console.log(`${pad("", 46)}${pad("median", 10)}${pad("p25-p75", 18)}${pad("p99", 10)}`);
  console.log(`  ${pad("rt.stream, events read", 44)}${pad(us(fig.stream.median), 10)}${pad(spread(fig.stream), 18)}${pad(us(fig.stream.p99), 10)}`);
  console.log(`  ${pad("AgentrtChatTransport, chunks read", 44)}${pad(us(fig.transport.median), 10)}${pad(spread(fig.transport), 18)}${pad(us(fig.transport.p99), 10)}${fig.ratio.toFixed(2)}x rt.stream`);
  console.log(`  ${pad("floor: a ReadableStream of those chunks", 44)}${pad(us(fig.floor.median), 10)}${pad(spread(fig.floor), 18)}${pad(us(fig.floor.p99), 10)}${(fig.floor.median / fig.stream.median).toFixed(2)}x rt.stream`);
  if (fig.run) {
    console.log(`  ${pad("rt.run, onEvent, no stream", 44)}${pad(us(fig.run.median), 10)}${pad(spread(fig.run), 18)}${pad(us(fig.run.p99), 10)}${(fig.run.median / fig.stream.median).toFixed(2)}x rt.stream`);
    console.log(`  ${pad("the same, seed mode reconcile", 44)}${pad(us(fig.runReconcile.median), 10)}${pad(spread(fig.runReconcile), 18)}${pad(us(fig.runReconcile.p99), 10)}${(fig.runReconcile.median / fig.stream.median).toFixed(2)}x rt.stream`);
    console.log(`  ${pad("the same, events into a ReadableStream", 44)}${pad(us(fig.runStream.median), 10)}${pad(spread(fig.runStream), 18)}${pad(us(fig.runStream.p99), 10)}${(fig.runStream.median / fig.stream.median).toFixed(2)}x rt.stream`);
  }
  const lo = Math.min(...fig.blocks), hi = Math.max(...fig.blocks);
  console.log(`  ${fig.ratio <= 1.2 ? "MET " : "MISS"}  the transport's turn <= 1.2x rt.stream's: ${fig.ratio.toFixed(2)}x (${fig.blocks.length} blocks: ${lo.toFixed(2)}-${hi.toFixed(2)}x); the transport less the floor ${fig.overFloor.toFixed(2)}x rt.stream`);
}

async function inNode() {
  const { loadRuntime } = await import(pathToFileURL(`${dist}/glue.js`).href);
  const { AgentrtChatTransport } = await import(pathToFileURL(`${dist}/ai.js`).href);
  const rt = await loadRuntime({ wasm: readFileSync(`${dist}/agentrt.wasm`), wasmExec: pathToFileURL(`${dist}/wasm_exec.js`), model });
  // 1,000 rounds of warm-up: V8 optimizes the glue's and the transport's
  // turn only after some thousands of calls, and the three contenders
  // warm up at different paces (after 50 rounds rt.stream's turn, which
  // reads its whole history, was still up to twice its steady time).
  const fig = await measure({ rt, AgentrtChatTransport, rounds: opts.rounds ?? 1000, warmup: 1000, parts: opts.parts });
  rt.close();
  table(`Node ${process.version}`, fig, 1);
  return fig;
}

// The page's files: dist/, bench/, and the AI SDK bundled by esbuild; the
// headers make the page cross-origin isolated (a 5 µs clock in Chromium
// rather than 100 µs).
function serve(bundles) {
  const mounts = [["/dist/", dist], ["/bundles/", bundles], ["/bench/", path.join(ROOT, "bench")]];
  const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8", ".wasm": "application/wasm" };
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, "http://x");
    const mount = mounts.find(([prefix]) => url.pathname.startsWith(prefix));
    const file = mount && path.join(mount[1], path.normalize(decodeURIComponent(url.pathname.slice(mount[0].length))));
    if (!file || !file.startsWith(mount[1]) || !(await stat(file).catch(() => null))?.isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      "content-type": types[path.extname(file)] ?? "application/octet-stream", "cache-control": "no-store",
      "cross-origin-opener-policy": "same-origin", "cross-origin-embedder-policy": "require-corp",
    });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({
    url: `http://127.0.0.1:${server.address().port}/`,
    stop: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  })));
}

async function inBrowsers() {
  const { Results, runEngines } = await import("../web-demo/test/browsers.mjs");
  const results = new Results();
  const out = {};
  const scratch = await mkdtemp(path.join(tmpdir(), "agentrt-aibench-"));
  let server = null;
  const rounds = opts.rounds ?? 200;
  try {
    if (!existsSync(path.join(dist, "ai.js"))) throw new Error(`${dist}/ai.js is missing: run \`make build\``);
    execFileSync(path.join(ROOT, "node_modules/.bin/esbuild"), ["node_modules/ai/dist/index.js", "--bundle", "--format=esm", "--platform=browser", "--log-level=error", `--outfile=${path.join(scratch, "ai.js")}`], { cwd: ROOT });
    server = await serve(scratch);
    await runEngines(opts.browsers, scratch, results, async (engine, browser) => {
      const page = await browser.newPage();
      page.setDefaultTimeout(600_000);
      try {
        await page.goto(`${server.url}bench/aitransport.html?rounds=${rounds}${opts.parts ? "&parts=1" : ""}`);
        await page.waitForFunction(() => window.benchResult, { timeout: 600_000 });
        const got = await page.evaluate(() => window.benchResult);
        if (!got.ok) throw new Error(got.error);
        table(`${engine.name} (${got.isolated ? "cross-origin isolated" : "not isolated: a coarse clock"})`, got.fig, 10);
        out[engine.name] = got.fig;
        results.pass(`${engine.name}: ${got.fig.stream.n} rounds`);
      } finally {
        await page.close().catch(() => {});
      }
    });
  } catch (e) {
    results.fail("setup", e);
  } finally {
    if (server) await server.stop();
    await rm(scratch, { recursive: true, force: true });
  }
  results.summary();
  return out;
}

const figures = opts.browser ? await inBrowsers() : await inNode();
if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(figures, null, 2) + "\n");
process.exit(process.exitCode ?? 0); // the Go instance never exits on its own
