// Shared setup of the glue suites: where the built module is, and small
// helpers. The suites run unchanged under node --test, bun test and
// deno test.
import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { compile } from "../glue.js";

/** The repository root. */
export const root = new URL("../../", import.meta.url);

/**
 * The directory holding agentrt.wasm and wasm_exec.js: $AGENTRT_DIST, or
 * dist/ at the repository root (`make build` writes it).
 */
export const dist = process.env.AGENTRT_DIST
  ? pathToFileURL(resolve(process.env.AGENTRT_DIST) + "/")
  : new URL("dist/", root);

/** The module's URL and the wasm_exec.js next to it. */
export const wasmURL = new URL("agentrt.wasm", dist);
export const wasmExecURL = new URL("wasm_exec.js", dist);

let compiled;

/** The module, compiled once per process. Fails with a hint when it is not built. */
export function compiledModule() {
  compiled ??= (async () => {
    try {
      await stat(wasmURL);
    } catch {
      throw new Error(`${wasmURL.pathname} is missing: run \`make build\` or set AGENTRT_DIST`);
    }
    return compile(await readFile(wasmURL));
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
