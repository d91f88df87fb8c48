// agentrt glue: shared mode's page side (docs/adr/0026-shared-worker-mode.md).
// loadShared starts the worker entry (js/worker.js) as a module
// SharedWorker every tab of the origin shares, and speaks to it through
// its port with worker mode's RemoteRuntime (js/remote.js).

import { AgentrtError, argError, toError, describe } from "./errors.js";
import { toURL } from "./load.js";
import { connect, webWorkers } from "./remote.js";

// portWorker makes a SharedWorker's port look like the dedicated Worker a
// RemoteRuntime speaks to: its messages, the SharedWorker's errors, and a
// terminate that closes this page's port only (the worker serves the
// other pages).
function portWorker(sw) {
  const port = sw.port;
  return {
    postMessage: (m, transfer) => port.postMessage(m, transfer),
    addEventListener(type, fn) {
      if (type === "error") sw.addEventListener("error", fn);
      else {
        port.addEventListener(type, fn);
        port.start();
      }
    },
    removeEventListener(type, fn) {
      if (type === "error") sw.removeEventListener("error", fn);
      else port.removeEventListener(type, fn);
    },
    terminate: () => port.close(),
  };
}

/**
 * Starts shared mode (docs/adr/0026-shared-worker-mode.md): the runtime in
 * a module SharedWorker, one per origin and options.name (default
 * "agentrt"), whose glue imports options.agent once and runs its model and
 * tools. Where the host has no SharedWorker (older Android WebViews), a
 * dedicated worker runs the same agent for this page alone (mode
 * "worker"). Functions and the agent's other settings passed here are
 * refused with invalid_argument: they come from the agent module.
 *
 * @param {object} options loadRuntime's options, checked by checkConfig
 * @param {Function} Runtime the glue's Runtime class
 * @returns {Promise<RemoteRuntime>}
 */
export async function loadShared(options, Runtime) {
  let config, name;
  try {
    for (const k of ["model", "tools", "countTokens", "systemPrompt", "limits"]) {
      if (options[k] !== undefined) throw argError(`options.${k}`, 'cannot be passed with worker: "shared": the agent module exports it, and the worker runs it');
    }
    if (!webWorkers()) {
      throw argError("options.worker", "needs a Web Worker, and this host has none (Node, Deno, Bun and workerd run the module in the caller's thread: omit the option)");
    }
    if (options.onProgress !== undefined) throw argError("options.onProgress", 'is not called with worker: "shared": the worker may be loaded already');
    if (typeof options.agent !== "string" && !(options.agent instanceof URL)) {
      throw argError("options.agent", 'must be the URL of a module exporting { model, tools?, systemPrompt?, countTokens?, limits? } with worker: "shared"');
    }
    name = options.name === undefined ? "agentrt" : options.name;
    if (typeof name !== "string" || name === "") throw argError("options.name", "must be a non-empty string");
    const { wasm, wasmExec } = options;
    if (wasm !== undefined && typeof wasm !== "string" && !(wasm instanceof URL)) {
      throw argError("options.wasm", 'must be a URL or a string with worker: "shared"');
    }
    config = {
      agent: toURL(options.agent, "options.agent").href,
      wasm: wasm === undefined ? undefined : toURL(wasm, "options.wasm").href,
      wasmExec: wasmExec === undefined ? undefined : toURL(wasmExec, "options.wasmExec").href,
    };
  } catch (e) {
    throw toError(e, "invalid_argument");
  }
  let w, mode;
  try {
    // The literals bundlers recognise, as in loadRemote.
    if (typeof globalThis.SharedWorker === "function") {
      w = portWorker(new SharedWorker(new URL("./worker.js", import.meta.url), { type: "module", name }));
      mode = "shared";
    } else {
      w = new Worker(new URL("./worker.js", import.meta.url), { type: "module", name });
      mode = "worker";
    }
  } catch (e) {
    throw new AgentrtError("load_failed", `agentrt: cannot start the worker worker.js: ${describe(e)}`, { cause: e });
  }
  const rt = await connect(w, "worker.js", config, [], {}, Runtime, new Map(), mode);
  // A page that goes away stops its watches in the shared worker; its
  // runs go on (docs/glue.md, "Shared mode").
  if (mode === "shared" && typeof globalThis.addEventListener === "function") {
    globalThis.addEventListener("pagehide", (e) => { if (!e.persisted) rt.close(); });
  }
  return rt;
}
