// A minimal W3C WebDriver client over HTTP (fetch), enough to drive
// WebKitGTK's MiniBrowser through WebKitGTK's `WebKitWebDriver`, and a
// puppeteer-like Page on top of it, so one test script can drive Chromium and
// Firefox (puppeteer-core) and WebKit (this file) with the same steps.
//
//   const wd = await startWebKit({ scratch });   // spawns WebKitWebDriver (under xvfb-run)
//   const page = await wd.browser.newPage();
//   await page.goto(url);
//   await page.evaluate(() => document.title);
//   await wd.close();
//
// Only the endpoints the tests use are wrapped. The page's console is not
// reachable over classic WebDriver: Page.problems() instead reads what a
// listener installed after each navigation records in the page: uncaught
// errors, unhandled rejections, failed loads of elements, and the page's
// own console.error calls (not the browser's console messages).

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer } from "node:net";

/** Where Debian's webkit2gtk-driver and libwebkit2gtk-4.1 put their programs. */
export const WEBKIT_DRIVER = process.env.WEBKIT_DRIVER || "/usr/bin/WebKitWebDriver";
export const MINIBROWSER = process.env.MINIBROWSER || "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";
export const XVFB_RUN = process.env.XVFB_RUN || "/usr/bin/xvfb-run";

// The W3C element reference key.
const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";
// WebDriver's key code for Enter.
const KEYS = { Enter: "\uE007" };

