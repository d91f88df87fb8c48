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
