// A small browser implementation of the part of `node:test` the glue's
// suites use: describe, test (alias it), before, after, beforeEach,
// afterEach, and test.skip. Tests register into a tree; runner.js runs it.
// Tests and suites run one after another, in order, as node --test runs the
// tests of one file. Importing this file has no effect but defining them.

class Suite {
  constructor(name, parent) {
    this.name = name;
    this.parent = parent;
    this.children = [];
    this.hooks = { before: [], after: [], beforeEach: [], afterEach: [] };
  }
}

let root = new Suite("", null);
let current = root;

/** Starts a new file: what it registers next lands in a fresh tree, returned. */
export function beginFile(name) {
  root = new Suite(name, null);
  current = root;
  return root;
}

/** Registers a suite; fn runs at once and registers its tests. */
export function describe(name, fn) {
  const s = new Suite(String(name), current);
  current.children.push(s);
  const prev = current;
  current = s;
  try {
    fn();
  } finally {
    current = prev;
  }
}

/** Registers a test: fn may return a promise. */
export function test(name, options, fn) {
  if (typeof options === "function") {
    fn = options;
    options = {};
  }
  current.children.push({ name: String(name), fn, skip: Boolean(options && options.skip) });
}
test.skip = (name, fn) => test(name, { skip: true }, fn);
export const it = test;

export function before(fn) { current.hooks.before.push(fn); }
export function after(fn) { current.hooks.after.push(fn); }
export function beforeEach(fn) { current.hooks.beforeEach.push(fn); }
export function afterEach(fn) { current.hooks.afterEach.push(fn); }

export default test;

function withTimeout(p, ms, what) {
  let timer;
  return Promise.race([
    Promise.resolve(p).finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms); }),
  ]);
}

function eachHooks(suite, kind) {
  const chain = [];
  for (let s = suite; s; s = s.parent) chain.unshift(s);
  const list = chain.flatMap((s) => s.hooks[kind]);
  return kind === "afterEach" ? list.reverse() : list;
}

/**
 * run runs the tree of suite and calls report({ name, ok, skipped, error, ms })
 * for each test. A failing before hook fails every test of its suite.
 */
export async function run(suite, report, { timeout = 120_000, prefix = [] } = {}) {
  const path = suite.name ? [...prefix, suite.name] : prefix;
  let setupError = null;
  for (const h of suite.hooks.before) {
    try {
      await withTimeout(h(), timeout, "before hook");
    } catch (e) {
      setupError = e;
      break;
    }
  }
  for (const child of suite.children) {
    if (child instanceof Suite) {
      if (setupError) {
        report({ name: [...path, child.name].join(" > "), ok: false, error: `before hook failed: ${describeError(setupError)}`, ms: 0 });
        continue;
      }
      await run(child, report, { timeout, prefix: path });
      continue;
    }
    const name = [...path, child.name].join(" > ");
    if (child.skip) { report({ name, ok: true, skipped: true, ms: 0 }); continue; }
    if (setupError) { report({ name, ok: false, error: `before hook failed: ${describeError(setupError)}`, ms: 0 }); continue; }
    const t0 = performance.now();
    let error = null;
    try {
      for (const h of eachHooks(suite, "beforeEach")) await withTimeout(h(), timeout, "beforeEach hook");
      await withTimeout(child.fn({ name: child.name }), timeout, "test");
    } catch (e) {
      error = e;
    }
    try {
      for (const h of eachHooks(suite, "afterEach")) await withTimeout(h(), timeout, "afterEach hook");
    } catch (e) {
      error ??= e;
    }
    report({ name, ok: !error, error: error ? describeError(error) : "", ms: performance.now() - t0 });
  }
  for (const h of suite.hooks.after) {
    try {
      await withTimeout(h(), timeout, "after hook");
    } catch (e) {
      report({ name: [...path, "after hook"].join(" > "), ok: false, error: describeError(e), ms: 0 });
    }
  }
}

function describeError(e) {
  if (e && e.stack) return String(e.stack).includes(String(e.message)) ? String(e.stack) : `${e.message}\n${e.stack}`;
  return String(e);
}
