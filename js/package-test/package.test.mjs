// The npm package as a user gets it: `npm pack` of dist/ (what
// `go run ./cmd/agentrt build` writes), installed into an empty folder
// outside the repository, imported by name and run on Node, Bun and Deno
// (a cold seed, then a noop), bundled by Bun's bundler, and a strict
// TypeScript file that round-trips history type-checked against it.
//
//   node --test js/package-test/
//
// dist/ must be built first (`make build`), or set AGENTRT_DIST. Bun and
// Deno come from the repository's node_modules; a missing one skips its
// test unless CI is set, where it fails.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile, mkdir, copyFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const DIST = process.env.AGENTRT_DIST ? path.resolve(process.env.AGENTRT_DIST) : path.join(ROOT, "dist");
const CI = Boolean(process.env.CI);
const BUN = path.join(ROOT, "node_modules/@oven/bun-linux-x64/bin/bun");
const DENO = path.join(ROOT, "node_modules/.bin/deno");
const TSC = path.join(ROOT, "node_modules/.bin/tsc");
// A guard against hangs, not a speed assertion.
const RUN_MS = 120_000;

let scratch; // outside the repository
let app; // the user's project, with the package installed
let tarball;

// tool returns whether the tool at p can run; a missing one skips the
// test (t.skip) unless CI is set.
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
  if (!existsSync(path.join(DIST, "package.json")) || !existsSync(path.join(DIST, "agentrt.wasm"))) {
    throw new Error(`${DIST} is not a built package: run \`make build\` (or set AGENTRT_DIST)`);
  }
  scratch = await mkdtemp(path.join(tmpdir(), "agentrt-package-"));
  assert.ok(!scratch.startsWith(ROOT + path.sep), "the scratch folder is outside the repository");
  const cache = path.join(scratch, "npm-cache");
  const packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", scratch, "--cache", cache], { cwd: DIST, encoding: "utf8" }));
  tarball = path.join(scratch, packed[0].filename);
  app = path.join(scratch, "app");
  await mkdir(app);
  await writeFile(path.join(app, "package.json"), JSON.stringify({ name: "agentrt-user-app", private: true, type: "module" }, null, 2));
  execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", "--cache", cache, tarball], { cwd: app, encoding: "utf8" });
  await writeFile(path.join(app, "app.mjs"), APP);
});

