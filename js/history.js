// agentrt history: reads the messages a host passes, in every shape the
// runtime accepts, and packs them in the module's packed format.
//
// These are the rules of core/hostmsg (docs/contract.md, "Messages and
// host messages"), written once more in JavaScript because the glue must
// read the shapes before it packs them. The corpus in testdata/contract/
// holds both to the same results: same messages, same error code, index
// and message text.
// Imported by glue.js; it takes its short-string UTF-8 encoder from
// wire.js.

import { encodeShort } from "./wire.js";

/** Packed history format: magic "ARH" and version 1 (docs/packed-history.md). */
export const PACK_MAGIC = [0x41, 0x52, 0x48];
export const PACK_VERSION = 1;
const ROLE_OTHER = 255;
const FLAG_CONTENT = 1;
const FLAG_ID = 2;
const FLAG_TOOL_CALL_ID = 4;
const FLAG_TOOL_CALLS = 8;
const FLAG_CONTINUES = 16;

/** What absent or null tool-call arguments become. */
export const EMPTY_ARGUMENTS = "{}";

// Part types that carry no text for the model: OpenAI's image, audio and
// file parts, the AI SDK's reasoning, file, source and step parts; and
// every "data-" part.
const SKIPPED = new Set(["image_url", "input_audio", "file", "reasoning", "source-url", "source-document", "step-start"]);

/** Reports whether parts of type t are left out of a message. */
export function skippedPart(t) {
  return SKIPPED.has(t) || (t.length > 5 && t.startsWith("data-"));
}

const encoder = new TextEncoder();

function defaultFail(index, message) {
  const e = new Error(message);
  e.code = "invalid_history";
  e.index = index;
  return e;
}

function argError(name, what) {
  const err = new TypeError(`agentrt: ${name} ${what}`);
  err.code = "invalid_argument";
  return err;
}

function isObject(v) {
  return v !== null && typeof v === "object";
}

function isRecord(v) {
  return isObject(v) && !Array.isArray(v);
}

function nullish(v) {
  return v === undefined || v === null;
}

function optionalString(v) {
  return v === undefined || v === null || typeof v === "string";
}

// quote returns s in double quotes, cut to at most 64 bytes of UTF-8 at a
// character boundary (and "..." appended), as core/hostmsg cuts it.
function quote(s) {
  let bytes = 0;
  let i = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0);
    const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes + n > 64) return `"${s.slice(0, i)}..."`;
    bytes += n;
    i += ch.length;
  }
  return `"${s}"`;
}

// A reading failure: the message's text, without its index. read* functions
// throw it; the exported functions turn it into the caller's error.
class Refused {
  constructor(message) {
    this.message = message;
  }
}

/**
 * The one rule for tool-call arguments (and a tool part's input): a string
 * is kept as it is, null or absent is "{}", an object is its JSON text,
 * anything else is refused. at is the field's path for the message.
 */
function readArguments(a, at) {
  if (typeof a === "string") return a;
  if (nullish(a)) return EMPTY_ARGUMENTS;
  if (!isRecord(a)) throw new Refused(`${at} must be JSON text or an object`);
  let s;
  try {
    s = JSON.stringify(a);
  } catch {
    s = undefined;
  }
  if (typeof s !== "string") throw new Refused(`${at} cannot be converted to JSON`);
  return s;
}

// readCall reads one tool call, in the module's shape ({id, name,
// arguments}) or OpenAI's ({id, type: "function", function: {name,
// arguments}}). at is the call's path, "tool_calls[j]".
function readCall(c, at) {
  if (!isRecord(c)) throw new Refused(`${at} must be an object`);
  const id = c.id;
  if (!optionalString(id)) throw new Refused(`${at}.id must be a string`);
  let src = c;
  let path = at;
  if (!nullish(c.function)) {
    if (!nullish(c.type) && c.type !== "function") throw new Refused(`${at}.type must be "function"`);
    if (!isRecord(c.function)) throw new Refused(`${at}.function must be an object`);
    src = c.function;
    path = `${at}.function`;
  }
  const name = src.name;
  if (!optionalString(name)) throw new Refused(`${path}.name must be a string`);
  const args = readArguments(src.arguments, `${path}.arguments`);
  return { id: id ?? "", name: name ?? "", arguments: args };
}

