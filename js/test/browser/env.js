// The browser stand-in for ../env.mjs (the import map of index.html puts it
// in its place): the same exports, with the built module served at /dist/.
// run.mjs checks that it exports every name ../env.mjs exports.
import { compile } from "../../glue.js";

/** The server's root (this file is served at /js/test/browser/env.js), where dist/ is mounted. */
export const root = new URL("../../../", import.meta.url);

/** The served dist/ directory. */
export const dist = new URL("dist/", root);

/** The module's URL and the wasm_exec.js next to it. */
export const wasmURL = new URL("agentrt.wasm", dist);
export const wasmExecURL = new URL("wasm_exec.js", dist);

let compiled;

/** The module, compiled once per page. */
export function compiledModule() {
  compiled ??= (async () => {
    const res = await fetch(wasmURL);
    if (!res.ok) throw new Error(`${wasmURL.href}: HTTP ${res.status}: run \`make build\``);
    return compile(new Uint8Array(await res.arrayBuffer()));
  })();
  return compiled;
}

/** A promise with its resolve and reject functions. */
export function deferred() {
  let resolveFn, rejectFn;
  const promise = new Promise((res, rej) => {
    resolveFn = res;
    rejectFn = rej;
  });
  return { promise, resolve: resolveFn, reject: rejectFn };
}

/** The number the echo model reports: "(model received N messages)". */
export function received(reply) {
  const m = /\(model received (\d+) messages\)/.exec(reply.content);
  if (!m) throw new Error(`not an echo reply: ${JSON.stringify(reply.content)}`);
  return Number(m[1]);
}

/** Asserts that p rejects with an error whose code (and index) match; returns the error. */
export async function rejectsWith(assert, p, code, index) {
  let err;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof Error, `expected a rejection with code ${code}, got ${err === undefined ? "a fulfilment" : String(err)}`);
  assert.equal(err.code, code, `code of ${err.name}: ${err.message}`);
  if (index !== undefined) assert.equal(err.index, index, `index of ${err.message}`);
  return err;
}
