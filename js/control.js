// agentrt glue: the module's control exports (docs/wire.md, "Control
// exports"): cancel, revert, delete, session, sessions and check, each one
// export call with a frame in linear memory and an integer or a frame
// back.

import { KIND, readRefused, writeText, writeRevert, readSessions, readCheck, readSession } from "./wire.js";
import { refusedError } from "./errors.js";

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

  /** Cancels the run with runId in the module (agentrt_cancel); reports whether this call did. */
  cancelRun(runId) {
    return this.#call(this.#ex.agentrt_cancel, (w) => writeText(w, runId)) === 1;
  }

  /**
   * Takes the completed run runId off the session (agentrt_revert);
   * reports whether it did (when not, the module may have dropped the
   * session, which the host's history then seeds).
   */
  revertRun(sessionId, runId) {
    const n = this.#call(this.#ex.agentrt_revert, (w) => writeRevert(w, sessionId, runId));
    if (n < 0) this.#io.frame(-n);
    return n === 1;
  }

  /** Removes the session with id in the module (agentrt_delete); reports whether there was one. */
  deleteSession(id) {
    return this.#call(this.#ex.agentrt_delete, (w) => writeText(w, id)) === 1;
  }

  /**
   * A snapshot of the session with id (agentrt_session): { id,
   * messageCount, messages }, its messages frozen, or null when there is
   * none (the module refuses it with invalid_argument).
   */
  session(id) {
    const bytes = this.#io.out(this.#call(this.#ex.agentrt_session, (w) => writeText(w, id)));
    if (bytes.length > 4 && bytes[4] === KIND.refused) {
      const e = readRefused(bytes);
      if (e.code === "invalid_argument") return null;
      throw refusedError(e);
    }
    const { messages } = readSession(bytes);
    return { id, messageCount: messages.length, messages };
  }

  /** The ids of the module's sessions, sorted (agentrt_sessions). */
  listSessions() {
    this.#enter();
    return readSessions(this.#io.frame(this.#ex.agentrt_sessions(this.#n)));
  }

  /**
   * What seeding a packed history would meet (agentrt_check):
   * { ok, problems, awaiting }, as readCheck decodes it.
   */
  checkPacked(packed) {
    return readCheck(this.#io.frame(this.#call(this.#ex.agentrt_check, (w) => { w.raw(packed); return w.bytes(); })));
  }
}
