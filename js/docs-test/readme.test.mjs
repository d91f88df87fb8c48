// README.md's JavaScript quick start, run as a user runs it: the ```js
// block of "Using it from JavaScript", with its import of the package by
// name pointed at the built dist/glue.js, in a fresh Node process. Once
// with the empty history it starts with, once with a stored history
// whose last tool call has no result (what `policy: { repair: true }` in
// the snippet is for).
//
//   node --test js/docs-test/          (after `make build`, or set AGENTRT_DIST)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const DIST = process.env.AGENTRT_DIST ? path.resolve(process.env.AGENTRT_DIST) : path.join(ROOT, "dist");
// A guard against hangs, not a speed assertion.
const RUN_MS = 120_000;

let dir;
let snippet;

before(async () => {
  const readme = await readFile(path.join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("\n## Using it from JavaScript");
  assert.ok(start >= 0, 'README.md has a "## Using it from JavaScript" section');
  const m = /```js\n([\s\S]*?)```/.exec(readme.slice(start));
  assert.ok(m, "the section has a ```js block");
  snippet = m[1];
  assert.match(snippet, /from "agentrt";/, "the snippet imports the package by name");
  assert.match(snippet, /let stored = \[\];/, "the snippet starts from an empty stored history");
  dir = await mkdtemp(path.join(tmpdir(), "agentrt-readme-"));
});

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

// runSnippet runs the snippet with stored as the host's stored history
// and returns its output.
async function runSnippet(name, stored) {
  const code = snippet
    .replace('from "agentrt";', `from ${JSON.stringify(pathToFileURL(path.join(DIST, "glue.js")).href)};`)
    .replace("let stored = [];", `let stored = ${JSON.stringify(stored)};`);
  const file = path.join(dir, `${name}.mjs`);
  await writeFile(file, code);
  const r = spawnSync(process.execPath, [file], { cwd: dir, encoding: "utf8", timeout: RUN_MS });
  if (r.error) throw r.error;
  assert.equal(r.status, 0, `the snippet exited ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r.stdout;
}

test("README's quick start runs: one turn stored, then a streamed one", async () => {
  const out = await runSnippet("empty", []);
  assert.ok(out.startsWith("noop echo: hello (model received 1 messages)\n"), out);
  assert.match(out, /echo: more \(model received 3 messages\)$/, "the stream printed the second reply");
});

test("README's quick start continues a stored history with an unanswered tool call", async () => {
  const stored = [
    { role: "user", content: "add 2 and 3" },
    { role: "assistant", content: "", tool_calls: [{ id: "c1", name: "add", arguments: "{}" }] },
  ];
  // The snippet's second turn passes no policy: it relies on the healed
  // copy (seed.repaired) of the first.
  const { loadRuntime } = await import(pathToFileURL(path.join(DIST, "glue.js")).href);
  const rt = await loadRuntime();
  const probe = await rt.run({ sessionId: "probe", input: "x", history: stored, policy: { repair: true } });
  rt.close();
  assert.equal(probe.seed.repairs?.length, 1, "the probe's history is repaired");
  assert.equal(probe.seed.repaired?.length, 3, "the result carries the healed copy");
  const out = await runSnippet("repair", stored);
  assert.ok(out.startsWith("cold echo: hello (model received 4 messages)\n"), out);
  assert.match(out, /echo: more \(model received 6 messages\)$/, "the second turn sees the repaired history and the first turn");
});
