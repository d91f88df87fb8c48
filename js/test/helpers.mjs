// Helpers the glue suites share. Unlike env.mjs, nothing here depends on
// the engine: browsers load this file as it is (the page's import map
// supplies node:test, node:assert/strict and ./env.mjs).
import { after } from "node:test";
import assert from "node:assert/strict";
import { loadRuntime, AgentrtError } from "../glue.js";
import { compiledModule, wasmExecURL } from "./env.mjs";

/**
 * runtimes registers an after hook on the calling suite file that closes
 * every runtime it saw, and returns three functions: load(config) opens a
 * runtime on the shared compiled module (config overrides wasm and
 * wasmExec), track(rt) adds a runtime opened some other way, and
 * release(rt) closes one at once and forgets it, so that a file opening a
 * runtime per test does not keep every instance's memory until its end (a
 * page of Chromium runs out of wasm memory).
 */
export function runtimes() {
  const opened = [];
  after(() => {
    // Dropped as closed, so that their instances' memory can be collected
    // before the next suite file of the same page loads its own.
    for (const rt of opened.splice(0)) rt.close();
  });
  const track = (rt) => {
    opened.push(rt);
    return rt;
  };
  const load = async (config = {}) => track(await loadRuntime({ wasm: await compiledModule(), wasmExec: wasmExecURL, ...config }));
  const release = (rt) => {
    const i = opened.indexOf(rt);
    if (i >= 0) opened.splice(i, 1);
    rt?.close();
  };
  return { load, track, release };
}

let rawSeq = 0;

/**
 * rawAPI starts a Go instance of module and returns its syscall/js API
 * object (globalThis.agentrt, under a name of its own), for the suites
 * that hold the glue to the module's raw API.
 */
export async function rawAPI(module) {
  const name = `agentrt_raw_${++rawSeq}`;
  if (typeof globalThis.Go !== "function") await import(wasmExecURL.href);
  const go = new globalThis.Go();
  go.env = { AGENTRT_GLOBAL: name };
  const instance = await WebAssembly.instantiate(module, go.importObject);
  go.run(instance);
  for (let i = 0; i < 100 && !globalThis[name]; i++) await new Promise((r) => setTimeout(r, 0));
  return globalThis[name];
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

/** Asserts the shape every rejection of the glue has: an AgentrtError (an Error) with code and, when given, index. */
export function isAgentrtError(err, code, index) {
  assert.ok(err instanceof AgentrtError, `${err} is an AgentrtError`);
  assert.ok(err instanceof Error);
  assert.equal(err.code, code, err.message);
  if (index !== undefined) assert.equal(err.index, index, err.message);
}

/**
 * Whether this host runs worker mode (docs/adr/0021-worker-mode.md): a
 * browser realm with Web Workers. Deno and Bun have a Worker class, but
 * worker mode refuses them like Node.
 */
export const hasWebWorker = typeof globalThis.Worker === "function" && !globalThis.Deno && !globalThis.Bun &&
  !globalThis.process?.versions?.node;

/**
 * The modes a table of Runtime behaviour runs in: "main", and "worker"
 * where the host has Web Workers. modeConfig(mode, config) is the
 * loadRuntime config of that mode.
 */
export const runtimeModes = hasWebWorker ? ["main", "worker"] : ["main"];

/** The loadRuntime config of mode ("main" or "worker") with config's fields. */
export function modeConfig(mode, config = {}) {
  return mode === "worker" ? { worker: true, ...config } : config;
}

/** The form of a conversation's head (docs/adr/0025-conversation-heads.md). */
export const HEAD_FORM = /^h1-[A-Za-z0-9_-]{22}$/;

/**
 * noHead returns a check or session answer without its head, after
 * checking the head's form when it has one: the suites that compare answers
 * with one that carries no head (history.js alone, an answer written out)
 * compare the rest.
 */
export function noHead(v) {
  if (v === null || typeof v !== "object" || !("head" in v)) return v;
  const { head, ...rest } = v;
  if (typeof head !== "string" || !HEAD_FORM.test(head)) throw new Error(`not a head: ${JSON.stringify(head)}`);
  return rest;
}

/**
 * countingExports makes the instances started meanwhile count their
 * agentrt_begin and agentrt_commit calls into counts (by name), where the
 * engine lets a test wrap an instance's exports (Node); elsewhere, and
 * in a worker, it counts nothing. It returns the function that stops
 * wrapping (the instances started meanwhile go on counting).
 */
export function countingExports(counts) {
  const d = Object.getOwnPropertyDescriptor(WebAssembly.Instance.prototype, "exports");
  if (!d || typeof d.get !== "function" || !d.configurable) return () => {};
  const wrapped = new WeakMap();
  Object.defineProperty(WebAssembly.Instance.prototype, "exports", {
    configurable: true,
    get() {
      const ex = d.get.call(this);
      let w = wrapped.get(ex);
      if (!w) {
        w = { ...ex };
        for (const name of ["agentrt_begin", "agentrt_commit"]) {
          const f = ex[name];
          if (typeof f === "function") w[name] = (...args) => { counts[name] = (counts[name] ?? 0) + 1; return f(...args); };
        }
        wrapped.set(ex, w);
      }
      return w;
    },
  });
  return () => Object.defineProperty(WebAssembly.Instance.prototype, "exports", d);
}
