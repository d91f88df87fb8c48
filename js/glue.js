// agentrt glue: the host API of the agentrt WebAssembly module.
//
// One dependency-free ES module for browsers, webviews, Node, Bun, Deno and
// workerd. It loads the module (and the Go toolchain's wasm_exec.js when the
// page has no `Go` yet), gives every runtime its own Go instance and global
// name, sends history in the packed format, and turns AbortSignals, event
// callbacks and async iteration into the module's calls. See docs/glue.md.
//
// Error convention: functions that return a Promise reject, functions that
// return a value throw, and what they reject or throw is always an
// AgentrtError with a stable `code` (bad arguments are TypeErrors that are
// AgentrtErrors too: their message names the argument, their `code` is
// "invalid_argument").
//
// This file is the package's entry: it re-exports the public API from the
// files that implement it, one concern each: errors.js (AgentrtError),
// load.js (compiling and starting instances), driver.js, mirror.js,
// quick.js and request.js (the host side of the wire), history.js and
// pack.js (reading and packing history) and runtime.js (Runtime).

import { toModuleHistory as readHistory } from "./history.js";
import { packHistory as pack } from "./pack.js";
import { historyError } from "./errors.js";

export { AgentrtError } from "./errors.js";
export { compile } from "./load.js";
export { loadRuntime } from "./runtime.js";

/**
 * Converts a history to the module's message shape, accepting every shape
 * of docs/contract.md: the module's own (snake_case or camelCase), OpenAI
 * chat messages and Vercel AI SDK UIMessages (one may yield several
 * messages). Refusals are AgentrtErrors (invalid_history, index).
 *
 * @param {ReadonlyArray<object>} history
 * @returns {Array<object>} new objects; the input is not changed
 */
export function toModuleHistory(history) {
  return readHistory(history, historyError);
}

/**
 * Encodes a history in the module's packed format (docs/packed-history.md),
 * accepting every shape toModuleHistory accepts. A Uint8Array is returned
 * as it is (it is taken to be packed already).
 *
 * @param {ReadonlyArray<object> | Uint8Array} history
 * @returns {Uint8Array}
 */
export function packHistory(history) {
  return pack(history, historyError);
}
