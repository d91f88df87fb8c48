// A run's refusal of a history agrees with checkHistory (core, through
// the module) case by case: the same code at the same host index, in
// core's order of checks, for generated histories near small limits, in
// the plain and the UIMessage shapes, with and without repair. Runs under
// `node --test`, `bun test` and `deno test -A`.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { runtimes } from "./helpers.mjs";
import { AgentrtError, toModuleHistory, packHistory } from "../glue.js";
import { toModuleHistory as readHistory } from "../history.js";

const { load } = runtimes();

// rng is a small deterministic generator (mulberry32).
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// uiMessage returns a UIMessage: text, or an assistant's tool parts
// (answered, unanswered or errored) between texts.
function uiMessage(r, i) {
  const id = "m" + i;
  if (r() < 0.5) return { id, role: r() < 0.5 ? "user" : "assistant", parts: [{ type: "text", text: "t" + i }] };
  const parts = [{ type: "text", text: "before" }];
  const calls = 1 + Math.floor(r() * 3);
  for (let k = 0; k < calls; k++) {
    const x = r();
    const state = x < 0.6 ? "output-available" : x < 0.8 ? "output-error" : "input-available";
    parts.push({ type: "tool-t", toolCallId: `c${i}_${k}`, state, input: {}, output: "r", errorText: "e" });
  }
  if (r() < 0.5) parts.push({ type: "text", text: "after" });
  return { id, role: "assistant", parts };
}

// plainMessage returns a plain message, sometimes one core refuses or
// repairs (a tool result of no call, a call never answered, a repeat).
function plainMessage(r, i) {
  const x = r();
  if (x < 0.5) return { role: i % 2 === 0 ? "user" : "assistant", content: "p" + i };
  if (x < 0.7) return { role: "assistant", content: "", tool_calls: [{ id: "k" + i, name: "t", arguments: "{}" }] };
  if (x < 0.85) return { role: "tool", content: "r", tool_call_id: "k" + (i - 1) };
  if (x < 0.95) return { role: "system", content: "s" };
  return { role: "user", content: "" };
}

// expected is the refusal checkHistory implies for a run: the first
// problem (with repair, the first that repair does not fix), or null.
function expected(check, repair) {
  const p = check.problems.find((x) => !repair || x.repair === null);
  return p === undefined ? null : { code: p.code, index: p.index };
}

describe("a run refuses a history as checkHistory reports it", () => {
  for (const shape of ["ui", "plain"]) {
    test(`generated ${shape} histories under small maxSeedMessages`, async () => {
      const r = rng(shape === "ui" ? 7 : 11);
      const rt = await load({ limits: { maxSeedMessages: 6 } });
      const mismatches = [];
      for (let c = 0; c < 200; c++) {
        const n = 1 + Math.floor(r() * 7);
        const history = [];
        for (let i = 0; i < n; i++) history.push(shape === "ui" ? uiMessage(r, i) : plainMessage(r, i));
        const repair = r() < 0.5;
        const want = expected(rt.checkHistory(history), repair);
        let got = null;
        try {
          await rt.run({ sessionId: "c" + c, input: "next", history, policy: { repair } });
        } catch (e) {
          got = { code: e.code, index: e.index };
        }
        if (JSON.stringify(got) !== JSON.stringify(want)) mismatches.push({ c, repair, want, got, history });
      }
      assert.deepEqual(mismatches.slice(0, 3), [], `${mismatches.length} of 200 cases disagree`);
    });
  }
});

// word returns a string of 0 to 23 letters, so that messages cross small
// byte limits one way or the other.
function word(r, c) {
  return c.repeat(Math.floor(r() * 24));
}

// sizedMessage returns a message of a generated size in the module's own
// shape ("module": toolCalls, toolCallId), OpenAI's ("openai": tool_calls
// of type "function", tool_call_id, content parts) or as a UIMessage
// ("ui"), sometimes one core refuses or repairs.
function sizedMessage(r, i, shape) {
  if (shape === "ui") {
    const m = uiMessage(r, i);
    for (const p of m.parts) {
      if (p.type === "text") p.text = word(r, "x");
      else p.output = word(r, "o");
    }
    return m;
  }
  const x = r();
  const text = word(r, "t");
  const openai = shape === "openai";
  if (x < 0.45) {
    const content = openai && r() < 0.5 ? [{ type: "text", text }] : text;
    return { role: i % 2 === 0 ? "user" : "assistant", content, id: r() < 0.3 ? word(r, "i") + i : undefined };
  }
  if (x < 0.7) {
    const call = openai ? { id: "k" + i, type: "function", function: { name: "t", arguments: `{"a":"${word(r, "a")}"}` } } : { id: "k" + i, name: "t", arguments: `{"a":"${word(r, "a")}"}` };
    return openai ? { role: "assistant", content: null, tool_calls: [call] } : { role: "assistant", content: "", toolCalls: [call] };
  }
  if (x < 0.9) return openai ? { role: "tool", content: text, tool_call_id: "k" + (i - 1) } : { role: "tool", content: text, toolCallId: "k" + (i - 1) };
  return { role: "system", content: text };
}

