// End-to-end test of the web demo in real browsers: headless Chromium (V8,
// over the DevTools protocol) and Firefox ESR (SpiderMonkey, over WebDriver
// BiDi), both driven by puppeteer-core from one script.
//
//   node web-demo/test/e2e.mjs [--url URL] [--browsers chromium,firefox]
//
// Without --url it builds the CLI and runs `agentrt demo` on a free port
// with its own dist/ directory in a temporary folder. Screenshots go to
// artifacts/e2e/. The test fails on any console error, page error or failed
// request. A browser that is not installed is skipped, unless CI is set:
// then it is a failure. The last line reads "N passed, N failed".

import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import puppeteer from "puppeteer-core";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const ARTIFACTS = path.join(ROOT, "artifacts", "e2e");
const CI = Boolean(process.env.CI);
// A guard against hangs, not a speed assertion: loading and compiling the
// module in a cold browser can take several seconds on a slow machine.
const WAIT_MS = 120_000;

const CHROMIUM_FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

const ENGINES = [
  {
    name: "chromium",
    executablePath: process.env.CHROMIUM_BIN || "/usr/bin/chromium",
    async launch(exe, scratch) {
      const dataDir = await mkdtemp(path.join(scratch, "chromium-profile-"));
      const browser = await puppeteer.launch({
        browser: "chrome",
        executablePath: exe,
        headless: true,
        args: [...CHROMIUM_FLAGS, `--user-data-dir=${dataDir}`],
      });
      return { browser, cleanup: () => rm(dataDir, { recursive: true, force: true }) };
    },
  },
  {
    name: "firefox",
    executablePath: process.env.FIREFOX_BIN || "/usr/bin/firefox-esr",
    async launch(exe) {
      const browser = await puppeteer.launch({ browser: "firefox", executablePath: exe, headless: true });
      return { browser, cleanup: async () => {} };
    },
  },
];

// ---------------------------------------------------------------------------
// Results.

let passed = 0;
let failed = 0;

function pass(name) {
  passed++;
  console.log(`ok      ${name}`);
}

function fail(name, err) {
  failed++;
  console.log(`FAIL    ${name}\n        ${String(err && err.stack ? err.stack : err).split("\n").join("\n        ")}`);
}

function assertEqual(got, want, what) {
  if (got !== want) throw new Error(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

// ---------------------------------------------------------------------------
// The demo server.

function parseArgs(argv) {
  const out = { url: "", browsers: ENGINES.map((e) => e.name) };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--url") out.url = argv[++i];
    else if (a === "--browsers") out.browsers = String(argv[++i]).split(",").filter(Boolean);
    else throw new Error(`unknown argument ${a}`);
  }
  return out;
}

// startServer builds the CLI and runs `agentrt demo` on a free port, with
// dist/ built into scratch. It resolves with the URL the command printed.
async function startServer(scratch) {
  const bin = path.join(scratch, "agentrt");
  const built = spawnSync("go", ["build", "-o", bin, "./cmd/agentrt"], { cwd: ROOT, encoding: "utf8" });
  if (built.status !== 0) throw new Error(`go build ./cmd/agentrt failed:\n${built.stderr}`);
  const child = spawn(bin, ["demo", "--addr", "127.0.0.1:0", "--dist", path.join(scratch, "dist")], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (b) => { stderr += b; });
  const url = await new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`agentrt demo printed no URL:\n${out}${stderr}`)), 10 * 60_000);
    child.stdout.on("data", (b) => {
      out += b;
      const m = /serving the agentrt demo on (http:\/\/\S+)/.exec(out);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`agentrt demo exited (${code}):\n${out}${stderr}`)); });
  });
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.on("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

// ---------------------------------------------------------------------------
// Page helpers.

// watch records console errors, page errors and failed requests of page.
function watch(page, label) {
  const problems = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`${label} console error: ${msg.text()}`);
  });
  page.on("pageerror", (err) => problems.push(`${label} page error: ${err && err.message ? err.message : err}`));
  page.on("requestfailed", (req) => {
    problems.push(`${label} request failed: ${req.url()} ${req.failure()?.errorText ?? ""}`);
  });
  page.on("response", (res) => {
    if (res.status() >= 400) problems.push(`${label} HTTP ${res.status()}: ${res.url()}`);
  });
  page.setDefaultTimeout(WAIT_MS);
  return problems;
}

async function waitReady(page) {
  await page.waitForFunction(
    () => document.body.dataset.runtime === "ready" && document.body.dataset.busy === "false" &&
      document.body.dataset.view === "loaded",
    { timeout: WAIT_MS },
  );
}

