// The glue's packed history encoder: exact bytes for docs/packed-history.md,
// and the same sessions as the module's per-field array path.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { loadRuntime, packHistory, toModuleHistory } from "../glue.js";
import { packHistory as pack, mirrorInto } from "../pack.js";
import { compiledModule, wasmExecURL } from "./env.mjs";

describe("packHistory", () => {
  test("encodes the documented layout byte for byte", () => {
    const got = packHistory([
      { role: "user", content: "hi" },
      { role: "assistant", content: null, id: "a", tool_calls: [{ id: "c", name: "f", arguments: "{}" }] },
      { role: "tool", tool_call_id: "c", content: "" },
      { role: "robot", content: "é" },
    ]);
    const want = [
      0x41, 0x52, 0x48, 0x01, 4,
      0, 0b0001, 2, 0x68, 0x69,
      1, 0b1010, 1, 0x61, 1, 1, 0x63, 1, 0x66, 2, 0x7b, 0x7d,
      2, 0b0101, 0, 1, 0x63,
      255, 0b0001, 5, 0x72, 0x6f, 0x62, 0x6f, 0x74, 2, 0xc3, 0xa9,
    ];
    assert.deepEqual([...got], want);
  });

  test("writes multi-byte lengths and counts as uvarints", () => {
    for (const n of [0, 1, 127, 128, 300, 16383, 16384, 70000]) {
      const got = packHistory([{ role: "user", content: "a".repeat(n) }]);
      let pos = 7, len = 0, shift = 1, b;
      do {
        b = got[pos++];
        len += (b & 0x7f) * shift;
        shift *= 128;
      } while (b & 0x80);
      assert.equal(len, n, `length of ${n}`);
      assert.equal(got.length, pos + n, `total size for ${n}`);
    }
    const many = packHistory(Array.from({ length: 200 }, () => ({ role: "user", content: "" })));
    assert.deepEqual([...many.subarray(4, 6)], [0xc8, 0x01]);
  });

  test("encodes non-ASCII text as UTF-8 and lone surrogates as U+FFFD", () => {
    const text = "héllo 😀 世界";
    const got = packHistory([{ role: "user", content: text }, { role: "user", content: "\ud800" }]);
    const bytes = new TextEncoder().encode(text);
    assert.equal(got[7], bytes.length);
    assert.deepEqual([...got.subarray(8, 8 + bytes.length)], [...bytes]);
    assert.deepEqual([...got.subarray(-3)], [0xef, 0xbf, 0xbd]);
  });

  test("encodes every string exactly as TextEncoder does, short and long", () => {
    // Short strings are encoded by the glue itself, long ones by
    // TextEncoder.encodeInto: both must give TextEncoder's bytes, around
    // the split and for every kind of UTF-16 code unit.
    const enc = new TextEncoder();
    const units = ["a", "\x7f", "\x80", "é", "\u07ff", "\u0800", "€", "\ud7ff", "\ue000", "\uffff",
      "😀", "\ud800", "\udfff", "\udc00\ud800", "\ud83d", "\ud83dx"];
    const texts = [""];
    for (const u of units) {
      for (const n of [1, 2, 15, 16, 31, 32, 33, 100, 600]) {
        texts.push(u.repeat(n), "x".repeat(n) + u, u + "y".repeat(n));
      }
    }
    const got = packHistory(texts.map((content) => ({ role: "user", content })));
    let pos = 3 + 1 + 2; // magic, version, count (two bytes of uvarint)
    for (const text of texts) {
      assert.deepEqual([got[pos], got[pos + 1]], [0, 1], "role and flags");
      pos += 2;
      let len = 0, shift = 1, b;
      do {
        b = got[pos++];
        len += (b & 0x7f) * shift;
        shift *= 128;
      } while (b & 0x80);
      const want = enc.encode(text);
      assert.equal(len, want.length, `length of ${JSON.stringify(text.slice(0, 20))} (${text.length} units)`);
      assert.deepEqual(got.subarray(pos, pos + len), want, `bytes of ${JSON.stringify(text.slice(0, 20))}`);
      pos += len;
    }
    assert.equal(pos, got.length);
  });

  test("returns a Uint8Array as it is, and refuses what is not a history", () => {
    const bytes = new Uint8Array([1, 2, 3]);
    assert.equal(packHistory(bytes), bytes);
    for (const bad of [undefined, null, "[]", 5, {}, new ArrayBuffer(4)]) {
      assert.throws(() => packHistory(bad), (e) => e instanceof TypeError && e.code === "invalid_argument" && /history/.test(e.message));
    }
  });

  test("converts OpenAI messages without changing the input", () => {
    const input = [{ role: "assistant", content: null, tool_calls: [{ id: "x", type: "function", function: { name: "f", arguments: { b: [1, 2] } } }] }];
    const copy = structuredClone(input);
    assert.deepEqual(toModuleHistory(input), [{ role: "assistant", content: null, tool_calls: [{ id: "x", name: "f", arguments: '{"b":[1,2]}' }] }]);
    assert.deepEqual(input, copy);
  });

  test("refuses fields of the wrong type with invalid_history and the index", () => {
    const cyclic = {};
    cyclic.self = cyclic;
    const cases = [
      [[{ role: "user", content: "a" }, { role: "user", content: 1 }], 1],
      [[{ role: "user", content: "a", id: 7 }], 0],
      [[{ role: "tool", content: "a", tool_call_id: {} }], 0],
      [[{ role: "assistant", content: null, tool_calls: "x" }], 0],
      [[{ role: "assistant", content: null, tool_calls: [null] }], 0],
      [[{ role: "assistant", content: null, tool_calls: [{ id: 1, name: "f" }] }], 0],
      [[{ role: "assistant", content: null, tool_calls: [{ id: "c", function: "f" }] }], 0],
      [[{ role: "user", content: "a" }, { role: "assistant", content: null, tool_calls: [{ id: "c", name: "f", arguments: cyclic }] }], 1],
      [[null], 0],
      [[["user", "hi"]], 0],
    ];
    for (const [history, index] of cases) {
      assert.throws(() => packHistory(history), (e) => e.code === "invalid_history" && e.index === index,
        JSON.stringify(history, (k, v) => (v === cyclic ? "[cyclic]" : v)));
    }
  });
});

