// agentrt wire: the JavaScript side of the byte frames the glue and the
// module exchange through the module's linear memory (docs/wire.md).
// Keep in sync with the Go package wire.
//
// Encoders write host frames (begin, model reply, tool result, delta)
// into a growable buffer; decoders read module frames (action, session,
// stats, session ids, refused) into plain objects in the shapes of the
// module's JavaScript API (messages are frozen { role, content,
// tool_call_id?, tool_calls?, id? }). A malformed frame throws a
// WireError (code "internal": the module wrote it).

export const MAGIC = [0x41, 0x52, 0x57];
export const VERSION = 1;

export const KIND = Object.freeze({
  begin: 0x01, modelReply: 0x02, toolResult: 0x03, delta: 0x04, commit: 0x05, limitsQuery: 0x06, counts: 0x07, approval: 0x08,
  action: 0x10, session: 0x11, stats: 0x12, refused: 0x13, sessions: 0x14, committed: 0x15, limits: 0x16, check: 0x17,
  value: 0x18,
});

export const ACTION = Object.freeze({ wait: 0, model: 1, tool: 2, done: 3, failed: 4, pending: 5, count: 6, approve: 7 });
// DONE_HEAD is ACTION.done on the wire when the frame ends with the
// session's head (docs/wire.md, "Heads"); readAction reads it as done.
const DONE_HEAD = 8;

const ROLES = ["user", "assistant", "tool", "system"];
const EVENT_TYPES = ["run.started", "session.seeded", "message.appended", "model.delta",
  "tool.started", "tool.finished", "run.completed", "run.failed", "run.cancelled", "model.context", "run.awaiting_approval"];
const SEED_MODES = ["none", "cold", "noop", "appended", "replaced"];
// Keep in sync with repairKinds in wire/action.go.
const REPAIR_KINDS = ["missing_tool_result", "orphan_tool_result", "duplicate_tool_result", "duplicate_message"];

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The error of a frame that cannot be decoded. */
export class WireError extends Error {
  constructor(message) {
    super(`agentrt wire: ${message}`);
    this.name = "WireError";
    this.code = "internal";
  }
}

/**
 * Returns a buffer of at least need bytes, doubling buf's size, with the
 * first pos bytes of buf: the growth of Writer and of pack.js's packer.
 */
export function grown(buf, pos, need) {
  let size = Math.max(buf.length * 2, 64);
  while (size < need) size *= 2;
  const next = new Uint8Array(size);
  next.set(buf.subarray(0, pos));
  return next;
}

/**
 * Writes v (a non-negative integer up to 2^53) as a uvarint into buf at
 * pos, which must have room for 10 bytes, and returns the position after
 * it. Division, not shifts: v may exceed 32 bits.
 */
