// agentrt glue: the byte limits of a seed checked before its copy into
// the module's memory, with the refusal the module would give (core's
// order of checks). Held to the module's answer by
// js/test/seedcheck.test.mjs.

import { seedRefusal, packedCount, callsClosedBefore } from "./pack.js";
import { AgentrtError, isObject } from "./errors.js";

// standIn returns history's first n messages with every text of more
// than 8 characters (content, text and output strings, at any depth)
// replaced by a short token, the same for equal texts (texts maps them).
function standIn(history, n, texts) {
  const copy = (v, depth) => {
    if (depth > 8 || !isObject(v)) return v;
    if (Array.isArray(v)) return v.map((x) => copy(x, depth + 1));
    const o = {};
    for (const k of Object.keys(v)) {
      const x = v[k];
      if (typeof x === "string" && x.length > 8 && (k === "content" || k === "text" || k === "output")) {
        let t = texts.get(x);
        if (t === undefined) texts.set(x, t = "\u0001" + texts.size);
        o[k] = t;
      } else o[k] = copy(x, depth + 1);
    }
    return o;
  };
  return history.slice(0, n).map((m) => copy(m, 0));
}

/**
 * Refuses a packed history the module would refuse for its size, before
 * it is copied into the module's memory (limits: the module's;
 * checkHistory: its syscall/js checkHistory): with the module's error (code,
 * message and the host message's index). A history within
 * maxSeedBytes as packed is within it as the module counts it too, and
 * is not measured. When the host's history is an Array, the refusal is
 * the module's checkHistory's (core's order of checks: a problem of its
 * messages before a byte limit), as for maxSeedMessages.
 */
export function checkSeedSize(limits, checkHistory, packed, history, policy) {
if (packed.length <= limits.maxSeedBytes) return;
const r = seedRefusal(packed, limits);
if (r === null) return;
// Core refuses a count over maxSeedMessages before it reads a message.
if (Array.isArray(history)) {
  if (packedCount(packed) > limits.maxSeedMessages) countRefusal(checkHistory, standIn(history, history.length, new Map()), policy);
  else if (sizeRefusal(checkHistory, packed, history, policy, r.index)) return;
}
throw new AgentrtError("limit_exceeded", r.message, { index: r.index });
}

/**
 * Throws core's refusal of an Array history that comes before its byte
 * limit at host message `at`: core checks a message's sizes before the
 * rest of its checks, so the problems before it are those of the
 * messages before it, which the module checks without the oversize one
 * being copied (they are within maxSeedBytes). A block of calls the
 * prefix leaves unanswered at its end is answered, or not, after `at`:
 * not a problem core reaches. When repair would drop a message, the
 * bytes core counts are not the host's: the module checks it all
 * (the copy a refusal before it avoids), and true is returned when it
 * finds nothing to refuse. Returns false when the byte refusal is
 * core's first. The messages are checked as stand-ins whose long texts
 * are short tokens (equal texts, equal tokens): core's checks other
 * than sizes read no text but to compare it, and the copy stays small.
 */
function sizeRefusal(checkHistory, packed, history, policy, at) {
  const check = (h) => {
    try {
      const v = checkHistory(h);
      return isObject(v) && Array.isArray(v.problems) ? v.problems : null;
    } catch {
      return null;
    }
  };
  const repair = policy !== undefined && policy.repair === true;
  const texts = new Map();
  if (repair) {
    // The oversize message is one repair may drop too.
    const drops = check(standIn(history, at + 1, texts));
    if (drops === null) return false;
    if (drops.some((x) => x.repair !== null && x.repair !== "missing_tool_result")) {
      countRefusal(checkHistory, history, policy);
      return true;
    }
  }
  const problems = check(standIn(history, at, texts));
  if (problems === null) return false;
  const p = problems.find((x) => (!repair || x.repair === null) && (x.repair !== "missing_tool_result" || callsClosedBefore(packed, x.index, at)));
  if (p !== undefined) throw new AgentrtError(p.code, p.message, { index: p.index });
  return false;
}

/**
 * Refuses a host's Array history that packs to more than
 * maxSeedMessages messages as the module's checkHistory (core) does:
 * its first problem (with repair, the first repair does not fix), at
 * the host message's index, in core's order of checks. The module
 * would refuse the packed count first, at the index of a packed
 * message (a message with tool results packs as several). Returns when
 * core finds nothing to refuse: the module decides.
 */
function countRefusal(checkHistory, history, policy) {
  let v;
  try {
    v = checkHistory(history);
  } catch {
    return;
  }
  if (!isObject(v) || !Array.isArray(v.problems)) return;
  const repair = policy !== undefined && policy.repair === true;
  const p = v.problems.find((x) => !repair || x.repair === null);
  if (p !== undefined) throw new AgentrtError(p.code, p.message, { index: p.index });
}

/**
 * Refuses an Array history that packs to more than maxSeedMessages
 * messages with core's first problem, when it has one (countRefusal);
 * otherwise the module refuses the count.
 */
export function checkSeedCount(limits, checkHistory, packed, history, policy) {
  if (Array.isArray(history) && packedCount(packed) > limits.maxSeedMessages) countRefusal(checkHistory, history, policy);
}