describe("a run refuses a history over the byte limits as checkHistory reports it", () => {
  const limitSets = [
    { maxSeedBytes: 40 },
    { maxMessageBytes: 16 },
    { maxSeedBytes: 48, maxMessageBytes: 20 },
    { maxSeedBytes: 40, maxSeedMessages: 4 },
    { maxSeedBytes: 60, maxMessageBytes: 18, maxSeedMessages: 5 },
  ];
  for (const shape of ["module", "openai", "ui"]) {
    for (const warm of [false, true]) {
      test(`generated ${shape} histories, ${warm ? "a warm" : "a fresh"} session`, async () => {
        const r = rng((shape === "ui" ? 101 : shape === "openai" ? 202 : 303) + (warm ? 7 : 0));
        const mismatches = [];
        const seen = new Set();
        let cases = 0;
        for (const limits of limitSets) {
          // The model answers "ok": the reply stays within every limit.
          const rt = await load({ limits, model: () => "ok" });
          for (let c = 0; c < 60; c++) {
            const n = 1 + Math.floor(r() * 7);
            const history = [];
            for (let i = 0; i < n; i++) history.push(sizedMessage(r, i, shape));
            const repair = r() < 0.5;
            const check = rt.checkHistory(history);
            const p = check.problems.find((x) => !repair || x.repair === null);
            const want = p === undefined ? null : { code: p.code, index: p.index, message: p.message };
            const sessionId = "c" + c;
            if (warm) await rt.run({ sessionId, input: "hi" });
            let got = null;
            try {
              await rt.run({ sessionId, input: "next", history, policy: { repair } });
            } catch (e) {
              got = { code: e.code, index: e.index, message: e.message };
            }
            cases++;
            seen.add(want === null ? "none" : want.code);
            if (JSON.stringify(got) !== JSON.stringify(want)) mismatches.push({ limits, c, repair, want, got, history });
          }
          rt.close();
        }
        assert.deepEqual(mismatches.slice(0, 2), [], `${mismatches.length} of ${cases} cases disagree`);
        // The generated cases reach the limits, and seed too.
        assert.ok(seen.has("limit_exceeded") && seen.has("none"), [...seen].join(", "));
      });
    }
  }
});

describe("checkHistory and run agree on edges", () => {
  test("four UIMessages that pack to eight messages are refused at host index 3 by both", async () => {
    const rt = await load({ limits: { maxSeedMessages: 5 } });
    const tools = (id) => ({
      id, role: "assistant",
      parts: [{ type: "text", text: "let me" }, { type: "tool-t", toolCallId: "c" + id, state: "output-available", input: {}, output: "r" }, { type: "text", text: "done" }],
    });
    const history = [{ id: "u1", role: "user", parts: [{ type: "text", text: "q" }] }, tools("a1"), { id: "u2", role: "user", parts: [{ type: "text", text: "q2" }] }, tools("a2")];
    const check = rt.checkHistory(history);
    assert.deepEqual(check.problems.map((p) => [p.code, p.index]), [["limit_exceeded", 3]]);
    for (const repair of [false, true]) {
      let err;
      try {
        await rt.run({ sessionId: "s", input: "x", history, policy: { repair } });
      } catch (e) {
        err = e;
      }
      assert.equal(err?.code, "limit_exceeded");
      assert.equal(err.index, 3);
      assert.equal(err.message, check.problems[0].message);
    }
    assert.equal(rt.session("s"), null);
  });

  test("a Uint8Array whose buffer is detached is invalid_argument for checkHistory as for run", async () => {
    const rt = await load();
    const bytes = new Uint8Array(8);
    structuredClone(bytes.buffer, { transfer: [bytes.buffer] });
    assert.throws(() => rt.checkHistory(bytes), (e) => e.code === "invalid_argument" && /detached/.test(e.message));
    await assert.rejects(rt.run({ sessionId: "s", input: "x", history: bytes }), (e) => e.code === "invalid_argument");
  });

  // docs/contract.md: a problem no host message carries has index -1
  // (core.NoIndex, as POST /v1/history/check answers); an error of the
  // same kind has no index.
  test("a problem of no host message has index -1, and the run's error no index", async () => {
    const rt = await load();
    const bytes = new Uint8Array([0x41, 0x52, 0x48, 9, 0]); // an unknown version
    const check = rt.checkHistory(bytes);
    assert.equal(check.ok, false);
    assert.deepEqual(check.problems.map((p) => [p.code, p.index, p.repair]), [["invalid_history", -1, null]]);
    let err;
    try {
      await rt.run({ sessionId: "s", input: "x", history: bytes });
    } catch (e) {
      err = e;
    }
    assert.equal(err?.code, "invalid_history");
    assert.equal("index" in err, false);
  });
});

// Every error the history functions throw is an AgentrtError with a code,
// the glue's exported ones and history.js's own (which pack.js uses).
test("history readers throw AgentrtErrors with codes", () => {
  for (const f of [toModuleHistory, packHistory, readHistory]) {
    assert.throws(() => f(42), (e) => e instanceof AgentrtError && e.code === "invalid_argument", f.name);
    assert.throws(() => f([{ role: "user", content: "a" }, 42]), (e) => e instanceof AgentrtError && e.code === "invalid_history" && e.index === 1, f.name);
  }
});
