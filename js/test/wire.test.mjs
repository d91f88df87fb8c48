// The JavaScript wire codec against the Go package's golden frames
// (wire/testdata/golden, written by `go test ./wire -update`): the same
// bytes on both sides, and decoders that throw only WireError on
// arbitrary input.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { packHistory } from "../glue.js";
import {
  Writer, WireError, ACTION, writeBegin, writeModelReply, writeToolResult, writeDelta, writeCommit, readCommitted, readLimits, writeLimitsQuery,
  readAction, readRefused, frameKind, editsOf,
} from "../wire.js";
import { readSession, readStats, readSessions } from "../controlframes.js";

const golden = (name) => new Uint8Array(readFileSync(new URL(`../../wire/testdata/golden/${name}`, import.meta.url)));

describe("wire encoders", () => {
  test("write the Go encoder's bytes", () => {
    const history = packHistory([
      { role: "user", content: "q", id: "1" },
      { role: "assistant", content: null, tool_calls: [{ id: "c", name: "n", arguments: "{}" }] },
    ]);
    const begin = writeBegin(new Writer(8), {
      sessionId: "s", input: "héllo", runId: "r", history, events: true, historyMirror: true,
      policy: { json: JSON.stringify({ seedMode: "reconcile", maxSteps: 3, timeoutMs: -1, allowedTools: ["t"] }) }, mirrorGen: 2, mirrorLen: 300,
    });
    assert.deepEqual([...begin], [...golden("begin.bin")]);
    // Go hosts write a policy as its JSON text too, as JSON.stringify does.
    assert.deepEqual([...writeBegin(new Writer(), { sessionId: "s", input: "x", policy: { json: '{"repair":true}' } })], [...golden("begin-repair.bin")]);
    const tokens = { json: JSON.stringify({ maxContextTokens: 8000, contextChunkTokens: 1000 }) };
    assert.deepEqual([...writeBegin(new Writer(), { sessionId: "s", input: "x", policy: tokens })], [...golden("begin-tokens.bin")]);
    const reply = writeModelReply(new Writer(), 200, { content: "ok", toolCalls: [{ id: "c", name: "n", arguments: '{"a":1}' }] });
    assert.deepEqual([...reply], [...golden("model-reply.bin")]);
    assert.deepEqual([...writeModelReply(new Writer(), 1, undefined, "boom")], [...golden("model-failed.bin")]);
    assert.deepEqual([...writeToolResult(new Writer(), 3, false, "42")], [...golden("tool-result.bin")]);
    assert.deepEqual([...writeDelta(new Writer(), 3, "δ")], [...golden("delta.bin")]);
    assert.deepEqual([...writeCommit(new Writer(), "s", "glue:7", "héllo", 3, 200, "ok")], [...golden("commit.bin")]);
  });

  test("set the history-valid flag (bit 4) only when asked", () => {
    const history = packHistory([{ role: "user", content: "q" }]);
    const flags = (historyValid) => writeBegin(new Writer(8), { sessionId: "s", input: "", history, historyValid })[9];
    assert.equal(flags(true), 0x11);
    assert.equal(flags(false), 0x01);
  });

  test("write long and non-ASCII strings as UTF-8", () => {
    const long = "x".repeat(300) + "é😀";
    const w = new Writer(4);
    w.string(long);
    const bytes = new TextEncoder().encode(long);
    assert.deepEqual([...w.bytes()], [0xb2, 0x02, ...bytes]);
  });
});

