// The package's types under the TypeScript settings a user may have: a
// program that imports the package by name, runs a turn, stores the
// healed copy and `appended`, and streams a turn with `for await`,
// type-checked with `tsc --strict` and TypeScript's defaults (no `lib`,
// no `target`: the ES5 lib, which has no AsyncIterableIterator and no
// AsyncGenerator) and with `--module nodenext`; and every .d.ts file the
// package ships, compiled by a tsconfig.json that sets no option. The
// package is js/'s package.json and type files, laid out as npm installs
// them; nothing needs to be built.
//
//   node --test js/package-test/types.test.mjs
//
// tsc comes from the repository's node_modules; without it the test
// skips, unless CI is set, where it fails.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const TSC = path.join(ROOT, "node_modules/.bin/tsc");
// A guard against hangs, not a speed assertion.
const RUN_MS = 120_000;

let app; // the user's project, outside the repository
let typeFiles; // the package's .d.ts files (the tarball ships every one of js/)

// A program for TypeScript's defaults: ES5 has no Promise constructor,
// so no async function and no for await; promises are chained instead.
// It imports each of the package's entries with types.
const ES5 = `import { loadRuntime, type HistoryMessage } from "agentrt";
import { openAIModel } from "agentrt/openai";
import { streamRun, runStatus, type StreamEvent } from "agentrt/http";

export function follow(url: string): PromiseLike<string> {
  const events = streamRun(url, { sessionId: "chat-1", input: "hi" });
  return events.next().then(function (step) {
    if (!step.done) {
      const e: StreamEvent = step.value;
      return e.type;
    }
    return runStatus(url, { sessionId: "chat-1", runId: "r-1" }).then(function (s) { return s.status; });
  });
}

export const model = openAIModel({ baseURL: "https://api.openai.com/v1", model: "gpt-4o-mini" });

export function main(): PromiseLike<HistoryMessage[]> {
  return loadRuntime({ systemPrompt: "Be brief." }).then(function (rt) {
    let stored: HistoryMessage[] = [];
    return rt.run({ sessionId: "chat-1", input: "hello", history: stored, policy: { repair: true } }).then(function (r) {
      if (r.seed.repaired) stored = r.seed.repaired;
      stored.push.apply(stored, r.appended);
      const events = rt.stream({ sessionId: "chat-1", input: "more", history: stored });
      return events.next().then(function (step) {
        if (!step.done) console.log(step.value.type);
        rt.close();
        return stored;
      });
    });
  });
}
`;

// The user's program: the README's quick start, typed.
const MAIN = `import { loadRuntime, AgentrtError, type HistoryMessage } from "agentrt";
import { openAIModel } from "agentrt/openai";
import { streamRun, resumeRun, type StreamEvent } from "agentrt/http";

// A resumable run on the durable deployment: its deltas' text.
export async function resume(url: string, signal: AbortSignal): Promise<string> {
  let text = "";
  const events = streamRun(url, { sessionId: "chat-1", input: "hi", signal, cancelOnAbort: true, retry: { attempts: 3 } });
  for await (const ev of events) {
    const e: StreamEvent = ev;
    if (e.type === "model.delta") text += e.delta;
    if (e.type === "run.completed") text += e.result.reply.content;
  }
  const again = resumeRun(url, { sessionId: "chat-1", runId: "r-1", after: 3 });
  const step = await again.next();
  if (step.done && step.value) text += step.value.messageCount;
  return text;
}

export async function main(apiKey: string | undefined): Promise<HistoryMessage[]> {
  const rt = await loadRuntime({
    systemPrompt: "Be brief.",
    model: apiKey ? openAIModel({ baseURL: "https://api.openai.com/v1", model: "gpt-4o-mini", apiKey: apiKey }) : "echo",
  });
  let stored: HistoryMessage[] = [];
  try {
    const r = await rt.run({ sessionId: "chat-1", input: "hello", history: stored, policy: { repair: true } });
    if (r.seed.repaired) stored = r.seed.repaired;
    stored.push(...r.appended);
    console.log(r.seed.mode, r.reply.content, r.seed.repairs ? r.seed.repairs.length : 0);
  } catch (e) {
    if (e instanceof AgentrtError && e.code === "invalid_history") console.log(e.index);
    throw e;
  }
  for await (const ev of rt.stream({ sessionId: "chat-1", input: "more", history: stored })) {
    if (ev.type === "model.delta") console.log(ev.delta);
  }
  rt.close();
  return stored;
}
`;

