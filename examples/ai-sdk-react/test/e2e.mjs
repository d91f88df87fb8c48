// The AI SDK example app (examples/ai-sdk-react) in real browsers:
// Chromium and Firefox ESR through puppeteer-core, WebKit through
// WebKitWebDriver under xvfb-run (web-demo/test/browsers.mjs). The app is
// built once with Vite (production), served by the browser suites' static
// server, and each browser plays one conversation through useChat and
// AgentrtChatTransport, with the runtime in worker mode and the app's mock
// LanguageModel: send, a tool, a tool approved, a tool denied, a reload
// while a call awaits approval (the fresh runtime seeds the stored
// UIMessages and resumes), regenerate, and a decision stored but never
// sent. In Chromium the page then runs on an OpenAI-compatible endpoint
// (a local fake) given in its query, which answers and then fails, and
// on the Vite dev server (React's development mode).
//
//   node examples/ai-sdk-react/test/e2e.mjs [--browsers chromium,firefox,webkit]
//
// dist/ must be built first (`make build`), or set AGENTRT_DIST. A browser
// that is not installed is skipped, unless CI is set: then it is a failure.
// Screenshots of failed steps go to artifacts/ai-sdk-react/. The last line
// reads "N passed, N failed".

import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ENGINE_NAMES, Results, assertEqual, runEngines, runSteps, watchPage } from "../../../web-demo/test/browsers.mjs";
import { DIST, ROOT, serve } from "../../../web-demo/test/server.mjs";

const APP = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ARTIFACTS = path.join(ROOT, "artifacts", "ai-sdk-react");
// A guard against hangs, not a speed assertion.
const WAIT_MS = 60_000;

const results = new Results();

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

// build runs the production Vite build of the app into out.
async function build(out) {
  const { build: viteBuild } = await import("vite");
  await viteBuild({
    configFile: path.join(APP, "vite.config.js"),
    logLevel: "error",
    build: { outDir: out, emptyOutDir: true },
  });
}

