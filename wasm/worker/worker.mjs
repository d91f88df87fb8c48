// The Cloudflare Worker entry of agentrt.
//
// It instantiates the Go module ONCE per isolate and hands every request
// to that one instance, so the sessions it holds stay warm between
// requests. (The entry that github.com/syumai/workers generates starts a
// new Go instance for every request: Go's memory, and so every session,
// would be gone after each response, and each request would pay Go's
// start-up. docs/worker.md gives the measured difference.)
//
// Every I/O object is touched only here, in the context of the request it
// belongs to: the body is read before Go sees the request, the response is
// built from plain bytes, and an upstream fetch asked for by Go is made by
// the handler of the request that asked for it. Go never calls fetch or
// touches a stream itself, so concurrent requests cannot cross their I/O.
//
// Keep the names in sync with wasm/worker/bridge_js.go.
import "./wasm_exec.js";
import wasmModule from "./worker.wasm";

let current = null; // Promise of the isolate's instance

/**
 * Starts one Go instance and resolves to its API once Go is ready.
 * @param {object} env the worker's environment (vars and secrets)
 * @param {WebAssembly.Module} [mod]
 */
export async function startInstance(env, mod = wasmModule) {
  const binding = {};
  // github.com/syumai/workers reads globalThis.context during Go's init.
  globalThis.context = { env, binding };
  const go = new globalThis.Go();
  let ready;
  const readyPromise = new Promise((resolve) => { ready = resolve; });
  const instance = new WebAssembly.Instance(mod, {
    ...go.importObject,
    workers: { ready: () => ready() },
  });
  const exited = go.run(instance);
  let dead = false;
  const api = await Promise.race([
    readyPromise.then(() => binding.agentrt),
    exited.then(() => { throw new Error("agentrt: the Go module exited during start-up"); }),
  ]);
  delete globalThis.context;
  exited.finally(() => { dead = true; });
  return { api, isAlive: () => !dead };
}

function instanceFor(env) {
  if (current === null) {
    const p = startInstance(env);
    // A failed start is retried by the next request.
    p.catch(() => { if (current === p) current = null; });
    current = p;
  }
  return current;
}

async function readBody(request, max) {
  if (request.body === null) return { body: null, length: 0 };
  const declared = request.headers.get("content-length");
  const length = declared === null ? -1 : Number(declared);
  if (length > max) {
    // Refused by Go from the declared length, without reading the body.
    await request.body.cancel().catch(() => {});
    return { body: null, length };
  }
  const reader = request.body.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.byteLength;
    if (total > max) { // Go's MaxBytesReader answers 413
      await reader.cancel().catch(() => {});
      break;
    }
  }
  const body = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) { body.set(c, off); off += c.byteLength; }
  return { body, length };
}

async function upstreamFetch(api, id, job) {
  try {
    const res = await fetch(job.url, { method: job.method, headers: job.headers, body: job.body });
    const body = new Uint8Array(await res.arrayBuffer());
    api.fetched(id, job.fid, res.status, [...res.headers], body, "");
  } catch (e) {
    api.fetched(id, job.fid, 0, [], null, String(e && e.message || e));
  }
}

// step returns the next message for the client, doing the fetches Go asks
// for on the way.
async function step(api, id) {
  for (;;) {
    const m = await api.next(id);
    if (m.type !== "fetch") return m;
    await upstreamFetch(api, id, m);
  }
}

/**
 * Answers one request with a started instance.
 * @param {{api: object}} inst
 * @param {Request} request
 * @param {() => void} [onDone] called once the response is complete
 */
export async function handle(inst, request, onDone = () => {}) {
  const { api } = inst;
  const { body, length } = await readBody(request, api.maxBodyBytes);
  const id = api.begin(request.method, request.url, [...request.headers], body, length);
  const first = await step(api, id);
  if (first.type === "response") {
    onDone();
    return new Response(nullBody(first.status, request) ? null : first.body, { status: first.status, headers: first.headers });
  }
  // "head": a streamed body (Server-Sent Events) follows.
  const stream = new ReadableStream({
    async pull(controller) {
      const m = await step(api, id);
      if (m.type === "body") controller.enqueue(m.body);
      else { controller.close(); onDone(); }
    },
    cancel() { api.abort(id); onDone(); },
  });
  return new Response(stream, { status: first.status, headers: first.headers });
}

function nullBody(status, request) {
  return status === 204 || status === 304 || request.method === "HEAD";
}

function errorResponse(e) {
  console.error("agentrt:", e && e.message || e);
  return new Response(JSON.stringify({ error: { code: "internal", message: "the worker failed to answer" } }),
    { status: 500, headers: { "content-type": "application/json; charset=utf-8" } });
}

export default {
  async fetch(request, env) {
    try {
      let inst = await instanceFor(env);
      if (!inst.isAlive()) {
        current = null;
        inst = await instanceFor(env);
      }
      return await handle(inst, request);
    } catch (e) {
      return errorResponse(e);
    }
  },
};
