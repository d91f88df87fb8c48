// Cold start of the module in each browser engine, the way a webview shell
// starts it (web-demo/shell/): the native side hands over the bytes, the
// page compiles them, the glue instantiates the module and starts Go, and
// the first turn seeds a cold session from 1,000 stored messages
// (bench/history.mjs). Each round kills the webview and starts a new one in
// the same browser; rounds alternate the bytes' transport (a transferred
// ArrayBuffer, or base64 as most native bridges carry it). Each round's
// bytes carry a fresh random custom section, so no engine can reuse the
// code it compiled in an earlier round (V8 would, for identical bytes):
// every round compiles cold, as after the OS killed the webview.
//
//   node bench/coldstart.mjs [--browsers chromium,firefox,webkit] [--rounds N] [--worker]
//
// --worker starts each webview's runtime in the glue's worker mode (ADR
// 0021): the bytes go to the worker, which compiles them, so the compile
// column is 0 and instantiate holds the worker's compile and start.
//
// Needs a built dist/ ($AGENTRT_DIST; `make build`). For each engine it
// prints the first round (the browser's first compile) and the median of
// all rounds for: compile, instantiate (WebAssembly.instantiate, Go's start
// and the module's publishing its exports: loadRuntime given the compiled
// module), the first seeded run, their total, and a warm run on the same
// runtime as the baseline of the same round (seeded / warm is the ratio
// printed). It also prints each engine's medians against Chromium's. It asserts nothing about
// speed; it does check that each first run seeded exactly 1,000 messages.

import { mkdtemp, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { makeHistory } from "./history.mjs";
import { ENGINE_NAMES, Results, runEngines } from "../web-demo/test/browsers.mjs";
import { DIST, serve } from "../web-demo/test/server.mjs";

const N = 1000;
const args = { browsers: ENGINE_NAMES, rounds: 8, worker: false };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--browsers") args.browsers = String(argv[++i]).split(",").filter(Boolean);
  else if (argv[i] === "--rounds") args.rounds = Math.max(1, Number(argv[++i]) | 0);
  else if (argv[i] === "--worker") args.worker = true;
  else throw new Error(`unknown argument ${argv[i]}`);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const ms = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

const history = makeHistory(N);
const results = new Results();
const table = new Map(); // engine -> { first, median, transports }
const scratch = await mkdtemp(path.join(tmpdir(), "agentrt-coldstart-"));
let server = null;
try {
  if (!existsSync(path.join(DIST, "agentrt.wasm"))) throw new Error(`${DIST}/agentrt.wasm is missing: run \`make build\``);
  server = await serve();
  await runEngines(args.browsers, scratch, results, async (engine, browser) => {
    const page = await browser.newPage();
    page.setDefaultTimeout(300_000);
    await page.goto(server.url + "shell/");
    await page.waitForFunction(() => document.body.dataset.bytes, { timeout: 300_000 });
    const rounds = [];
    for (let r = 0; r < args.rounds; r++) {
      const transport = r % 2 ? "base64" : "bytes";
      const conversation = `bench-${r}`;
      const got = await page.evaluate(async (conv, hist, transport, worker) => {
        window.shell.setHistory(conv, hist);
        const boot = await window.shell.start({ transport, conversation: conv, salt: true, worker });
        const cold = await window.shell.send("the first question after a cold start");
        const warm = await window.shell.send("a second question");
        window.shell.kill();
        return { boot, cold, warm };
      }, conversation, history, transport, args.worker);
      if (got.cold.seed.mode !== "cold" || got.cold.seed.seeded !== N) {
        throw new Error(`round ${r}: the first run seeded ${JSON.stringify(got.cold.seed)}, want cold with ${N}`);
      }
      if (got.warm.seed.mode !== "noop") throw new Error(`round ${r}: the second run seeded ${JSON.stringify(got.warm.seed)}`);
      if (got.boot.thread !== (args.worker ? "worker" : "main")) throw new Error(`round ${r}: the runtime ran in the ${got.boot.thread} thread`);
      rounds.push({
        transport,
        handover: got.boot.bridgeMs + got.boot.decodeMs,
        compile: got.boot.compileMs,
        instantiate: got.boot.instantiateMs,
        seeded: got.cold.runMs,
        warm: got.warm.runMs,
      });
    }
    await page.close().catch(() => {});
    const pick = (k, list = rounds) => median(list.map((x) => x[k]));
    for (const x of rounds) x.total = x.compile + x.instantiate + x.seeded;
    const row = (x) => ({ compile: x.compile, instantiate: x.instantiate, seeded: x.seeded, total: x.total, warm: x.warm });
    table.set(engine.name, {
      first: row(rounds[0]),
      median: { compile: pick("compile"), instantiate: pick("instantiate"), seeded: pick("seeded"), total: pick("total"), warm: pick("warm") },
      handover: Object.fromEntries(["bytes", "base64"].map((t) => [t, rounds.some((x) => x.transport === t) ? pick("handover", rounds.filter((x) => x.transport === t)) : NaN])),
    });
    results.pass(`${engine.name}: ${args.rounds} cold starts, each seeding ${N} messages`);
  });
} catch (e) {
  results.fail("setup", e);
} finally {
  if (server) await server.stop();
  await rm(scratch, { recursive: true, force: true });
}

if (table.size) {
  console.log(`\ncold start in a webview-like page${args.worker ? ", the runtime in a worker (compile counted in instantiate)" : ""}, ${args.rounds} rounds per engine, history of ${N} messages (ms)`);
  console.log("| engine | round | compile | instantiate | first seeded run | total | warm run | seeded / warm |");
  console.log("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const [name, t] of table) {
    for (const [label, x] of [["first", t.first], ["median", t.median]]) {
      console.log(`| ${name} | ${label} | ${ms(x.compile)} | ${ms(x.instantiate)} | ${ms(x.seeded)} | ${ms(x.total)} | ${ms(x.warm)} | ${(x.seeded / x.warm).toFixed(1)}x |`);
    }
  }
  console.log("\nhanding the bytes over (bridge call, plus decoding for base64), median (ms)");
  for (const [name, t] of table) console.log(`  ${name}: bytes ${ms(t.handover.bytes)}, base64 ${ms(t.handover.base64)}`);
  const base = table.get("chromium");
  if (base) {
    console.log("\nmedians against Chromium in this run (compile, instantiate, first seeded run, total)");
    for (const [name, t] of table) {
      const r = (k) => (t.median[k] / base.median[k]).toFixed(2) + "x";
      console.log(`  ${name}: ${r("compile")}, ${r("instantiate")}, ${r("seeded")}, ${r("total")}`);
    }
  }
}
results.summary();