function settledCount(page) {
  return page.evaluate(() => Number(document.body.dataset.settled || 0));
}

async function waitSettled(page, n) {
  await page.waitForFunction(
    (n) => Number(document.body.dataset.settled || 0) >= n && document.body.dataset.busy === "false",
    { timeout: WAIT_MS },
    n,
  );
}

// sendTurn types text into the input and sends it (with the Send button,
// or the Enter key), then waits for the turn to finish and reads the last
// turn's inspector values.
async function sendTurn(page, text, { key = false } = {}) {
  const before = await settledCount(page);
  await page.click('[data-testid="input"]');
  await page.type('[data-testid="input"]', text);
  if (key) await page.keyboard.press("Enter");
  else await page.click('[data-testid="send"]');
  await waitSettled(page, before + 1);
  return lastTurn(page);
}

function lastTurn(page) {
  return page.evaluate(() => {
    const text = (id) => document.querySelector(`[data-testid="${id}"]`)?.textContent.trim();
    const bubbles = [...document.querySelectorAll('[data-testid="message"]')];
    return {
      seedMode: text("seed-mode"),
      seedCount: text("seed-count"),
      modelMessages: text("model-messages"),
      messages: bubbles.length,
      lastMessage: bubbles.length ? bubbles[bubbles.length - 1].textContent : "",
      errors: [...document.querySelectorAll('[data-testid="error"]')].map((e) => e.textContent),
    };
  });
}

function expectTurn(t, want) {
  assertEqual(t.errors.length, 0, `errors shown on the page (${t.errors.join(" | ")})`);
  if (want.seedMode !== undefined) assertEqual(t.seedMode, want.seedMode, "seed-mode");
  if (want.seedCount !== undefined) assertEqual(t.seedCount, String(want.seedCount), "seed-count");
  if (want.modelMessages !== undefined) {
    assertEqual(t.modelMessages, String(want.modelMessages), "model-messages");
  }
  if (want.messages !== undefined) assertEqual(t.messages, want.messages, "message bubbles");
  if (want.reply !== undefined) {
    assert(t.lastMessage.includes(want.reply), `last message ${JSON.stringify(t.lastMessage)} lacks ${JSON.stringify(want.reply)}`);
  }
}

// ---------------------------------------------------------------------------
// The scenario, run once per browser. Steps share the page: a failed step
// stops the ones after it (they are counted as failed).

