// agentrt glue: the frames of the module's control exports (docs/wire.md,
// "Control exports"): what js/control.js writes into the module's input
// and reads back, beside the turn's frames in wire.js.

import { KIND, reader } from "./wire.js";

const encoder = new TextEncoder();

/** Decodes a session frame: { generation, messages, head }. */
export function readSession(buf) {
  const r = reader(buf, KIND.session);
  const generation = r.uvarint();
  const messages = r.messages();
  const head = r.string();
  r.end();
  return { generation, messages, head };
}

/**
 * Decodes a stats frame into the module's stats object (budgetUsed and
 * budgetBytes come after heapAlloc: 0 when an older module's frame ends
 * before them).
 */
export function readStats(buf) {
  const r = reader(buf, KIND.stats);
  const s = {
    sessions: r.uvarint(), messages: r.uvarint(), bytes: r.uvarint(), activeRuns: r.uvarint(),
    evictions: r.uvarint(), runsCompleted: r.uvarint(), runsFailed: r.uvarint(), runsCancelled: r.uvarint(),
    budgetUsed: 0, budgetBytes: 0, heapAlloc: r.uvarint(),
  };
  if (r.pos < buf.length) {
    s.budgetUsed = r.uvarint();
    s.budgetBytes = r.uvarint();
  }
  r.end();
  return s;
}

/** Decodes a session-ids frame. */
export function readSessions(buf) {
  const r = reader(buf, KIND.sessions);
  const n = r.count("session count");
  const ids = new Array(n);
  for (let i = 0; i < n; i++) ids[i] = r.string();
  r.end();
  return ids;
}

/**
 * Writes s as UTF-8 with no header and no length: the input of the
 * control exports that take one id (agentrt_session).
 */
export function writeText(w, s) {
  w.raw(encoder.encode(s));
  return w.bytes();
}

/**
 * Writes a config frame of version 3 (docs/wire.md, "Config frame"):
 * "ARC", 3, then text, a config as JSON text, to the frame's end.
 */
export function writeConfig(w, text) {
  w.raw(CONFIG_MAGIC);
  w.raw(encoder.encode(text));
  return w.bytes();
}

const CONFIG_MAGIC = [0x41, 0x52, 0x43, 3];

// The kinds of a value (wire/op.go).
const NULL = 0, FALSE = 1, TRUE = 2, TEXT = 3;

/**
 * Writes the input of agentrt_op (docs/wire.md, "Operations"): the
 * operation's name, the count of its arguments and each argument, null
 * (or undefined) or a string, with no frame header. The caller has
 * checked the arguments' types.
 */
export function writeOp(w, name, args) {
  w.string(name);
  w.uvarint(args.length);
  for (const a of args) {
    if (a === undefined || a === null) w.byte(NULL);
    else {
      w.byte(TEXT);
      w.string(a);
    }
  }
  return w.bytes();
}

/** Decodes a value frame, agentrt_op's answer: null, a boolean or a string. */
export function readValue(buf) {
  const r = reader(buf, KIND.value);
  const k = r.byte();
  let v;
  if (k === NULL) v = null;
  else if (k === FALSE || k === TRUE) v = k === TRUE;
  else if (k === TEXT) v = r.string();
  else r.fail("unknown value kind " + k);
  r.end();
  return v;
}

/**
 * Decodes a check-report frame (agentrt_check): { ok, problems: [{ code,
 * index, message, repair }], awaiting: [{ index, toolCallId, name,
 * arguments }], paused, head }, repair being the kind's name or null.
 */
export function readCheck(buf) {
  const r = reader(buf, KIND.check);
  const ok = r.byte();
  if (ok > 1) r.fail("ok must be 0 or 1");
  const n = r.count("problem count");
  const problems = new Array(n);
  for (let i = 0; i < n; i++) {
    const code = r.string();
    const u = r.uvarint();
    const index = u % 2 === 0 ? u / 2 : -(u + 1) / 2;
    const message = r.string();
    const repair = r.string();
    problems[i] = { code, index, message, repair: repair === "" ? null : repair };
  }
  const m = r.count("awaiting count");
  const awaiting = new Array(m);
  for (let i = 0; i < m; i++) awaiting[i] = { index: r.uvarint(), toolCallId: r.string(), name: r.string(), arguments: r.string() };
  const paused = r.byte();
  if (paused > 1) r.fail("paused must be 0 or 1");
  const head = r.string();
  r.end();
  return { ok: ok === 1, problems, awaiting, paused: paused === 1, head };
}

/**
 * A decoded check as checkHistory returns it at every edge: { ok,
 * problems, head }, with paused: true when the history waits for a decision,
 * and awaiting when calls are pending at its end (the HTTP API's order).
 */
export function checkResult({ ok, problems, awaiting, paused, head }) {
  const out = { ok, problems };
  if (head !== "") out.head = head;
  if (paused) out.paused = true;
  if (awaiting.length > 0) out.awaiting = awaiting;
  return out;
}
