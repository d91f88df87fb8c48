// The glue's suites (js/test/*.test.mjs) in a real page of Chromium, Firefox
// and WebKit, each browser launched once:
//
//   node js/test/browser/run.mjs [--browsers chromium,firefox,webkit] [--files worker.test.mjs,...] [--whole webkit]
//   node js/test/browser/run.mjs --list-excluded
//
// The page (index.html) maps node:test, node:assert/strict,
// node:fs/promises and ../env.mjs to small browser stand-ins with an import
// map, imports the suites and runs them; this script serves the page with
// the built dist/ ($AGENTRT_DIST, default dist/: run `make build` first) and
// prints one line per test and engine.
//
// Exclusion rule: a suite file that imports any other node: module (or
// reaches for one with import()), or a function of node:fs/promises other
// than readFile, stat and readdir, needs Node and is not run in browsers;
// it is listed as excluded. The same holds when a module of js/test it
// imports ("./x.mjs", followed in turn; not env.mjs, which the page
// replaces) needs one. --list-excluded prints the excluded files, one a
// line, and runs nothing: scripts/test.sh runs those on Bun and Deno.
//
// With --whole ENGINE, ENGINE runs every suite and the other engines run
// only those of EVERY_ENGINE below, whose paths go through a browser API
// each engine implements its own way (docs/adr/0024, "Test time"). The
// rest drive the Go module through the glue on the main thread: one page
// engine and Node's V8 (node --test js/test/) run them. Without --whole,
// every engine runs every suite.
//
// A browser that is not installed is skipped, unless CI is set: then it is
// a failure. The last line reads "N passed, N failed".

