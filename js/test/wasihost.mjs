// A minimal WASI host of agentrt-wasi.wasm for the tests: node:wasi (in
// Node or Bun), the wire codecs of js/wire.js, a JavaScript model and
// JavaScript tools, and a mirror of each session (docs/wasi.md). It is
// test support, not part of the package.
import { WASI } from "node:wasi";
import { readFile, stat } from "node:fs/promises";
import { dist } from "./env.mjs";
import { packHistory, toModuleHistory } from "../history.js";
import {
  ACTION, KIND, Writer, frameKind, readAction, readRefused, readSession, readSessions, readStats,
  writeBegin, writeModelReply, writeToolResult,
} from "../wire.js";

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
  for (const b of [0x41, 0x52, 0x43, 1]) w.byte(b);
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
  for (const k of ["maxSessions", "maxMessagesPerSession", "maxSessionBytes", "maxSeedMessages", "maxSeedBytes", "maxMessageBytes"]) {
    w.uvarint(l[k] ?? 0);
  }
  return w.bytes();
}

/** A refused call, thrown with the module's code and index. */
export class Refused extends Error {
  constructor(e) {
    super(e.message);
    this.code = e.code;
    if (e.index !== undefined) this.index = e.index;
  }
}

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
    if (n < 0) throw new Refused(readRefused(this.output(-n)));
    return new Runtime(this, n, config);
  }
}

/** Throws Refused when out is a refused frame. */
export function check(out) {
  if (frameKind(out) === KIND.refused) throw new Refused(readRefused(out));
  return out;
}

const enc = new TextEncoder();

/** A runtime in an instance, driven with a JavaScript model and tools. */
export class Runtime {
  constructor(inst, num, config) {
    this.inst = inst;
    this.num = num;
    this.model = config.model; // undefined: the module's echo (config.echo)
    this.tools = new Map((config.tools ?? []).map((t) => [t.name, t]));
    this.mirrors = new Map(); // sessionId -> { generation, messages }
  }

  /** Runs one turn to its end: the result, or throws Refused. */
  async run(sessionId, input, { history, policy, runId, events } = {}) {
    const inst = this.inst;
    const b = { sessionId, input, runId, policy, events: events !== undefined };
    let hist;
    if (history !== undefined) {
      b.history = packHistory(history);
      if (this.model) {
        b.historyMirror = true;
        hist = toModuleHistory(history).filter((m) => m.role !== "system").map((m) => ({ ...m, content: m.content ?? "" }));
      }
    }
    const m = this.model && this.mirrors.get(sessionId);
    if (m) {
      b.mirrorGen = m.generation;
      b.mirrorLen = m.messages.length;
    }
    let out = inst.exchange("agentrt_begin", this.num, writeBegin(inst.w.reset(), b));
    for (;;) {
      const a = readAction(check(out));
      if (a.events && events) events.push(...a.events);
      switch (a.kind) {
        case ACTION.done: return a.result;
        case ACTION.failed: throw new Refused(a.error);
        case ACTION.model: {
          let mirror = this.mirrors.get(sessionId);
          if (a.adopt) mirror = { generation: a.generation, messages: hist };
          let messages;
          if (!mirror || mirror.generation !== a.generation || mirror.messages.length < a.from) {
            if (a.from !== 0 && a.from !== a.start) throw new Error("the module extended a mirror the host does not hold");
            if (a.from !== 0) {
              // The window alone: the host keeps no mirror of the session.
              this.mirrors.delete(sessionId);
              messages = a.tail;
            } else mirror = { generation: a.generation, messages: [] };
          }
          if (messages === undefined) {
            mirror.messages.length = a.from;
            for (const m of a.tail) mirror.messages.push(m);
            this.mirrors.set(sessionId, mirror);
            messages = mirror.messages.slice(a.start, a.end);
          }
          let frame;
          try {
            const reply = await this.model({ messages, step: a.step });
            frame = writeModelReply(inst.w.reset(), a.handle, { content: reply.content ?? "", toolCalls: reply.toolCalls ?? [] });
          } catch (err) {
            frame = writeModelReply(inst.w.reset(), a.handle, undefined, String(err?.message ?? err));
          }
          out = inst.exchange("agentrt_feed", this.num, frame);
          break;
        }
        case ACTION.tool: {
          const t = this.tools.get(a.call.name);
          let frame;
          try {
            frame = writeToolResult(inst.w.reset(), a.handle, false, String(await t.call(a.call)));
          } catch (err) {
            frame = writeToolResult(inst.w.reset(), a.handle, true, String(err?.message ?? err));
          }
          out = inst.exchange("agentrt_feed", this.num, frame);
          break;
        }
        default:
          out = inst.output(inst.x.agentrt_next(this.num, a.handle, 0));
      }
    }
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
