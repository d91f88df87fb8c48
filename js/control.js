// agentrt glue: the module's control exports (docs/wire.md, "Control
// exports"): the operations of the module's table, all through one export
// (agentrt_op), and session, sessions, stats and check, each one export
// call with a frame in linear memory and an integer or a frame back.

import { KIND, Writer, readRefused } from "./wire.js";
import { writeText, writeOp, writeConfig, readSessions, readCheck, checkResult, readSession, readStats, readValue } from "./controlframes.js";
import { AgentrtError, refusedError } from "./errors.js";
import { configText } from "./request.js";
import { packHistory } from "./pack.js";

// An empty packed history ("ARH", version 1, no messages): what
// checkArray sends for an Array the module refuses for its count alone.
const EMPTY_PACKED = new Uint8Array([0x41, 0x52, 0x48, 1, 0]);

/**
 * Creates a runtime in the module from the glue's config (systemPrompt,
 * model, tools, limits) with agentrt_create and a config frame of its
 * JSON text (request.js configText), and returns its number. A config the
 * module refuses throws its error (invalid_argument).
 */
export function createRuntime(exports, config) {
  if (typeof exports.agentrt_create !== "function" || typeof exports.agentrt_in !== "function") {
    throw new AgentrtError("load_failed", "agentrt: the module has no wire exports (agentrt_create)");
  }
  const frame = writeConfig(new Writer(256), configText(config));
  const at = exports.agentrt_in(frame.length);
  new Uint8Array(exports.mem.buffer, at, frame.length).set(frame);
  const n = exports.agentrt_create(frame.length);
  if (n < 0) throw refusedError(readRefused(new Uint8Array(exports.mem.buffer, exports.agentrt_out(), -n)));
  return n;
}

/**
 * WireIO writes frames into the module's input buffer and reads its output
 * frames, for one runtime number; Control calls the control exports with
 * it. The turn driver (js/driver.js) holds one of each.
 */
export class WireIO {
  #ex;
  #n;

  constructor(exports, number) {
    this.#ex = exports;
    this.#n = number;
  }

  /** Copies frame into the module's input buffer and calls fn(number, length). */
  put(fn, frame) {
    const ex = this.#ex;
    const at = ex.agentrt_in(frame.length);
    new Uint8Array(ex.mem.buffer, at, frame.length).set(frame);
    return fn(this.#n, frame.length);
  }

  /** The output frame of length n (valid until the next export call). */
  out(n) {
    return new Uint8Array(this.#ex.mem.buffer, this.#ex.agentrt_out(), n);
  }

  /** The output frame of length n, a refusal thrown as its error. */
  frame(n) {
    const bytes = this.out(n);
    if (bytes.length > 4 && bytes[4] === KIND.refused) throw refusedError(readRefused(bytes));
    return bytes;
  }
}

/** Control calls the module's control exports for one runtime. */
export class Control {
  #ex;
  #n;
  #io;
  #w;
  #enter;

  /**
   * io and w are the driver's; enter is called before each export call
   * (it begins the quick turns waiting, whose frames an export call would
   * otherwise overtake).
   */
  constructor(exports, number, io, w, enter) {
    this.#ex = exports;
    this.#n = number;
    this.#io = io;
    this.#w = w;
    this.#enter = enter;
  }

  // #call enters the quick turns and calls the control export fn with the
  // frame write(w) returns: its integer result.
  #call(fn, write) {
    this.#enter();
    return this.#io.put(fn, write(this.#w.reset()));
  }

  /**
   * Runs the operation name of the module's table of operations with args
   * (agentrt_op): its answer, null, a boolean or a string. A refusal
   * (invalid_argument: an operation the module does not have, or bad
   * arguments) is thrown as its error. Every operation of the table
   * comes through here: none has a method or a frame of its own.
   */
  op(name, args) {
    return readValue(this.#io.frame(this.#call(this.#ex.agentrt_op, (w) => writeOp(w, name, args))));
  }

  /**
   * A snapshot of the session with id (agentrt_session): { id,
   * messageCount, messages, head }, its messages frozen, or null when there is
   * none (the module refuses it with invalid_argument).
   */
  session(id) {
    const bytes = this.#io.out(this.#call(this.#ex.agentrt_session, (w) => writeText(w, id)));
    if (bytes.length > 4 && bytes[4] === KIND.refused) {
      const e = readRefused(bytes);
      if (e.code === "invalid_argument") return null;
      throw refusedError(e);
    }
    const { messages, head } = readSession(bytes);
    return { id, messageCount: messages.length, messages, head };
  }

  /** The ids of the module's sessions, sorted (agentrt_sessions). */
  listSessions() {
    this.#enter();
    return readSessions(this.#io.frame(this.#ex.agentrt_sessions(this.#n)));
  }

  /**
   * What seeding a packed history would meet (agentrt_check):
   * { ok, problems, awaiting }, as readCheck decodes it. hosts is 0 for
   * a history the host packed, or the count of host messages of the
   * Array it packs (checkArray).
   */
  checkPacked(packed, hosts = 0) {
    this.#enter();
    const w = this.#w.reset();
    w.raw(packed);
    const n = this.#io.put((rt, len) => this.#ex.agentrt_check(rt, len, hosts), w.bytes());
    return readCheck(this.#io.frame(n));
  }

  /**
   * What seeding an Array of host messages would meet, as the runtime
   * object's checkHistory reports it (checkResult): { ok, problems },
   * paused and awaiting when calls await approval. The Array is
   * packed (pack.js) and checked by agentrt_check, bounded by its count
   * of host messages; a message the packer cannot read is the report's
   * one problem (repair null), and an Array of more messages than
   * maxSeedMessages is refused by the module before any is read.
   */
  checkArray(history, maxSeedMessages) {
    const hosts = history.length;
    let packed = EMPTY_PACKED;
    if (hosts <= maxSeedMessages) {
      try {
        packed = packHistory(history);
      } catch (e) {
        if (!(e instanceof AgentrtError) || e.code !== "invalid_history") throw e;
        return { ok: false, problems: [{ code: e.code, index: e.index ?? -1, message: e.message, repair: null }] };
      }
    }
    return checkResult(this.checkPacked(packed, hosts));
  }

  /**
   * The runtime's counters (agentrt_stats): the stats object of the
   * module; gc collects garbage first, so that heapAlloc counts live
   * objects only.
   */
  stats(gc) {
    this.#enter();
    return readStats(this.#io.frame(this.#ex.agentrt_stats(this.#n, gc ? 1 : 0)));
  }

  /** Closes the runtime in the module (agentrt_close): its sessions go. */
  close() {
    this.#ex.agentrt_close(this.#n);
  }
}
