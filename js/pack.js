// agentrt pack: encodes the messages history.js reads in the module's
// packed format (docs/packed-history.md), and builds the glue's session
// mirrors from them.
//
// Imported by glue.js and driver.js; it takes its short-string UTF-8
// encoder from wire.js.

import { encodeShort, grown, putUvarint } from "./wire.js";
import { read, readAt, at, lengthOf, defaultFail, argError, isObject } from "./history.js";

/** Packed history format: magic "ARH" and version 1 (docs/packed-history.md). */
export const PACK_MAGIC = [0x41, 0x52, 0x48];
export const PACK_VERSION = 1;
const ROLE_USER = 0;
const ROLE_ASSISTANT = 1;
const ROLE_OTHER = 255;
const FLAG_CONTENT = 1;
const FLAG_ID = 2;
const FLAG_TOOL_CALL_ID = 4;
const FLAG_TOOL_CALLS = 8;
const FLAG_CONTINUES = 16;

const encoder = new TextEncoder();

// HEADER_ROOM is the most the header takes: magic, version and a count
// varint of up to 5 bytes. Messages are written after it and the header
// right before them once the count is known.
const HEADER_ROOM = 9;

// V8 drops a shape reached by adding properties (a Packer's) at a full
// GC once no object has it, and deoptimizes the code that packs with it
// (see js/wire.js): one small Packer lives as long as the module to keep
// the shape.
let packerShape = null;

function newPacker(capacity, buf = undefined) {
  packerShape ??= new Packer(0);
  return new Packer(capacity, buf);
}

class Packer {
  constructor(capacity, buf = undefined) {
    this.buf = buf ?? new Uint8Array(Math.max(64, capacity));
    this.pos = 0;
  }

  reserve(n) {
    if (this.pos + n > this.buf.length) this.buf = grown(this.buf, this.pos, this.pos + n);
  }

  uvarint(v) {
    this.reserve(10);
    this.pos = putUvarint(this.buf, this.pos, v);
  }

  string(s) {
    // A UTF-16 code unit encodes to at most 3 bytes of UTF-8, and to at
    // least 1: write the bytes after room for the shortest length prefix,
    // and move them on in the rare case the real length needs more.
    const n = s.length;
    const room = varintSize(n);
    // Room for the length's varint too: uvarint's own reserve below must
    // not grow the buffer, which would drop the bytes written past pos.
    this.reserve(room + n * 3 + 10);
    const start = this.pos + room;
    const written = n > LONG_STRING ? encoder.encodeInto(s, this.buf.subarray(start)).written : encodeShort(s, this.buf, start);
    const size = varintSize(written);
    if (size !== room) this.buf.copyWithin(this.pos + size, start, start + written);
    this.uvarint(written);
    this.pos += written;
  }

  // finish writes the header for count messages before the messages
  // (written from HEADER_ROOM on) and returns the whole buffer.
  finish(count) {
    const h = [...PACK_MAGIC, PACK_VERSION];
    let v = count;
    while (v >= 0x80) {
      h.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    h.push(v);
    const start = HEADER_ROOM - h.length;
    this.buf.set(h, start);
    return this.buf.subarray(start, this.pos);
  }
}

// Strings longer than this many UTF-16 code units are encoded with
// TextEncoder.encodeInto; shorter ones (ids, roles, short turns) by
// encodeShort, which costs no call into the engine and no subarray view
// per string. Measured on V8 with the benchmark history: encodeShort for
// every string was slower than encodeInto for every string; 32 was the
// fastest split.
const LONG_STRING = 32;

function varintSize(v) {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 0x80);
    n++;
  }
  return n;
}

