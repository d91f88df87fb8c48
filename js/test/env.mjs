// Shared setup of the glue suites: where the built module is. The suites
// run unchanged under node --test, bun test and deno test; helpers.mjs
// holds the helpers that do not depend on the engine.
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
