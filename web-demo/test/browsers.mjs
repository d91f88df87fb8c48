// The three browser engines the browser suites run on, each launched once
// per suite: Chromium (V8) and Firefox ESR (SpiderMonkey) through
// puppeteer-core, WebKitGTK's MiniBrowser (WebKit, JavaScriptCore) through
// W3C WebDriver (webdriver.mjs). All three hand out pages with the same small
// puppeteer-like API: goto, reload, evaluate, waitForFunction, click, type,
// keyboard.press, select, setViewport, screenshot, bringToFront, close.
//
// A browser that is not installed is skipped, unless the environment
// variable CI is set: then it is a failure (see runEngines).

import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { startWebKit, webkitMissing } from "./webdriver.mjs";

const CHROMIUM_FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

/** True when the environment variable CI is set: a missing browser then fails. */
export const CI = Boolean(process.env.CI);

async function puppeteer() {
  return (await import("puppeteer-core")).default;
}

// PROTOCOL_TIMEOUT_MS bounds one call of the browser's protocol. A
// page's waitForFunction is one call that lasts until its predicate
// holds: Puppeteer's default of 180 s ended the Firefox page of the glue
// suites ("script.callFunction timed out") when its suites took longer on
// a loaded machine. The suites' own guards (run.mjs's WAIT_MS, 600 s) are
// the bounds that count.
const PROTOCOL_TIMEOUT_MS = 600_000;

/**
 * The engines, in the order the suites run them. missing() names what is
 * not installed ("" when nothing is); launch(scratch) starts the browser and
 * resolves with { browser, close }.
 */
export const ENGINES = [
  {
    name: "chromium",
    exe: process.env.CHROMIUM_BIN || "/usr/bin/chromium",
    missing() { return existsSync(this.exe) ? "" : this.exe; },
    async launch(scratch) {
      const dataDir = await mkdtemp(path.join(scratch, "chromium-profile-"));
      const browser = await (await puppeteer()).launch({
        browser: "chrome",
        executablePath: this.exe,
        headless: true,
        protocolTimeout: PROTOCOL_TIMEOUT_MS,
        args: [...CHROMIUM_FLAGS, `--user-data-dir=${dataDir}`],
      });
      return {
        browser,
        async close() {
          await browser.close().catch(() => {});
          await rm(dataDir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: "firefox",
    exe: process.env.FIREFOX_BIN || "/usr/bin/firefox-esr",
    missing() { return existsSync(this.exe) ? "" : this.exe; },
    async launch() {
      const browser = await (await puppeteer()).launch({ browser: "firefox", executablePath: this.exe, headless: true, protocolTimeout: PROTOCOL_TIMEOUT_MS });
      return { browser, close: () => browser.close().catch(() => {}) };
    },
  },
  {
    name: "webkit",
    missing() { return webkitMissing(); },
    async launch() {
      const wd = await startWebKit();
      return { browser: wd.browser, close: () => wd.close() };
    },
  },
];

/** The engine names, for --browsers defaults. */
export const ENGINE_NAMES = ENGINES.map((e) => e.name);

/**
 * watchPage records what goes wrong in page: console errors, page errors,
 * failed requests and HTTP errors (puppeteer), or what webdriver.mjs records
 * in the page after each navigation (WebDriver shows no console). take()
 * resolves with the problems since its last call.
 */
export function watchPage(page, label) {
  if (typeof page.problems === "function") {
    return { take: async () => (await page.problems()).map((p) => `${label} ${p}`) };
  }
  const problems = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") {
      const at = msg.location()?.url;
      problems.push(`${label} console error: ${msg.text()}${at ? ` (${at})` : ""}`);
    }
  });
  page.on("pageerror", (err) => problems.push(`${label} page error: ${err && err.message ? err.message : err}`));
  page.on("requestfailed", (req) => problems.push(`${label} request failed: ${req.url()} ${req.failure()?.errorText ?? ""}`));
  page.on("response", (res) => {
    if (res.status() >= 400) problems.push(`${label} HTTP ${res.status()}: ${res.url()}`);
  });
  return { take: async () => problems.splice(0) };
}

/**
 * runEngines calls fn(engine, browser) once for each engine named in names,
 * with the browser launched once and closed after. A missing browser is
 * reported with skip() (CI unset) or fail() (CI set); a failed launch with
 * fail().
 */
export async function runEngines(names, scratch, { skip, fail }, fn) {
  for (const engine of ENGINES) {
    if (!names.includes(engine.name)) continue;
    const missing = engine.missing();
    if (missing) {
      if (CI) fail(`${engine.name}: browser`, new Error(`${missing} is missing (CI is set, so this fails instead of skipping)`));
      else skip(`${engine.name}: ${missing} is missing (set CI to make this a failure)`);
      continue;
    }
    let launched;
    try {
      launched = await engine.launch(scratch);
    } catch (e) {
      fail(`${engine.name}: launch`, e);
      continue;
    }
    try {
      await fn(engine, launched.browser);
    } finally {
      await launched.close();
    }
  }
}

/**
 * runSteps runs one engine's steps, [name, fn] pairs sharing ctx, in order
 * and reports each to results as "<engine>: <name>". A step passes when fn
 * resolves and problems() then yields nothing ctx.allowed lets through (a
 * step may set ctx.allowed to accept the problems it provokes on purpose;
 * it is reset after every step). After the first failure ctx.page, if any,
 * is saved to screenshot and the remaining steps are reported as not run.
 */
export async function runSteps(results, engine, steps, ctx, { problems, screenshot }) {
  let broken = false;
  for (const [name, fn] of steps) {
    const label = `${engine}: ${name}`;
    if (broken) {
      results.fail(label, "not run: an earlier step failed");
      continue;
    }
    try {
      await fn();
      const found = (await problems()).filter((p) => !ctx.allowed(p));
      ctx.allowed = () => false;
      if (found.length) throw new Error(found.join("\n"));
      results.pass(label);
    } catch (e) {
      broken = true;
      results.fail(label, e);
      if (ctx.page) await ctx.page.screenshot({ path: screenshot }).catch(() => {});
    }
  }
}

/** assertEqual throws an error naming what when got is not want (===). */
export function assertEqual(got, want, what) {
  if (got !== want) throw new Error(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

/**
 * Results counts passes and failures and prints one line for each, in the
 * e2e suite's format; summary() prints "N passed, N failed" and sets the
 * exit code.
 */
export class Results {
  passed = 0;
  failed = 0;
  skipped = 0;

  pass = (name) => {
    this.passed++;
    console.log(`ok      ${name}`);
  };

  fail = (name, err) => {
    this.failed++;
    console.log(`FAIL    ${name}\n        ${String(err && err.stack ? err.stack : err).split("\n").join("\n        ")}`);
  };

  skip = (what) => {
    this.skipped++;
    console.log(`skip    ${what}`);
  };

  summary() {
    console.log(`${this.passed} passed, ${this.failed} failed${this.skipped ? `, ${this.skipped} skipped` : ""}`);
    process.exitCode = this.failed > 0 ? 1 : 0;
  }
}
