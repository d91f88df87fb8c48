// agentrt glue: the head of a conversation after a quick turn
// (docs/adr/0025-conversation-heads.md), computed here as core computes
// it (core/head.go), so that a warm turn with ifHead needs nothing more
// of the module than one without.
//
// A head is "h1-" and the 128 bits of the last link of a chain, in
// base64url. A link is four 32-bit lanes into which each message's role,
// content, tool call id and tool calls are folded, each string as its
// UTF-8 length and bytes in 32-bit words. The lanes are signed 32-bit
// integers here, which V8 holds unboxed, and Math.imul multiplies them
// as Go multiplies uint32s. The corpus of heads (testdata/edges/heads.json)
// and a comparison with the module's heads on random messages
// (js/test/head.test.mjs) hold this to core's answers.

import { encodeShort } from "./wire.js";

const PREFIX = "h1-";
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const B64_CODES = Uint8Array.from(B64, (c) => c.charCodeAt(0));
const B64_INDEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) B64_INDEX[B64_CODES[i]] = i;

// The lanes' multipliers (core's headMul).
const M0 = 0x239b961b, M1 = 0xab0e9789 | 0, M2 = 0x38b34ae5, M3 = 0xa1e38b93 | 0;
const MUL = Int32Array.of(M0, M1, M2, M3);

// The mixer's state: the four lanes and the count of words folded. A
// typed array, not variables of the module: a variable of the module
// holding a number is a slot V8 may box on every write.
const h = new Int32Array(4);
let n = 0;

// word folds one 32-bit word into lane n mod 4 (core's mixer.word).
function word(w) {
  const j = n & 3;
  const j1 = (j + 1) & 3;
  n++;
  let k = Math.imul(w, MUL[j]);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, MUL[j1]);
  let x = h[j] ^ k;
  x = (x << 13) | (x >>> 19);
  x = (x + h[j1]) | 0;
  h[j] = (Math.imul(x, 5) + 0xe6546b64) | 0;
}

let scratch = new Uint8Array(256);
const encoder = new TextEncoder();

// bytes folds b[0:len] as little-endian words, the last padded with zeros.
function bytes(b, len) {
  let i = 0;
  for (; i + 4 <= len; i += 4) word(b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24));
  if (i < len) {
    let w = 0;
    for (let k = 0; i < len; i++, k += 8) w |= b[i] << k;
    word(w);
  }
}

// str folds the UTF-8 length and bytes of s, a well-formed string as the
// module stores it (core's mixer.str).
function str(s) {
  const len = s.length;
  let ascii = true;
  for (let i = 0; i < len; i++) {
    if (s.charCodeAt(i) >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) {
    // The UTF-8 bytes of an ASCII string are its character codes.
    word(len);
    let i = 0;
    for (; i + 4 <= len; i += 4) {
      word(s.charCodeAt(i) | (s.charCodeAt(i + 1) << 8) | (s.charCodeAt(i + 2) << 16) | (s.charCodeAt(i + 3) << 24));
    }
    if (i < len) {
      let w = 0;
      for (let k = 0; i < len; i++, k += 8) w |= s.charCodeAt(i) << k;
      word(w);
    }
    return;
  }
  let b = scratch;
  let blen;
  if (len * 3 <= b.length) blen = encodeShort(s, b, 0);
  else {
    b = encoder.encode(s);
    blen = b.length;
  }
  word(blen);
  bytes(b, blen);
}

// fmix is MurmurHash3's finaliser of a 32-bit lane (core's fmix).
function fmix(x) {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b | 0);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35 | 0);
  return x ^ (x >>> 16);
}

/**
 * A link: the four lanes of a head, an Int32Array of 4. nextLink writes
 * into one the caller keeps, so that a quick turn allocates no link.
 * @typedef {Int32Array} Link
 */

const NO_CALLS = Object.freeze([]);

/**
 * Writes into `out` (and returns it) the link after `prev` for message m
 * ({ role, content, tool_call_id?, tool_calls? }, the module's shape,
 * strings well formed), as core's next does; `out` may be `prev`.
 * @param {Link} prev
 * @param {{ role: string, content?: string, tool_call_id?: string, tool_calls?: readonly { id: string, name: string, arguments: string }[] }} m
 * @param {Link} [out] a new link when not given
 * @returns {Link}
 */