before(async () => {
  app = await mkdtemp(path.join(tmpdir(), "agentrt-types-"));
  const pkg = path.join(app, "node_modules", "agentrt");
  await mkdir(pkg, { recursive: true });
  // ai.d.ts is left out: it reads the types of its optional peer `ai`,
  // which need Node's types and a lib newer than the defaults' ES5 (a
  // project on agentrt/ai has both); ai.test.mjs checks it with --strict
  // against the pinned ai installed.
  typeFiles = (await readdir(path.join(ROOT, "js"))).filter((f) => f.endsWith(".d.ts") && f !== "ai.d.ts").sort();
  for (const f of ["package.json", ...typeFiles]) {
    await copyFile(path.join(ROOT, "js", f), path.join(pkg, f));
  }
  // A project whose tsconfig.json sets no option (TypeScript's defaults:
  // the ES5 lib, no skipLibCheck) and lists each of the package's types.
  await mkdir(path.join(app, "defaults"));
  await writeFile(path.join(app, "defaults", "tsconfig.json"),
    JSON.stringify({ files: typeFiles.map((f) => `../node_modules/agentrt/${f}`) }, null, 2));
  await writeFile(path.join(app, "package.json"), JSON.stringify({ name: "agentrt-types-app", private: true, type: "module" }));
  await writeFile(path.join(app, "main.ts"), MAIN);
  await writeFile(path.join(app, "es5.ts"), ES5);
  // repaired holds history messages, not a number.
  await writeFile(path.join(app, "bad.ts"), `import type { SeedReport } from "agentrt";\nexport const n: number | undefined = ({} as SeedReport).repaired;\n`);
});

after(async () => {
  if (app) await rm(app, { recursive: true, force: true });
});

function tsc(t, args) {
  if (!existsSync(TSC)) {
    if (process.env.CI) assert.fail(`tsc is missing at ${TSC}: run npm ci`);
    t.skip("tsc is missing: run npm ci");
    return null;
  }
  const r = spawnSync(TSC, args, { cwd: app, encoding: "utf8", timeout: RUN_MS, env: { ...process.env, NO_COLOR: "1" } });
  if (r.error) throw r.error;
  return r;
}

test("tsc --strict with TypeScript's defaults (the ES5 lib) type-checks a program using the package", (t) => {
  const r = tsc(t, ["--strict", "--noEmit", "es5.ts"]);
  if (r) assert.equal(r.status, 0, `tsc --strict es5.ts failed:\n${r.stdout}${r.stderr}`);
});

test("every .d.ts of the package compiles under a tsconfig.json that sets no option, and with --strict", (t) => {
  assert.deepEqual(["glue.d.ts", "http.d.ts", "openai.d.ts"].filter((f) => !typeFiles.includes(f)), [], `the package's types: ${typeFiles}`);
  for (const extra of [[], ["--strict"]]) {
    const r = tsc(t, ["-p", "defaults", ...extra]);
    if (!r) return;
    assert.equal(r.status, 0, `tsc -p defaults ${extra.join(" ")} failed:\n${r.stdout}${r.stderr}`);
  }
});

test("tsc --strict --module nodenext type-checks the quick start (async, for await) and that program", (t) => {
  const r = tsc(t, ["--strict", "--noEmit", "--module", "nodenext", "main.ts", "es5.ts"]);
  if (r) assert.equal(r.status, 0, `tsc --strict --module nodenext main.ts failed:\n${r.stdout}${r.stderr}`);
});

test("a type error in the program is reported (the check is real)", (t) => {
  const r = tsc(t, ["--strict", "--noEmit", "--module", "nodenext", "main.ts", "bad.ts"]);
  if (r) {
    assert.notEqual(r.status, 0);
    assert.match(r.stdout, /bad\.ts/);
  }
});