export function putUvarint(buf, pos, v) {
  while (v >= 0x80) {
    buf[pos++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  buf[pos++] = v;
  return pos;
}

/** A growable byte buffer for host frames. */
export class Writer {
  constructor(capacity = 256) {
    this.buf = new Uint8Array(capacity);
    this.pos = 0;
  }

  reset() { this.pos = 0; return this; }

  reserve(n) {
    if (this.pos + n > this.buf.length) this.buf = grown(this.buf, this.pos, this.pos + n);
  }

  byte(b) { this.reserve(1); this.buf[this.pos++] = b; }

  uvarint(v) {
    this.reserve(10);
    this.pos = putUvarint(this.buf, this.pos, v);
  }

  /** A signed integer as a zigzag varint (policy fields). */
  svarint(v) { this.uvarint(v < 0 ? -2 * v - 1 : 2 * v); }

  string(s) {
    const n = s.length;
    if (n < 0x80 / 3) {
      // The common short string: one length byte, room reserved first.
      this.reserve(1 + n * 3);
      const start = this.pos + 1;
      const written = encodeShort(s, this.buf, start);
      this.buf[this.pos] = written;
      this.pos = start + written;
      return;
    }
    const bytes = encoder.encode(s);
    this.uvarint(bytes.length);
    this.raw(bytes);
  }

  raw(bytes) {
    this.reserve(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  header(kind) {
    this.reserve(5);
    this.buf[this.pos++] = MAGIC[0];
    this.buf[this.pos++] = MAGIC[1];
    this.buf[this.pos++] = MAGIC[2];
    this.buf[this.pos++] = VERSION;
    this.buf[this.pos++] = kind;
  }

  bytes() { return this.buf.subarray(0, this.pos); }
}

/**
 * Writes s as UTF-8 into buf at start, as TextEncoder does (a lone
 * surrogate becomes U+FFFD), and returns the byte count. buf must have
 * room for s.length * 3 bytes. For short strings, where it costs no call
 * into the engine; pack.js packs with it too.
 * @param {string} s
 * @param {Uint8Array} buf
 * @param {number} start
 * @returns {number}
 */
export function encodeShort(s, buf, start) {
  let pos = start;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) buf[pos++] = c;
    else if (c < 0x800) {
      buf[pos++] = 0xc0 | (c >> 6);
      buf[pos++] = 0x80 | (c & 0x3f);
    } else if (c < 0xd800 || c > 0xdfff) {
      buf[pos++] = 0xe0 | (c >> 12);
      buf[pos++] = 0x80 | ((c >> 6) & 0x3f);
      buf[pos++] = 0x80 | (c & 0x3f);
    } else {
      const d = c <= 0xdbff && i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        buf[pos++] = 0xf0 | (c >> 18);
        buf[pos++] = 0x80 | ((c >> 12) & 0x3f);
        buf[pos++] = 0x80 | ((c >> 6) & 0x3f);
        buf[pos++] = 0x80 | (c & 0x3f);
      } else {
        buf[pos++] = 0xef;
        buf[pos++] = 0xbf;
        buf[pos++] = 0xbd;
      }
    }
  }
  return pos - start;
}

/**
 * Writes a begin frame. `history` is a packed history (Uint8Array) or
 * undefined for a run without one; `policy` is checkPolicy's answer, whose
 * `json` (the policy's JSON text) is written as it is; without one the
 * frame carries the default policy (a policy that is not the default
 * crosses as its JSON text only, docs/wire.md). `historyValid`
 * sets the flag that says every string of the history is valid UTF-8
 * (set it only for a history packed from JavaScript strings).
 */
export function writeBegin(w, b) {
  w.header(KIND.begin);
  w.string(b.sessionId);
  w.string(b.input);
  w.string(b.runId ?? "");
  let flags = 0;
  if (b.history !== undefined) flags |= 1;
  if (b.inspect) flags |= 2;
  if (b.events) flags |= 4;
  if (b.historyMirror) flags |= 8;
  if (b.historyValid) flags |= 16;
  const p = b.policy;
  // Further flag 2: the frame ends with the run's approvals; further
  // flag 4: then with the run's ifHead; further flag 8 asks for the
  // head in the frame that ends the turn.
  const more = (b.approvals !== undefined ? 2 : 0) | (b.ifHead !== undefined ? 4 : 0) | (b.wantHead ? 8 : 0);
  if (p !== undefined && p.json !== undefined) {
    // A policy goes as its JSON text (beginMore, then beginPolicyJSON):
    // the module reads it with the reader every edge shares.
    w.byte(flags | 0x80);
    w.uvarint(1 | more);
    w.string(p.json);
  } else {
    // No policy (request.js checkPolicy: undefined for an empty one):
    // the default policy's eight zero bytes.
    w.byte(more ? flags | 0x80 : flags);
    if (more) w.uvarint(more);
    for (let i = 0; i < 8; i++) w.byte(0);
  }
  return writeBeginTail(w, b);
}

// writeBeginTail writes what follows the policy in a begin frame.
function writeBeginTail(w, b) {
  w.uvarint(b.mirrorGen ?? 0);
  w.uvarint(b.mirrorLen ?? 0);
  if (b.history !== undefined) {
    w.uvarint(b.history.length);
    w.raw(b.history);
  }
  if (b.approvals !== undefined) {
    w.uvarint(b.approvals.length);
    for (const a of b.approvals) {
      w.string(a.toolCallId);
      w.byte(a.approved ? 1 : 0);
      w.string(a.reason);
    }
  }
  if (b.ifHead !== undefined) w.string(b.ifHead);
  return w.bytes();
}

/** Writes an approval frame: whether the call needs approval, or the predicate's failure. */
export function writeApproval(w, handle, r) {
  w.header(KIND.approval);
  w.uvarint(handle);
  if (r.failure !== undefined) {
    w.byte(1);
    w.string(r.failure);
  } else {
    w.byte(0);
    w.byte(r.need ? 1 : 0);
  }
  return w.bytes();
}

/**
 * Writes a model-reply frame: a reply { content, toolCalls } or a failure
 * text; with oversize, the failure is a reply refused unsent as more than
 * maxMessageBytes (the run fails with limit_exceeded).
 */
export function writeModelReply(w, handle, reply, failure, oversize = false) {
  w.header(KIND.modelReply);
  w.uvarint(handle);
  if (failure !== undefined) {
    w.byte(oversize ? 2 : 1);
    w.string(failure);
    return w.bytes();
  }
  w.byte(0);
  w.string(reply.content);
  const calls = reply.toolCalls;
  w.uvarint(calls.length);
  for (const c of calls) {
    w.string(c.id);
    w.string(c.name);
    w.string(c.arguments);
  }
  return w.bytes();
}

/** Writes a tool-result frame: the output text, or a failure text. */
export function writeToolResult(w, handle, failed, text, oversize = false) {
  w.header(KIND.toolResult);
  w.uvarint(handle);
  w.byte(oversize ? 2 : failed ? 1 : 0);
  w.string(text);
  return w.bytes();
}

/** Writes a delta frame. */
export function writeDelta(w, handle, text) {
  w.header(KIND.delta);
  w.uvarint(handle);
  w.string(text);
  return w.bytes();
}

/**
 * Writes a commit frame: a turn the host has run already on its mirror of
 * the session (generation mirrorGen, mirrorLen messages), its input and
 * the model's reply content, to be stored as one (docs/wire.md).
 */
export function writeCommit(w, sessionId, runId, input, mirrorGen, mirrorLen, reply) {
  w.header(KIND.commit);
  w.string(sessionId);
  w.string(runId);
  w.string(input);
  w.uvarint(mirrorGen);
  w.uvarint(mirrorLen);
  w.string(reply);
  return w.bytes();
}

/** Reads a module frame held in a Uint8Array (copy it first if memory may grow). */
export class Reader {
  constructor(buf, kind) {
    this.buf = buf;
    this.pos = 0;
    this.kind = 0;
    this.reset(buf, kind);
  }

  /** Starts reading buf, as the constructor does; returns this. */
  reset(buf, kind) {
    this.buf = buf;
    this.pos = 0;
    if (buf.length < 5 || buf[0] !== MAGIC[0] || buf[1] !== MAGIC[1] || buf[2] !== MAGIC[2]) this.fail("wrong magic");
    if (buf[3] !== VERSION) this.fail(`unknown version ${buf[3]}`);
    this.kind = buf[4];
    if (kind !== undefined && this.kind !== kind) this.fail(`frame kind ${this.kind}, want ${kind}`);
    this.pos = 5;
    return this;
  }

  fail(msg) { throw new WireError(msg); }

  byte() {
    if (this.pos >= this.buf.length) this.fail("truncated");
    return this.buf[this.pos++];
  }

  uvarint() {
    let x = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.byte();
      x += (b & 0x7f) * mul;
      if (b < 0x80) return x;
      mul *= 0x80;
    }
    this.fail("varint too long");
  }

  // string reads a string; one of fewer than short bytes, ASCII, is
  // built without a call into TextDecoder (a head, 25 bytes, is read with
  // short 0: one call costs less than its 25 concatenations).
  string(short = 48) {
    const n = this.uvarint();
    const start = this.pos;
    const end = start + n;
    if (end > this.buf.length) this.fail("string runs past the end");
    this.pos = end;
    const buf = this.buf;
    if (n < short) {
      // Short ASCII strings without a call into TextDecoder.
      let s = "";
      let i = start;
      for (; i < end; i++) {
        const c = buf[i];
        if (c >= 0x80) break;
        s += String.fromCharCode(c);
      }
      if (i === end) return s;
    }
    try {
      return decoder.decode(buf.subarray(start, end));
    } catch {
      this.fail("invalid UTF-8");
    }
  }

  end() {
    if (this.pos !== this.buf.length) this.fail(`${this.buf.length - this.pos} bytes after the end of the frame`);
  }

  call() {
    return Object.freeze({ id: this.string(), name: this.string(), arguments: this.string() });
  }

  message() {
    const role = this.byte();
    const flags = this.byte();
    if (flags & 0xf0) this.fail("reserved flag bits are set");
    let name;
    if (role < 4) name = ROLES[role];
    else if (role === 255) name = this.string();
    else this.fail(`unknown role byte ${role}`);
    const m = { role: name, content: flags & 1 ? this.string() : "" };
    const id = flags & 2 ? this.string() : undefined;
    if (flags & 4) m.tool_call_id = this.string();
    if (flags & 8) {
      const n = this.count("tool call count");
      const calls = new Array(n);
      for (let i = 0; i < n; i++) calls[i] = this.call();
      m.tool_calls = Object.freeze(calls);
    }
    if (id !== undefined) m.id = id;
    return Object.freeze(m);
  }

  // count reads a count of items that take at least one byte each.
  // dropped reads the dropped field of an action or committed frame:
  // undefined for none, true for all (every mirror is stale), or the ids.
  dropped() {
    const k = this.uvarint();
    if (k === 0) return undefined;
    if (k === 1) return true;
    const n = k - 2;
    if (n > this.buf.length - this.pos) this.fail("dropped count is more than the buffer can hold");
    const ids = new Array(n);
    for (let i = 0; i < n; i++) ids[i] = this.string();
    return ids;
  }

  count(what) {
    const n = this.uvarint();
    if (n > this.buf.length - this.pos) this.fail(`${what} is more than the buffer can hold`);
    return n;
  }

  messages() {
    const n = this.count("message count");
    const out = new Array(n);
    for (let i = 0; i < n; i++) out[i] = this.message();
    return out;
  }

  error() {
    const code = this.string();
    const index = this.uvarint();
    const message = this.string();
    const e = { code, message };
    if (index > 0) e.index = index - 1;
    return e;
  }

  // failure reads how a run ended failed or cancelled: its error, and
  // the messages the run keeps in its session (the results of calls a
  // person approved), as error.appended when there are any.
  failure() {
    const e = this.error();
    const kept = this.messages();
    if (kept.length > 0) e.appended = kept;
    if (e.code === "history_diverged") {
      // The conversation's head, then missing when the caller's head
      // names an earlier state of it (docs/wire.md).
      e.head = this.string();
      const has = this.byte();
      if (has > 1) this.fail("missing flag must be 0 or 1");
      if (has === 1) e.missing = this.messages();
    }
    return e;
  }

  seed() {
    const b = this.byte();
    const mode = SEED_MODES[b & 0x7f];
    if (mode === undefined) this.fail("unknown seed mode");
    const seed = { mode, seeded: this.uvarint(), skippedSystem: this.uvarint() };
    if (b & 0x80) {
      // Repairs follow (policy.repair): uvarint n, n (byte kind, uvarint
      // index, string toolCallId, and for missing_tool_result the marker's
      // edit: uvarint the host index it goes before, string its id).
      const n = this.uvarint();
      if (n === 0) this.fail("a seed with repairs has at least one");
      seed.repairs = [];
      const edits = [];
      for (let i = 0; i < n; i++) {
        const kind = REPAIR_KINDS[this.byte()];
        if (kind === undefined) this.fail("unknown repair kind");
        const r = { kind, index: this.uvarint() };
        const id = this.string();
        if (id !== "") r.toolCallId = id;
        seed.repairs.push(r);
        if (kind === "missing_tool_result") {
          edits.push({ op: "insert", index: this.uvarint(), call: r.index, toolCallId: id, id: this.string() });
        } else {
          edits.push({ op: "drop", index: r.index });
        }
      }
      seedEdits.set(seed, edits);
    }
    return seed;
  }

  event() {
    const t = this.byte();
    const type = EVENT_TYPES[t];
    if (type === undefined) this.fail(`unknown event type ${t}`);
    const ev = { type, seq: this.uvarint() };
    switch (t) {
      case 1: ev.seed = this.seed(); break;
      case 2: ev.message = this.message(); break;
      case 3: ev.step = this.uvarint(); ev.delta = this.string(); break;
      case 4: ev.toolCall = this.call(); break;
      case 5: {
        ev.toolCall = this.call();
        const flags = this.byte();
        if (flags & 1) ev.message = this.message();
        if (flags & 2) ev.error = this.error();
        break;
      }
      case 7: case 8: ev.error = this.failure(); break;
      case 9:
        ev.step = this.uvarint();
        ev.context = { messages: this.uvarint(), tokens: this.uvarint(), dropped: this.uvarint() };
        break;
    }
    return ev;
  }

  result() {
    const runId = this.string();
    const sessionId = this.string();
    const seed = this.seed();
    const messageCount = this.uvarint();
    const appended = this.messages();
    if (appended.length === 0) this.fail("a result appends at least its reply");
    const reply = appended[appended.length - 1];
    const n = this.count("model call count");
    const modelCalls = new Array(n);
    for (let i = 0; i < n; i++) {
      const c = { step: this.uvarint(), messageCount: this.uvarint() };
      if (this.byte() === 1) c.messages = this.messages();
      modelCalls[i] = c;
    }
    // A run awaiting approval: its pending calls, and its reply the
    // assistant message whose calls wait.
    const k = this.count("pending approval count");
    if (k === 0) return { runId, sessionId, status: "completed", reply, appended, seed, messageCount, modelCalls };
    const pendingApprovals = new Array(k);
    for (let i = 0; i < k; i++) pendingApprovals[i] = { toolCallId: this.string(), name: this.string(), arguments: this.string() };
    const asked = appended.findLast((m) => m.role === "assistant");
    if (asked === undefined) this.fail("a result awaiting approval appends the reply whose calls wait");
    return { runId, sessionId, status: "awaiting_approval", reply: asked, appended, seed, messageCount, modelCalls, pendingApprovals };
  }
}

