// docs/contract.md's list of run events, checked against the events the
// module emits: every event the doc names is emitted by some run, the
// module emits no event the doc leaves out, and session.seeded comes only
// with history, as the doc says.
//
//   node --test js/docs-test/          (after `make build`, or set AGENTRT_DIST)
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const DIST = process.env.AGENTRT_DIST ? path.resolve(process.env.AGENTRT_DIST) : path.join(ROOT, "dist");
const { loadRuntime } = await import(pathToFileURL(path.join(DIST, "glue.js")).href);

// documentedEvents returns the event names of contract.md's "- Events,"
// bullet, in its order.
async function documentedEvents() {
  const doc = await readFile(path.join(ROOT, "docs", "contract.md"), "utf8");
  const start = doc.indexOf("\n- Events,");
  assert.ok(start >= 0, 'docs/contract.md has an "- Events," bullet');
  const end = doc.indexOf("\n- ", start + 1);
  const bullet = doc.slice(start, end < 0 ? undefined : end);
  return [...bullet.matchAll(/`([a-z]+\.[a-z]+)`/g)].map((m) => m[1]);
}

// A model that asks for the tool once, streams its answer, fails on
// "fail" and waits for the signal on "hang".
async function model(req) {
  const input = req.messages.findLast((m) => m.role === "user")?.content;
  if (input === "fail") throw new Error("the model failed");
  if (input === "hang") {
    await new Promise((_, reject) => req.signal.addEventListener("abort", () => reject(req.signal.reason)));
  }
  if (input === "tool" && req.step === 1) return { toolCalls: [{ id: "c1", name: "now", arguments: "{}" }] };
  req.delta("streamed ");
  return `${req.messages.length} messages`;
}

async function events(rt, request) {
  const seen = [];
  const onEvent = (ev) => seen.push(ev);
  try {
    await rt.run({ ...request, onEvent });
  } catch {
    // The failed and cancelled runs reject; their events are what counts.
  }
  return seen;
}

test("the module emits exactly the events docs/contract.md lists, session.seeded only with history", async () => {
  const documented = await documentedEvents();
  assert.ok(documented.length >= 8, `found ${documented}`);
  const rt = await loadRuntime({ model, tools: [{ name: "now", call: () => "noon" }] });
  try {
    const runs = {
      plain: await events(rt, { sessionId: "a", input: "hello" }),
      history: await events(rt, { sessionId: "b", input: "hello", history: [{ role: "user", content: "hi" }, { role: "assistant", content: "hey" }] }),
      emptyHistory: await events(rt, { sessionId: "c", input: "hello", history: [] }),
      tool: await events(rt, { sessionId: "d", input: "tool" }),
      failed: await events(rt, { sessionId: "e", input: "fail" }),
    };
    const ac = new AbortController();
    const hung = events(rt, { sessionId: "f", input: "hang", signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    runs.cancelled = await hung;

    const emitted = new Set(Object.values(runs).flat().map((e) => e.type));
    assert.deepEqual([...emitted].filter((t) => !documented.includes(t)), [], "events the module emits that the doc does not list");
    assert.deepEqual(documented.filter((t) => !emitted.has(t)), [], "events the doc lists that no run emitted");

    const types = (evs) => evs.map((e) => e.type);
    assert.ok(!types(runs.plain).includes("session.seeded"), `no history, no session.seeded: ${types(runs.plain)}`);
    assert.equal(runs.plain.find((e) => e.type === "run.completed").result.seed.mode, "none");
    for (const name of ["history", "emptyHistory"]) {
      assert.deepEqual(types(runs[name]).slice(0, 2), ["run.started", "session.seeded"], `${name}: session.seeded right after run.started`);
    }
    assert.equal(runs.history[1].seed.mode, "cold");
    assert.equal(runs.emptyHistory[1].seed.mode, "noop");
    assert.equal(types(runs.failed).at(-1), "run.failed");
    assert.equal(types(runs.cancelled).at(-1), "run.cancelled");
    // Every event is { type, runId, sessionId, seq } with seq from 1.
    for (const evs of Object.values(runs)) {
      evs.forEach((e, i) => {
        assert.equal(e.seq, i + 1, `${e.type}: seq`);
        assert.equal(typeof e.runId, "string");
        assert.equal(e.sessionId, evs[0].sessionId);
      });
    }
  } finally {
    rt.close();
  }
});