/**
 * Encodes a history in the module's packed format (docs/packed-history.md),
 * reading every shape toModuleHistory reads. A message after the first of
 * those one host message yields carries the continues flag, so that the
 * module's errors name the host's message. A Uint8Array is returned as it
 * is (it is taken to be packed already).
 *
 * @param {ReadonlyArray<object> | Uint8Array} history
 * @param {(index: number, message: string) => Error} [fail]
 * @param {(record: {role: string, content: string | null, id?: string, toolCallId?: string, calls?: Array<object>}) => void} [onRecord]
 *   called with each message as it is packed (the record is reused: copy
 *   what you keep); the glue builds its session mirror from it
 * @param {PackMemo} [memo] the previous packing, reused and updated: see
 *   PackMemo
 * @param {PackScratch} [scratch] the buffer to pack into when there is no
 *   memo: see PackScratch
 * @returns {Uint8Array} with a memo or a scratch buffer, valid until its
 *   next use
 */
export function packHistory(history, fail = defaultFail, onRecord = undefined, memo = undefined, scratch = undefined) {
  if (history instanceof Uint8Array) return history;
  if (!Array.isArray(history)) throw argError("history", "must be an array or a Uint8Array");
  const n = lengthOf(history, fail);
  if (memo !== undefined) return memo.pack(history, n, fail, onRecord);
  // A scratch buffer is taken for this packing and given back at its end:
  // a packing a host's getter starts meanwhile finds none and sizes its own.
  const buf = scratch !== undefined ? scratch.buf : null;
  let p;
  if (buf !== null) {
    scratch.buf = null;
    p = newPacker(0, buf);
  } else {
    p = newPacker(HEADER_ROOM + estimateSize(history, n));
  }
  p.pos = HEADER_ROOM;
  let count = 0;
  for (let i = 0; i < n; i++) {
    const r = readAt(at(history, i, fail), i, fail);
    if (r === read) {
      packRecord(p, r, false);
      if (onRecord !== undefined) onRecord(r);
      count++;
    } else {
      for (let k = 0; k < r.length; k++) {
        packRecord(p, r[k], k > 0);
        if (onRecord !== undefined) onRecord(r[k]);
      }
      count += r.length;
    }
  }
  if (scratch !== undefined) scratch.buf = p.buf;
  return p.finish(count);
}

/**
 * PackScratch is a buffer packHistory packs into and keeps for the next
 * packing, for a caller that copies the bytes before it packs again: no
 * buffer is allocated, nor the history read once more to size one, per
 * packing. It grows to the largest history packed and stays that size.
 */
export class PackScratch {
  constructor() {
    /** @type {Uint8Array | null} the buffer, or null while it is in use */
    this.buf = null;
  }
}

// estimateSize is the size of one buffer for history, from the content
// lengths (most messages are ASCII); the packer grows it geometrically if
// the estimate falls short.
function estimateSize(history, n) {
  let estimate = 16;
  for (let i = 0; i < n; i++) {
    let c;
    try {
      const m = history[i];
      c = isObject(m) ? m.content : undefined;
    } catch {
      c = undefined; // refused with its index when it is read
    }
    estimate += 24 + (typeof c === "string" ? c.length : 0);
  }
  return estimate + (estimate >> 4);
}

/**
 * PackMemo remembers the last history packed through it: the values of its
 * records (references to the host's strings, not copies) and its bytes.
 * Packing again reads every message as packHistory does, and where the
 * records are the same as last time (every field identical, in order) it
 * copies their bytes instead of encoding them again: a host that passes
 * its whole history on every turn, the same or with new messages at the
 * end, pays for reading it and for encoding what is new. The bytes are
 * those packHistory gives, whatever the history.
 *
 * A history that packs to more than maxBytes is not remembered.
 */
export class PackMemo {
  constructor(maxBytes = 1 << 20) {
    this.maxBytes = maxBytes;
    this.values = [];
    this.ends = []; // byte offset in buf after each record
    this.buf = null;
    this.out = null; // the last result, a view of buf
  }