import { readdir, readFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SUITES = path.resolve(HERE, "..");
// What the page's import map provides.
const SHIMMED = new Set(["node:test", "node:assert", "node:assert/strict", "node:fs/promises"]);
const FS_SHIMMED = new Set(["readFile", "stat", "readdir", "default"]);
// The suites every page engine runs under --whole, and the browser API
// each one's paths go through.
export const EVERY_ENGINE = new Map([
  ["worker.test.mjs", "worker mode: the Runtime in a Web Worker, every method over postMessage, errors and messages through structured clone"],
  ["count.test.mjs", "the host's token counter called back from worker mode's Web Worker"],
  ["tokens.test.mjs", "the token window's results and events carried from worker mode's Web Worker"],
  ["head.test.mjs", "the head after a quick turn computed in the engine's own 32-bit arithmetic (Math.imul, shifts), held to the module's"],
]);

// A guard against hangs, not a speed assertion: the whole suite in a cold browser.
const WAIT_MS = 600_000;

function exportedNames(source) {
  return [...source.matchAll(/^export\s+(?:async\s+)?(?:const|let|function\*?|class)\s+([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]).sort();
}

// needsOf returns what the file f of js/test needs that the page's
// stand-ins do not provide, through the modules of js/test it imports too.
async function needsOf(f, seen = new Set()) {
  if (seen.has(f)) return [];
  seen.add(f);
  const src = await readFile(path.join(SUITES, f), "utf8");
  const needs = [...src.matchAll(/(?:from\s+|import\s*\(\s*)["'](node:[^"']+)["']/g)].map((m) => m[1]).filter((s) => !SHIMMED.has(s));
  // The names taken from node:fs/promises, statically or with await import().
  const fsNames = [
    ...src.matchAll(/import\s*\{([^{}]*)\}\s*from\s*["']node:fs\/promises["']/g),
    ...src.matchAll(/\{([^{}]*)\}\s*=\s*await\s+import\(\s*["']node:fs\/promises["']\s*\)/g),
  ].flatMap((m) => m[1].split(",").map((n) => n.trim().split(/\s+as\s+|\s*:\s*/)[0]).filter(Boolean));
  for (const n of fsNames) if (!FS_SHIMMED.has(n)) needs.push(`node:fs/promises ${n}`);
  for (const m of src.matchAll(/(?:from\s+|import\s*\(\s*)["']\.\/([^"'\/]+)["']/g)) {
    if (m[1] !== "env.mjs") for (const n of await needsOf(m[1], seen)) needs.push(`${n} (through ${m[1]})`);
  }
  return needs;
}

// suites lists the suite files, split by the exclusion rule.
async function suites() {
  const run = [];
  const excluded = [];
  for (const f of (await readdir(SUITES)).filter((f) => f.endsWith(".test.mjs")).sort()) {
    const needs = await needsOf(f);
    if (needs.length) excluded.push([f, [...new Set(needs)]]);
    else run.push(f);
  }
  return { run, excluded };
}

async function main() {
  const { ENGINE_NAMES, Results, runEngines, watchPage } = await import("../../../web-demo/test/browsers.mjs");
  const { serve } = await import("../../../web-demo/test/server.mjs");
  const args = { browsers: ENGINE_NAMES };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--browsers") args.browsers = String(argv[++i]).split(",").filter(Boolean);
    else if (argv[i] === "--files") args.files = String(argv[++i]).split(",").filter(Boolean);
    else if (argv[i] === "--whole") args.whole = String(argv[++i]);
    else if (argv[i] === "--list-excluded") args.listExcluded = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (args.listExcluded) {
    for (const [f] of (await suites()).excluded) console.log(f);
    return;
  }
  const results = new Results();
  const scratch = await mkdtemp(path.join(tmpdir(), "agentrt-glue-browser-"));
  let server = null;
  try {
    const want = exportedNames(await readFile(path.join(SUITES, "env.mjs"), "utf8"));
    const have = exportedNames(await readFile(path.join(HERE, "env.js"), "utf8"));
    const lacking = want.filter((n) => !have.includes(n));
    if (lacking.length) throw new Error(`js/test/browser/env.js lacks exports of js/test/env.mjs: ${lacking.join(", ")}`);
    const all = await suites();
    const run = args.files ? all.run.filter((f) => args.files.includes(f)) : all.run;
    const excluded = args.files ? [] : all.excluded;
    if (args.files) for (const f of args.files) if (!all.run.includes(f)) throw new Error(`${f} is not a suite the page runs`);
    for (const [f, needs] of excluded) console.log(`exclude ${f}: needs ${needs.join(", ")} (Node only)`);
    if (!run.length) throw new Error("no suite to run");
    if (args.whole !== undefined && !args.browsers.includes(args.whole)) throw new Error(`--whole ${args.whole} is not one of --browsers ${args.browsers.join(",")}`);
    for (const f of EVERY_ENGINE.keys()) if (!all.run.includes(f)) throw new Error(`EVERY_ENGINE names ${f}, not a suite the page runs`);
    server = await serve();
    await runEngines(args.browsers, scratch, results, async (engine, browser) => {
      const files = args.whole === undefined || engine.name === args.whole ? run : run.filter((f) => EVERY_ENGINE.has(f));
      if (!files.length) return;
      if (files.length < run.length) console.log(`        (${engine.name}) the suites of EVERY_ENGINE only: ${files.join(", ")}`);
      const url = `${server.url}js/test/browser/?files=${files.join(",")}`;
      // A page that ends before its suites report (the browser's content
      // process gone, the page's realm destroyed) is opened once more,
      // and the retry said: a suite that fails fails in its results,
      // which are never retried, and a page that cannot finish twice
      // fails.
      // The failed page is closed after the retry: a WebDriver session
      // ends with its last window.
      let failed;
      for (let attempt = 1; ; attempt++) {
        const page = await browser.newPage();
        if (failed) await failed.close().catch(() => {});
        const watch = watchPage(page, "page");
        page.setDefaultTimeout(WAIT_MS);
        let got;
        try {
          await page.goto(url);
          await page.waitForFunction(() => window.agentrtTestResults && window.agentrtTestResults.done, { timeout: WAIT_MS });
          got = await page.evaluate(() => window.agentrtTestResults.results);
        } catch (e) {
          const problems = await watch.take().catch(() => []);
          if (attempt === 1) {
            console.log(`RETRY   ${engine.name}: the page ended before its suites reported (${messageOf(e)}); opening it once more`);
            for (const p of problems) console.log(`        (${engine.name}) ${p}`);
            failed = page;
            continue;
          }
          for (const p of problems) console.log(`        (${engine.name}) ${p}`);
          results.fail(`${engine.name}: the page`, e);
          await page.close().catch(() => {});
          return;
        }
        try {
          for (const r of got) {
            const label = `${engine.name}: ${r.file}: ${r.name}`;
            if (r.skipped) results.skip(label);
            else if (r.ok) results.pass(label);
            else results.fail(label, r.error);
          }
          if (!got.length) results.fail(`${engine.name}: tests`, "the page ran no test");
          // The time of each file's tests, slowest first: what a cut of the
          // page's work is measured on.
          const perFile = new Map();
          for (const r of got) perFile.set(r.file, (perFile.get(r.file) || 0) + (r.ms || 0));
          const line = [...perFile].sort((a, b) => b[1] - a[1]).map(([f, ms]) => `${f} ${(ms / 1000).toFixed(1)}s`);
          console.log(`        (${engine.name}) time by file: ${line.join(", ")}`);
          // Console errors are expected (the suites provoke failed loads):
          // shown, not counted.
          for (const p of await watch.take()) console.log(`        (${engine.name}) ${p}`);
        } finally {
          await page.close().catch(() => {});
        }
        return;
      }
    });
  } catch (e) {
    results.fail("setup", e);
  } finally {
    if (server) await server.stop();
    await rm(scratch, { recursive: true, force: true });
  }
  results.summary();
}

// messageOf is an error's message with its causes, for a page that ended:
// Puppeteer's "Waiting failed" says why only in its cause.
function messageOf(e) {
  const parts = [];
  for (let c = e, i = 0; c && i < 4; c = c.cause, i++) parts.push(c instanceof Error ? c.message : String(c));
  return parts.join(": ");
}

// `node --test js/test/` imports every file under js/test/: this driver
// only runs when invoked directly.
if (process.env.NODE_TEST_CONTEXT) {
  console.log("js/test/browser/run.mjs: run it with node, not node --test");
} else {
  await main();
}