describe("wire decoders", () => {
  test("read the Go encoder's frames", () => {
    const model = readAction(golden("action-model.bin"));
    assert.equal(model.kind, ACTION.model);
    assert.deepEqual({ step: model.step, generation: model.generation, adopt: model.adopt, from: model.from, start: model.start, end: model.end },
      { step: 1, generation: 3, adopt: true, from: 1, start: 0, end: 2 });
    assert.deepEqual(model.tail, [{ role: "tool", content: "2", tool_call_id: "c1" }]);
    assert.ok(Object.isFrozen(model.tail[0]));
    assert.deepEqual(model.events.map((e) => e.type), ["run.started", "session.seeded", "message.appended", "model.delta",
      "tool.started", "tool.finished", "run.completed", "run.failed", "run.cancelled"]);
    assert.deepEqual(model.events[1].seed, { mode: "noop", seeded: 0, skippedSystem: 2 });
    assert.deepEqual(model.events[5].error, { code: "tool_error", message: "x", index: 0 });
    assert.deepEqual(readAction(golden("action-tool.bin")).call, { id: "c1", name: "add", arguments: '{"a":1}' });
    const done = readAction(golden("action-done.bin")).result;
    assert.deepEqual(done.seed, { mode: "cold", seeded: 3, skippedSystem: 1 });
    const repairs = [{ kind: "missing_tool_result", index: 2, toolCallId: "c1" }, { kind: "duplicate_message", index: 300 }];
    const repaired = readAction(golden("action-done-repaired.bin"));
    assert.deepEqual(repaired.result.seed, { mode: "cold", seeded: 3, skippedSystem: 1, repairs });
    assert.deepEqual(repaired.events[0].seed, { mode: "cold", seeded: 3, skippedSystem: 1, repairs });
    // The edits ride along out of the report's sight (wire.js editsOf).
    assert.deepEqual(editsOf(repaired.result.seed), [{ op: "insert", index: 4, call: 2, toolCallId: "c1", id: "a2" }, { op: "drop", index: 300 }]);
    assert.equal(editsOf(done.seed), undefined);
    assert.equal(done.messageCount, 5);
    assert.deepEqual(done.modelCalls, [{ step: 1, messageCount: 4, messages: [{ role: "user", content: "hi", id: "x" }] }, { step: 2, messageCount: 5 }]);
    assert.deepEqual(readAction(golden("action-failed.bin")).error, { code: "invalid_history", message: "bad", index: 3 });
    // A failed run that keeps messages (an approved call's result) carries them.
    assert.deepEqual(readAction(golden("action-failed-kept.bin")).error,
      { code: "model_error", message: "down", appended: [{ role: "tool", content: "paid", tool_call_id: "c1" }] });
    assert.deepEqual(readSession(golden("session.bin")), { generation: 4, messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "done" }], head: "h1-g5foW_vpddqFPIhHk0erIg" });
    const stats = readStats(golden("stats.bin"));
    assert.equal(stats.bytes, 300);
    assert.equal(stats.heapAlloc, 2 ** 33);
    assert.equal(stats.budgetUsed, 500);
    assert.equal(stats.budgetBytes, 2 ** 20);
    assert.deepEqual(readSessions(golden("sessions.bin")), ["a", "b"]);
    assert.deepEqual(readRefused(golden("refused.bin")), { code: "invalid_history", message: "bad", index: 2 });
    assert.equal(frameKind(golden("refused.bin")), 0x13);
    const dropped = [];
    assert.equal(readCommitted(golden("committed.bin"), (d) => dropped.push(d)), 202);
    assert.equal(readCommitted(golden("stale.bin"), (d) => dropped.push(d)), -1);
    assert.deepEqual(dropped, [["old", "é"], true]);
    // A committed frame carries no head: a string after its end (a head,
    // as quick turns with ifHead once had answered) is refused.
    const withHead = [...golden("committed.bin"), 25, ..."h1-AAAAAAAAAAAAAAAAAAAAAA"].map((c) => (typeof c === "string" ? c.charCodeAt(0) : c));
    assert.throws(() => readCommitted(Uint8Array.from(withHead)), WireError);
    const empty = golden("committed.bin").slice();
    assert.throws(() => readCommitted(Uint8Array.of(...empty, 0)), WireError);
    assert.deepEqual(readLimits(golden("limits.bin")), {
      maxSessions: 3, maxMessagesPerSession: 100000, maxSessionBytes: 2 ** 30, maxSeedMessages: 5, maxSeedBytes: 300,
      maxMessageBytes: 2 ** 20, maxTotalBytes: 2 ** 24,
    });
    assert.deepEqual([...writeLimitsQuery(new Writer())], [...golden("limits-query.bin")]);
    assert.deepEqual([...writeModelReply(new Writer(), 2, undefined, "big", true)], [...golden("model-oversize.bin")]);
  });

  test("throw only WireError on mutated and truncated frames", { timeout: 60_000 }, () => {
    // A seeded xorshift: the same mutations on every run.
    let seed = 0x9e3779b9;
    const rand = (n) => {
      seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0;
      return seed % n;
    };
    const readers = [readAction, readSession, readStats, readSessions, readRefused, readCommitted];
    const frames = ["action-model.bin", "action-done.bin", "action-failed.bin", "action-failed-kept.bin", "session.bin", "stats.bin", "sessions.bin", "refused.bin",
      "committed.bin", "stale.bin"].map(golden);
    let thrown = 0;
    for (let i = 0; i < 20000; i++) {
      const f = frames[rand(frames.length)];
      let b = f.slice();
      const op = rand(3);
      if (op === 0) b = b.subarray(0, rand(b.length));
      else if (op === 1) b[rand(b.length)] = rand(256);
      else b[5 + rand(Math.max(1, b.length - 5))] ^= 0x80;
      for (const read of readers) {
        try {
          read(b);
        } catch (e) {
          if (!(e instanceof WireError)) throw new Error(`${read.name} threw ${e} on ${[...b]}`);
          thrown++;
        }
      }
    }
    assert.ok(thrown > 0);
  });
});