  pack(history, n, fail, onRecord) {
    // What is remembered is read once, here: the host's getters run while
    // the history is read, and one may pack another history through this
    // memo (a turn it runs) before this packing ends. A buffer is never
    // written once remembered, so these stay as they are.
    const old = this.values;
    const oldEnds = this.ends;
    const oldBuf = this.buf;
    const oldOut = this.out;
    // Sized as packHistory sizes it when nothing is remembered, else as
    // the last buffer (both grow when short).
    const size = old.length === 0 ? HEADER_ROOM + estimateSize(history, n) : oldBuf.length;
    if (size > this.maxBytes) {
      // Too large to remember (a long cold seed): pack it plainly.
      this.forget();
      return packHistory(history, fail, onRecord);
    }
    const values = [];
    const ends = [];
    // same: how many leading records equal the remembered ones; p is
    // created at the first record that differs.
    let same = 0;
    let p = null;
    let count = 0;
    const add = (r, continues) => {
      // Each record takes six values (role, content, id, toolCallId,
      // continues, the call count), then three per call.
      const at = values.length;
      const calls = r.calls;
      values.push(r.role, r.content, r.id, r.toolCallId, continues, calls === undefined ? -1 : calls.length);
      if (calls !== undefined) for (const c of calls) values.push(c.id, c.name, c.arguments);
      if (p === null) {
        let eq = values.length <= old.length;
        for (let k = at; eq && k < values.length; k++) eq = values[k] === old[k];
        if (eq) {
          ends.push(oldEnds[count]);
          same++;
          count++;
          return;
        }
        // The first record that differs: start a buffer with the bytes of
        // the records before it.
        const from = same === 0 ? HEADER_ROOM : oldEnds[same - 1];
        p = newPacker(Math.max(size, from + 64));
        if (same > 0) p.buf.set(oldBuf.subarray(HEADER_ROOM, from), HEADER_ROOM);
        p.pos = from;
      }
      packRecord(p, r, continues);
      ends.push(p.pos);
      count++;
    };
    for (let i = 0; i < n; i++) {
      const r = readAt(at(history, i, fail), i, fail);
      if (r === read) {
        add(r, false);
        if (onRecord !== undefined) onRecord(r);
      } else {
        for (let k = 0; k < r.length; k++) {
          add(r[k], k > 0);
          if (onRecord !== undefined) onRecord(r[k]);
        }
      }
    }
    if (p === null) {
      // Every record was remembered: the same history, or a prefix of it.
      if (count === oldEnds.length && oldOut !== null) {
        // Remembered again: a getter's packing may have replaced it.
        this.values = old;
        this.ends = oldEnds;
        this.buf = oldBuf;
        this.out = oldOut;
        return oldOut;
      }
      const end = count === 0 ? HEADER_ROOM : oldEnds[count - 1];
      p = newPacker(end);
      if (count > 0) p.buf.set(oldBuf.subarray(HEADER_ROOM, end), HEADER_ROOM);
      p.pos = end;
    }
    const out = p.finish(count);
    if (p.pos <= this.maxBytes) {
      this.values = values;
      this.ends = ends;
      this.buf = p.buf;
      this.out = out;
    } else {
      this.forget();
    }
    return out;
  }

  /** Drops what the memo remembers: the next history is encoded whole. */
  forget() {
    this.values = [];
    this.ends = [];
    this.buf = this.out = null;
  }
}

// ---------------------------------------------------------------------------
// Session mirrors

// mirrorMessage returns the frozen session message the module stores for
// a record readMessage read: null content is "", and k says which of
// tool_call_id (1), tool_calls (2) and id (4) it has (empty ids and empty
// tool-call lists are left out), in the key order of the module's
// messages. It freezes the record's calls, which are its own. One literal
// per shape: each object is made with its shape at once.
function mirrorMessage(r, k) {
  const role = r.role;
  const content = r.content === null ? "" : r.content;
  const calls = r.calls;
  if (k & 2) {
    for (const c of calls) Object.freeze(c);
    Object.freeze(calls);
  }
  let m;
  switch (k) {
    case 0: m = { role, content }; break;
    case 1: m = { role, content, tool_call_id: r.toolCallId }; break;
    case 2: m = { role, content, tool_calls: calls }; break;
    case 3: m = { role, content, tool_call_id: r.toolCallId, tool_calls: calls }; break;
    case 4: m = { role, content, id: r.id }; break;
    case 5: m = { role, content, tool_call_id: r.toolCallId, id: r.id }; break;
    case 6: m = { role, content, tool_calls: calls, id: r.id }; break;
    default: m = { role, content, tool_call_id: r.toolCallId, tool_calls: calls, id: r.id };
  }
  return Object.freeze(m);
}

