// The glue's packing memo: whatever sequence of histories goes through one
// PackMemo, each packs to exactly the bytes packHistory gives.
import { test } from "node:test";
import assert from "node:assert/strict";
import { packHistory, PackMemo } from "../pack.js";

function msgs(n, tag = "") {
  const out = [];
  for (let i = 0; i < n; i++) {
    if (i % 5 === 3) {
      out.push({ role: "assistant", content: null, tool_calls: [{ id: "c" + i, name: "f", arguments: "{\"q\":\"é\"}" }] });
      out.push({ role: "tool", tool_call_id: "c" + i, content: "r" + i + tag });
    } else {
      out.push({ role: i % 2 ? "assistant" : "user", content: "m" + i + " über ".repeat(i % 7) + tag, id: i % 3 ? undefined : "id" + i });
    }
  }
  return out;
}

test("PackMemo packs every history as packHistory does", () => {
  const base = msgs(40);
  const ui = { id: "u", role: "assistant", parts: [{ type: "text", text: "a" }, { type: "tool-f", toolCallId: "x", input: {}, state: "output-available", output: "o" }, { type: "text", text: "b" }] };
  const changed = base.slice();
  changed[17] = { ...changed[17], content: "changed" };
  const mutated = msgs(40);
  const seq = [
    base, base, base.slice(0, 30), base, base.concat(msgs(3, "x")), base.concat(msgs(3, "x")),
    changed, base, [], base, [ui, ...base], [ui, ...base], base.concat([ui]), msgs(40, "y"), mutated,
  ];
  const memo = new PackMemo();
  seq.forEach((h, i) => {
    assert.deepEqual([...packHistory(h, undefined, undefined, memo)], [...packHistory(h)], `history ${i}`);
  });
  // The host changes a message in place: the memo sees the new value.
  mutated[5].content = "edited in place";
  assert.deepEqual([...packHistory(mutated, undefined, undefined, memo)], [...packHistory(mutated)]);
  // A history over the memo's limit is packed and not remembered.
  const small = new PackMemo(64);
  assert.deepEqual([...packHistory(base, undefined, undefined, small)], [...packHistory(base)]);
  assert.equal(small.buf, null);
  assert.deepEqual([...packHistory(base, undefined, undefined, small)], [...packHistory(base)]);
});

test("PackMemo calls onRecord for every record, remembered or not", () => {
  const base = msgs(12);
  const memo = new PackMemo();
  for (let round = 0; round < 3; round++) {
    const seen = [];
    packHistory(base, undefined, (r) => seen.push(r.content), memo);
    const want = [];
    packHistory(base, undefined, (r) => want.push(r.content));
    assert.deepEqual(seen, want);
  }
});

test("PackMemo refuses a bad message and keeps what it remembered", () => {
  const base = msgs(10);
  const memo = new PackMemo();
  packHistory(base, undefined, undefined, memo);
  assert.throws(() => packHistory([...base, { role: 7 }], undefined, undefined, memo), (e) => e.code === "invalid_history" && e.index === base.length);
  assert.deepEqual([...packHistory(base, undefined, undefined, memo)], [...packHistory(base)]);
});

// ref packs own-shape messages the plain way, from docs/packed-history.md.
function ref(history) {
  const out = [0x41, 0x52, 0x48, 1];
  const uv = (v) => { while (v >= 0x80) { out.push((v % 0x80) | 0x80); v = Math.floor(v / 0x80); } out.push(v); };
  const str = (s) => { const b = new TextEncoder().encode(s); uv(b.length); out.push(...b); };
  uv(history.length);
  for (const m of history) {
    let flags = 0;
    if (m.content !== null) flags |= 1;
    if (m.id !== undefined) flags |= 2;
    if (m.tool_call_id !== undefined) flags |= 4;
    if (m.tool_calls !== undefined) flags |= 8;
    out.push({ user: 0, assistant: 1, tool: 2 }[m.role], flags);
    if (m.content !== null) str(m.content);
    if (m.id !== undefined) str(m.id);
    if (m.tool_call_id !== undefined) str(m.tool_call_id);
    if (m.tool_calls !== undefined) {
      uv(m.tool_calls.length);
      for (const c of m.tool_calls) { str(c.id); str(c.name); str(c.arguments); }
    }
  }
  return out;
}

test("packHistory keeps every byte when its buffer grows at any point", () => {
  // Null contents make the size estimate short, and ids of three-byte
  // characters fill exactly the room reserved for them, so the buffer
  // grows right at a short string after them (where a grow once dropped
  // the string's bytes).
  for (let k = 1; k < 60; k++) {
    for (let m = 1; m < 8; m++) {
      const h = [];
      for (let i = 0; i < m; i++) h.push({ role: "tool", content: null, id: "€".repeat(k), tool_call_id: "a" });
      const want = ref(h);
      assert.deepEqual([...packHistory(h)], want, `plain, ${m} messages, id of ${k}`);
      assert.deepEqual([...packHistory(h, undefined, undefined, new PackMemo())], want, `memo, ${m} messages, id of ${k}`);
    }
  }
});

test("PackMemo packs a history right when a getter of it packs another one through the memo", () => {
  // The getter runs while the outer history is read, before its first
  // new record (the memo's buffer is still the one remembered) or after;
  // the inner history is another one, the outer's own, or a longer one.
  const base = msgs(12);
  const inners = { other: msgs(9, "z"), none: [], itself: base, longer: base.concat(msgs(4, "w")) };
  for (const [name, inner] of Object.entries(inners)) {
    for (const at of [0, 5, 11]) {
      for (const grow of [false, true]) {
        const memo = new PackMemo();
        packHistory(base, undefined, undefined, memo);
        let armed = true;
        const outer = base.slice();
        const m = outer[at];
        outer[at] = {
          ...m,
          get role() {
            if (armed) {
              armed = false;
              assert.deepEqual([...packHistory(inner, undefined, undefined, memo)], [...packHistory(inner)], `${name} inside`);
            }
            return m.role;
          },
        };
        if (grow) outer.push(...msgs(3, "g"));
        const what = `${name} at ${at}${grow ? ", grown" : ""}`;
        assert.deepEqual([...packHistory(outer, undefined, undefined, memo)], [...packHistory(outer)], what);
        // The memo serves the next packing right, whatever it remembers.
        assert.deepEqual([...packHistory(outer, undefined, undefined, memo)], [...packHistory(outer)], `${what}, again`);
        assert.deepEqual([...packHistory(inner, undefined, undefined, memo)], [...packHistory(inner)], `${what}, inner again`);
      }
    }
  }
});
