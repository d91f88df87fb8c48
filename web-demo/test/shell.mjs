// The shell stand-in (web-demo/shell/) in Chromium, Firefox and WebKit: the
// module loaded the way a mobile shell loads it, under the shell's strict
// Content Security Policy, with the bytes and the history handed over by the
// native side; then the same kill and reload with the webview's runtime in
// the glue's worker mode.
//
//   node web-demo/test/shell.mjs [--browsers chromium,firefox,webkit] [--url URL]
//
// Serves web-demo/ and the built dist/ ($AGENTRT_DIST, default dist/: run
// `make build` first), sending the policy as a header too; with --url it
// tests an already running `agentrt demo` instead (the <meta> policy
// only). Each browser is launched once; its steps share one page and stop
// at the first failure. Screenshots go to artifacts/shell/. A
// browser that is not installed is skipped, unless CI is set: then it is a
// failure. The last line reads "N passed, N failed".

import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ENGINE_NAMES, Results, assertEqual, runEngines, runSteps, watchPage } from "./browsers.mjs";
import { ROOT, serve } from "./server.mjs";

const ARTIFACTS = path.join(ROOT, "artifacts", "shell");
// A guard against hangs, not a speed assertion.
const WAIT_MS = 120_000;

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

// shell calls window.shell[method](...args) in the native page.
function shell(page, method, ...args) {
  return page.evaluate((m, a) => window.shell[m](...a), method, args);
}

function expectTurn(t, want) {
  assertEqual(t.seed.mode, want.mode, "seed mode");
  assertEqual(t.seed.seeded, want.seeded, "seeded");
  assertEqual(t.stored, want.stored, "messages the native side handed over");
  assertEqual(t.reply, `echo: ${want.input} (model received ${want.received} messages)`, "reply");
}

