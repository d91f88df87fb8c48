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
// the handler of the request that asked for it. Go never calls back into
// JavaScript: each request pulls its own messages (agentrt.next) from its
// own handler, polling with its own timers while it waits, so no request's
// work is ever resolved in another request's context, and workerd never
// takes a waiting request for a hung one.
//
// A client that goes away (request.signal, the enable_request_signal
// compatibility flag) aborts its request: Go cancels the run and rolls its
// turn back. A Go instance that dies (out of memory or any fatal error)
// fails the requests it was serving with a typed error, and the next
// request starts a fresh instance.
//
// In the durable deployment (AGENTRT_SESSIONS=durable) the Worker routes
// /v1/sessions/{id} and everything under it to the Durable Object named
// by the id (AgentrtSession, bound as AGENTRT_SESSION) and holds no
// session itself. Each object starts its own Go instance, handing it the
// object's SQLite storage (sqlStore), and serves its one conversation
// with it the same way (docs/adr/0014-durable-sessions.md).
//
// Keep the names in sync with wasm/worker/bridge_js.go and
// wasm/worker/store_js.go.
import { DurableObject } from "cloudflare:workers";
import "./wasm_exec.js";
import wasmModule from "./worker.wasm";

// The durable deployment: the variable that chooses it, and the Durable
// Object namespace binding it routes sessions to (wrangler.jsonc).
const SESSIONS_VAR = "AGENTRT_SESSIONS";
const SESSION_BINDING = "AGENTRT_SESSION";
const SESSIONS_PREFIX = "/v1/sessions/";

// Polling of a request whose answer is not ready yet (its run waits
// behind another run of its session, or for another request's upstream
// answer): the interval doubles from POLL_MIN_MS to POLL_MAX_MS; Go is
// asked when it flagged the request ready, and every PULL_EVERY ticks in
// any case (which also lets Go fire its own timers).
const POLL_MIN_MS = 1;
const POLL_MAX_MS = 25;
const PULL_EVERY = 8;

// A streamed answer (Server-Sent Events) sends a comment line when it has
// had nothing to send for this long: writing is how workerd notices a
// client that went away, and the stream's cancel then aborts the run.
const HEARTBEAT_MS = 500;
const HEARTBEAT = new TextEncoder().encode(": keepalive\n\n");

// The header by which Go marks the head of a continued run's stream
// (durable.ContinuesHeader), lower-cased; removed before the client sees
// the head.
const CONTINUES_HEADER = "agentrt-run-continues";

const JSON_TYPE = "application/json; charset=utf-8";
const DIED_MESSAGE = "the worker's Go instance stopped (out of memory or another fatal error) while answering; "
  + "the next request starts a fresh instance, whose sessions are seeded from the history each request sends "
  + "(in the durable deployment, from the conversation's storage when a request sends none)";

let current = null; // Promise of the isolate's instance
let currentInst = null; // the instance, once started

/** Thrown when the Go instance has died. */
class InstanceDied extends Error {
  constructor() { super("agentrt: the Go instance has exited"); }
}

/** Thrown when the client went away. */
class ClientGone extends Error {
  constructor() { super("agentrt: the client went away"); }
}

/**
 * Starts one Go instance and resolves to its API once Go is ready.
 * @param {object} env the worker's environment (vars and secrets)
 * @param {WebAssembly.Module} [mod]
 * @param {object} [storage] a Durable Object's storage adapter (sqlStore):
 *   the instance then serves that object's one conversation
 */
export async function startInstance(env, mod = wasmModule, storage = undefined) {
  const binding = {};
  if (storage !== undefined) binding.storage = storage;
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
  try {
    const api = await Promise.race([
      readyPromise.then(() => binding.agentrt),
      exited.then(() => { throw new Error("agentrt: the Go module exited during start-up"); }),
    ]);
    // From here on a death is noticed through go.exited, which Go's exit
    // sets synchronously. The promise go.run returned belongs to this
    // request; settling it after this request ended would only make
    // workerd log a cross-request warning, so wasm_exec.js is told not to.
    go._resolveExitPromise = () => {};
    return { api, isAlive: () => !go.exited };
  } finally {
    delete globalThis.context;
  }
}

function instanceFor(env) {
  if (currentInst !== null && !currentInst.isAlive()) {
    current = null;
    currentInst = null;
  }
  if (current === null) {
    const p = startInstance(env).then((inst) => {
      if (current === p) currentInst = inst;
      return inst;
    });
    // A failed start is retried by the next request.
    p.catch(() => { if (current === p) current = null; });
    current = p;
  }
  return current;
}

/**
 * Calls into Go. A call that finds the instance dead, or kills it, throws
 * InstanceDied; an Error returned by the bridge (a bad call) is thrown.
 */
