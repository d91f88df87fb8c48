// agentrt glue: the host's token counter (loadRuntime({ countTokens }),
// docs/adr/0018-context-window-by-tokens.md). Under a token budget the
// module asks for the counts its caches lack with a count action (wire
// action 6: the messages to count), and the driver answers with a counts
// frame (kind 0x07: the counts, or the counter's failure). The module
// caches the counts, so a message is counted once.

import { KIND } from "./wire.js";
import { text } from "./errors.js";

/** The largest count a counter may return (core.MaxTokenCount). */
export const MAX_TOKEN_COUNT = 2 ** 31 - 1;

/**
 * Marks a counter that takes the whole array of messages and answers
 * with { counts } or { error }, or a Promise of it (worker mode's
 * stand-in, which asks the page by message), as opposed to the host's
 * countTokens, which takes one message and returns a number. A
 * registered symbol: worker.js imports the glue through "./glue.js" only.
 */
export const COUNTS_ALL = Symbol.for("agentrt.countsAll");

/**
 * countWith counts messages with the host's countTokens, one call per
 * message in order: { counts } or, at the first failure, { error: {
 * code, message } } (invalid_argument, as core fails a bad count: a
 * throw, a non-number, a non-finite, fractional, negative or too large
 * number).
 * @param {(message: object) => number} countTokens
 * @param {object[]} messages
 */
export function countWith(countTokens, messages) {
  const counts = new Array(messages.length);
  for (let i = 0; i < messages.length; i++) {
    let n;
    try {
      n = countTokens(messages[i]);
    } catch (e) {
      return failure("countTokens failed: " + text(e));
    }
    if (typeof n !== "number") {
      return failure(`countTokens returned ${n === null ? "null" : typeof n === "object" && typeof n.then === "function" ? "a Promise" : "a " + typeof n}, not a number (it must be synchronous)`);
    }
    if (!Number.isInteger(n) || n < 0 || n > MAX_TOKEN_COUNT) {
      return failure(`countTokens returned ${n}; a count must be an integer from 0 to ${MAX_TOKEN_COUNT}`);
    }
    counts[i] = n;
  }
  return { counts };
}

function failure(message) {
  return { error: { code: "invalid_argument", message } };
}

/** The answer of a counter whose Promise rejected (worker mode: the page could not be asked). */
export function countRejected(reason) {
  return failure("countTokens failed: " + text(reason));
}

/**
 * counterOf returns the driver's counter for the config's countTokens:
 * messages => { counts } | { error } | Promise of it; null without one.
 */
export function counterOf(countTokens) {
  if (typeof countTokens !== "function") return null;
  if (countTokens[COUNTS_ALL] === true) return countTokens;
  return (messages) => countWith(countTokens, messages);
}

/**
 * Writes a counts frame for the turn with handle: r is { counts } or
 * { error: { code, message } } (docs/wire.md, "Counts").
 */
export function writeCounts(w, handle, r) {
  w.header(KIND.counts);
  w.uvarint(handle);
  if (r.error !== undefined) {
    w.byte(1);
    w.string(r.error.code);
    w.string(r.error.message);
    return w.bytes();
  }
  w.byte(0);
  w.uvarint(r.counts.length);
  for (const n of r.counts) w.uvarint(n);
  return w.bytes();
}
