// End-to-end test of the web demo in real browsers: headless Chromium (V8,
// over the DevTools protocol) and Firefox ESR (SpiderMonkey, over WebDriver
// BiDi), both driven by puppeteer-core, and WebKitGTK's MiniBrowser (WebKit,
// JavaScriptCore) under xvfb-run, driven over W3C WebDriver by
// WebKitWebDriver (webdriver.mjs), all from one script with the same steps.
//
//   node web-demo/test/e2e.mjs [--url URL] [--browsers chromium,firefox,webkit]
//
// Without --url it builds the CLI and runs `agentrt demo` on a free port
// with its own dist/ directory in a temporary folder, or with
// $AGENTRT_DIST as it is (--no-build) when that is set (make test builds
// dist/ once for every suite). Screenshots go to
// artifacts/e2e/. The test fails on any console error, page error or failed
// request (in WebKit, whose WebDriver has no console: on any uncaught
// error, unhandled rejection, failed load of an element or console.error
// call of the page after it loaded). A browser that is not
// installed is skipped, unless CI is set: then it is a failure. The last
// line reads "N passed, N failed".

import { spawn, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { ENGINE_NAMES, Results, assertEqual, runEngines, runSteps, watchPage } from "./browsers.mjs";
import { ROOT } from "./server.mjs";

const ARTIFACTS = path.join(ROOT, "artifacts", "e2e");
// A guard against hangs, not a speed assertion: loading and compiling the
// module in a cold browser can take several seconds on a slow machine.
const WAIT_MS = 120_000;

// ---------------------------------------------------------------------------
// Results.

const results = new Results();

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

// ---------------------------------------------------------------------------
// The demo server.

function parseArgs(argv) {
  const out = { url: "", browsers: ENGINE_NAMES };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--url") out.url = argv[++i];
    else if (a === "--browsers") out.browsers = String(argv[++i]).split(",").filter(Boolean);
    else throw new Error(`unknown argument ${a}`);
  }
  return out;
}

// startServer builds the CLI and runs `agentrt demo` on a free port, with
// dist/ built into scratch, or serving $AGENTRT_DIST unbuilt when it is
// set. It resolves with the URL the command printed.
async function startServer(scratch) {
  const bin = path.join(scratch, "agentrt");
  const built = spawnSync("go", ["build", "-o", bin, "./cmd/agentrt"], { cwd: ROOT, encoding: "utf8" });
  if (built.status !== 0) throw new Error(`go build ./cmd/agentrt failed:\n${built.stderr}`);
  const dist = process.env.AGENTRT_DIST
    ? ["--no-build", "--dist", path.resolve(process.env.AGENTRT_DIST)]
    : ["--dist", path.join(scratch, "dist")];
  const child = spawn(bin, ["demo", "--addr", "127.0.0.1:0", ...dist], {
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

// startFakeModel serves an OpenAI-compatible /v1/chat/completions on a free
// port: it streams "Hello from the fake endpoint" in five deltas, calls the
// time tool when the user asks for the time (then answers with the tool's
// result), and fails with 500 when the user says "fail". After hold(), the
// next request whose user message says "hold" sends one delta and then
// waits until release() is called; heldClosed() resolves when the client
// closes that connection first (it aborted the request). It records each
// request's authorization header and messages.
async function startFakeModel() {
  const requests = [];
  let armed = false;
  let releaseHeld = () => {};
  let onHeldClosed = () => {};
  let heldClosed = new Promise((resolve) => { onHeldClosed = resolve; });
  const server = createServer((req, res) => {
    res.setHeader("access-control-allow-origin", "*");
    res.setHeader("access-control-allow-headers", "authorization, content-type, accept");
    res.setHeader("access-control-allow-methods", "POST, OPTIONS");
    if (req.method === "OPTIONS") { res.writeHead(204).end(); return; }
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") { res.writeHead(404).end(); return; }
    let body = "";
    req.on("data", (b) => { body += b; });
    req.on("end", () => {
      const j = JSON.parse(body);
      requests.push({ authorization: req.headers.authorization, body: j });
      const last = j.messages[j.messages.length - 1];
      if (last.role === "user" && last.content.includes("fail")) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "the fake endpoint failed on purpose" } }));
        return;
      }
      if (last.role === "user" && last.content.includes("hold") && armed) {
        armed = false;
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "held " } }] })}\n\n`);
        let released = false;
        releaseHeld = () => { released = true; res.end("data: [DONE]\n\n"); };
        res.on("close", () => { if (!released) onHeldClosed(); });
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const send = (delta) => res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta }] })}\n\n`);
      if (last.role === "user" && last.content.includes("time")) {
        send({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "time", arguments: "" } }] });
        send({ tool_calls: [{ index: 0, function: { arguments: '{"timeZone":' } }] });
        send({ tool_calls: [{ index: 0, function: { arguments: '"UTC"}' } }] });
      } else if (last.role === "tool") {
        for (const w of ["It is ", last.content]) send({ content: w });
      } else {
        for (const w of ["Hello", " from", " the", " fake", " endpoint"]) send({ content: w });
      }
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    hold: () => {
      armed = true;
      heldClosed = new Promise((resolve) => { onHeldClosed = resolve; });
    },
    heldClosed: () => heldClosed,
    release: () => releaseHeld(),
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