function steps(ctx) {
  return [
    ["the native page loads the module's bytes under the policy", async () => {
      ctx.page = await ctx.browser.newPage();
      ctx.page.setDefaultTimeout(WAIT_MS);
      ctx.watch = watchPage(ctx.page, "shell");
      await ctx.page.setViewport({ width: 800, height: 820 });
      await ctx.page.goto(ctx.url + "shell/");
      await ctx.page.waitForFunction(() => document.body.dataset.bytes, { timeout: WAIT_MS });
      const bytes = await ctx.page.evaluate(() => document.body.dataset.bytes);
      assert(Number(bytes) > 1000, `module bytes: ${bytes}`);
    }],
    ["cold start: the webview compiles bytes sent as base64 and never fetches the .wasm", async () => {
      const t = await shell(ctx.page, "start", { transport: "base64" });
      assertEqual(t.transport, "base64", "transport");
      assertEqual(t.stored, 0, "stored messages at the first start");
      const seen = await shell(ctx.page, "inspect");
      assertEqual(seen.runtime, "ready", "webview runtime state");
      assertEqual(seen.goGlobal, "function", "typeof Go in the webview");
      const wasm = seen.resources.filter((u) => /\.wasm(\?|#|$)/.test(u));
      assertEqual(JSON.stringify(wasm), "[]", ".wasm requests by the webview");
      assert(seen.resources.some((u) => u.endsWith("/dist/glue.js")), `the webview did not load glue.js: ${seen.resources}`);
    }],
    ["two turns on the warm runtime; the native side stores them", async () => {
      expectTurn(await shell(ctx.page, "send", "hello"), { mode: "noop", seeded: 0, stored: 0, input: "hello", received: 1 });
      expectTurn(await shell(ctx.page, "send", "how are you?"), { mode: "noop", seeded: 0, stored: 2, input: "how are you?", received: 3 });
      assertEqual((await shell(ctx.page, "history")).length, 4, "messages stored natively");
    }],
    ["a simulated process kill drops the page and its runtime; the native history stays", async () => {
      // Firefox may report the dropped iframe's finished requests as failed
      // when its browsing context goes away: not a problem of the page.
      ctx.allowed = (problem) => /request failed: \S+\/shell\/\S+ Browsing context already closed/.test(problem);
      assertEqual(await shell(ctx.page, "kill"), true, "kill");
      const left = await ctx.page.evaluate(() => document.querySelectorAll("iframe").length);
      assertEqual(left, 0, "webviews left after the kill");
      assertEqual((await shell(ctx.page, "history")).length, 4, "messages stored natively after the kill");
    }],
    ["the next start is cold (bytes transferred this time) and its first turn seeds from the native history once", async () => {
      const t = await shell(ctx.page, "start", { transport: "bytes" });
      assertEqual(t.transport, "bytes", "transport");
      assertEqual(t.stored, 4, "stored messages the new webview sees");
      expectTurn(await shell(ctx.page, "send", "after the kill"), { mode: "cold", seeded: 4, stored: 4, input: "after the kill", received: 5 });
      expectTurn(await shell(ctx.page, "send", "and again"), { mode: "noop", seeded: 0, stored: 6, input: "and again", received: 7 });
      const h = await shell(ctx.page, "history");
      assertEqual(JSON.stringify(h.map((m) => m.role)), JSON.stringify(Array(4).fill(["user", "assistant"]).flat()), "stored roles");
      assertEqual(h[4].content, "after the kill", "stored message 4");
      const seen = await shell(ctx.page, "inspect");
      assertEqual(seen.resources.filter((u) => /\.wasm(\?|#|$)/.test(u)).length, 0, ".wasm requests by the second webview");
    }],
    ["nothing violated the policy; it is in force in the webview (eval is refused and reported)", async () => {
      assertEqual(JSON.stringify(await shell(ctx.page, "violations")), "[]", "policy violations during loads, turns and the kill");
      // The one violation provoked on purpose: Firefox also logs it as a page error.
      ctx.allowed = (problem) => /eval/i.test(problem) && /script-src/.test(problem);
      const probe = await shell(ctx.page, "probeEval");
      assertEqual(probe.blocked, true, "eval blocked");
      // WebKitGTK 2.50 fires the event of an iframe's refused eval at the
      // embedding document, not at the iframe's: accept either.
      const reported = [...probe.violations, ...await shell(ctx.page, "violations")];
      assert(reported.length > 0 && reported.every((v) => v.directive === "script-src" && v.blocked === "eval"),
        `violation events for the refused eval: ${JSON.stringify(reported)}`);
      await ctx.page.screenshot({ path: path.join(ARTIFACTS, `${ctx.engine}-shell.png`) });
    }],
    ["worker mode: the bytes go to the runtime's worker, and its first turn seeds from the native history once", async () => {
      ctx.allowed = (problem) => /request failed: \S+\/shell\/\S+ Browsing context already closed/.test(problem);
      // The violations so far (WebKitGTK reports the probe's refused eval
      // at the native page): worker mode must add none.
      ctx.violationsBefore = (await shell(ctx.page, "violations")).length;
      assertEqual(await shell(ctx.page, "kill"), true, "kill");
      const t = await shell(ctx.page, "start", { transport: "bytes", worker: true });
      assertEqual(t.thread, "worker", "the runtime's thread");
      assertEqual(t.stored, 8, "stored messages the worker-mode webview sees");
      expectTurn(await shell(ctx.page, "send", "in a worker"), { mode: "cold", seeded: 8, stored: 8, input: "in a worker", received: 9 });
      expectTurn(await shell(ctx.page, "send", "still there"), { mode: "noop", seeded: 0, stored: 10, input: "still there", received: 11 });
      const seen = await shell(ctx.page, "inspect");
      assertEqual(seen.thread, "worker", "inspect: the runtime's thread");
      assertEqual(seen.resources.filter((u) => /\.wasm(\?|#|$)/.test(u)).length, 0, ".wasm requests by the worker-mode webview");
    }],
    ["worker mode: a kill and a reload (base64 this time) start a new worker that seeds cold once", async () => {
      assertEqual(await shell(ctx.page, "kill"), true, "kill");
      assertEqual((await shell(ctx.page, "history")).length, 12, "messages stored natively after the kill");
      const t = await shell(ctx.page, "start", { transport: "base64", worker: true });
      assertEqual(t.thread, "worker", "the runtime's thread");
      expectTurn(await shell(ctx.page, "send", "after the reload"), { mode: "cold", seeded: 12, stored: 12, input: "after the reload", received: 13 });
      expectTurn(await shell(ctx.page, "send", "and on"), { mode: "noop", seeded: 0, stored: 14, input: "and on", received: 15 });
      const h = await shell(ctx.page, "history");
      assertEqual(h.length, 16, "messages stored natively");
      assertEqual(h[12].content, "after the reload", "stored message 12");
      assertEqual(JSON.stringify((await shell(ctx.page, "violations")).slice(ctx.violationsBefore)), "[]", "policy violations in worker mode");
    }],
  ];
}

async function main() {
  const args = { browsers: ENGINE_NAMES, url: "" };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--browsers") args.browsers = String(argv[++i]).split(",").filter(Boolean);
    else if (argv[i] === "--url") args.url = new URL(argv[++i]).href;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  const results = new Results();
  await rm(ARTIFACTS, { recursive: true, force: true });
  await mkdir(ARTIFACTS, { recursive: true });
  const scratch = await mkdtemp(path.join(tmpdir(), "agentrt-shell-"));
  let server = null;
  try {
    if (!args.url) server = await serve();
    const url = args.url || server.url;
    await runEngines(args.browsers, scratch, results, async (engine, browser) => {
      const ctx = { url, browser, engine: engine.name, allowed: () => false };
      await runSteps(results, engine.name, steps(ctx), ctx, {
        problems: () => ctx.watch.take(),
        screenshot: path.join(ARTIFACTS, `${engine.name}-failure.png`),
      });
    });
  } catch (e) {
    results.fail("setup", e);
  } finally {
    if (server) await server.stop();
    await rm(scratch, { recursive: true, force: true });
  }
  results.summary();
}

await main();