/**
 * Returns an onRecord callback for packHistory that appends to out the
 * session message each non-system record becomes, frozen: the glue's
 * mirror of a session seeded from the history being packed.
 *
 * @param {Array<object>} out
 */
export function mirrorInto(out) {
  return (r) => {
    if (r.role === "system") return;
    const calls = r.calls;
    const k = (r.toolCallId ? 1 : 0) | (calls !== undefined && calls.length > 0 ? 2 : 0) | (r.id ? 4 : 0);
    out.push(mirrorMessage(r, k));
    if (mirrorShapes[k] === undefined) keepShape(k);
  };
}

// One mirror message of each shape made so far, kept as long as the
// module: V8 drops the shapes (hidden classes) of objects at a full GC
// once no object has them, and deoptimizes the code that made them, so a
// host that deletes its sessions would have the next cold seed run the
// packer's loop unoptimized (see packerShape). They are made after a
// message of their shape: made beforehand, they did not keep the shapes
// that seeding then used.
const mirrorShapes = new Array(8);

function keepShape(k) {
  const calls = [{ id: "", name: "", arguments: "" }];
  mirrorShapes[k] = mirrorMessage({ role: "", content: "", id: "", toolCallId: "", calls }, k);
}

function packRecord(p, r, continues) {
  const { role, content, id, toolCallId, calls } = r;
  // The role byte (the module's wire.Role* constants).
  const code = role === "user" ? 0 : role === "assistant" ? 1 : role === "tool" ? 2 : role === "system" ? 3 : ROLE_OTHER;
  let flags = 0;
  if (content !== null) flags |= FLAG_CONTENT;
  if (id !== undefined) flags |= FLAG_ID;
  if (toolCallId !== undefined) flags |= FLAG_TOOL_CALL_ID;
  if (calls !== undefined) flags |= FLAG_TOOL_CALLS;
  if (continues) flags |= FLAG_CONTINUES;
  p.reserve(2);
  p.buf[p.pos++] = code;
  p.buf[p.pos++] = flags;
  if (code === ROLE_OTHER) p.string(role);
  if (content !== null) p.string(content);
  if (id !== undefined) p.string(id);
  if (toolCallId !== undefined) p.string(toolCallId);
  if (calls !== undefined) {
    p.uvarint(calls.length);
    for (const c of calls) {
      p.string(c.id);
      p.string(c.name);
      p.string(c.arguments);
    }
  }
}

// The flags of a record's single strings, in their order.
const TEXT_FLAGS = [FLAG_CONTENT, FLAG_ID, FLAG_TOOL_CALL_ID];

// PackedReader reads a packed history (docs/packed-history.md) from its
// header on, for packedCount, seedRefusal and callsClosedBefore: the one
// reader of the header, the varints and the records' fields. Bytes that
// are not a well-formed packed history read as -1 or false.
class PackedReader {
  constructor(b) {
    this.b = b;
    this.pos = 0;
    // The role and flags of the record head read last.
    this.role = 0;
    this.flags = 0;
  }

  // header reads the magic, the version and the message count, and
  // returns the count, or -1.
  header() {
    const b = this.b;
    if (b.length < 5 || b[0] !== PACK_MAGIC[0] || b[1] !== PACK_MAGIC[1] || b[2] !== PACK_MAGIC[2] || b[3] !== PACK_VERSION) return -1;
    this.pos = 4;
    return this.uvarint();
  }

  uvarint() {
    const b = this.b;
    const n = b.length;
    let v = 0;
    let scale = 1;
    for (let k = 0; k < 10 && this.pos < n; k++) {
      const c = b[this.pos++];
      v += (c & 0x7f) * scale;
      if (c < 0x80) return v;
      scale *= 0x80;
    }
    return -1;
  }

  // string skips a string and returns its length, or -1.
  string() {
    const len = this.uvarint();
    if (len < 0 || len > this.b.length - this.pos) return -1;
    this.pos += len;
    return len;
  }