// Objects a turn makes and drops get their shape from one object
// literal each, never by adding properties: V8 drops a shape reached by
// adding properties once no object has it (a full GC), and with it the
// optimized code of the functions that made or read such objects, which
// then run unoptimized until they are optimized again.
//
// The readers of actions and the other frames: one, reused (a Reader's
// shape is one reached by adding properties, and it stays alive with it).
let shared = null;

/** The shared Reader, reset to buf, a frame of kind (js/controlframes.js reads with it too). */
export function reader(buf, kind) {
  if (shared === null) return (shared = new Reader(buf, kind));
  return shared.reset(buf, kind);
}

/**
 * Decodes an action frame: { handle, events, kind, ... } with, by kind,
 * model: step, generation, adopt, from, start, end, tail; tool: call;
 * done: result; failed: error; count: count (the messages). Events are decoded only when `events` is
 * true (their count is read either way and must be zero otherwise).
 * onDropped, when given, is handed the frame's dropped sessions (true:
 * all; or the ids), after the frame is decoded.
 */
export function readAction(buf, onDropped) {
  const r = reader(buf, KIND.action);
  const handle = r.uvarint();
  const n = r.count("event count");
  let events;
  if (n > 0) {
    events = new Array(n);
    for (let i = 0; i < n; i++) events[i] = r.event();
  }
  const kind = r.byte();
  let a;
  switch (kind) {
    case ACTION.wait: case ACTION.pending: a = { handle, events, kind }; break;
    case ACTION.model: {
      const step = r.uvarint();
      const generation = r.uvarint();
      const adopt = r.byte() === 1;
      const from = r.uvarint();
      const start = r.uvarint();
      const end = r.uvarint();
      const tail = r.messages();
      if (start > end || from + tail.length !== end) r.fail("model window is inconsistent");
      a = { handle, events, kind, step, generation, adopt, from, start, end, tail };
      break;
    }
    case ACTION.tool: case ACTION.approve: a = { handle, events, kind, call: r.call() }; break;
    case ACTION.count: a = { handle, events, kind, count: r.messages() }; break; // js/count.js
    case ACTION.done: a = { handle, events, kind, result: r.result() }; break;
    case DONE_HEAD: {
      // A completed turn whose begin frame asked for the head.
      const result = r.result();
      result.head = r.string(0);
      a = { handle, events, kind: ACTION.done, result };
      break;
    }
    case ACTION.failed: a = { handle, events, kind, error: r.failure() }; break;
    default: r.fail(`unknown action ${kind}`);
  }
  const dropped = r.dropped();
  r.end();
  if (dropped !== undefined && onDropped !== undefined) onDropped(dropped);
  return a;
}