describe("mirrorInto", () => {
  test("builds the module's session messages, frozen, in its key order", () => {
    const out = [];
    const calls = [{ id: "c", type: "function", function: { name: "f", arguments: { a: 1 } } }];
    pack([
      { role: "system", content: "s" },
      { role: "user", content: "hi", id: "" },
      { role: "assistant", content: null, id: "a", tool_calls: calls },
      { role: "tool", toolCallId: "c", content: "r", id: "t" },
      { role: "assistant", content: "x", tool_calls: [] },
      { role: "developer", content: "d" },
    ], undefined, mirrorInto(out));
    assert.deepEqual(out, [
      { role: "user", content: "hi" },
      { role: "assistant", content: "", tool_calls: [{ id: "c", name: "f", arguments: '{"a":1}' }], id: "a" },
      { role: "tool", content: "r", tool_call_id: "c", id: "t" },
      { role: "assistant", content: "x" },
    ]);
    assert.deepEqual(out.map((m) => Object.keys(m).join()), ["role,content", "role,content,tool_calls,id", "role,content,tool_call_id,id", "role,content"]);
    for (const m of out) assert.ok(Object.isFrozen(m));
    assert.ok(Object.isFrozen(out[1].tool_calls) && Object.isFrozen(out[1].tool_calls[0]));
  });
});

describe("packed and array paths", () => {
  let rt;
  before(async () => {
    rt = await loadRuntime({ wasm: await compiledModule(), wasmExec: wasmExecURL });
  });
  after(() => rt && rt.close());

  test("seed identical sessions", async () => {
    const history = [
      { role: "system", content: "s" },
      { role: "user", content: "héllo 😀", id: "u1" },
      { role: "assistant", content: "", tool_calls: [{ id: "c1", name: "add", arguments: '{"a":1}' }, { id: "c2", name: "mul", arguments: "{}" }] },
      { role: "tool", tool_call_id: "c2", content: "2", id: "t2" },
      { role: "tool", tool_call_id: "c1", content: "1" },
      { role: "assistant", content: "x".repeat(20000) },
    ];
    // The module's raw exports, used here only to reach its array path.
    const raw = globalThis[rt.globalName].createRuntime({});
    try {
      const a = await raw.startRunWithHistory("s", "now", history);
      const b = await raw.startRunWithHistory("s2", "now", packHistory(history));
      assert.deepEqual(b.seed, a.seed);
      assert.deepEqual(raw.getSession("s2").messages, raw.getSession("s").messages);
    } finally {
      raw.close();
    }
  });
});
