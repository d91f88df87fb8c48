// agentrt/ai as a user gets it: the tarball of dist/ (`make build`)
// installed into an empty app outside the repository beside the pinned
// ai and zod (from npm's cache, which npm ci filled, or the registry),
// imported by name and run on Node, Bun and Deno (one turn through the
// transport with a tool), built by Vite (the pinned one) into a page whose
// runtime runs in worker mode (built, not run here), and a strict TypeScript file
// type-checked against both packages' types.
//
//   node --test js/package-test/
//
// Bun and Deno come from the repository's node_modules; a missing one
// skips its test unless CI is set, where it fails.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { mkdtemp, rm, writeFile, mkdir, copyFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const DIST = process.env.AGENTRT_DIST ? path.resolve(process.env.AGENTRT_DIST) : path.join(ROOT, "dist");
const CI = Boolean(process.env.CI);
const BUN = path.join(ROOT, "node_modules/@oven/bun-linux-x64/bin/bun");
const DENO = path.join(ROOT, "node_modules/.bin/deno");
const TSC = path.join(ROOT, "node_modules/.bin/tsc");
const RUN_MS = 120_000;
// The versions the repository pins, installed in the app.
const dev = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).devDependencies;

let scratch;
let app;

function tool(t, p, name) {
  if (existsSync(p)) return true;
  if (CI) assert.fail(`${name} is missing at ${p}: run npm ci`);
  t.skip(`${name} is missing: run npm ci`);
  return false;
}

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", timeout: RUN_MS, env: { ...process.env, NO_COLOR: "1" } });
  if (r.error) throw r.error;
  return r;
}

before(async () => {
  if (!existsSync(path.join(DIST, "ai.js"))) throw new Error(`${DIST} holds no ai.js: run \`make build\` (or set AGENTRT_DIST)`);
  scratch = await mkdtemp(path.join(tmpdir(), "agentrt-ai-package-"));
  const packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", scratch], { cwd: DIST, encoding: "utf8" }));
  app = path.join(scratch, "app");
  await mkdir(app);
  await writeFile(path.join(app, "package.json"), JSON.stringify({ name: "agentrt-ai-user-app", private: true, type: "module" }, null, 2));
  execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts",
    path.join(scratch, packed[0].filename), `ai@${dev.ai}`, `zod@${dev.zod}`], { cwd: app, encoding: "utf8" });
  await writeFile(path.join(app, "app.mjs"), APP);
});