/**
 * Decodes a committed frame: the session's message count after the
 * commit, or -1 when it was stale (nothing was stored). onDropped, when
 * given, is handed the frame's dropped sessions (true: all; or the ids)
 * after the frame is decoded.
 */
export function readCommitted(buf, onDropped) {
  const r = reader(buf, KIND.committed);
  const stale = r.byte();
  if (stale > 1) r.fail("stale must be 0 or 1");
  const count = r.uvarint();
  const dropped = r.dropped();
  r.end();
  if (dropped !== undefined && onDropped !== undefined) onDropped(dropped);
  return stale === 1 ? -1 : count;
}

/** Writes a limits query frame (a header alone), sent through agentrt_feed. */
export function writeLimitsQuery(w) {
  w.header(KIND.limitsQuery);
  return w.bytes();
}

/**
 * Decodes a limits frame: { maxSessions, maxMessagesPerSession,
 * maxSessionBytes, maxSeedMessages, maxSeedBytes, maxMessageBytes,
 * maxTotalBytes }, the limits in force.
 */
export function readLimits(buf) {
  const r = reader(buf, KIND.limits);
  const l = {};
  for (const k of ["maxSessions", "maxMessagesPerSession", "maxSessionBytes", "maxSeedMessages", "maxSeedBytes",
    "maxMessageBytes", "maxTotalBytes"]) l[k] = r.uvarint();
  r.end();
  return l;
}

// seedEdits holds the edits (core.HistoryEdit) of each seed report read
// with repairs, out of the report's sight: the glue renders them as
// seed.repaired (heal.js).
const seedEdits = new WeakMap();

/**
 * Returns the edits of a seed report read with repairs: [{ op: "drop",
 * index } | { op: "insert", index, call, toolCallId, id }], in host
 * indexes, one per repair; undefined for a report without repairs.
 */
export function editsOf(seed) {
  return seedEdits.get(seed);
}

/** Decodes a refused frame: { code, message, index? }. */
export function readRefused(buf) {
  const r = reader(buf, KIND.refused);
  const e = r.error();
  r.end();
  return e;
}

/** The kind byte of a frame, after checking its header. */
export function frameKind(buf) {
  return new Reader(buf).kind;
}
