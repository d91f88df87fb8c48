// A minimal WASI host of agentrt-wasi.wasm for the tests: node:wasi (in
// Node or Bun), and the glue's driver (js/driver.js) for the host side of
// the wire, with a JavaScript model and JavaScript tools (docs/wasi.md).
// It is test support, not part of the package.
import { WASI } from "node:wasi";
import { readFile, stat } from "node:fs/promises";
import { dist } from "./env.mjs";
import { KIND, Writer, frameKind, readRefused } from "../wire.js";
import { readSession, readSessions, readStats } from "../controlframes.js";
import { AgentrtError, refusedError } from "../errors.js";
import { TurnDriver } from "../driver.js";
import { wellFormed } from "../request.js";

/** The WASI module's URL, next to agentrt.wasm. */
export const wasiURL = new URL("agentrt-wasi.wasm", dist);

let compiled;

/** The module, compiled once per process. */
export function compiledWasi() {
  compiled ??= (async () => {
    try {
      await stat(wasiURL);
    } catch {
      throw new Error(`${wasiURL.pathname} is missing: run \`make build\` or set AGENTRT_DIST`);
    }
    return WebAssembly.compile(await readFile(wasiURL));
  })();
  return compiled;
}

/** Writes a config frame (docs/wasi.md, "Config frame"). */
export function writeConfig(w, c = {}) {
  w.reset();
  for (const b of [0x41, 0x52, 0x43, 2]) w.byte(b);
  w.string(c.systemPrompt ?? "");
  w.byte(c.echo ? 1 : 0);
  const tools = c.tools ?? [];
  w.uvarint(tools.length);
  for (const t of tools) {
    w.string(t.name);
    w.string(t.description ?? "");
    w.string(t.parameters ?? "");
  }
  const l = c.limits ?? {};
  const keys = ["maxSessions", "maxMessagesPerSession", "maxSessionBytes", "maxSeedMessages", "maxSeedBytes", "maxMessageBytes", "maxTotalBytes"];
  w.uvarint(keys.length);
  for (const k of keys) w.uvarint(l[k] ?? 0);
  return w.bytes();
}

/** A refused call: the glue's AgentrtError, with the module's code and index. */
export const Refused = AgentrtError;

/** One instance of the module: a cold start. */
export class Instance {
  static async start() {
    const wasi = new WASI({ version: "preview1", args: [], env: {}, returnOnExit: true });
    const instance = await WebAssembly.instantiate(await compiledWasi(), { wasi_snapshot_preview1: wasi.wasiImport });
    if (typeof wasi.initialize === "function") wasi.initialize(instance);
    else {
      // Bun's node:wasi has no initialize(): hand it the memory and run
      // the reactor's _initialize directly, if it has one (the
      // pre-initialized agentrt-wasi.wasm has none; the plain build does).
      wasi.setMemory(instance.exports.memory);
      instance.exports._initialize?.();
    }
    return new Instance(instance);
  }

  constructor(instance) {
    this.x = instance.exports;
    this.w = new Writer(4096);
  }

  /** Copies frame into the module's input buffer. */
  write(frame) {
    const p = this.x.agentrt_in(frame.length);
    new Uint8Array(this.x.memory.buffer, p, frame.length).set(frame);
  }

  /** The output frame of length n, copied out of memory. */
  output(n) {
    if (n <= 0) return undefined;
    const p = this.x.agentrt_out();
    return new Uint8Array(this.x.memory.buffer, p, n).slice();
  }

  /** Writes frame, calls export name(rt, length), returns the output frame. */
  exchange(name, rt, frame) {
    this.write(frame);
    return this.output(this.x[name](rt, frame.length));
  }

  /** Creates a runtime; throws Refused for a config the module refuses. */
  runtime(config = {}) {
    const frame = writeConfig(this.w, config);
    this.write(frame);
    const n = this.x.agentrt_create(frame.length);
    if (n < 0) throw refusedError(readRefused(this.output(-n)));
    return new Runtime(this, n, config);
  }
}

/** Throws Refused when out is a refused frame. */
export function check(out) {
  if (frameKind(out) === KIND.refused) throw refusedError(readRefused(out));
  return out;
}

const enc = new TextEncoder();

/**
 * A runtime in an instance, driven by the glue's driver (js/driver.js):
 * the same host side of the wire as the glue's, over the WASI module's
 * exports, with a JavaScript model and tools (or the module's echo).
 */
export class Runtime {
  constructor(inst, num, config) {
    this.inst = inst;
    this.num = num;
    this.runs = 0;
    const x = inst.x;
    const exports = {
      mem: x.memory, agentrt_in: x.agentrt_in, agentrt_out: x.agentrt_out, agentrt_begin: x.agentrt_begin,
      agentrt_feed: x.agentrt_feed, agentrt_next: x.agentrt_next, agentrt_commit: x.agentrt_commit,
      // The control exports, the same in both modules.
      agentrt_op: x.agentrt_op,
      agentrt_session: x.agentrt_session, agentrt_sessions: x.agentrt_sessions, agentrt_check: x.agentrt_check,
    };
    const model = config.model;
    this.driver = new TurnDriver(exports, num, { model, tools: config.tools ?? [], systemPrompt: config.systemPrompt }, {});
  }

  /** Runs one turn to its end: the result, or throws an AgentrtError (Refused). */
  async run(sessionId, input, { history, policy, runId, events } = {}) {
    const driver = this.driver;
    sessionId = wellFormed(sessionId);
    const id = runId ?? `glue:${++this.runs}`;
    if (history === undefined && policy === undefined && events === undefined && runId === undefined &&
      driver.quick.quickable(sessionId, input)) {
      return driver.quick.run(sessionId, input, id);
    }
    const onEvent = events === undefined ? undefined : (e) => events.push(e);
    const turn = driver.begin({ sessionId, input, policy, history, withHistory: history !== undefined, runId: id, onEvent });
    return driver.drive(turn);
  }

  /** The session { generation, messages }, or null. */
  session(id) {
    const out = this.inst.exchange("agentrt_session", this.num, enc.encode(id));
    if (frameKind(out) === KIND.refused) return null;
    return readSession(out);
  }

  sessions() { return readSessions(check(this.inst.output(this.inst.x.agentrt_sessions(this.num)))); }

  stats() { return readStats(check(this.inst.output(this.inst.x.agentrt_stats(this.num, 0)))); }
}