  // head reads a record's role and flags (this.role, this.flags); false
  // when the bytes end first.
  head() {
    if (this.pos + 2 > this.b.length) return false;
    this.role = this.b[this.pos++];
    this.flags = this.b[this.pos++];
    return true;
  }

  // rest skips the rest of the record whose head was read last and
  // returns the bytes core counts of it (its content, id and
  // tool_call_id, and its calls' ids, names and arguments), or -1.
  rest() {
    const flags = this.flags;
    if (this.role === ROLE_OTHER && this.string() < 0) return -1;
    let size = 0;
    for (const f of TEXT_FLAGS) {
      if (flags & f) {
        const len = this.string();
        if (len < 0) return -1;
        size += len;
      }
    }
    if (flags & FLAG_TOOL_CALLS) {
      const calls = this.uvarint();
      if (calls < 0) return -1;
      for (let j = 0; j < calls * 3; j++) {
        const len = this.string();
        if (len < 0) return -1;
        size += len;
      }
    }
    return size;
  }
}

/**
 * The message count of a packed history (its session messages: a host
 * message whose tool results follow it counts as several), or -1 when
 * the header cannot be read.
 */
export function packedCount(b) {
  return new PackedReader(b).header();
}

/**
 * Measures a packed history as the module measures a seed (core counts a
 * message's id, content, tool_call_id and its calls' ids, names and
 * arguments, in bytes of UTF-8) and returns the first size refusal the
 * module would make of it: `{ index, message }`, index being the host's
 * message, or null when its sizes are within limits. The driver asks
 * before it copies a history larger than maxSeedBytes into the module's
 * memory, so that the refusal leaves the memory as it was.
 *
 * Bytes that are not a well-formed packed history give null: the module
 * refuses them itself, with the reason.
 *
 * @param {Uint8Array} b
 * @param {{maxSeedMessages: number, maxSeedBytes: number, maxMessageBytes: number}} limits
 * @returns {{index: number, message: string} | null}
 */
export function seedRefusal(b, limits) {
  const r = new PackedReader(b);
  const count = r.header();
  if (count < 0) return null;
  const tooMany = count > limits.maxSeedMessages;
  let host = -1;
  let total = 0;
  for (let i = 0; i < count; i++) {
    if (!r.head()) return null;
    if ((r.flags & FLAG_CONTINUES) === 0 || i === 0) host++;
    if (tooMany) {
      if (i === limits.maxSeedMessages) {
        return { index: host, message: `history has ${count} messages, more than maxSeedMessages (${limits.maxSeedMessages})` };
      }
    }
    const size = r.rest();
    if (size < 0) return null;
    if (tooMany) continue;
    if (size > limits.maxMessageBytes) {
      return { index: host, message: `message is ${size} bytes, more than maxMessageBytes (${limits.maxMessageBytes})` };
    }
    total += size;
    if (total > limits.maxSeedBytes) {
      return { index: host, message: `history exceeds maxSeedBytes (${limits.maxSeedBytes}) at this message` };
    }
  }
  return null;
}

/**
 * Reports, for a packed history, whether the tool calls of host message
 * j are followed by a user or an assistant message (which is where core
 * finds calls unanswered) before host message `at`: the calls of j's
 * last message that has calls. False for bytes that are not a
 * well-formed packed history.
 *
 * @param {Uint8Array} b
 * @param {number} j
 * @param {number} at
 * @returns {boolean}
 */
export function callsClosedBefore(b, j, at) {
  const r = new PackedReader(b);
  const count = r.header();
  if (count < 0) return false;
  let host = -1;
  let open = false; // j's calls are met, not yet followed
  for (let i = 0; i < count; i++) {
    if (!r.head()) return false;
    const role = r.role;
    const flags = r.flags;
    if ((flags & FLAG_CONTINUES) === 0 || i === 0) host++;
    if (host >= at) return false;
    if (host === j && role === ROLE_ASSISTANT && (flags & FLAG_TOOL_CALLS)) open = true;
    else if (open && (role === ROLE_USER || role === ROLE_ASSISTANT)) return true;
    if (r.rest() < 0) return false;
  }
  return false;
}