export function nextLink(prev, m, out = new Int32Array(4)) {
  h[0] = prev[0];
  h[1] = prev[1];
  h[2] = prev[2];
  h[3] = prev[3];
  n = 0;
  str(m.role);
  str(m.content ?? "");
  str(m.tool_call_id ?? "");
  const calls = m.tool_calls ?? NO_CALLS;
  word(calls.length);
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i];
    str(c.id);
    str(c.name);
    str(c.arguments);
  }
  let a = h[0] ^ n, b = h[1], c = h[2], d = h[3];
  a = (a + b + c + d) | 0;
  b = (b + a) | 0;
  c = (c + a) | 0;
  d = (d + a) | 0;
  a = fmix(a);
  b = fmix(b);
  c = fmix(c);
  d = fmix(d);
  a = (a + b + c + d) | 0;
  out[0] = a;
  out[1] = b + a;
  out[2] = c + a;
  out[3] = d + a;
  return out;
}

/** h0's link: the head of no messages (core's headSeed); not to be written. */
export const SEED_LINK = Int32Array.of(0x9e3779b9 | 0, 0x7f4a7c15, 0xc2b2ae3d | 0, 0x27d4eb4f);

const raw = new Uint8Array(16);
// The character codes of a head, its prefix in place.
const out = new Uint8Array(25);
for (let i = 0; i < 3; i++) out[i] = PREFIX.charCodeAt(i);

function putLane(v, at) {
  raw[at] = v;
  raw[at + 1] = v >>> 8;
  raw[at + 2] = v >>> 16;
  raw[at + 3] = v >>> 24;
}

/** Returns the head string of link l. */
export function headText(l) {
  putLane(l[0], 0);
  putLane(l[1], 4);
  putLane(l[2], 8);
  putLane(l[3], 12);
  let k = 3;
  for (let i = 0; i < 15; i += 3) {
    const v = (raw[i] << 16) | (raw[i + 1] << 8) | raw[i + 2];
    out[k] = B64_CODES[v >>> 18];
    out[k + 1] = B64_CODES[(v >>> 12) & 63];
    out[k + 2] = B64_CODES[(v >>> 6) & 63];
    out[k + 3] = B64_CODES[v & 63];
    k += 4;
  }
  out[23] = B64_CODES[raw[15] >>> 2];
  out[24] = B64_CODES[(raw[15] << 4) & 63];
  // One call with the 25 codes as arguments: about a third of
  // TextDecoder's time on Node, a fifth of 22 concatenations'.
  const o = out;
  return String.fromCharCode(o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], o[8], o[9], o[10], o[11], o[12],
    o[13], o[14], o[15], o[16], o[17], o[18], o[19], o[20], o[21], o[22], o[23], o[24]);
}

function sextet(s, i) {
  const c = s.charCodeAt(i);
  return c < 128 ? B64_INDEX[c] : -1;
}

function lane(at) {
  return raw[at] | (raw[at + 1] << 8) | (raw[at + 2] << 16) | (raw[at + 3] << 24);
}

/**
 * Returns the link a head string names, or undefined for a string that
 * is not a head (core's ValidHead).
 * @param {string} head
 * @returns {Link | undefined}
 */
export function headLink(head) {
  if (typeof head !== "string" || head.length !== 25 || !head.startsWith(PREFIX)) return undefined;
  let k = 0;
  for (let i = 3; i < 23; i += 4) {
    const c0 = sextet(head, i), c1 = sextet(head, i + 1), c2 = sextet(head, i + 2), c3 = sextet(head, i + 3);
    if ((c0 | c1 | c2 | c3) < 0) return undefined;
    const v = (c0 << 18) | (c1 << 12) | (c2 << 6) | c3;
    raw[k++] = v >>> 16;
    raw[k++] = v >>> 8;
    raw[k++] = v;
  }
  const c0 = sextet(head, 23), c1 = sextet(head, 24);
  // The last character carries two bits and four zero bits.
  if (c0 < 0 || c1 < 0 || (c1 & 15) !== 0) return undefined;
  raw[15] = (c0 << 2) | (c1 >>> 4);
  return Int32Array.of(lane(0), lane(4), lane(8), lane(12));
}

/**
 * Returns the head of msgs after the conversation whose link is `from`
 * (h0's when undefined): the head core gives the same messages.
 * @param {Link | undefined} from
 * @param {readonly object[]} msgs
 */
export function headAfter(from, msgs) {
  const l = Int32Array.from(from ?? SEED_LINK);
  for (const m of msgs) nextLink(l, m, l);
  return headText(l);
}