// ---------------------------------------------------------------------------
// Page helpers.

// watch records what goes wrong in page (see watchPage).
function watch(page, label) {
  page.setDefaultTimeout(WAIT_MS);
  return watchPage(page, label);
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
// putConversation writes conv into the demo's IndexedDB store as a host
// would have saved it, and returns its id.
function putConversation(page, conv) {
  return page.evaluate((conv) => new Promise((resolve, reject) => {
    const open = indexedDB.open("agentrt-demo");
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const t = open.result.transaction("conversations", "readwrite");
      t.objectStore("conversations").put({ ...conv, createdAt: Date.now(), updatedAt: Date.now() });
      t.oncomplete = () => { open.result.close(); resolve(conv.id); };
      t.onerror = () => reject(t.error);
    };
  }), conv);
}

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
      ctx.watch = watch(ctx.page, "tab 1");
      await ctx.page.setViewport({ width: 1280, height: 800 });
      await ctx.page.goto(url);
      await waitReady(ctx.page);
      assert(/^#c=/.test(await ctx.page.evaluate(() => location.hash)), "the URL names no conversation");
      assertEqual((await lastTurn(ctx.page)).messages, 0, "message bubbles on a fresh page");
      // Every browser here has Web Workers: the runtime runs in one.
      assertEqual(await ctx.page.evaluate(() => document.body.dataset.thread), "worker", "where the runtime runs");
    }],
    ["two turns on a warm session: no seeding", async () => {
      const t1 = await sendTurn(ctx.page, "hello");
      expectTurn(t1, { seedMode: "noop", seedCount: 0, modelMessages: 1, messages: 2, reply: "(model received 1 messages)" });
      // The Enter key sends too (keyboard use).
      const t2 = await sendTurn(ctx.page, "how are you?", { key: true });
      expectTurn(t2, { seedMode: "noop", seedCount: 0, modelMessages: 3, messages: 4, reply: "(model received 3 messages)" });
    }],
    ["TestColdStartedSessionIsSeededFromSuppliedHistory: reload, third turn: a cold start seeds 4 and the model receives 5", async () => {
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
      // "Model received" is the last model call's count, the one whose
      // answer is the reply: the 13 of the first call, the tool call and
      // its result.
      expectTurn(t, { seedMode: "noop", modelMessages: 15, reply: "tool time returned:" });
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
      ctx.watchB = watch(b, "tab 2");
      await b.setViewport({ width: 1280, height: 800 });
      await b.bringToFront();
      await b.goto(await a.evaluate(() => location.href));
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
      ctx.pendingB = await ctx.watchB.take();
      await b.close();
      ctx.pageB = null;
      ctx.watchB = null;
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
      await p.setViewport({ width: 1280, height: 800 });
    }],
    ["bad input: blank sends nothing, an oversized message is refused, a burst is answered in order", async () => {
      const p = ctx.page;
      await p.click('[data-testid="new-conversation"]');
      await p.waitForFunction(() => document.querySelectorAll('[data-testid="message"]').length === 0 &&
        document.body.dataset.view === "loaded");
      await p.select('[data-testid="seed-mode-select"]', "if-empty");
      const before = await settledCount(p);
      await p.type('[data-testid="input"]', "   ");
      await p.click('[data-testid="send"]');
      const blank = await p.evaluate(() => ({
        busy: document.body.dataset.busy, messages: document.querySelectorAll('[data-testid="message"]').length,
      }));
      assertEqual(blank.messages, 0, "bubbles after sending blanks");
      assertEqual(blank.busy, "false", "busy after sending blanks");
      assertEqual(await settledCount(p), before, "turns after sending blanks");

      // 2 MiB is over the runtime's default 1 MiB per message.
      await p.evaluate(() => {
        document.querySelector('[data-testid="input"]').value = "x".repeat(2 << 20);
        document.querySelector('[data-testid="send"]').click();
      });
      await waitSettled(p, before + 1);
      const big = await lastTurn(p);
      assertEqual(big.errors.length, 1, "errors shown for an oversized message");
      assert(/limit_exceeded/.test(big.errors[0]), `error lacks its code: ${big.errors[0].slice(0, 200)}`);
      await p.evaluate(() => {
        for (const b of document.querySelectorAll('[data-testid="error"] button')) if (b.textContent === "Dismiss") b.click();
      });

      // Three messages sent in one go run one after another, in order.
      await p.evaluate(() => {
        const input = document.querySelector('[data-testid="input"]');
        for (const text of ["one", "two", "three"]) {
          input.value = text;
          document.querySelector('[data-testid="send"]').click();
        }
      });
      await waitSettled(p, before + 4);
      const burst = await p.evaluate(() =>
        [...document.querySelectorAll('[data-testid="message"]')].map((b) => b.querySelector(".text").textContent));
      assertEqual(JSON.stringify(burst), JSON.stringify([
        "one", "echo: one (model received 1 messages)",
        "two", "echo: two (model received 3 messages)",
        "three", "echo: three (model received 5 messages)",
      ]), "bubbles after a burst");
      expectTurn(await lastTurn(p), { seedMode: "noop", seedCount: 0, modelMessages: 5 });
    }],
    ["a corrupted stored history is refused with the index at fault, and shown", async () => {
      const p = ctx.page;
      // Write a conversation whose second message has an unknown role, as a
      // buggy older version of a host might have.
      const id = await putConversation(p, {
        id: "c-corrupt", title: "corrupt",
        messages: [{ role: "user", content: "ok" }, { role: "robot", content: "beep" }],
      });
      await p.evaluate((id) => { location.hash = "#c=" + id; }, id);
      await p.waitForFunction(() => document.querySelectorAll('[data-testid="message"]').length === 2 &&
        document.body.dataset.view === "loaded");
      const t = await sendTurn(p, "hello?");
      assertEqual(t.errors.length, 1, "errors shown");
      assert(/invalid_history/.test(t.errors[0]) && /index 1/.test(t.errors[0]), `error lacks code or index: ${t.errors[0]}`);
      await p.evaluate(() => {
        for (const b of document.querySelectorAll('[data-testid="error"] button')) if (b.textContent === "Dismiss") b.click();
      });
      // The instance keeps serving other conversations.
      await p.click('[data-testid="new-conversation"]');
      await p.waitForFunction(() => document.querySelectorAll('[data-testid="message"]').length === 0 &&
        document.body.dataset.view === "loaded");
      expectTurn(await sendTurn(p, "still fine"), { modelMessages: 1, messages: 2 });
    }],
    ["a stored history the runtime would refuse shows its problems, and \"Repair and continue\" goes on", async () => {
      const p = ctx.page;
      // An approval nobody answered, then the first message saved twice:
      // what a host killed mid-tool and re-saving its messages leaves.
      const id = await putConversation(p, {
        id: "c-broken", title: "broken",
        messages: [
          { id: "u1", role: "user", parts: [{ type: "text", text: "Delete a.txt" }] },
          { id: "a1", role: "assistant", parts: [{ type: "tool-delete", toolCallId: "d1", state: "approval-requested", input: { f: "a.txt" } }] },
          { id: "u1", role: "user", parts: [{ type: "text", text: "Delete a.txt" }] },
        ],
      });
      await p.evaluate((id) => { location.hash = "#c=" + id; }, id);
      await p.waitForFunction(() => document.body.dataset.view === "loaded" &&
        !document.querySelector('[data-testid="history-problems"]').hidden, { timeout: WAIT_MS });
      const shown = await p.evaluate(() => ({
        kinds: [...document.querySelectorAll("#problem-list .problem")].map((li) => li.dataset.repair),
        text: document.querySelector("#problem-list").textContent,
        button: !document.querySelector('[data-testid="repair-history"]').hidden,
      }));
      assertEqual(JSON.stringify(shown.kinds), JSON.stringify(["duplicate_message", "missing_tool_result"]), "problems listed");
      assert(/message 2: message id "u1" already appeared at index 0/.test(shown.text), `problem text: ${shown.text}`);
      assert(shown.button, "no \"Repair and continue\" button");
      // Without repair the turn is refused, naming the repeated message.
      const refused = await sendTurn(p, "hello?");
      assertEqual(refused.errors.length, 1, "errors shown");
      assert(/invalid_history/.test(refused.errors[0]) && /index 2/.test(refused.errors[0]), `error lacks code or index: ${refused.errors[0]}`);
      // Repair and continue: the refused message is sent again, repaired.
      const before = await settledCount(p);
      await p.click('[data-testid="repair-history"]');
      await waitSettled(p, before + 1);
      const t = await lastTurn(p);
      expectTurn(t, { seedMode: "cold", seedCount: 3, modelMessages: 4, reply: "echo: hello? (model received 4 messages)" });
      const inspected = await p.evaluate(() => ({
        seed: document.querySelector(".turn .seed").textContent,
        messages: [...document.querySelector(".turn .inspect-messages").children].map((li) => li.textContent),
        button: !document.querySelector('[data-testid="repair-history"]').hidden,
      }));
      assert(/repaired duplicate_message at 2, missing_tool_result at 1 \(d1\)/.test(inspected.seed), `seed line: ${inspected.seed}`);
      assert(inspected.messages.some((m) => m.startsWith("tool: [d1] Tool call interrupted: no result was recorded.")),
        `the model did not see the interrupted marker: ${inspected.messages.join(" | ")}`);
      assert(!inspected.button, "the button is still offered after repairing");
      // The next turn sends the stored history, healed: a noop.
      expectTurn(await sendTurn(p, "and again"), { seedMode: "noop", seedCount: 0, modelMessages: 6 });
      // The stored copy healed (docs/adr/0016-the-host-copy-heals.md): the
      // duplicate is gone and the marker is the tool part's result, so
      // after a reload it has no problems and seeds cold without repair.
      await p.reload();
      await waitReady(p);
      const healed = await p.evaluate(() => ({
        problems: !document.querySelector('[data-testid="history-problems"]').hidden,
        button: !document.querySelector('[data-testid="repair-history"]').hidden,
      }));
      assert(!healed.problems && !healed.button, "the reloaded conversation still shows problems");
      expectTurn(await sendTurn(p, "after reload"), { seedMode: "cold", seedCount: 7, modelMessages: 8,
        reply: "echo: after reload (model received 8 messages)" });
    }],
    ["OpenAI-compatible endpoint: streamed deltas, the tool loop, errors; the key stays in memory", async () => {
      const p = ctx.page;
      const fake = ctx.fake;
      fake.requests.length = 0;
      await p.click('input[name="model"][value="openai"]');
      await p.type("#openai-base", fake.url);
      await p.type("#openai-model", "fake-model");
      await p.type("#openai-key", "sk-test-secret");
      await p.click("#openai-apply");
      await p.waitForFunction(() => document.body.dataset.runtime === "ready" &&
        document.querySelector('[data-testid="runtime-status"]').textContent.includes("fake-model"));
      await p.click('[data-testid="new-conversation"]');
      await p.waitForFunction(() => document.querySelectorAll('[data-testid="message"]').length === 0 &&
        document.body.dataset.view === "loaded");

      const t1 = await sendTurn(p, "hi there");
      expectTurn(t1, { modelMessages: 1, messages: 2, reply: "Hello from the fake endpoint" });
      const deltas = await p.evaluate(() => document.querySelector(".turn").dataset.deltas);
      assertEqual(deltas, "5", "deltas streamed into the turn");
      assertEqual(fake.requests.length, 1, "requests to the endpoint");
      assertEqual(fake.requests[0].authorization, "Bearer sk-test-secret", "authorization header");
      assertEqual(fake.requests[0].body.stream, true, "stream flag");
      assertEqual(JSON.stringify(fake.requests[0].body.messages.map((m) => m.role)), JSON.stringify(["system", "user"]), "roles sent");

      const t2 = await sendTurn(p, "what time is it?");
      // The last model call (after the tool call and its result) got 5.
      expectTurn(t2, { modelMessages: 5, messages: 6, reply: "It is " });
      assert(/UTC|Coordinated Universal Time/.test(t2.lastMessage), `the reply has no UTC time: ${t2.lastMessage}`);
      const second = fake.requests[2].body.messages;
      assertEqual(second[second.length - 1].role, "tool", "last message of the second model call");
      assertEqual(second[second.length - 2].tool_calls[0].function.name, "time", "the tool call sent back");

      // The one expected failure: the browser reports the 500 itself.
      ctx.allowed = (problem) => problem.includes(`${fake.url}/chat/completions`) && /500/.test(problem);
      const t3 = await sendTurn(p, "please fail");
      assertEqual(t3.errors.length, 1, "errors shown for a failing endpoint");
      assert(/model_error/.test(t3.errors[0]) && /500/.test(t3.errors[0]), `error lacks code or status: ${t3.errors[0]}`);
      await p.evaluate(() => {
        for (const b of document.querySelectorAll('[data-testid="error"] button')) if (b.textContent === "Dismiss") b.click();
      });

      // Restart while a turn is running: the old instance's request to the
      // endpoint is aborted (the endpoint sees the connection close while
      // it holds the answer), and the turn is retried on the new instance
      // (seeding cold from IndexedDB), not lost or stored twice. The abort
      // is the page's own doing: the one aborted request to the endpoint
      // is expected, any other failure is not.
      const before = await settledCount(p);
      fake.hold();
      await p.type('[data-testid="input"]', "hold on");
      await p.click('[data-testid="send"]');
      await p.waitForFunction(() => document.querySelector('[data-testid="message"].live')?.textContent.includes("held"));
      let aborts = 0;
      const allowed500 = ctx.allowed;
      ctx.allowed = (problem) => allowed500(problem) ||
        (problem.includes(`${fake.url}/chat/completions`) && /aborted/i.test(problem) && ++aborts === 1);
      await p.click('[data-testid="restart-runtime"]');
      let timer;
      const closed = await Promise.race([
        fake.heldClosed().then(() => true),
        new Promise((resolve) => { timer = setTimeout(() => resolve(false), 10_000); }),
      ]);
      clearTimeout(timer);
      fake.release();
      assert(closed, "Restart runtime did not abort the old instance's request to the endpoint");
      await waitSettled(p, before + 1);
      expectTurn(await lastTurn(p), {
        seedMode: "cold", seedCount: 6, modelMessages: 7, messages: 8, reply: "Hello from the fake endpoint",
      });
      const holds = fake.requests.filter((r) => r.body.messages.at(-1).content === "hold on").length;
      assertEqual(holds, 2, "requests for the turn (the abandoned one and the retry)");

      const stored = await p.evaluate(() => new Promise((resolve, reject) => {
        const open = indexedDB.open("agentrt-demo");
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const req = open.result.transaction("conversations").objectStore("conversations").getAll();
          req.onsuccess = () => { open.result.close(); resolve(JSON.stringify(req.result) + JSON.stringify({ ...localStorage })); };
          req.onerror = () => reject(req.error);
        };
      }));
      assert(!stored.includes("sk-test-secret"), "the API key was written to storage");

      // Back to the built-in model: a new instance, so this turn seeds cold.
      await p.click('input[name="model"][value="echo"]');
      await p.waitForFunction(() => document.body.dataset.runtime === "ready" &&
        document.querySelector('[data-testid="runtime-status"]').textContent.includes("echo"));
      expectTurn(await sendTurn(p, "echo again"), {
        seedMode: "cold", seedCount: 8, modelMessages: 9, reply: "echo: echo again (model received 9 messages)",
      });
    }],
    ["a call that needs approval pauses the turn; its card survives a reload and approving runs it once", async () => {
      const p = ctx.page;
      await p.click('[data-testid="new-conversation"]');
      await waitReady(p);
      const t = await sendTurn(p, '/tool pay {"amount":5,"to":"Bob"}');
      assertEqual(t.errors.length, 0, `errors shown on the page (${t.errors.join(" | ")})`);
      await p.waitForFunction(() => document.querySelector('[data-testid="approval-card"]') !== null);
      const card = await p.evaluate(() => document.querySelector('[data-testid="approval-card"]').textContent);
      assert(card.includes('pay({"amount":5,"to":"Bob"})'), `card text: ${card}`);
      assert(await p.evaluate(() => document.querySelector('[data-testid="history-problems"]').hidden), "the pending call is shown as a history problem");
      // The paused turn is stored: after a reload (a cold runtime) the card
      // comes back from IndexedDB alone.
      await p.reload();
      await waitReady(p);
      await p.waitForFunction(() => document.querySelector('[data-testid="approval-card"]') !== null);
      const before = await settledCount(p);
      await p.click('[data-testid="approve"]');
      await waitSettled(p, before + 1);
      const done = await lastTurn(p);
      expectTurn(done, { seedMode: "cold", seedCount: 2, reply: "tool pay returned: paid 5 to Bob" });
      assertEqual(await p.evaluate(() => document.querySelectorAll('[data-testid="approval-card"]').length), 0, "approval cards after approving");
      const paid = await p.evaluate(() => [...document.querySelectorAll('[data-testid="message"][data-role="tool"]')]
        .filter((b) => b.textContent.includes("paid 5 to Bob")).length);
      assertEqual(paid, 1, "tool results of the approved call");
    }],
    ["a denied call never runs: the model gets the denial", async () => {
      const p = ctx.page;
      await sendTurn(p, '/tool pay {"amount":7,"to":"Eve"}');
      await p.waitForFunction(() => document.querySelector('[data-testid="approval-card"]') !== null);
      const before = await settledCount(p);
      await p.click('[data-testid="deny"]');
      await waitSettled(p, before + 1);
      expectTurn(await lastTurn(p), { reply: "tool pay returned: Tool call denied: denied on the approval card" });
      const paid = await p.evaluate(() => [...document.querySelectorAll('[data-testid="message"][data-role="tool"]')]
        .filter((b) => b.textContent.includes("paid 7")).length);
      assertEqual(paid, 0, "results of the denied call's tool");
    }],
  ];
}

