// The host-message corpus (testdata/contract/) for the JavaScript suites
// that run it: its cases, and messages in its canonical shape.
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { loadRuntime } from "../glue.js";
import { root, wasmExecURL } from "./env.mjs";
import { noHead } from "./helpers.mjs";

const corpusDir = new URL("testdata/contract/", root);

// loadCorpus returns every case of every corpus file, in file order,
// each named "file/case".
export async function loadCorpus() {
  const files = (await readdir(corpusDir)).filter((f) => f.endsWith(".json")).sort();
  const cases = [];
  for (const f of files) {
    const list = JSON.parse(await readFile(new URL(f, corpusDir), "utf8"));
    for (const c of list) cases.push({ ...c, name: `${f.slice(0, -5)}/${c.name}` });
  }
  return cases;
}

// canonical is contract's Canonical: role and content; id and
// tool_call_id when not empty; tool_calls when there are any.
export function canonical(m) {
  const out = { role: String(m.role), content: typeof m.content === "string" ? m.content : "" };
  if (m.id) out.id = m.id;
  const callId = m.tool_call_id || m.toolCallId;
  if (callId) out.tool_call_id = callId;
  const calls = m.tool_calls ?? m.toolCalls;
  if (Array.isArray(calls) && calls.length > 0) {
    out.tool_calls = calls.map((c) => ({ id: c.id ?? "", name: c.name ?? "", arguments: c.arguments ?? "" }));
  }
  return out;
}

// corpusPaths are the two ways into the module a corpus case runs on: the
// glue (history packed) and the module's array path (its raw
// createRuntime API). open(wasm, limits) starts a fresh runtime (with the
// limits a case sets, or the defaults) and resolves with
//
//	seed(id, history, policy)  runs "next" with inspect on a new session
//	                           seeded from history (policy may be
//	                           undefined); resolves with the result
//	session(id)                the session's messages, or null
//	check(history)             checkHistory's answer
//	close()
//
// A new path into the module is one more entry.
export const corpusPaths = [
  {
    name: "glue (packed)",
    async open(wasm, limits) {
      const rt = await loadRuntime({ wasm, wasmExec: wasmExecURL, limits });
      return {
        seed: (id, history, policy) => rt.run({ sessionId: id, input: "next", history, policy, inspect: true }),
        session: (id) => rt.session(id)?.messages ?? null,
        check: (history) => rt.checkHistory(history),
        close: () => rt.close(),
      };
    },
  },
  {
    name: "module (array)",
    async open(wasm, limits) {
      const rt = await loadRuntime({ wasm, wasmExec: wasmExecURL });
      const raw = globalThis[rt.globalName].createRuntime(limits === undefined ? {} : { limits });
      return {
        seed: (id, history, policy) => policy === undefined
          ? raw.startRunWithHistory(id, "next", history, { inspect: true })
          : raw.startRunWithPolicyAndHistory(id, "next", policy, history, { inspect: true }),
        session: (id) => raw.getSession(id)?.messages ?? null,
        check: (history) => raw.checkHistory(history),
        close: () => {
          raw.close();
          rt.close();
        },
      };
    },
  },
];

// workerCorpusPath is the glue in worker mode (docs/adr/0021-worker-mode.md):
// the same glue in a dedicated Web Worker, the history cloned across. Its
// session(id) resolves with the messages (a Promise, as worker mode's
// Runtime.session does): a runner awaits it. It runs only where the host
// has Web Workers (helpers.mjs, hasWebWorker): the browser pages.
export const workerCorpusPath = {
  name: "glue (worker)",
  async open(wasm, limits) {
    const rt = await loadRuntime({ worker: true, wasm, wasmExec: wasmExecURL, limits });
    return {
      seed: (id, history, policy) => rt.run({ sessionId: id, input: "next", history, policy, inspect: true }),
      session: async (id) => (await rt.session(id))?.messages ?? null,
      check: (history) => rt.checkHistory(history),
      close: () => rt.close(),
    };
  },
};

// onPath runs fn with path's shared runtime p, or, for a case that sets
// limits, with a fresh runtime of those limits, closed after.
export async function onPath(path, wasm, p, c, fn) {
  if (c.limits === undefined) return fn(p);
  const q = await path.open(wasm, c.limits);
  try {
    return await fn(q);
  } finally {
    q.close();
  }
}