function steps(ctx) {
  const { url } = ctx;
  return [
    ["a fresh page opens a conversation and loads the runtime", async () => {
      ctx.page = await ctx.browser.newPage();
      ctx.problems = watch(ctx.page, "tab 1");
      await ctx.page.setViewport({ width: 1280, height: 800 });
      await ctx.page.goto(url);
      await waitReady(ctx.page);
      assert(/^#c=/.test(await ctx.page.evaluate(() => location.hash)), "the URL names no conversation");
      assertEqual((await lastTurn(ctx.page)).messages, 0, "message bubbles on a fresh page");
    }],
    ["two turns on a warm session: no seeding", async () => {
      const t1 = await sendTurn(ctx.page, "hello");
      expectTurn(t1, { seedMode: "noop", seedCount: 0, modelMessages: 1, messages: 2, reply: "(model received 1 messages)" });
      // The Enter key sends too (keyboard use).
      const t2 = await sendTurn(ctx.page, "how are you?", { key: true });
      expectTurn(t2, { seedMode: "noop", seedCount: 0, modelMessages: 3, messages: 4, reply: "(model received 3 messages)" });
    }],
    ["reload, third turn: a cold start seeds 4 and the model receives 5", async () => {
      await ctx.page.reload();
      await waitReady(ctx.page);
      assertEqual((await lastTurn(ctx.page)).messages, 4, "message bubbles restored from IndexedDB");
      const t3 = await sendTurn(ctx.page, "third");
      expectTurn(t3, { seedMode: "cold", seedCount: 4, modelMessages: 5, messages: 6, reply: "echo: third (model received 5 messages)" });
    }],
    ["fourth turn: the warm session is not re-seeded", async () => {
      const t4 = await sendTurn(ctx.page, "fourth");
      expectTurn(t4, { seedMode: "noop", seedCount: 0, modelMessages: 7, messages: 8, reply: "(model received 7 messages)" });
    }],
    ["Restart runtime: a message sent while it loads waits, then seeds cold", async () => {
      const before = await settledCount(ctx.page);
      // Click, type and send in one task, so the new instance cannot be
      // ready yet: the message must wait for it, not be lost.
      const state = await ctx.page.evaluate(() => {
        document.querySelector('[data-testid="restart-runtime"]').click();
        const input = document.querySelector('[data-testid="input"]');
        input.value = "after restart";
        document.querySelector('[data-testid="send"]').click();
        const pending = document.querySelector('[data-testid="message"].pending');
        return { runtime: document.body.dataset.runtime, pending: pending ? pending.textContent : null };
      });
      assertEqual(state.runtime, "loading", "runtime state right after Restart");
      assert(state.pending && state.pending.includes("after restart"), `no waiting bubble for the message (${state.pending})`);
      await waitSettled(ctx.page, before + 1);
      expectTurn(await lastTurn(ctx.page), {
        seedMode: "cold", seedCount: 8, modelMessages: 9, messages: 10, reply: "echo: after restart (model received 9 messages)",
      });
      const t6 = await sendTurn(ctx.page, "sixth");
      expectTurn(t6, { seedMode: "noop", seedCount: 0, modelMessages: 11, messages: 12 });
    }],
    ["the inspector shows the exact messages the model received", async () => {
      const lists = await ctx.page.evaluate(() =>
        [...document.querySelectorAll(".turn")].map((t) => t.querySelectorAll(".inspect-messages")[0]?.children.length ?? -1));
      // Newest first, this page's turns only (it was reloaded before turn 3).
      assertEqual(JSON.stringify(lists), JSON.stringify([11, 9, 7, 5]), "messages listed for each turn's first model call");
      const seeded = await ctx.page.evaluate(() =>
        [...document.querySelectorAll(".turn")][1].querySelectorAll(".inspect-msg.seeded").length);
      assertEqual(seeded, 8, "messages marked as seeded on the cold turn");
      const inInspector = await ctx.page.evaluate(() => document.querySelectorAll('#inspector [data-testid="message"]').length);
      assertEqual(inInspector, 0, "message testids inside the inspector");
    }],
    ["the demo tool runs through the tool loop", async () => {
      const t = await sendTurn(ctx.page, '/tool time {"timeZone":"UTC"}');
      expectTurn(t, { seedMode: "noop", modelMessages: 13, reply: "tool time returned:" });
      assert(/UTC|Coordinated Universal Time/.test(t.lastMessage), `the time has no UTC zone: ${t.lastMessage}`);
    }],
    ["a runtime error is shown on the page, and nothing is stored", async () => {
      const before = await lastTurn(ctx.page);
      const t = await sendTurn(ctx.page, "/tool nosuch");
      assertEqual(t.errors.length, 1, "errors shown");
      assert(/tool_error/.test(t.errors[0]), `error lacks its code: ${t.errors[0]}`);
      const failedBubble = await ctx.page.evaluate(() => !!document.querySelector('[data-testid="message"].failed'));
      assert(failedBubble, "the unsent message is not marked");
      await ctx.page.evaluate(() => {
        const err = document.querySelector('[data-testid="error"]');
        [...err.querySelectorAll("button")].find((b) => b.textContent === "Dismiss").click();
      });
      await ctx.page.reload();
      await waitReady(ctx.page);
      assertEqual((await lastTurn(ctx.page)).messages, before.messages, "stored messages after a failed turn");
    }],
    ["reconcile: a second tab's turns reach a warm session", async () => {
      const a = ctx.page;
      await a.click('[data-testid="new-conversation"]');
      await a.waitForFunction(() => document.querySelectorAll('[data-testid="message"]').length === 0 &&
        document.body.dataset.view === "loaded");
      await a.select('[data-testid="seed-mode-select"]', "reconcile");
      expectTurn(await sendTurn(a, "from tab A"), { seedMode: "noop", seedCount: 0, modelMessages: 1, messages: 2 });

      const b = await ctx.browser.newPage();
      ctx.pageB = b;
      ctx.problemsB = watch(b, "tab 2");
      await b.setViewport({ width: 1280, height: 800 });
      await b.bringToFront();
      await b.goto(a.url());
      await waitReady(b);
      assertEqual((await lastTurn(b)).messages, 2, "tab B shows the stored turn");
      await b.select('[data-testid="seed-mode-select"]', "reconcile");
      expectTurn(await sendTurn(b, "from tab B"), { seedMode: "cold", seedCount: 2, modelMessages: 3, messages: 4 });

      // Tab A's session holds only its own turn; the stored history has B's too.
      // (Background tabs do not render: bring each to the front to use it.)
      await a.bringToFront();
      await a.waitForFunction(() => document.querySelectorAll('[data-testid="message"]').length === 4);
      expectTurn(await sendTurn(a, "A again"), {
        seedMode: "appended", seedCount: 2, modelMessages: 5, messages: 6, reply: "echo: A again (model received 5 messages)",
      });

      // The same situation under if-empty: the warm session misses A's turn.
      await b.bringToFront();
      await b.waitForFunction(() => document.querySelectorAll('[data-testid="message"]').length === 6);
      await b.select('[data-testid="seed-mode-select"]', "if-empty");
      expectTurn(await sendTurn(b, "B, if-empty"), { seedMode: "noop", seedCount: 0, modelMessages: 5, messages: 8 });
      await b.close();
      ctx.pageB = null;
      await a.bringToFront();
    }],
    ["screenshots at desktop and phone width; the phone layout fits", async () => {
      const p = ctx.page;
      await p.setViewport({ width: 1280, height: 800 });
      await p.screenshot({ path: path.join(ARTIFACTS, `${ctx.engine}-desktop.png`) });
      await p.setViewport({ width: 390, height: 844, deviceScaleFactor: 2 });
      const layout = await p.evaluate(() => {
        const box = (sel) => {
          const r = document.querySelector(sel).getBoundingClientRect();
          return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width };
        };
        return {
          scrollWidth: document.documentElement.scrollWidth,
          width: window.innerWidth,
          height: window.innerHeight,
          input: box('[data-testid="input"]'),
          send: box('[data-testid="send"]'),
          restart: box('[data-testid="restart-runtime"]'),
        };
      });
      assert(layout.scrollWidth <= layout.width, `the page scrolls sideways at phone width (${layout.scrollWidth} > ${layout.width})`);
      for (const k of ["input", "send", "restart"]) {
        const b = layout[k];
        assert(b.width > 0 && b.left >= 0 && b.right <= layout.width && b.top >= 0 && b.bottom <= layout.height,
          `${k} is not on screen at phone width: ${JSON.stringify(b)}`);
      }
      expectTurn(await sendTurn(p, "from a phone"), { messages: 10, reply: "echo: from a phone" });
      await p.screenshot({ path: path.join(ARTIFACTS, `${ctx.engine}-phone.png`) });
    }],
  ];
}