/** What is missing to run WebKit here, or "" when everything is installed. */
export function webkitMissing() {
  for (const f of [WEBKIT_DRIVER, MINIBROWSER, XVFB_RUN]) if (!existsSync(f)) return f;
  return "";
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** WebDriverError is a failed WebDriver command, with the W3C error code. */
export class WebDriverError extends Error {
  constructor(command, error, message) {
    super(`WebDriver ${command}: ${error}: ${message}`);
    this.name = "WebDriverError";
    this.code = error;
  }
}

// Session is one WebDriver session: cmd sends one command.
class Session {
  constructor(base, id) {
    this.base = base;
    this.id = id;
  }

  async cmd(method, path, body) {
    const url = `${this.base}/session/${this.id}${path}`;
    const res = await fetch(url, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json; charset=utf-8" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let j;
    try {
      j = JSON.parse(text);
    } catch {
      throw new WebDriverError(`${method} ${path}`, `HTTP ${res.status}`, text.slice(0, 500));
    }
    if (!res.ok || (j.value && j.value.error)) {
      throw new WebDriverError(`${method} ${path}`, j.value?.error ?? `HTTP ${res.status}`, j.value?.message ?? text.slice(0, 500));
    }
    return j.value;
  }
}

// Installed in the page after each navigation: records uncaught errors,
// unhandled rejections, failed loads of elements and the page's own
// console.error calls (the console is not visible over classic WebDriver).
const WATCH = `
  if (!window.__wdProblems) {
    window.__wdProblems = [];
    addEventListener("error", (e) => {
      const t = e.target;
      if (t && t !== window && (t.src || t.href)) window.__wdProblems.push("failed to load " + (t.src || t.href));
      else window.__wdProblems.push("page error: " + (e.message || e.error));
    }, true);
    addEventListener("unhandledrejection", (e) => {
      window.__wdProblems.push("unhandled rejection: " + (e.reason && e.reason.message ? e.reason.message : e.reason));
    });
    const consoleError = console.error;
    console.error = function (...args) {
      window.__wdProblems.push("console error: " + args.map((a) => (a && a.message ? a.message : String(a))).join(" "));
      return consoleError.apply(this, args);
    };
  }
`;

// fnSource turns a function or an expression into a script body that calls it
// with the command's arguments and awaits its result.
function fnSource(fn) {
  if (typeof fn === "function") return `return await (${fn.toString()}).apply(null, arguments);`;
  return `return await (${fn});`;
}

/**
 * Page is one top-level browsing context (a window) of a WebDriver session,
 * with the subset of puppeteer's Page API the tests use.
 */
class Page {
  constructor(browser, handle) {
    this.browser = browser;
    this.handle = handle;
    this.timeout = 30_000;
    this.keyboard = { press: (key) => this.#pressKey(key) };
  }

  get #s() {
    return this.browser.session;
  }

  async #focus() {
    if (this.browser.current !== this.handle) {
      await this.#s.cmd("POST", "/window", { handle: this.handle });
      this.browser.current = this.handle;
    }
  }

  setDefaultTimeout(ms) {
    this.timeout = ms;
  }

  /** Listeners are not available over classic WebDriver: see problems(). */
  on() {}

  async goto(url) {
    await this.#focus();
    await this.#s.cmd("POST", "/url", { url });
    await this.#watch();
  }

  async reload() {
    await this.#focus();
    await this.#s.cmd("POST", "/refresh", {});
    await this.#watch();
  }

  async #watch() {
    await this.#s.cmd("POST", "/execute/sync", { script: WATCH, args: [] });
  }

  /** The problems the page recorded since the last call. */
  async problems() {
    await this.#focus();
    return this.#s.cmd("POST", "/execute/sync", {
      script: "const p = window.__wdProblems || []; window.__wdProblems = []; return p;", args: [],
    });
  }

  /** Runs fn (a function or an expression) in the page with args; awaits a returned promise. */
  async evaluate(fn, ...args) {
    await this.#focus();
    return this.#s.cmd("POST", "/execute/sync", { script: fnSource(fn), args });
  }

  /** Polls fn in the page until it returns a truthy value. */
  async waitForFunction(fn, options = {}, ...args) {
    const timeout = options.timeout ?? this.timeout;
    const until = Date.now() + timeout;
    for (;;) {
      const v = await this.evaluate(fn, ...args);
      if (v) return v;
      if (Date.now() > until) throw new Error(`waitForFunction timed out after ${timeout} ms: ${String(fn).slice(0, 300)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async #find(selector) {
    await this.#focus();
    const until = Date.now() + this.timeout;
    for (;;) {
      try {
        const el = await this.#s.cmd("POST", "/element", { using: "css selector", value: selector });
        return el[ELEMENT];
      } catch (e) {
        if (e.code !== "no such element" || Date.now() > until) throw e;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  async click(selector) {
    const id = await this.#find(selector);
    await this.#s.cmd("POST", `/element/${id}/click`, {});
  }

  async type(selector, text) {
    const id = await this.#find(selector);
    await this.#s.cmd("POST", `/element/${id}/value`, { text });
  }

  async #pressKey(key) {
    const value = KEYS[key] ?? key;
    await this.#focus();
    await this.#s.cmd("POST", "/actions", {
      actions: [{ type: "key", id: "keyboard", actions: [{ type: "keyDown", value }, { type: "keyUp", value }] }],
    });
    await this.#s.cmd("DELETE", "/actions");
  }

  /** Chooses value in a <select> and fires input and change, as puppeteer's select does. */
  async select(selector, value) {
    await this.#find(selector);
    await this.evaluate((sel, v) => {
      const el = document.querySelector(sel);
      el.value = v;
      el.dispatchEvent(new Event("input", { bubbles: true }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
    }, selector, value);
  }

  /**
   * Sizes the window so that the viewport is width x height CSS pixels (as
   * near as the window manager allows); deviceScaleFactor is not available.
   */
  async setViewport({ width, height }) {
    await this.#focus();
    await this.#s.cmd("POST", "/window/rect", { width, height });
    const inner = await this.evaluate(() => [innerWidth, innerHeight]);
    const w = width + (width - inner[0]);
    const h = height + (height - inner[1]);
    if (w !== width || h !== height) await this.#s.cmd("POST", "/window/rect", { width: w, height: h });
  }

  async screenshot({ path }) {
    await this.#focus();
    const b64 = await this.#s.cmd("GET", "/screenshot");
    await writeFile(path, Buffer.from(b64, "base64"));
  }

  async bringToFront() {
    await this.#focus();
  }

  async close() {
    await this.#focus();
    await this.#s.cmd("DELETE", "/window");
    this.browser.current = null;
    this.browser.pages = this.browser.pages.filter((p) => p !== this);
  }
}

/** Browser is a WebDriver session seen as a browser with pages (windows). */
class Browser {
  constructor(session, firstHandle) {
    this.session = session;
    this.current = firstHandle;
    this.unused = firstHandle; // the session's first window, handed out by the first newPage
    this.pages = [];
  }

  async newPage() {
    let handle = this.unused;
    this.unused = null;
    if (!handle) {
      const w = await this.session.cmd("POST", "/window/new", { type: "window" });
      handle = w.handle;
    }
    const page = new Page(this, handle);
    this.pages.push(page);
    return page;
  }
}

/**
 * startWebKit spawns WebKitWebDriver under xvfb-run on a free port and opens
 * one session running MiniBrowser. close() ends the session and the driver.
 */
export async function startWebKit() {
  const port = await freePort();
  const child = spawn(XVFB_RUN, ["-a", "-s", "-screen 0 1600x1000x24", WEBKIT_DRIVER, `--port=${port}`], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group: xvfb-run, Xvfb and the driver end together
  });
  let log = "";
  child.stdout.on("data", (b) => { log += b; });
  child.stderr.on("data", (b) => { log += b; });
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try { process.kill(-child.pid, "SIGTERM"); } catch { /* gone */ }
    const t = setTimeout(() => { try { process.kill(-child.pid, "SIGKILL"); } catch { /* gone */ } }, 5000);
    await exited;
    clearTimeout(t);
  };
  try {
    const until = Date.now() + 30_000;
    for (;;) {
      try {
        const r = await fetch(`${base}/status`);
        if (r.ok) break;
      } catch { /* not listening yet */ }
      if (child.exitCode !== null) throw new Error(`WebKitWebDriver exited (${child.exitCode}):\n${log}`);
      if (Date.now() > until) throw new Error(`WebKitWebDriver did not answer on ${base}:\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const res = await fetch(`${base}/session`, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({
        capabilities: {
          alwaysMatch: {
            "webkitgtk:browserOptions": { binary: MINIBROWSER, args: ["--automation"] },
            pageLoadStrategy: "normal",
            timeouts: { script: 300_000, pageLoad: 120_000, implicit: 0 },
          },
        },
      }),
    });
    const j = await res.json();
    if (!res.ok || j.value?.error) throw new Error(`new WebDriver session: ${j.value?.error}: ${j.value?.message}\n${log}`);
    const session = new Session(base, j.value.sessionId);
    const handle = await session.cmd("GET", "/window");
    const browser = new Browser(session, handle);
    return {
      browser,
      capabilities: j.value.capabilities,
      async close() {
        await session.cmd("DELETE", "").catch(() => {});
        await stop();
      },
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