after(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

// One turn with a tool through the transport, read as useChat reads it.
const APP = `
import { loadRuntime } from "agentrt";
import { AgentrtChatTransport, languageModel, aiTools, toUIMessages } from "agentrt/ai";
import { readUIMessageStream, tool } from "ai";
import { MockLanguageModelV4, convertArrayToReadableStream } from "ai/test";
import { z } from "zod";

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
let calls = 0;
const model = new MockLanguageModelV4({
  doStream: async () => ({ stream: convertArrayToReadableStream(++calls === 1
    ? [{ type: "tool-call", toolCallId: "c1", toolName: "add", input: '{"a":2,"b":3}' }, { type: "finish", usage, finishReason: { unified: "tool-calls", raw: "tool_calls" } }]
    : [{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "five" }, { type: "text-end", id: "t" }, { type: "finish", usage, finishReason: { unified: "stop", raw: "stop" } }]) }),
});
const tools = aiTools({ add: tool({ inputSchema: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b }) });
const rt = await loadRuntime({ model: languageModel(model), tools });
const transport = new AgentrtChatTransport({ runtime: rt });
const stream = await transport.sendMessages({ trigger: "submit-message", chatId: "c", messageId: undefined,
  messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "2+3?" }] }], abortSignal: undefined });
let message;
for await (const m of readUIMessageStream({ stream })) message = m;
const stored = toUIMessages(rt.session("c").messages);
rt.close();
console.log(JSON.stringify({ parts: message.parts.map((p) => p.type + (p.state ? ":" + p.state : "")), stored: stored.length }));
`;

const WANT = { parts: ["step-start", "tool-add:output-available", "step-start", "text:done"], stored: 2 };

function checkRun(r, name) {
  assert.equal(r.status, 0, `${name} exited ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  assert.deepEqual(JSON.parse(r.stdout.trim().split("\n").at(-1)), WANT, `${name}'s turn`);
}

test("the package declares ai an optional peer dependency and exports agentrt/ai with its types", () => {
  const pkg = JSON.parse(readFileSync(path.join(app, "node_modules", "agentrt", "package.json"), "utf8"));
  assert.deepEqual(pkg.exports["./ai"], { types: "./ai.d.ts", default: "./ai.js" });
  assert.equal(pkg.peerDependencies.ai, "^7.0.0");
  assert.equal(pkg.peerDependenciesMeta.ai.optional, true);
  assert.equal(pkg.dependencies, undefined, "no dependencies");
  // ai.js is the one module that imports a package, and it imports ai only.
  const dir = path.join(app, "node_modules", "agentrt");
  for (const f of readdirSync(dir).filter((f) => f.endsWith(".js"))) {
    // Comments left out: they show imports of an app.
    const src = readFileSync(path.join(dir, f), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
    const bare = [...src.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)["']([^"'./][^"']*)["']/gm)].map((m) => m[1]);
    assert.deepEqual(bare, f === "ai.js" ? ["ai"] : [], `${f} imports ${bare}`);
  }
});

test("Node: agentrt/ai imported by name runs a turn through the transport", () => {
  checkRun(run(process.execPath, ["app.mjs"], app), "node");
});

test("Bun: agentrt/ai imported by name runs a turn through the transport", (t) => {
  if (!tool(t, BUN, "bun")) return;
  checkRun(run(BUN, ["app.mjs"], app), "bun");
});

test("Deno: agentrt/ai imported by name runs a turn through the transport", (t) => {
  if (!tool(t, DENO, "deno")) return;
  checkRun(run(DENO, ["run", "--allow-read", "--allow-env", "--allow-sys", "app.mjs"], app), "deno");
});

test("TypeScript --strict: agentrt/ai's types check against the installed ai's", async (t) => {
  if (!tool(t, TSC, "tsc")) return;
  await copyFile(path.join(ROOT, "js", "package-test", "ai.ts"), path.join(app, "ai.ts"));
  await writeFile(path.join(app, "tsconfig.json"), JSON.stringify({
    compilerOptions: {
      strict: true, noEmit: true, target: "es2022", module: "nodenext", moduleResolution: "nodenext",
      // skipLibCheck: ai 7.0.185's own declarations fail a check of
      // their own under these flags (Buffer without @types/node, and
      // exactOptionalPropertyTypes); agentrt's are the program's imports.
      lib: ["es2022", "dom", "dom.iterable"], types: [], skipLibCheck: true,
      exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true,
      verbatimModuleSyntax: true, isolatedModules: true, moduleDetection: "force",
    },
    files: ["ai.ts"],
  }, null, 2));
  const r = run(TSC, ["-p", "tsconfig.json"], app);
  assert.equal(r.status, 0, `tsc --strict failed:\n${r.stdout}${r.stderr}`);
  // And a model id string is no LanguageModel object: a type error.
  await writeFile(path.join(app, "bad-ai.ts"), `import { languageModel } from "agentrt/ai";\nexport const m = languageModel("openai/gpt-4o");\n`);
  await writeFile(path.join(app, "tsconfig.bad.json"), JSON.stringify({ extends: "./tsconfig.json", files: ["bad-ai.ts"] }));
  const one = run(TSC, ["-p", "tsconfig.bad.json"], app);
  assert.notEqual(one.status, 0, "languageModel(string) must not type-check");
  assert.match(one.stdout, /bad-ai\.ts/);
});

// A page of the app, built by Vite with its defaults: agentrt/ai and ai
// bundled, the module and the worker entry emitted as assets.
const PAGE = `<!doctype html><meta charset="utf-8"><script type="module" src="/main.js"></script>`;
const MAIN = `
import { loadRuntime } from "agentrt";
import { AgentrtChatTransport, languageModel } from "agentrt/ai";
import { readUIMessageStream } from "ai";
import { MockLanguageModelV4 } from "ai/test";
const rt = await loadRuntime({ worker: true, model: languageModel(new MockLanguageModelV4()) });
const transport = new AgentrtChatTransport({ runtime: rt });
const stream = await transport.sendMessages({ trigger: "submit-message", chatId: "c", messageId: undefined,
  messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }], abortSignal: undefined });
for await (const m of readUIMessageStream({ stream })) document.body.textContent = JSON.stringify(m.parts);
`;

test("Vite: an app importing agentrt/ai and ai builds, the module and the worker entry emitted", async () => {
  const web = path.join(scratch, "web");
  await mkdir(web);
  await writeFile(path.join(web, "index.html"), PAGE);
  await writeFile(path.join(web, "main.js"), MAIN);
  // The app's own node_modules resolve agentrt, ai and zod.
  await writeFile(path.join(web, "package.json"), JSON.stringify({ name: "web", private: true, type: "module" }));
  execFileSync("ln", ["-s", path.join(app, "node_modules"), path.join(web, "node_modules")]);
  const { build } = await import(createRequire(path.join(ROOT, "package.json")).resolve("vite"));
  const out = path.join(web, "dist");
  await build({ root: web, configFile: false, logLevel: "error", build: { outDir: out, emptyOutDir: true } });
  const assets = readdirSync(path.join(out, "assets"));
  assert.ok(assets.some((f) => /^agentrt-.*\.wasm$/.test(f)), `the module is emitted: ${assets}`);
  assert.ok(assets.some((f) => /^worker-.*\.js$/.test(f)), `the worker entry is emitted: ${assets}`);
  const js = assets.filter((f) => f.endsWith(".js")).map((f) => readFileSync(path.join(out, "assets", f), "utf8")).join("\n");
  assert.match(js, /doStream returned no stream/, "agentrt/ai is in the bundle");
  assert.doesNotMatch(js, /from\s*["']ai["']/, "ai is bundled, not left as an import");
});