async function runEngine(engine, url, scratch) {
  const exe = engine.executablePath;
  if (!existsSync(exe)) {
    if (CI) { fail(`${engine.name}: browser`, new Error(`${exe} is missing (CI is set, so this fails instead of skipping)`)); return; }
    console.log(`skip    ${engine.name}: ${exe} is missing (set CI to make this a failure)`);
    return;
  }
  let launched;
  try {
    launched = await engine.launch(exe, scratch);
  } catch (e) {
    fail(`${engine.name}: launch`, e);
    return;
  }
  const ctx = { url, browser: launched.browser, engine: engine.name, problems: [], problemsB: [] };
  let broken = false;
  try {
    for (const [name, fn] of steps(ctx)) {
      const label = `${engine.name}: ${name}`;
      if (broken) { fail(label, "not run: an earlier step failed"); continue; }
      try {
        await fn();
        const problems = [...ctx.problems.splice(0), ...(ctx.problemsB || []).splice(0)];
        if (problems.length) throw new Error(problems.join("\n"));
        pass(label);
      } catch (e) {
        broken = true;
        fail(label, e);
        if (ctx.page) {
          await ctx.page.screenshot({ path: path.join(ARTIFACTS, `${engine.name}-failure.png`) }).catch(() => {});
        }
      }
    }
  } finally {
    await launched.browser.close().catch(() => {});
    await launched.cleanup();
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  await mkdir(ARTIFACTS, { recursive: true });
  const scratch = await mkdtemp(path.join(tmpdir(), "agentrt-e2e-"));
  let server = null;
  try {
    let url = args.url;
    if (!url) {
      server = await startServer(scratch);
      url = server.url;
    }
    console.log(`demo at ${url}`);
    for (const engine of ENGINES) {
      if (args.browsers.includes(engine.name)) await runEngine(engine, url, scratch);
    }
  } catch (e) {
    fail("setup", e);
  } finally {
    if (server) await server.stop();
    await rm(scratch, { recursive: true, force: true });
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed > 0 ? 1 : 0;
}

await main();
