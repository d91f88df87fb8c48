// A small browser implementation of `node:assert/strict`: the default export
// is assert.ok with the strict methods on it. Comparisons follow the strict
// mode: equal is Object.is, deepEqual compares prototypes, own enumerable
// keys, and the contents of arrays, typed arrays, Maps, Sets, Dates and
// RegExps.

/** AssertionError is what a failed assertion throws. */
export class AssertionError extends Error {
  constructor(message, { actual, expected, operator } = {}) {
    super(message);
    this.name = "AssertionError";
    this.code = "ERR_ASSERTION";
    this.actual = actual;
    this.expected = expected;
    this.operator = operator;
  }
}

function show(v) {
  try {
    if (typeof v === "string") return JSON.stringify(v.length > 300 ? v.slice(0, 300) + "…" : v);
    if (typeof v === "bigint") return `${v}n`;
    if (typeof v === "function") return `[Function ${v.name || "anonymous"}]`;
    if (v instanceof Error) return `${v.name}: ${v.message}`;
    const s = JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x));
    return s === undefined ? String(v) : s.length > 600 ? s.slice(0, 600) + "…" : s;
  } catch {
    return String(v);
  }
}

function failWith(message, detail, props) {
  if (message instanceof Error) throw message;
  throw new AssertionError(message === undefined ? detail : `${message}\n${detail}`, props);
}

function isDeepEqual(a, b, seen = new Map()) {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (seen.get(a) === b) return true;
  seen.set(a, b);
  if (a instanceof Date) return Object.is(a.getTime(), b.getTime());
  if (a instanceof RegExp) return String(a) === String(b);
  if (a instanceof Error && (a.name !== b.name || a.message !== b.message)) return false;
  if (ArrayBuffer.isView(a)) {
    if (a.length !== b.length || a.byteLength !== b.byteLength) return false;
    for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  }
  if (a instanceof Map) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !isDeepEqual(v, b.get(k), seen)) return false;
  }
  if (a instanceof Set) {
    if (a.size !== b.size) return false;
    for (const v of a) if (!b.has(v)) return false;
  }
  if (Array.isArray(a) && a.length !== b.length) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (ArrayBuffer.isView(a) && /^\d+$/.test(k)) continue;
    if (!isDeepEqual(a[k], b[k], seen)) return false;
  }
  return true;
}

// matches reports whether err satisfies a throws/rejects expectation.
function matches(err, expected, message) {
  if (expected === undefined) return;
  if (typeof expected === "function") {
    if (expected.prototype !== undefined && err instanceof expected) return;
    if (Error.isPrototypeOf(expected) || expected === Error) {
      failWith(message, `expected ${expected.name}, got ${show(err)}`, { actual: err, expected, operator: "throws" });
    }
    if (expected.call(undefined, err) === true) return;
    failWith(message, `the validation function rejected ${show(err)}`, { actual: err, expected, operator: "throws" });
  }
  if (expected instanceof RegExp) {
    if (expected.test(String(err))) return;
    failWith(message, `${show(err)} does not match ${expected}`, { actual: err, expected, operator: "throws" });
  }
  if (typeof expected === "object" && expected !== null) {
    for (const k of Object.keys(expected)) {
      const want = expected[k];
      const got = err == null ? undefined : err[k];
      if (want instanceof RegExp && typeof got === "string" ? want.test(got) : isDeepEqual(got, want)) continue;
      failWith(message, `property ${k} of ${show(err)}: got ${show(got)}, want ${show(want)}`, { actual: err, expected, operator: "throws" });
    }
  }
}

const NOTHING = Symbol("nothing");

function ok(value, message) {
  if (!value) failWith(message, `expected a truthy value, got ${show(value)}`, { actual: value, expected: true, operator: "==" });
}

const methods = {
  ok,
  equal(a, b, message) {
    if (!Object.is(a, b)) failWith(message, `expected ${show(a)} to equal ${show(b)}`, { actual: a, expected: b, operator: "strictEqual" });
  },
  notEqual(a, b, message) {
    if (Object.is(a, b)) failWith(message, `expected ${show(a)} not to equal ${show(b)}`, { actual: a, expected: b, operator: "notStrictEqual" });
  },
  deepEqual(a, b, message) {
    if (!isDeepEqual(a, b)) failWith(message, `expected deep equality\n  got:  ${show(a)}\n  want: ${show(b)}`, { actual: a, expected: b, operator: "deepStrictEqual" });
  },
  notDeepEqual(a, b, message) {
    if (isDeepEqual(a, b)) failWith(message, `expected ${show(a)} not to deep-equal ${show(b)}`, { actual: a, expected: b, operator: "notDeepStrictEqual" });
  },
  match(s, re, message) {
    if (typeof s !== "string" || !re.test(s)) failWith(message, `${show(s)} does not match ${re}`, { actual: s, expected: re, operator: "match" });
  },
  doesNotMatch(s, re, message) {
    if (typeof s !== "string" || re.test(s)) failWith(message, `${show(s)} matches ${re}`, { actual: s, expected: re, operator: "doesNotMatch" });
  },
  throws(fn, expected, message) {
    if (typeof expected === "string") [expected, message] = [undefined, expected];
    let err = NOTHING;
    try {
      fn();
    } catch (e) {
      err = e;
    }
    if (err === NOTHING) failWith(message, "missing expected exception", { operator: "throws" });
    matches(err, expected, message);
  },
  doesNotThrow(fn, message) {
    try {
      fn();
    } catch (e) {
      failWith(message, `got unwanted exception ${show(e)}`, { actual: e, operator: "doesNotThrow" });
    }
  },
  async rejects(p, expected, message) {
    if (typeof expected === "string") [expected, message] = [undefined, expected];
    let err = NOTHING;
    try {
      await (typeof p === "function" ? p() : p);
    } catch (e) {
      err = e;
    }
    if (err === NOTHING) failWith(message, "missing expected rejection", { operator: "rejects" });
    matches(err, expected, message);
  },
  async doesNotReject(p, message) {
    try {
      await (typeof p === "function" ? p() : p);
    } catch (e) {
      failWith(message, `got unwanted rejection ${show(e)}`, { actual: e, operator: "doesNotReject" });
    }
  },
  fail(message = "Failed") {
    failWith(message instanceof Error ? message : undefined, String(message), { operator: "fail" });
  },
  ifError(v) {
    if (v !== null && v !== undefined) throw v;
  },
};
methods.strictEqual = methods.equal;
methods.notStrictEqual = methods.notEqual;
methods.deepStrictEqual = methods.deepEqual;
methods.notDeepStrictEqual = methods.notDeepEqual;

/** assert(value, message) is assert.ok; the methods hang off it. */
const assert = Object.assign((value, message) => ok(value, message), methods, { AssertionError, strict: null });
assert.strict = assert;

export default assert;
export const {
  equal, notEqual, deepEqual, notDeepEqual, match, doesNotMatch, throws, doesNotThrow, rejects, doesNotReject, fail, ifError,
  strictEqual, notStrictEqual, deepStrictEqual, notDeepStrictEqual,
} = methods;
export { ok, assert as strict };
