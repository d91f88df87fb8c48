// A property test of the driver: models and tools that fail in every way
// a host's can (sync throws, rejections, throwing thenables, `then`
// getters that throw, late, double and thenable settles, hangs ended by a
// timeout or an abort), runs in random concurrency over a few sessions,
// on the quick and the ordinary path. After each batch every run has
// settled (a Result or a typed AgentrtError), no run is active, and every
// session is well-formed.
//
// Seeded: AGENTRT_PROPERTY_SEED replays a seed (printed on failure);
// AGENTRT_PROPERTY_BATCHES sets how many batches run (a few by default;
// `make fuzz` runs many). Runs under `node --test`, `bun test`,
// `deno test -A` and the browser runner.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { AgentrtError } from "../glue.js";
import { runtimes } from "./helpers.mjs";
import { prng } from "./hostapp.mjs";

const { load } = runtimes();

const env = (k) => (typeof process !== "undefined" && process.env ? process.env[k] : undefined);
const SEED = Number(env("AGENTRT_PROPERTY_SEED") ?? Math.floor(Math.random() * 2 ** 31));
const BATCHES = Number(env("AGENTRT_PROPERTY_BATCHES") ?? 6);
const RUNS = 40;


const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The ways an answer v (a string or a reply) can be handed back. hang is
// allowed only on runs that a timeout or an abort ends.
const ANSWERS = ["sync", "promise", "late", "double", "thenable", "nested"];
const FAULTS = ["throw", "reject", "thenThrows", "getterThrows", "doubleReject"];

function answer(kind, v) {
  switch (kind) {
    case "sync": return v;
    case "promise": return Promise.resolve(v);
    case "late": return sleep(1).then(() => v);
    case "double": return { then(res, rej) { res(v); res("second"); rej(new Error("third")); } };
    case "thenable": return { then(res) { setTimeout(() => res(v), 0); } };
    case "nested": return { then(res) { res({ then(r) { r(Promise.resolve(v)); } }); } };
    case "throw": throw new Error("sync throw");
    case "reject": return Promise.reject(new Error("rejected"));
    case "thenThrows": return { then() { throw new Error("then threw"); } };
    case "getterThrows": return { get then() { throw new Error("then getter threw"); } };
    case "doubleReject": return { then(res, rej) { rej(new Error("first")); res(v); } };
    case "hang": return new Promise(() => {});
    default: throw new Error("unknown answer " + kind);
  }
}

// lastInput is the input of the run a model call belongs to (its plan:
// "i|hang" allows a hang).
function lastInput(messages) {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === "user") return messages[i].content;
  return "";
}

/** Asserts every user message is answered and every tool call has its result. */
function assertWellFormed(rt, id, seed) {
  const s = rt.session(id);
  if (s === null) return;
  const msgs = s.messages;
  const open = new Set();
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    if (m.role === "assistant") for (const c of m.toolCalls ?? []) open.add(c.id);
    if (m.role === "tool") open.delete(m.toolCallId);
    // A user message is followed by the turn's assistant message.
    if (m.role === "user") assert.equal(msgs[i + 1]?.role, "assistant", `seed ${seed}: session ${id}: message ${i} is not answered`);
  }
  const last = msgs[msgs.length - 1];
  assert.equal(open.size, 0, `seed ${seed}: session ${id} has tool calls without results`);
  assert.ok(msgs.length === 0 || (last.role === "assistant" && !(last.toolCalls ?? []).length),
    `seed ${seed}: session ${id} ends in ${JSON.stringify(last)}`);
}

const CODES = new Set(["model_error", "tool_error", "timeout", "cancelled", "limit_exceeded"]);

async function batch(rt, rnd, seed, sessions, quick) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) {
    const id = `s${Math.floor(rnd() * sessions)}`;
    const hang = rnd() < 0.15;
    const input = `${i}${hang ? "|hang" : ""}`;
    let req;
    if (hang) {
      if (rnd() < 0.5) req = { sessionId: id, input, policy: { timeoutMs: 5 + Math.floor(rnd() * 10) } };
      else {
        const ac = new AbortController();
        setTimeout(() => ac.abort(), 2 + Math.floor(rnd() * 10));
        req = { sessionId: id, input, signal: ac.signal };
      }
    } else if (quick && rnd() < 0.7) {
      req = { sessionId: id, input };
    } else {
      req = { sessionId: id, input, policy: rnd() < 0.3 ? { toolErrors: "report" } : {} };
    }
    const gap = rnd();
    if (gap < 0.3) await null;
    else if (gap < 0.4) await sleep(0);
    runs.push(rt.run(req).then((r) => ({ ok: r }), (e) => ({ err: e })));
  }
  let timer;
  const all = await Promise.race([
    Promise.all(runs),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`seed ${seed}: runs still pending after 10 s (a hang)`)), 10_000); }),
  ]).finally(() => clearTimeout(timer));
  for (const r of all) {
    if (r.ok) {
      assert.equal(r.ok.status, "completed", `seed ${seed}`);
      continue;
    }
    assert.ok(r.err instanceof AgentrtError, `seed ${seed}: not an AgentrtError: ${r.err}`);
    assert.ok(CODES.has(r.err.code), `seed ${seed}: unexpected ${r.err.code}: ${r.err.message}`);
  }
  assert.equal(rt.stats().activeRuns, 0, `seed ${seed}: active runs after the batch`);
  for (let k = 0; k < sessions; k++) assertWellFormed(rt, `s${k}`, seed);
}

describe("driver property", () => {
  for (const quick of [true, false]) {
    test(`random faults from models and tools, random concurrency (${quick ? "quick and ordinary" : "ordinary"} path; seed ${SEED})`, { timeout: 30_000 + BATCHES * 2_000 }, async () => {
      const rnd = prng(SEED + (quick ? 0 : 1));
      const pick = (list) => list[Math.floor(rnd() * list.length)];
      const rt = await load({
        model: (req) => {
          const plan = lastInput(req.messages);
          if (plan.endsWith("|hang") && rnd() < 0.5) return answer("hang");
          const r = rnd();
          if (r < 0.2) return answer(pick(FAULTS), "x");
          if (r < 0.45 && req.step < 3 && req.tools.length > 0) {
            return answer(pick(ANSWERS), { content: "", toolCalls: [{ id: `c${req.step}`, name: "t", arguments: "{}" }] });
          }
          return answer(pick(ANSWERS), `reply to ${plan}`);
        },
        tools: [{
          name: "t",
          call: () => (rnd() < 0.25 ? answer(pick(FAULTS), "out") : answer(pick(ANSWERS), "out")),
        }],
      });
      const sessions = 3 + Math.floor(rnd() * 3);
      try {
        for (let b = 0; b < BATCHES; b++) await batch(rt, rnd, SEED, sessions, quick);
      } catch (e) {
        console.error(`driver property failed with AGENTRT_PROPERTY_SEED=${SEED}`);
        throw e;
      }
    });
  }
});