after(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

// The user's program: a cold seed from stored history, then a noop, the
// stored history round-tripped, a refused history, and the module loaded
// from an explicit location too.
const APP = `
import { loadRuntime, compile, AgentrtError } from "agentrt";
import { openAIModel } from "agentrt/openai";
import { streamRun } from "agentrt/http";

const stored = [
  { role: "user", content: "What is the capital of France?" },
  { role: "assistant", content: "Paris." },
];
const rt = await loadRuntime({ systemPrompt: "Be brief." });
const first = await rt.run({ sessionId: "chat-1", input: "And of Italy?", history: stored });
stored.push(...first.appended);
const second = await rt.run({ sessionId: "chat-1", input: "Thanks", history: stored });
stored.push(...second.appended);
let refused;
try {
  await rt.run({ sessionId: "chat-2", input: "x", history: [{ role: "wizard", content: "y" }] });
} catch (e) {
  refused = { code: e.code, index: e.index };
}
const session = rt.session("chat-1");
rt.close();

// The module found through the package's exports, passed explicitly.
const wasm = await compile(new URL(import.meta.resolve("agentrt/agentrt.wasm")));
const other = await loadRuntime({ wasm });
const cold = await other.run({ sessionId: "chat-1", input: "again", history: session.messages });
other.close();

console.log(JSON.stringify({
  first: first.seed, second: second.seed, messageCount: second.messageCount,
  reply: second.reply.content, stored: stored.length, refused,
  cold: cold.seed, openAIModel: typeof openAIModel, AgentrtError: typeof AgentrtError,
  streamRun: typeof streamRun,
}));
`;

const WANT = {
  first: { mode: "cold", seeded: 2, skippedSystem: 0 },
  second: { mode: "noop", seeded: 0, skippedSystem: 0 },
  messageCount: 6,
  reply: "echo: Thanks (model received 5 messages)",
  stored: 6,
  refused: { code: "invalid_history", index: 0 },
  cold: { mode: "cold", seeded: 6, skippedSystem: 0 },
  openAIModel: "function",
  AgentrtError: "function",
  streamRun: "function",
};

function checkRun(r, name) {
  assert.equal(r.status, 0, `${name} exited ${r.status} (${r.signal || ""})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  const lines = r.stdout.trim().split("\n");
  assert.deepEqual(JSON.parse(lines[lines.length - 1]), WANT, `${name}'s conversation`);
  assert.doesNotMatch(r.stderr, /MODULE_TYPELESS_PACKAGE_JSON|Warning/i, `${name} printed a warning`);
}

test("the tarball ships the bundled glue, the entries and types, the module and wasm_exec.js, and no tests", async () => {
  const dir = path.join(app, "node_modules", "agentrt");
  const files = readdirSync(dir).sort();
  for (const f of ["agentrt.wasm", "ai.d.ts", "ai.js", "glue.d.ts", "glue.js", "http.d.ts", "http.js", "openai.d.ts", "openai.js", "package.json", "wasm_exec.js", "worker.js"]) {
    assert.ok(files.includes(f), `${f} is in the package: ${files}`);
  }
  // The glue's internal modules are folded into glue.js (agentrt build
  // bundles it): the package's JavaScript is its five entries (ai.js,
  // glue.js, http.js, openai.js, and worker.js for worker mode) and
  // wasm_exec.js, and glue.js imports nothing else.
  assert.deepEqual(files.filter((f) => f.endsWith(".js")), ["ai.js", "glue.js", "http.js", "openai.js", "wasm_exec.js", "worker.js"], "the package's modules");
  const glue = await readFile(path.join(dir, "glue.js"), "utf8");
  const imports = [...glue.matchAll(/(?:from\s*|import\s*\(\s*|import\s+)"(\.[^"]*)"/g)].map((m) => m[1]);
  assert.deepEqual(imports, ["./wasm_exec.js"], "glue.js imports only wasm_exec.js");
  assert.ok(files.every((f) => !/test|spec/.test(f)), `no test files: ${files}`);
  // The WASI module stays out (docs/package.md, "The WASI module"), though
  // the build writes it into the same directory.
  assert.ok(existsSync(path.join(DIST, "agentrt-wasi.wasm")), "dist/ holds the WASI module");
  assert.deepEqual(files.filter((f) => f.endsWith(".wasm")), ["agentrt.wasm"], "the only module shipped is agentrt.wasm");
  assert.equal(statSync(path.join(dir, "agentrt.wasm")).mode & 0o111, 0, "agentrt.wasm is not executable");
  const pkg = JSON.parse(await readFile(path.join(dir, "package.json"), "utf8"));
  assert.equal(pkg.name, "agentrt");
  assert.equal(pkg.type, "module");
  assert.equal(Object.keys(pkg.exports["."])[0], "types", "types come first in exports");
});

test("Node imports dist/glue.js inside the repository without a module-type warning", () => {
  const glue = new URL("glue.js", `file://${DIST}/`).href;
  const r = run(process.execPath, ["--input-type=module", "-e", `const g = await import(${JSON.stringify(glue)}); console.log(typeof g.loadRuntime);`], ROOT);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), "function");
  assert.equal(r.stderr, "", "node printed a warning");
});

test("Node: imported by name, a cold seed then a noop", (t) => {
  checkRun(run(process.execPath, ["app.mjs"], app), "node");
});

test("Bun: imported by name, a cold seed then a noop", (t) => {
  if (!tool(t, BUN, "bun")) return;
  checkRun(run(BUN, ["app.mjs"], app), "bun");
});

test("Deno: imported by name, a cold seed then a noop", (t) => {
  if (!tool(t, DENO, "deno")) return;
  // Reading the module from node_modules is the only permission it needs.
  checkRun(run(DENO, ["run", "--allow-read", "app.mjs"], app), "deno");
});

// A CommonJS program (what `npm init` makes by default) requires the
// package: Node 20.19+ and Bun load ES modules through require().
const CJS = `
const { loadRuntime } = require("agentrt");
(async () => {
  const stored = [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }];
  const rt = await loadRuntime();
  const first = await rt.run({ sessionId: "s", input: "one", history: stored });
  stored.push(...first.appended);
  const second = await rt.run({ sessionId: "s", input: "two", history: stored });
  rt.close();
  console.log(JSON.stringify([first.seed.mode, second.seed.mode, second.messageCount]));
})();
`;

test("CommonJS: require(\"agentrt\") on Node and Bun, a cold seed then a noop", async (t) => {
  await writeFile(path.join(app, "app.cjs"), CJS);
  const runners = [["node", process.execPath]];
  if (existsSync(BUN)) runners.push(["bun", BUN]);
  else if (CI) assert.fail(`bun is missing at ${BUN}: run npm ci`);
  for (const [name, exe] of runners) {
    const r = run(exe, ["app.cjs"], app);
    assert.equal(r.status, 0, `${name} exited ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.deepEqual(JSON.parse(r.stdout.trim().split("\n").at(-1)), ["cold", "noop", 6], name);
    assert.doesNotMatch(r.stderr, /Warning/i, `${name} printed a warning`);
  }
});

test("a bundler (bun build) resolves the exports; the bundle runs with the module copied beside it", async (t) => {
  if (!tool(t, BUN, "bun")) return;
  const out = path.join(app, "bundle");
  const built = run(BUN, ["build", "app.mjs", "--outdir", out, "--target", "node"], app);
  assert.equal(built.status, 0, `bun build failed:\n${built.stdout}${built.stderr}`);
  // Bundlers that do not copy new URL(..., import.meta.url) assets (esbuild,
  // Bun) need the module and wasm_exec.js next to the bundle (docs/package.md).
  for (const f of ["agentrt.wasm", "wasm_exec.js"]) {
    await copyFile(path.join(app, "node_modules", "agentrt", f), path.join(out, f));
  }
  await writeFile(path.join(out, "package.json"), JSON.stringify({ type: "module" }));
  const r = run(process.execPath, ["app.js"], out);
  assert.equal(r.status, 0, `the bundle exited ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  const lines = r.stdout.trim().split("\n");
  assert.deepEqual(JSON.parse(lines[lines.length - 1]), WANT, "the bundle's conversation");
});

test("TypeScript --strict: a file that stores history and passes it back type-checks", async (t) => {
  if (!tool(t, TSC, "tsc")) return;
  await copyFile(path.join(ROOT, "js", "package-test", "roundtrip.ts"), path.join(app, "roundtrip.ts"));
  await writeFile(path.join(app, "tsconfig.json"), JSON.stringify({
    // The strictness `tsc --init` (TypeScript 5.9) turns on.
    compilerOptions: {
      strict: true, noEmit: true, target: "es2022", module: "nodenext", moduleResolution: "nodenext",
      lib: ["es2022", "dom"], types: [], skipLibCheck: false,
      exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true,
      verbatimModuleSyntax: true, isolatedModules: true, moduleDetection: "force",
    },
    files: ["roundtrip.ts"],
  }, null, 2));
  const r = run(TSC, ["-p", "tsconfig.json"], app);
  assert.equal(r.status, 0, `tsc --strict failed:\n${r.stdout}${r.stderr}`);
});