// startFakeEndpoint serves an OpenAI-compatible /v1/chat/completions on a
// free port that streams "Hello from the fake endpoint", or answers 500
// when the last message says "fail", and records each request's body.
async function startFakeEndpoint() {
  const requests = [];
  const server = createServer((req, res) => {
    res.setHeader("access-control-allow-origin", "*");
    res.setHeader("access-control-allow-headers", "*");
    res.setHeader("access-control-allow-methods", "POST, OPTIONS");
    if (req.method === "OPTIONS") { res.writeHead(204).end(); return; }
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") { res.writeHead(404).end(); return; }
    let body = "";
    req.on("data", (b) => { body += b; });
    req.on("end", () => {
      const j = JSON.parse(body);
      requests.push(j);
      if (JSON.stringify(j.messages.at(-1)).includes("fail")) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "the fake endpoint failed on purpose" } }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const send = (chunk) => res.write(`data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "fake", ...chunk })}\n\n`);
      for (const w of ["Hello", " from", " the", " fake", " endpoint"]) send({ choices: [{ index: 0, delta: { content: w }, finish_reason: null }] });
      send({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    stop: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

// ---------------------------------------------------------------------------
// What the page shows.

// view reads the conversation as the page renders it.
function view(page) {
  return page.evaluate(() => {
    const messages = [...document.querySelectorAll('[data-testid="message"]')].map((m) => ({
      role: m.dataset.role,
      id: m.dataset.id,
      texts: [...m.querySelectorAll('[data-testid="text"]')].map((t) => t.textContent),
      tools: [...m.querySelectorAll('[data-testid="tool"]')].map((t) => ({
        name: t.dataset.tool, state: t.dataset.state, call: t.dataset.call,
        output: t.querySelector('[data-testid="tool-output"]')?.textContent ?? null,
      })),
    }));
    const ledger = document.querySelector('[data-testid="ledger"]');
    return {
      status: document.body.dataset.status,
      saved: document.body.dataset.saved,
      messages,
      errors: [...document.querySelectorAll('[data-testid="error"]')].map((e) => e.textContent),
      transfers: [...(ledger?.querySelectorAll('[data-testid="transfer"]') ?? [])].map((t) => ({ call: t.dataset.call, repeats: t.dataset.repeats })),
      model: document.querySelector('[data-testid="model-label"]')?.textContent,
    };
  });
}

// settle waits until the chat is idle with n messages, all of them stored
// in IndexedDB, and done(view) holds; it returns that view.
async function settle(page, n, done = () => true, what = "") {
  const until = Date.now() + WAIT_MS;
  let v;
  for (;;) {
    v = await view(page);
    if (v.errors.length) throw new Error(`the page shows an error: ${v.errors.join(" | ")}`);
    if (v.status === "ready" && v.messages.length === n && v.saved === String(n) && done(v)) return v;
    if (Date.now() > until) throw new Error(`the chat did not settle with ${n} messages ${what}; last view: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// newChat clicks New chat and waits for the page to show the new chat
// (the input of the old one is gone by then).
async function newChat(page) {
  const old = await page.evaluate(() => document.body.dataset.chat);
  await page.click('[data-testid="new-chat"]');
  await page.waitForFunction((old) => document.body.dataset.chat && document.body.dataset.chat !== old &&
    document.querySelector('[data-testid="input"]'), { timeout: WAIT_MS }, old);
}

// storeDecision approves the call that awaits approval in the stored copy
// of the page's chat, as IndexedDB holds it when the page goes away between
// the click on Approve and the request it starts; it returns the call's id.
function storeDecision(page) {
  return page.evaluate(() => new Promise((resolve, reject) => {
    const chatId = localStorage.getItem("agentrt-ai-sdk-react:chat");
    const open = indexedDB.open("agentrt-ai-sdk-react");
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const store = open.result.transaction("chats", "readwrite").objectStore("chats");
      const get = store.get(chatId);
      get.onsuccess = () => {
        const rec = get.result;
        const part = rec.messages.at(-1).parts.find((p) => p.state === "approval-requested");
        part.state = "approval-responded";
        part.approval = { ...part.approval, approved: true };
        store.put(rec);
        store.transaction.oncomplete = () => { open.result.close(); resolve(part.toolCallId); };
      };
    };
  }));
}

async function send(page, text) {
  await page.click('[data-testid="input"]');
  await page.type('[data-testid="input"]', text);
  await page.click('[data-testid="send"]');
}

// canon is x as JSON with its objects' keys sorted (WebDriver hands back
// objects whose keys are in another order than the page's).
const canon = (x) => JSON.stringify(x, (_, v) => (v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v));

const lastOf = (v) => v.messages[v.messages.length - 1];
const lastText = (v) => lastOf(v).texts.join("");

// ---------------------------------------------------------------------------
// The conversation, once per browser. Session messages, as agentrt seeds
// the UIMessages (contract.md): each turn is a user message and an
// assistant message, plus an assistant call and a tool result for a tool.

function steps(ctx) {
  return [
    ["the page loads the runtime in a worker and starts an empty chat", async () => {
      ctx.page = await ctx.browser.newPage();
      ctx.page.setDefaultTimeout(WAIT_MS);
      ctx.watch = watchPage(ctx.page, "page");
      await ctx.page.goto(ctx.url);
      await ctx.page.waitForFunction(() => document.body.dataset.runtime === "ready", { timeout: WAIT_MS });
      // A profile a browser kept from an earlier run starts over.
      await newChat(ctx.page);
      const v = await settle(ctx.page, 0);
      assertEqual(v.model, "mock model (no network)", "the model");
      assertEqual(v.transfers.length, 0, "transfers on a new chat");
      // The module runs in the worker: the page never defined Go.
      assertEqual(await ctx.page.evaluate(() => typeof globalThis.Go), "undefined", "typeof Go on the page");
    }],
    ["send: the reply streams into an assistant message", async () => {
      await send(ctx.page, "hello");
      const v = await settle(ctx.page, 2);
      assertEqual(lastOf(v).role, "assistant", "last message's role");
      assertEqual(lastText(v), "Echo: hello (the model was sent 1 messages; take 1)", "reply");
    }],
    ["a tool that needs no approval runs, and the model reads its output", async () => {
      await send(ctx.page, "weather in Lisbon");
      const v = await settle(ctx.page, 4);
      const [tool] = lastOf(v).tools;
      assertEqual(tool?.name, "weather", "tool part");
      assertEqual(tool.state, "output-available", "weather's state");
      assert(tool.output.includes('"city":"Lisbon"'), `weather's output ${tool.output}`);
      assertEqual(lastText(v), `The weather tool answered: ${tool.output}`, "reply after the tool");
    }],
    ["approve: the transfer waits for Approve, then runs once", async () => {
      await send(ctx.page, "pay Alice 25");
      let v = await settle(ctx.page, 6, (v) => lastOf(v).tools[0]?.state === "approval-requested", "awaiting approval");
      assertEqual(lastOf(v).tools[0].name, "transfer", "tool part");
      assertEqual(v.transfers.length, 0, "transfers before the approval");
      assertEqual(await ctx.page.evaluate(() => document.querySelector('[data-testid="input"]').disabled), true, "the input while a call awaits approval");
      const call = lastOf(v).tools[0].call;
      await ctx.page.click('[data-testid="approve"]');
      v = await settle(ctx.page, 6, (v) => lastText(v) !== "", "after Approve");
      const tool = lastOf(v).tools[0];
      assertEqual(tool.state, "output-available", "transfer's state after Approve");
      assert(tool.output.includes('"sent":true') && tool.output.includes('"to":"Alice"'), `transfer's output ${tool.output}`);
      assertEqual(lastText(v), `The transfer tool answered: ${tool.output}`, "reply after the approved call");
      assertEqual(v.transfers.length, 1, "transfers after the approval");
      assertEqual(v.transfers[0].call, call, "the transfer's call id");
      assertEqual(v.transfers[0].repeats, "0", "the transfer's repeats (it ran once)");
    }],
    ["deny: the call is not made and the model is told", async () => {
      await send(ctx.page, "pay Bob 40");
      await settle(ctx.page, 8, (v) => lastOf(v).tools[0]?.state === "approval-requested", "awaiting approval");
      await ctx.page.click('[data-testid="deny"]');
      const v = await settle(ctx.page, 8, (v) => lastText(v) !== "", "after Deny");
      assertEqual(lastOf(v).tools[0].state, "output-denied", "transfer's state after Deny");
      assertEqual(lastText(v), "Understood: the transfer call was denied, so nothing was done.", "reply after the denial");
      assertEqual(v.transfers.length, 1, "transfers after the denial");
    }],
    ["reload while a call awaits approval: the fresh runtime seeds the stored chat and resumes it", async () => {
      await send(ctx.page, "pay Carol 5");
      const before = await settle(ctx.page, 10, (v) => lastOf(v).tools[0]?.state === "approval-requested", "awaiting approval");
      await ctx.page.reload();
      await ctx.page.waitForFunction(() => document.body.dataset.runtime === "ready", { timeout: WAIT_MS });
      let v = await settle(ctx.page, 10, (v) => lastOf(v).tools[0]?.state === "approval-requested", "after the reload");
      assertEqual(canon(v.messages), canon(before.messages), "the conversation read back from IndexedDB");
      await ctx.page.click('[data-testid="approve"]');
      v = await settle(ctx.page, 10, (v) => lastText(v) !== "", "after Approve");
      assertEqual(lastOf(v).tools[0].state, "output-available", "transfer's state after Approve");
      assertEqual(v.transfers.length, 2, "transfers after the second approval");
      assert(v.transfers.every((t) => t.repeats === "0"), `a transfer ran twice: ${JSON.stringify(v.transfers)}`);
      // 5 turns: 2 + 4 + 4 + 4 + 4 session messages, then this input.
      await send(ctx.page, "hello again");
      v = await settle(ctx.page, 12);
      assertEqual(lastText(v), "Echo: hello again (the model was sent 19 messages; take 1)", "reply: the whole stored chat was seeded");
    }],
    ["regenerate replaces the last answer, and later turns never see the old one", async () => {
      const before = await view(ctx.page);
      await ctx.page.click('[data-testid="regenerate"]');
      let v = await settle(ctx.page, 12, (v) => lastText(v).includes("take 2"), "after Regenerate");
      assertEqual(lastText(v), "Echo: hello again (the model was sent 19 messages; take 2)", "regenerated reply");
      assertEqual(canon(v.messages.slice(0, -1)), canon(before.messages.slice(0, -1)), "the messages before the regenerated one");
      await send(ctx.page, "and now?");
      v = await settle(ctx.page, 14);
      // 18 + "hello again" + one answer to it + this input.
      assertEqual(lastText(v), "Echo: and now? (the model was sent 21 messages; take 1)", "reply after the regenerated turn");
      // And so does a fresh runtime, seeded from the stored chat.
      await ctx.page.reload();
      await ctx.page.waitForFunction(() => document.body.dataset.runtime === "ready", { timeout: WAIT_MS });
      await settle(ctx.page, 14);
      await ctx.page.click('[data-testid="regenerate"]');
      v = await settle(ctx.page, 14, (v) => lastText(v).includes("take 1") && v.messages.length === 14, "after Regenerate on a fresh runtime");
      assertEqual(lastText(v), "Echo: and now? (the model was sent 21 messages; take 1)", "regenerated reply on a fresh runtime");
    }],
    ["a decision stored but never sent (the page closed first) is sent when the chat loads", async () => {
      await send(ctx.page, "pay Dan 7");
      await settle(ctx.page, 16, (v) => lastOf(v).tools[0]?.state === "approval-requested", "awaiting approval");
      const call = await storeDecision(ctx.page);
      await ctx.page.reload();
      await ctx.page.waitForFunction(() => document.body.dataset.runtime === "ready", { timeout: WAIT_MS });
      const v = await settle(ctx.page, 16, (v) => lastText(v) !== "", "after the load");
      assertEqual(lastOf(v).tools[0].state, "output-available", "transfer's state");
      assertEqual(v.transfers.length, 3, "transfers");
      assertEqual(v.transfers.find((t) => t.call === call)?.repeats, "0", "the transfer's repeats (it ran once)");
    }],
  ];
}

// On an OpenAI-compatible endpoint named in the query, through
// @ai-sdk/openai (one engine: the page's own code is what differs).
function endpointSteps(ctx) {
  return [
    ["an OpenAI-compatible endpoint in the query is the model", async () => {
      await ctx.page.goto(`${ctx.url}?endpoint=${encodeURIComponent(ctx.endpoint.url)}&model=fake-model`);
      await ctx.page.waitForFunction(() => document.body.dataset.runtime === "ready", { timeout: WAIT_MS });
      await newChat(ctx.page);
      let v = await settle(ctx.page, 0);
      assertEqual(v.model, `fake-model at ${ctx.endpoint.url}`, "the model");
      await send(ctx.page, "hi there");
      v = await settle(ctx.page, 2);
      assertEqual(lastText(v), "Hello from the fake endpoint", "reply");
      const req = ctx.endpoint.requests.at(-1);
      assertEqual(req?.model, "fake-model", "model sent upstream");
      assertEqual(req.messages.at(-1).role, "user", "last message sent upstream");
      assert(JSON.stringify(req.messages.at(-1).content).includes("hi there"), `user message sent upstream: ${JSON.stringify(req.messages.at(-1))}`);
      assert(req.tools?.some((t) => t.function?.name === "transfer"), "the tools sent upstream");
    }],
    ["an endpoint that fails shows model_error with its text, and the chat goes on", async () => {
      await send(ctx.page, "please fail");
      const shown = await ctx.page.waitForFunction(() => document.body.dataset.status === "error" &&
        document.querySelector('[data-testid="error"]')?.textContent, { timeout: WAIT_MS });
      const text = await shown.jsonValue();
      assert(text.startsWith("model_error: ") && text.includes("the fake endpoint failed on purpose"), `the error shown: ${text}`);
      // The browser's own report of the 500 is expected.
      ctx.allowed = (p) => /HTTP 500|status of 500/.test(p);
      await ctx.page.click('[data-testid="error"] button');
      await send(ctx.page, "hi again");
      // useChat keeps the failed turn's user message and its empty answer.
      const v = await settle(ctx.page, 6);
      assertEqual(lastText(v), "Hello from the fake endpoint", "reply after the failure");
    }],
  ];
}

// On the Vite dev server, the README's command: React's development mode
// runs every effect twice, and useChat's cleanup stops the chat's request
// (one engine: the page's code is what is tested).
function devSteps(ctx) {
  return [
    ["the Vite dev server serves the app: a turn, and a stored decision sent once", async () => {
      await ctx.page.goto(ctx.devUrl);
      await ctx.page.waitForFunction(() => document.body.dataset.runtime === "ready", { timeout: WAIT_MS });
      await newChat(ctx.page);
      await settle(ctx.page, 0);
      await send(ctx.page, "hello");
      let v = await settle(ctx.page, 2);
      assertEqual(lastText(v), "Echo: hello (the model was sent 1 messages; take 1)", "reply");
      await send(ctx.page, "pay Zed 3");
      await settle(ctx.page, 4, (v) => lastOf(v).tools[0]?.state === "approval-requested", "awaiting approval");
      const call = await storeDecision(ctx.page);
      await ctx.page.reload();
      await ctx.page.waitForFunction(() => document.body.dataset.runtime === "ready", { timeout: WAIT_MS });
      v = await settle(ctx.page, 4, (v) => lastText(v) !== "", "after the load");
      assertEqual(lastOf(v).tools[0].state, "output-available", "transfer's state");
      assertEqual(v.transfers.length, 1, "transfers");
      assertEqual(v.transfers[0].call, call, "the transfer's call id");
      assertEqual(v.transfers[0].repeats, "0", "the transfer's repeats (it ran once)");
    }],
  ];
}

async function main() {
  let browsers = ENGINE_NAMES;
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--browsers") browsers = String(argv[++i]).split(",").filter(Boolean);
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  const scratch = await mkdtemp(path.join(tmpdir(), "agentrt-ai-sdk-react-"));
  let server;
  let endpoint;
  let dev;
  try {
    for (const f of ["glue.js", "ai.js", "agentrt.wasm"]) {
      if (!existsSync(path.join(DIST, f))) throw new Error(`${DIST}/${f} is missing: run \`make build\` (or set AGENTRT_DIST)`);
    }
    const out = path.join(scratch, "site");
    const t0 = performance.now();
    await build(out);
    results.pass(`vite build of the example in ${Math.round(performance.now() - t0)} ms`);
    server = await serve({ root: out });
    endpoint = await startFakeEndpoint();
    if (browsers.includes("chromium")) {
      const { createServer: viteServer } = await import("vite");
      dev = await viteServer({ configFile: path.join(APP, "vite.config.js"), logLevel: "error", server: { host: "127.0.0.1", port: 0, strictPort: false } });
      await dev.listen();
    }
    await mkdir(ARTIFACTS, { recursive: true });
    await runEngines(browsers, scratch, results, async (engine, browser) => {
      const devUrl = dev && `http://127.0.0.1:${dev.httpServer.address().port}/`;
      const ctx = { browser, url: server.url, devUrl, endpoint, page: null, allowed: () => false };
      const all = [...steps(ctx), ...(engine.name === "chromium" ? [...endpointSteps(ctx), ...devSteps(ctx)] : [])];
      await runSteps(results, engine.name, all, ctx, {
        problems: () => (ctx.watch ? ctx.watch.take() : []),
        screenshot: path.join(ARTIFACTS, `${engine.name}-failure.png`),
      });
    });
  } catch (e) {
    results.fail("setup", e);
  } finally {
    await server?.stop();
    await endpoint?.stop();
    await dev?.close();
    await rm(scratch, { recursive: true, force: true });
  }
  results.summary();
}

await main();