// contentText joins the text of OpenAI content parts with nothing between
// them; refusal parts are text; skipped types are left out.
function contentText(parts, field) {
  let text = "";
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k];
    const at = `${field}[${k}]`;
    const t = partType(p, at);
    if (t === "text") {
      if (typeof p.text !== "string") throw new Refused(`${at}.text must be a string`);
      text += p.text;
    } else if (t === "refusal") {
      if (typeof p.refusal !== "string") throw new Refused(`${at}.refusal must be a string`);
      text += p.refusal;
    } else if (!skippedPart(t)) {
      throw new Refused(`${at}: unknown part type ${quote(t)}`);
    }
  }
  return text;
}

function partType(p, at) {
  if (!isRecord(p)) throw new Refused(`${at} must be an object`);
  if (typeof p.type !== "string") throw new Refused(`${at}.type must be a string`);
  return p.type;
}

function record(role, content, id, toolCallId, calls) {
  return { role, content, id, toolCallId, calls };
}

// uiMessage reads a Vercel AI SDK UIMessage ({id, role, parts}) into one
// or more records: text joins the current message; a tool part adds its
// call to it and queues its result, if it has one; text after tool parts
// starts a new assistant message. A call without a result (any state but
// output-available and output-error) is left for the module to refuse or
// repair, as core/hostmsg does.
function uiMessage(role, id, parts) {
  if (!Array.isArray(parts)) throw new Refused("parts must be an array");
  const out = [];
  let cur = record(role, "", id, undefined, undefined);
  let results = [];
  let tools = 0;
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k];
    const at = `parts[${k}]`;
    const t = partType(p, at);
    if (t === "text") {
      if (typeof p.text !== "string") throw new Refused(`${at}.text must be a string`);
      if (tools > 0) {
        out.push(cur, ...results);
        cur = record(role, "", id, undefined, undefined);
        results = [];
        tools = 0;
      }
      cur.content += p.text;
    } else if (t === "dynamic-tool" || (t.length > 5 && t.startsWith("tool-"))) {
      if (role !== "assistant") throw new Refused(`${at}: only assistant messages may carry tool parts`);
      let name;
      if (t === "dynamic-tool") {
        if (typeof p.toolName !== "string") throw new Refused(`${at}.toolName must be a string`);
        name = p.toolName;
      } else {
        name = t.slice(5);
      }
      const callId = p.toolCallId;
      if (!optionalString(callId)) throw new Refused(`${at}.toolCallId must be a string`);
      const args = readArguments(p.input, `${at}.input`);
      if (typeof p.state !== "string") throw new Refused(`${at}.state must be a string`);
      let content;
      if (p.state === "output-available") {
        const o = p.output;
        if (typeof o === "string") content = o;
        else if (nullish(o)) content = "";
        else {
          try {
            content = JSON.stringify(o);
          } catch {
            content = undefined;
          }
          if (typeof content !== "string") throw new Refused(`${at}.output cannot be converted to JSON`);
        }
      } else if (p.state === "output-error") {
        if (!optionalString(p.errorText)) throw new Refused(`${at}.errorText must be a string`);
        content = p.errorText ?? "";
      }
      (cur.calls ??= []).push({ id: callId ?? "", name, arguments: args });
      tools++;
      if (content !== undefined) results.push(record("tool", content, id, callId ?? "", undefined));
    } else if (!skippedPart(t)) {
      throw new Refused(`${at}: unknown part type ${quote(t)}`);
    }
  }
  out.push(cur, ...results);
  return out;
}

// The record readMessage fills for a message that yields one, reused so
// that packing a long history allocates nothing per message.
const read = record("", null, undefined, undefined, undefined);

/**
 * Reads one host message: returns `read` (filled in) for a message that
 * yields one session message, or an array of records for a UIMessage.
 * Throws Refused.
 */
function readMessage(m) {
  if (!isRecord(m)) throw new Refused("message must be an object");
  let role = m.role;
  if (typeof role !== "string") throw new Refused("role must be a string");
  if (role === "developer") role = "system";
  const id = m.id;
  if (!optionalString(id)) throw new Refused("id must be a string");
  let content = m.content;
  if (typeof content === "string") {
    // the common case
  } else if (nullish(content)) {
    if (!nullish(m.parts)) return uiMessage(role, id ?? undefined, m.parts);
    content = null;
  } else if (Array.isArray(content)) {
    content = contentText(content, "content");
  } else {
    throw new Refused("content must be a string, an array of parts, or null");
  }
  const toolCallId = m.tool_call_id ?? m.toolCallId;
  if (!optionalString(toolCallId)) throw new Refused("tool_call_id must be a string");
  const rawCalls = m.tool_calls ?? m.toolCalls;
  let calls;
  if (!nullish(rawCalls)) {
    if (!Array.isArray(rawCalls)) throw new Refused("tool_calls must be an array");
    calls = new Array(rawCalls.length);
    for (let j = 0; j < rawCalls.length; j++) calls[j] = readCall(rawCalls[j], `tool_calls[${j}]`);
  }
  read.role = role;
  read.content = content;
  read.id = typeof id === "string" ? id : undefined;
  read.toolCallId = typeof toolCallId === "string" ? toolCallId : undefined;
  read.calls = calls;
  return read;
}