async function runEngineSteps(engine, browser, url, fake) {
  const ctx = {
    url, fake, browser, engine: engine.name, watch: null, watchB: null, pendingB: [],
    allowed: () => false, // a step may allow the problems it provokes on purpose
  };
  await runSteps(results, engine.name, steps(ctx), ctx, {
    problems: async () => [
      ...(ctx.watch ? await ctx.watch.take() : []),
      ...(ctx.watchB ? await ctx.watchB.take() : []),
      ...ctx.pendingB.splice(0),
    ],
    screenshot: path.join(ARTIFACTS, `${engine.name}-failure.png`),
  });
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  await rm(ARTIFACTS, { recursive: true, force: true }); // no stale screenshots
  await mkdir(ARTIFACTS, { recursive: true });
  const scratch = await mkdtemp(path.join(tmpdir(), "agentrt-e2e-"));
  let server = null;
  let fake = null;
  try {
    let url = args.url;
    if (!url) {
      server = await startServer(scratch);
      url = server.url;
    }
    console.log(`demo at ${url}`);
    fake = await startFakeModel();
    await runEngines(args.browsers, scratch, results, (engine, browser) => runEngineSteps(engine, browser, url, fake));
  } catch (e) {
    results.fail("setup", e);
  } finally {
    if (server) await server.stop();
    if (fake) await fake.stop();
    await rm(scratch, { recursive: true, force: true });
  }
  results.summary();
}

await main();