// checkProblems is contract's CheckProblems: a checkHistory
// answer against a case, its problems, or a first problem equal to its
// error, or ok.
function checkProblems(c, got) {
  assert.equal(typeof got.ok, "boolean");
  const problems = got.problems.map((q) => ({ code: q.code, index: q.index, message: q.message, repair: q.repair }));
  if (c.problems) {
    assert.equal(got.ok, false);
    assert.deepEqual(problems, c.problems);
  } else if (c.error) {
    assert.equal(got.ok, false);
    const [first] = problems;
    assert.deepEqual({ code: first.code, index: first.index, message: first.message }, c.error);
  } else {
    assert.deepEqual(noHead(got), { ok: true, problems: [] });
  }
}

// checkRepair checks case c on p, a runtime of a corpus path: its
// checkHistory answer (checkProblems) and, for a case with "repaired",
// the session id seeded with policy.repair, as contract's
// CheckRepaired: the refusal, or the repairs, the model's request, the
// session and the healed copy. It resolves with the repaired seed's
// result, or undefined when there is none (no "repaired", or refused).
export async function checkRepair(c, p, id) {
  checkProblems(c, await p.check(structuredClone(c.history)));
  if (!c.repaired) return undefined;
  let result;
  let err;
  try {
    result = await p.seed(id, structuredClone(c.history), { repair: true });
  } catch (e) {
    err = e;
  }
  if (c.repaired.error) {
    assert.ok(err instanceof Error, "accepted with repair; want a refusal");
    assert.deepEqual({ code: err.code, index: err.index, message: err.message }, c.repaired.error);
    return undefined;
  }
  if (err) assert.fail(`refused with repair: ${err.code} at ${err.index}: ${err.message}`);
  assert.deepEqual(result.seed.repairs ?? [], c.repaired.repairs);
  assert.deepEqual(result.modelCalls[0].messages.map(canonical), c.repaired.request.map(canonical));
  assert.deepEqual((await p.session(id)).slice(0, -1).map(canonical), c.repaired.request.map(canonical));
  // The healed copy (docs/adr/0016-the-host-copy-heals.md).
  assert.deepEqual(result.seed.repaired ?? null, c.repaired.healed ?? null);
  return result;
}

const windowDir = new URL("testdata/contract/window/", root);

// windowCases returns every case of the token window's corpus
// (testdata/contract/window/), each named "file/case", as
// contract's MustLoadWindow does.
export async function windowCases() {
  const files = (await readdir(windowDir)).filter((f) => f.endsWith(".json")).sort();
  const out = [];
  for (const f of files) {
    for (const c of JSON.parse(await readFile(new URL(f, windowDir), "utf8"))) out.push({ ...c, name: `${f.slice(0, -5)}/${c.name}` });
  }
  assert.ok(out.length > 0, "the window corpus is empty");
  return out;
}

// received is the count of messages the echo model says it received.
export function received(reply) {
  const m = /\(model received (\d+) messages\)$/.exec(reply);
  return m ? Number(m[1]) : -1;
}

// runWindowCase runs window case c on rt as contract's
// RunWindow does: its turns on session "w", each turn's context, the
// budget and the refusals checked, and the first message's changes
// counted against c.firstChanges.
export async function runWindowCase(rt, c) {
  const turns = [...(c.turns ?? [])];
  if (c.repeat) for (let i = 0; i < c.repeat.turns; i++) turns.push({ input: "w".repeat(c.repeat.inputBytes) });
  let history = c.history;
  let changes = 0;
  let last = -1;
  for (const [i, turn] of turns.entries()) {
    const before = rt.session("w")?.messages.length ?? -1;
    const req = { sessionId: "w", input: turn.input, policy: c.policy };
    if (history !== undefined) req.history = history;
    if (turn.error) {
      await assert.rejects(rt.run(req), (e) => {
        assert.equal(e.code, turn.error.code, `turn ${i}`);
        assert.equal(e.message, turn.error.message, `turn ${i}`);
        return true;
      });
      assert.equal(rt.session("w")?.messages.length ?? -1, before, `turn ${i}: the refusal changed the session`);
      continue;
    }
    const r = await rt.run(req);
    history = undefined;
    const got = r.context;
    assert.ok(got, `turn ${i}: no context`);
    if (turn.context) assert.deepEqual(got, turn.context, `turn ${i}`);
    assert.ok(got.tokens <= c.policy.maxContextTokens, `turn ${i}: ${got.tokens} tokens over the budget`);
    assert.equal(received(r.reply.content), got.messages, `turn ${i}: the model received another count`);
    assert.equal(got.messages + got.dropped, r.messageCount - 1, `turn ${i}`);
    if (last >= 0 && got.dropped !== last) changes++;
    last = got.dropped;
  }
  if (c.firstChanges !== undefined) assert.equal(changes, c.firstChanges, "first message changes");
}
