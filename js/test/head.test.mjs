// The glue's heads (js/head.js) against core's (core/head.go): a quick
// turn with ifHead gets its head in JavaScript, so the two must agree on
// every message. The corpus of heads gives three fixed answers; random
// conversations (ASCII, multi-byte text, lone surrogates, long strings,
// tool calls and results) are compared with the module's checkHistory;
// and quick turns whose model answers random text are compared with the
// session's head the module computes. The suite runs in each engine
// (Node, Bun, Deno, and the pages of Firefox and WebKit): the arithmetic
// is the engine's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { root } from "./env.mjs";
import { runtimes, HEAD_FORM } from "./helpers.mjs";
import { headAfter, headLink, headText, nextLink, SEED_LINK } from "../head.js";

const corpus = JSON.parse(await readFile(new URL("testdata/edges/heads.json", root), "utf8"));
const { load, release } = runtimes();

test("the corpus's heads: h0, the conversation, the history awaiting approval", () => {
  assert.equal(headText(SEED_LINK), corpus.prefixes[0].head);
  assert.equal(headAfter(undefined, []), corpus.prefixes[0].head);
  assert.equal(headAfter(undefined, corpus.shapes.module), corpus.head);
  assert.equal(headAfter(undefined, corpus.awaiting.history), corpus.awaiting.head);
  // Chained: the head after a prefix's link is the whole's.
  const msgs = corpus.shapes.module;
  let l = SEED_LINK;
  for (const m of msgs.slice(0, 2)) l = nextLink(l, m);
  assert.equal(headAfter(headLink(headText(l)), msgs.slice(2)), corpus.head);
  // Written in place, as a quick turn does.
  const inPlace = Int32Array.from(SEED_LINK);
  for (const m of msgs) nextLink(inPlace, m, inPlace);
  assert.equal(headText(inPlace), corpus.head);
  assert.equal(headText(SEED_LINK), corpus.prefixes[0].head, "h0's link unchanged");
});

test("headLink reads back every head headText writes, and refuses what is not a head", () => {
  let l = SEED_LINK;
  for (let i = 0; i < 200; i++) {
    l = nextLink(l, { role: "user", content: `m${i}` });
    const h = headText(l);
    assert.match(h, HEAD_FORM);
    assert.deepEqual(headLink(h), l);
  }
  for (const bad of [undefined, 7, "", "h1-", corpus.head.slice(0, -1), corpus.head + "A", "h2-" + corpus.head.slice(3),
    corpus.head.slice(0, -1) + "B", corpus.head.slice(0, 10) + "!" + corpus.head.slice(11), corpus.head.slice(0, 10) + "é" + corpus.head.slice(11)]) {
    assert.equal(headLink(bad), undefined, JSON.stringify(bad));
  }
});

// rng is a small deterministic generator, so that a failure replays.
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

const PIECES = ["a", "Z", " ", "é", "ß", "中", "文", "😀", "\u{10FFFF}", "\uD800", "\uDC00", "\0", "\n", "\"", "~", "\u007f", "\u0080", "\u07ff", "\u0800", "\uffff"];

function randomText(r, max) {
  const n = Math.floor(r() * max);
  let s = "";
  for (let i = 0; i < n; i++) s += r() < 0.6 ? String.fromCharCode(32 + Math.floor(r() * 95)) : PIECES[Math.floor(r() * PIECES.length)];
  return s;
}

// randomConversation is a history core accepts as it is: turns of a
// user's text and an assistant's answer, some with tool calls each
// answered by a tool message.
function randomConversation(r) {
  const msgs = [];
  const turns = 1 + Math.floor(r() * 5);
  for (let t = 0; t < turns; t++) {
    msgs.push({ role: "user", content: randomText(r, 40) || "q" });
    if (r() < 0.4) {
      const calls = [];
      for (let k = 0; k < 1 + Math.floor(r() * 3); k++) {
        calls.push({ id: `c${t}-${k}-${randomText(r, 6)}`, name: `tool_${k}`, arguments: JSON.stringify({ v: randomText(r, 20) }) });
      }
      msgs.push({ role: "assistant", content: randomText(r, 30), tool_calls: calls });
      for (const c of calls) msgs.push({ role: "tool", tool_call_id: c.id, content: randomText(r, 50) });
    }
    msgs.push({ role: "assistant", content: randomText(r, 60) || "a" });
  }
  return msgs;
}

// wellFormed is msgs as the module stores them: each string with its lone
// surrogates as U+FFFD.
function wellFormed(msgs) {
  const w = (s) => (typeof s === "string" ? s.toWellFormed() : s);
  return msgs.map((m) => ({
    ...m,
    content: w(m.content),
    tool_call_id: w(m.tool_call_id),
    tool_calls: m.tool_calls?.map((c) => ({ id: w(c.id), name: w(c.name), arguments: w(c.arguments) })),
  }));
}

test("random conversations: the glue's head is the module's checkHistory head", async () => {
  const rt = await load({});
  try {
    const r = rng(20261206);
    for (let i = 0; i < 300; i++) {
      const msgs = randomConversation(r);
      const check = await rt.checkHistory(msgs);
      assert.equal(check.ok, true, JSON.stringify(check));
      assert.equal(headAfter(undefined, wellFormed(msgs)), check.head, `conversation ${i}: ${JSON.stringify(msgs)}`);
    }
    // Long strings: across the glue's scratch buffer and TextEncoder's
    // path, every length mod 4, ASCII and not.
    for (const len of [255, 256, 257, 1021, 4096, 100003]) {
      for (const unit of ["x", "é", "😀"]) {
        const msgs = [{ role: "user", content: unit.repeat(Math.ceil(len / unit.length)).slice(0, len).toWellFormed() }, { role: "assistant", content: "ok" }];
        assert.equal(headAfter(undefined, msgs), (await rt.checkHistory(msgs)).head, `${len} of ${unit}`);
      }
    }
  } finally {
    release(rt);
  }
});

test("quick turns with ifHead: each result's head, computed by the glue, is the session's head in the module", async () => {
  const r = rng(7);
  let reply = "";
  const rt = await load({ model: () => reply });
  try {
    const history = [{ role: "user", content: "hello" }, { role: "assistant", content: "hi" }];
    let res = await rt.run({ sessionId: "q", input: "seed", history, ifHead: (await rt.checkHistory(history)).head });
    for (let i = 0; i < 100; i++) {
      reply = randomText(r, 50);
      res = await rt.run({ sessionId: "q", input: randomText(r, 30) || "x", ifHead: res.head });
      assert.equal(res.status, "completed");
      assert.equal(res.head, (await rt.session("q")).head, `turn ${i}: ${JSON.stringify(res.appended)}`);
    }
  } finally {
    release(rt);
  }
});