function call(inst, f) {
  if (!inst.isAlive()) throw new InstanceDied();
  let r;
  try {
    r = f(inst.api);
  } catch (e) {
    if (!inst.isAlive()) throw new InstanceDied();
    throw e;
  }
  if (!inst.isAlive()) throw new InstanceDied();
  if (r instanceof Error) throw r;
  return r;
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

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// pull returns the request's next message, waiting in this request's own
// context (its own timers) while Go has nothing for it.
async function pull(inst, x) {
  let wait = POLL_MIN_MS;
  let ticks = 0;
  for (;;) {
    if (x.gone) throw new ClientGone();
    x.state.ready = false;
    const m = call(inst, (api) => api.next(x.id));
    if (m === false) throw new ClientGone(); // aborted: Go dropped it
    if (m !== null) return m;
    do {
      await sleep(wait);
      wait = Math.min(wait * 2, POLL_MAX_MS);
      if (!inst.isAlive()) throw new InstanceDied();
      if (x.gone) throw new ClientGone();
    } while (!x.state.ready && ++ticks % PULL_EVERY !== 0);
  }
}

// upstreamFetch makes the fetch Go asked for and hands Go the answer as
// it arrives: the head, then each chunk of the body (a streamed answer,
// such as the model's Server-Sent Events, is read by Go as it comes).
// While it is in flight the handler keeps asking Go (when Go flagged the
// request, and every PULL_EVERY ticks) whether it still waits for it or
// reads its body: a run that timed out or was cancelled stops, and the
// fetch is then abandoned at once instead of holding the answer back.
async function upstreamFetch(inst, x, job) {
  const ac = new AbortController();
  const onAbort = () => ac.abort();
  if (x.signal) x.signal.addEventListener("abort", onAbort);
  let settled = false;
  const watch = async () => {
    let wait = POLL_MIN_MS;
    let ticks = 0;
    while (!settled) {
      await sleep(wait);
      wait = Math.min(wait * 2, POLL_MAX_MS);
      if (settled) return;
      if (x.gone || !inst.isAlive()) return onAbort();
      if (x.state.ready || ++ticks % PULL_EVERY === 0) {
        x.state.ready = false;
        if (!call(inst, (api) => api.waiting(x.id, job.fid))) return onAbort();
      }
    }
  };
  watch().catch(onAbort);
  let head = false;
  try {
    const res = await fetch(job.url, { method: job.method, headers: job.headers, body: job.body, signal: ac.signal });
    head = true;
    if (!call(inst, (api) => api.fetchHead(x.id, job.fid, res.status, [...res.headers]))) {
      onAbort();
      return;
    }
    if (res.body !== null) {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!call(inst, (api) => api.fetchBody(x.id, job.fid, value))) {
          onAbort(); // Go stopped reading
          return;
        }
      }
    }
    call(inst, (api) => api.fetchEnd(x.id, job.fid, ""));
  } catch (e) {
    if (e instanceof InstanceDied) throw e;
    const error = String(e && e.message || e) || "fetch failed";
    if (head) call(inst, (api) => api.fetchEnd(x.id, job.fid, error));
    else call(inst, (api) => api.fetched(x.id, job.fid, 0, [], null, error));
  } finally {
    settled = true;
    if (x.signal) x.signal.removeEventListener("abort", onAbort);
  }
}

// step returns the next message for the client. The fetches Go asks for
// on the way are made alongside, not awaited: the handler goes on
// pulling, so what Go sends while it reads a streamed answer (the
// model's deltas) reaches the client as it comes.
async function step(inst, x) {
  for (;;) {
    const m = await pull(inst, x);
    if (m.type !== "fetch") return m;
    upstreamFetch(inst, x, m).catch(() => {}); // a dead instance is noticed by pull
  }
}

// abort tells Go that request x is over before its answer was delivered.
function abort(inst, x) {
  if (x.gone) return;
  x.gone = true;
  try {
    if (inst.isAlive()) inst.api.abort(x.id);
  } catch {
    // The instance died meanwhile: nothing is left to cancel.
  }
}

/**
 * Answers one request with a started instance.
 * @param {{api: object, isAlive: () => boolean}} inst
 * @param {Request} request
 * @param {() => void} [onDone] called once the response is complete
 */