// readAt reads history[index] (already fetched as m). A host's getter or
// Proxy trap may throw anything: that is a refusal of the message too.
function readAt(m, index, fail) {
  try {
    return readMessage(m);
  } catch (e) {
    if (e instanceof Refused) throw fail(index, e.message);
    throw fail(index, `history[${index}] cannot be read: ${describe(e)}`);
  }
}

// at returns history[i]; a Proxy may make even that throw.
function at(history, i, fail) {
  try {
    return history[i];
  } catch (e) {
    throw fail(i, `history[${i}] cannot be read: ${describe(e)}`);
  }
}

// lengthOf reads history.length, which a Proxy may make throw or lie.
function lengthOf(history, fail) {
  let n;
  try {
    n = history.length;
  } catch (e) {
    throw fail(-1, `history.length cannot be read: ${describe(e)}`);
  }
  if (!Number.isSafeInteger(n) || n < 0) throw fail(-1, "history.length is not a valid length");
  return n;
}

function describe(e) {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return "an exception";
  }
}

function moduleMessage(r) {
  const out = { role: r.role, content: r.content };
  if (r.id !== undefined) out.id = r.id;
  if (r.toolCallId !== undefined) out.tool_call_id = r.toolCallId;
  if (r.calls !== undefined) out.tool_calls = r.calls;
  return out;
}

/**
 * Converts a history to the module's message shape: the messages the
 * session will hold (system messages included), in order. A UIMessage may
 * yield several. Errors are `fail(index, message)`, index being the host
 * message's position in history.
 *
 * @param {ReadonlyArray<object>} history
 * @param {(index: number, message: string) => Error} [fail]
 * @returns {Array<object>} new objects; the input is not changed
 */
export function toModuleHistory(history, fail = defaultFail) {
  if (!Array.isArray(history)) throw argError("history", "must be an array");
  const n = lengthOf(history, fail);
  const out = [];
  for (let i = 0; i < n; i++) {
    const r = readAt(at(history, i, fail), i, fail);
    if (r === read) out.push(moduleMessage(r));
    else for (const x of r) out.push(moduleMessage(x));
  }
  return out;
}

/**
 * Reads a model's reply as core/hostmsg's Reply does: a string is the
 * content; an object is {content, tool_calls?} (toolCalls accepted too).
 * Returns {content, toolCalls} with each call {id, name, arguments}, or
 * throws `fail(message)`. The glue's fast path reads its model's replies
 * with it, where the module's syscall/js path reads them in Go.
 *
 * @param {unknown} v
 * @param {(message: string) => Error} [fail]
 */
export function readReply(v, fail = (message) => Object.assign(new Error(message), { code: "model_error" })) {
  try {
    if (typeof v === "string") return { content: v, toolCalls: [] };
    if (!isRecord(v)) throw new Refused("the model must answer an object { content, toolCalls? } or a string");
    let content = v.content;
    if (nullish(content)) content = "";
    else if (Array.isArray(content)) content = contentText(content, "reply.content");
    else if (typeof content !== "string") throw new Refused("reply.content must be a string, an array of parts, or null");
    const raw = v.tool_calls ?? v.toolCalls;
    const toolCalls = [];
    if (!nullish(raw)) {
      if (!Array.isArray(raw)) throw new Refused("reply.tool_calls must be an array");
      for (let j = 0; j < raw.length; j++) toolCalls.push(readCall(raw[j], `reply.tool_calls[${j}]`));
    }
    return { content, toolCalls };
  } catch (e) {
    if (e instanceof Refused) throw fail(e.message);
    throw e;
  }
}

// ---------------------------------------------------------------------------
// Packing

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
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  uvarint(v) {
    this.reserve(10);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
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
