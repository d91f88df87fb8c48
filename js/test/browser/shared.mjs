// Shared mode (docs/adr/0026-shared-worker-mode.md) end to end in
// Chromium, Firefox ESR and WebKit: two pages of one origin share one
// runtime in a SharedWorker whose agent module (shared-agent.js) runs the
// model. B watches while A runs a slow turn and sees its deltas live; A
// reloads mid-run, reconnects from the last seq it saw and gets the rest,
// and the page's store holds the turn once; a page naming another agent
// for the same worker is refused; alone, a page that reloads mid-run gets
// the rest or run_lost, never a duplicate; where SharedWorker is missing
// the runtime runs in a dedicated worker (mode "worker").
//
//   node js/test/browser/shared.mjs [--browsers chromium,firefox,webkit]
//
// dist/ must be built first (`make build`), or set AGENTRT_DIST. A browser
// that is not installed is skipped, unless CI is set: then it is a
// failure. The last line reads "N passed, N failed".

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

// A guard against hangs, not a speed assertion.
const WAIT_MS = 20_000;
const PAGE = "js/test/browser/shared.html";

function check(cond, message) {
  if (!cond) throw new Error(message);
}

// contiguous reports whether the events' seqs run from first by one.
function contiguous(events, first) {
  return events.every((e, i) => e.seq === first + i);
}

// wait polls fn in page every 50 ms (a page in the background gets no
// animation frames, puppeteer's default polling).
function wait(page, fn) {
  return page.waitForFunction(fn, { timeout: WAIT_MS, polling: 50 });
}

async function open(browser, url) {
  const page = await browser.newPage();
  page.setDefaultTimeout(WAIT_MS);
  await page.goto(url);
  await wait(page, () => window.appReady === true);
  return page;
}