export async function handle(inst, request, onDone = () => {}) {
  const { body, length } = await readBody(request, inst.api.maxBodyBytes);
  const state = { ready: false };
  const id = call(inst, (api) => api.begin(request.method, request.url, [...request.headers], body, length, state));
  const x = { id, state, gone: false, signal: request.signal || undefined };
  let finished = false;
  const onAbort = () => {
    if (!finished) abort(inst, x);
  };
  const unlisten = () => {
    finished = true;
    if (x.signal) x.signal.removeEventListener("abort", onAbort);
  };
  if (x.signal) {
    if (x.signal.aborted) onAbort();
    else x.signal.addEventListener("abort", onAbort);
  }
  let first;
  try {
    first = await step(inst, x);
  } catch (e) {
    abort(inst, x);
    unlisten();
    onDone();
    throw e;
  }
  if (first.type === "response") {
    unlisten();
    onDone();
    return new Response(nullBody(first.status, request) ? null : first.body, { status: first.status, headers: first.headers });
  }
  // "head": a streamed body (Server-Sent Events) follows. A continued run
  // (policy.onDisconnect "continue", durable deployment) does not end
  // when its client leaves: the client's abort is ignored, and its
  // messages are pulled to the end (docs/adr/0020-resumable-runs.md).
  // The header stays for serve, which keeps the object's answer read.
  const headers = first.headers;
  const continues = headers.some(([k]) => k.toLowerCase() === CONTINUES_HEADER);
  if (continues) {
    unlisten();
    x.signal = undefined;
  }
  let pending = null; // the step a heartbeat interrupted
  // drain pulls a continued run's messages to its end once its client
  // has left, making the fetches it asks for.
  const drain = async () => {
    try {
      let m = pending !== null ? await pending : await step(inst, x);
      pending = null;
      while (m.type === "body") m = await step(inst, x);
    } catch {
      abort(inst, x);
    }
    onDone();
  };
  const stream = new ReadableStream({
    async pull(controller) {
      let m;
      try {
        if (pending === null) pending = step(inst, x);
        let timer;
        const beat = new Promise((resolve) => { timer = setTimeout(resolve, HEARTBEAT_MS, HEARTBEAT); });
        try {
          m = await Promise.race([pending, beat]);
        } finally {
          clearTimeout(timer);
        }
        if (m === HEARTBEAT) {
          controller.enqueue(HEARTBEAT);
          return;
        }
        pending = null;
      } catch (e) {
        pending = null;
        abort(inst, x);
        unlisten();
        onDone();
        if (e instanceof InstanceDied) {
          controller.enqueue(diedEvent());
          controller.close();
          return;
        }
        controller.error(e);
        return;
      }
      if (m.type === "body") controller.enqueue(m.body);
      else { unlisten(); controller.close(); onDone(); }
    },
    cancel() {
      if (continues) return void drain();
      abort(inst, x); unlisten(); onDone();
    },
  });
  return new Response(stream, { status: first.status, headers });
}

function nullBody(status, request) {
  return status === 204 || status === 304 || request.method === "HEAD";
}

const diedError = { code: "internal", message: DIED_MESSAGE };

// diedEvent ends a stream whose instance died: run.failed, as a run that
// failed any other way ends.
function diedEvent() {
  const data = JSON.stringify({ type: "run.failed", error: diedError });
  return new TextEncoder().encode(`event: run.failed\ndata: ${data}\n\n`);
}

function jsonError(status, code, message) {
  return new Response(JSON.stringify({ error: { code, message } }) + "\n",
    { status, headers: { "content-type": JSON_TYPE, "cache-control": "no-store" } });
}

/**
 * The session id of a /v1/sessions/{id}[/...] path, decoded as the HTTP
 * API decodes it; null for any other path, and undefined for an id that
 * is not percent-encoded UTF-8 (which decodeURIComponent refuses, such as
 * %FF or an encoded lone surrogate): no object can be named by it.
 * @param {string} pathname
 * @returns {string | null | undefined}
 */
export function sessionIdOf(pathname) {
  if (!pathname.startsWith(SESSIONS_PREFIX)) return null;
  const raw = pathname.slice(SESSIONS_PREFIX.length).split("/", 1)[0];
  if (raw === "") return null;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/**
 * The worker's fetch handler: answers request with the isolate's instance,
 * starting one when there is none or the last one died. In the durable
 * deployment a session's requests go to its Durable Object instead.
 * @param {Request} request
 * @param {object} env
 * @param {{waitUntil?: (p: Promise<unknown>) => void}} [ctx]
 */
export async function serve(request, env, ctx) {
  if (env && env[SESSIONS_VAR] === "durable") {
    const id = sessionIdOf(new URL(request.url).pathname);
    if (id === undefined) {
      // Served by the Worker's own instance, such a conversation would
      // be kept nowhere and share no lock with its other requests: it is
      // refused before anything runs.
      return jsonError(400, "invalid_argument", "the session id in the path is not percent-encoded UTF-8");
    }
    if (id !== null) {
      const ns = env[SESSION_BINDING];
      if (!ns || typeof ns.idFromName !== "function") {
        return jsonError(500, "internal", `the worker is misconfigured: ${SESSIONS_VAR} is "durable" but the Durable Object binding ${SESSION_BINDING} is missing`);
      }
      try {
        const res = await ns.get(ns.idFromName(id)).fetch(request);
        return continued(res, ctx);
      } catch (e) {
        // The object could not be reached, or failed (reset or
        // overloaded): a plain-text 500 from workerd would break the API.
        console.error("agentrt:", e && e.message || e);
        return jsonError(500, "internal", "the conversation's Durable Object failed to answer");
      }
    }
  }
  return answer(() => instanceFor(env), request, ctx);
}

/**
 * The answer of a Durable Object for the client: a continued run's
 * stream (marked by CONTINUES_HEADER, which is removed here) is also
 * read to its end after the client leaves, so that workerd does not
 * cancel the object's request, and with it the run, when the client
 * goes (docs/adr/0020-resumable-runs.md).
 * @param {Response} res
 * @param {{waitUntil?: (p: Promise<unknown>) => void}} [ctx]
 */
function continued(res, ctx) {
  if (!res.headers.has(CONTINUES_HEADER) || res.body === null) return res;
  const headers = new Headers(res.headers);
  headers.delete(CONTINUES_HEADER);
  const [client, kept] = res.body.tee();
  const drained = (async () => {
    const reader = kept.getReader();
    for (;;) {
      const { done } = await reader.read();
      if (done) return;
    }
  })().catch(() => {});
  if (ctx && typeof ctx.waitUntil === "function") ctx.waitUntil(drained);
  return new Response(client, { status: res.status, headers });
}

/**
 * Answers request with the instance getInstance resolves to, turning a
 * dead instance, a client that left or any failure into a JSON error.
 */
async function answer(getInstance, request, ctx) {
  let inst = null;
  let done = () => {};
  if (ctx && typeof ctx.waitUntil === "function") {
    // Keeps the request's context alive until its answer is complete, so
    // that request.signal's abort reaches the handler when the client
    // leaves (without it workerd may tear the context down first).
    ctx.waitUntil(new Promise((resolve) => { done = resolve; }));
  }
  try {
    inst = await getInstance();
    return await handle(inst, request, done);
  } catch (e) {
    done();
    if (e instanceof InstanceDied || (inst !== null && !inst.isAlive())) {
      console.error("agentrt:", DIED_MESSAGE);
      return jsonError(500, "internal", DIED_MESSAGE);
    }
    if (e instanceof ClientGone) {
      // Nobody reads this answer.
      return jsonError(503, "cancelled", "the client went away");
    }
    console.error("agentrt:", e && e.message || e);
    return jsonError(500, "internal", "the worker failed to answer");
  }
}

/**
 * The storage adapter a Durable Object's Go instance uses: the
 * conversation's messages, one row each, in the object's SQLite storage.
 * Every call is synchronous and throws on failure. Keep in sync with
 * wasm/worker/store_js.go.
 * @param {DurableObjectStorage} storage
 */
export function sqlStore(storage) {
  const sql = storage.sql;
  sql.exec("CREATE TABLE IF NOT EXISTS agentrt_messages (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)");
  return {
    stat() {
      const r = sql.exec("SELECT COUNT(*) AS n, COALESCE(SUM(LENGTH(CAST(body AS BLOB))), 0) AS b FROM agentrt_messages").one();
      return [r.n, r.b];
    },
    load() {
      // One string, the JSON array of the messages: one crossing into Go.
      return sql.exec("SELECT '[' || COALESCE(group_concat(body, ',' ORDER BY seq), '') || ']' AS a FROM agentrt_messages").one().a;
    },
    write(from, bodies) {
      return storage.transactionSync(() => {
        let rows = sql.exec("DELETE FROM agentrt_messages WHERE seq >= ?", from).rowsWritten;
        for (let i = 0; i < bodies.length; i++) {
          rows += sql.exec("INSERT INTO agentrt_messages (seq, body) VALUES (?, ?)", from + i, bodies[i]).rowsWritten;
        }
        return rows;
      });
    },
    clear() {
      sql.exec("DELETE FROM agentrt_messages");
    },
  };
}

/**
 * The Durable Object of one conversation (the durable deployment). It
 * starts its own Go instance on its first request, with its storage, and
 * starts another if that one dies; it holds no timer while idle, so it can
 * be evicted, and its next instance seeds the conversation from storage.
 */
export class AgentrtSession extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.current = null; // Promise of the object's instance
    this.inst = null; // the instance, once started
  }

  instance() {
    if (this.inst !== null && !this.inst.isAlive()) {
      this.current = null;
      this.inst = null;
    }
    if (this.current === null) {
      const p = startInstance(this.env, wasmModule, sqlStore(this.ctx.storage)).then((inst) => {
        if (this.current === p) this.inst = inst;
        return inst;
      });
      p.catch(() => { if (this.current === p) this.current = null; });
      this.current = p;
    }
    return this.current;
  }

  async fetch(request) {
    return answer(() => this.instance(), request, this.ctx);
  }
}

export default { fetch: serve };