async function main() {
  const { ENGINE_NAMES, Results, runEngines, runSteps, watchPage } = await import("../../../web-demo/test/browsers.mjs");
  const { serve } = await import("../../../web-demo/test/server.mjs");
  let browsers = ENGINE_NAMES;
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--browsers") browsers = String(argv[++i]).split(",").filter(Boolean);
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  const results = new Results();
  const scratch = await mkdtemp(path.join(tmpdir(), "agentrt-shared-"));
  let server = null;
  try {
    server = await serve();
    const url = server.url + PAGE;
    await runEngines(browsers, scratch, results, async (engine, browser) => {
      const ctx = { allowed: () => false, page: null };
      const pages = [];
      const watches = [];
      const problems = async () => (await Promise.all(watches.map((w) => w.take()))).flat();
      const add = async (label) => {
        const p = await open(browser, url);
        pages.push(p);
        watches.push(watchPage(p, label));
        return p;
      };
      let A, B;
      const steps = [
        ["two pages load one shared runtime; a page naming another agent is refused", async () => {
          A = await add("A");
          ctx.page = A;
          await A.evaluate(() => { localStorage.clear(); sessionStorage.clear(); });
          B = await add("B");
          const a = await A.evaluate(() => window.app.load());
          check(a.mode === "shared", `A: ${JSON.stringify(a)}`);
          const refused = await B.evaluate(() => window.app.load({ other: true }));
          check(refused.failed && refused.failed.code === "invalid_argument" && /options\.agent/.test(refused.failed.message),
            `B with another agent: ${JSON.stringify(refused)}`);
          const b = await B.evaluate(() => window.app.load());
          check(b.mode === "shared", `B: ${JSON.stringify(b)}`);
        }],
        ["B watches while A runs a slow turn, and sees its deltas live", async () => {
          await B.evaluate(() => window.app.watch("conv"));
          await A.evaluate(() => window.app.start("conv", "slow", "run-1"));
          // Two deltas reached B while the run was still going.
          await wait(B, () => window.app.seen.filter((e) => e.type === "model.delta").length >= 2);
          const live = await B.evaluate(() => window.app.seen.map((e) => e.type));
          check(!live.includes("run.completed"), `B saw the run end before its deltas: ${live}`);
        }],
        ["A reloads mid-run, reconnects from its last seq, gets the rest; the turn is stored once", async () => {
          await wait(A, () => window.app.events.filter((e) => e.type === "model.delta").length >= 3);
          await A.reload();
          await wait(A, () => window.appReady === true);
          const a = await A.evaluate(() => window.app.load());
          check(a.mode === "shared", `A after the reload: ${JSON.stringify(a)}`);
          const got = await A.evaluate(() => window.app.resume());
          check(!got.failed, `resume: ${JSON.stringify(got)}`);
          check(got.after >= 5, `A saw seq ${got.after} before its reload, want at least 5 (three deltas)`);
          check(got.events.length > 0 && contiguous(got.events, got.after + 1), `resume's seqs: ${JSON.stringify(got.events.map((e) => e.seq))}, after ${got.after}`);
          check(got.events.at(-1).type === "run.completed", `resume ended with ${got.events.at(-1)?.type}`);
          const stored = await A.evaluate(() => window.app.stored("conv"));
          check(stored.length === 2 && stored[0].content === "slow" && stored[1].content.startsWith("d0 d1"),
            `the store: ${JSON.stringify(stored)}`);
          await wait(B, () => window.app.seen.some((e) => e.type === "run.completed"));
          const seen = await B.evaluate(() => window.app.seen);
          check(contiguous(seen, 1) && seen.every((e) => e.runId === "run-1"), `B's seqs: ${JSON.stringify(seen.map((e) => e.seq))}`);
          check(seen.filter((e) => e.type === "model.delta").length === 12, "B did not see the twelve deltas");
        }],
        ["B, behind A, runs with a stale ifHead: refused with the turn it lacks, merges it and succeeds", async () => {
          const got = await B.evaluate(() => window.app.behind("conv", "from B"));
          check(got.tries.length === 1 && got.tries[0].code === "history_diverged" && /^h1-/.test(got.tries[0].head),
            `the stale run: ${JSON.stringify(got)}`);
          const missing = got.tries[0].missing || [];
          check(missing.length === 2 && missing[0] === "slow" && missing[1].startsWith("d0 d1"), `missing: ${JSON.stringify(missing)}`);
          check(got.status === "completed" && /^h1-/.test(got.head), `the retry: ${JSON.stringify(got)}`);
          check(got.copy.length === 4 && got.copy[3] === "echo: from B", `B's copy: ${JSON.stringify(got.copy)}`);
          const session = await A.evaluate(async () => (await window.app.rt.session("conv")).messages.map((m) => m.content));
          check(JSON.stringify(session) === JSON.stringify(got.copy), `the shared session ${JSON.stringify(session)}, B's copy ${JSON.stringify(got.copy)}`);
        }],
        ["alone, a page that reloads mid-run gets the rest or run_lost, never a duplicate", async () => {
          const i = pages.indexOf(B);
          await watches[i].take();
          pages.splice(i, 1);
          watches.splice(i, 1);
          await B.close();
          await A.evaluate(() => window.app.start("solo", "slow", "run-2"));
          await wait(A, () => window.app.events.filter((e) => e.type === "model.delta").length >= 2);
          await A.reload();
          await wait(A, () => window.appReady === true);
          const a = await A.evaluate(() => window.app.load());
          check(a.mode === "shared", `A after the reload: ${JSON.stringify(a)}`);
          const got = await A.evaluate(() => window.app.resume());
          const stored = await A.evaluate(() => window.app.stored("solo"));
          if (got.failed) {
            check(got.failed.code === "run_lost", `resume: ${JSON.stringify(got)}`);
            check(stored.length === 0, `a lost run stored: ${JSON.stringify(stored)}`);
          } else {
            check(contiguous(got.events, got.after + 1) && got.events.at(-1).type === "run.completed", `resume: ${JSON.stringify(got)}`);
            check(stored.length === 2, `the store: ${JSON.stringify(stored)}`);
          }
          console.log(`        (${engine.name}) alone after a reload: ${got.failed ? "run_lost" : "the rest of the run"}`);
        }],
        ["without SharedWorker the runtime runs in a dedicated worker (mode \"worker\")", async () => {
          const D = await add("D");
          const d = await D.evaluate(() => window.app.load({ noShared: true, name: "fallback" }));
          check(d.mode === "worker", `D: ${JSON.stringify(d)}`);
          const res = await D.evaluate(() => window.app.run("fb", "hi"));
          check(res.status === "completed" && res.appended.at(-1).content === "echo: hi", JSON.stringify(res));
        }],
      ];
      try {
        await runSteps(results, engine.name, steps, ctx, { problems, screenshot: path.join(scratch, "shared.png") });
      } finally {
        for (const p of pages) await p.close().catch(() => {});
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

// `node --test js/test/` imports every file under js/test/: this driver
// only runs when invoked directly.
if (process.env.NODE_TEST_CONTEXT) {
  console.log("js/test/browser/shared.mjs: run it with node, not node --test");
} else {
  await main();
}
