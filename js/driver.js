// agentrt glue: the driver, the host side of the wire (docs/wire.md).
// Turns are driven through the module's wasmexport functions, one export
// call per model or tool answer, with a mirror of each session's messages
// from which model requests are sliced.

import { packHistory as pack, readReply, PackMemo, PackScratch, mirrorInto } from "./history.js";
import {
  ACTION, KIND, Writer, writeBegin, writeModelReply, writeToolResult, writeDelta, readAction, readRefused,
} from "./wire.js";
import { AgentrtError, historyError, isObject, text, refusedError, timeoutError, abortError } from "./errors.js";
import { ModelRequest, ReplyRefused, checkPolicy, isThenable } from "./request.js";
import { QuickTurns } from "./quick.js";

const NO_TOOLS = Object.freeze([]);

// How many turns end between two prunings of the mirrors of sessions the
// module no longer holds (evicted).
const PRUNE_EVERY = 256;

/**
 * FastPath runs turns through the module's wasmexport functions: one
 * export call per model or tool answer, frames in linear memory, and a
 * mirror of each session's messages from which model requests are
 * sliced. See docs/adr/0007-js-boundary.md.
 */
export class FastPath {
  ex;
  #n;
  w = new Writer(4096);
  // The last history packed: a host that passes its whole history on
  // every turn has only its new messages encoded.
  #memo = new PackMemo();
  #memoSession = undefined;
  // The buffer other histories are packed into: begin copies the bytes
  // into its frame before anything packs again.
  #scratch = new PackScratch();
  modelFn;
  system;
  #tools = new Map();
  #specs = [];
  mirrors = new Map();
  #active = new Map(); // runId -> turn
  #waiting = new Map(); // sessionId -> [wake]
  #ended = 0;
  #listSessions;
  // busy counts the turns in flight per session; quick holds the quick
  // turns (docs/adr/0012-quick-turn.md).
  busy = new Map(); // sessionId -> turns in flight
  quick;

  constructor(exports, number, config, listSessions) {
    this.#listSessions = listSessions;
    if (!exports || typeof exports.agentrt_begin !== "function" || !(exports.mem instanceof WebAssembly.Memory) ||
      !Number.isInteger(number)) {
      throw new AgentrtError("load_failed", "agentrt: the module has no fast path (agentrt_begin)");
    }
    this.ex = exports;
    this.#n = number;
    this.modelFn = typeof config.model === "function" ? config.model : null;
    this.system = typeof config.systemPrompt === "string" ? config.systemPrompt : "";
    this.quick = new QuickTurns(this, exports, config);
    for (const t of config.tools ?? []) {
      this.#tools.set(t.name, t);
      const spec = { name: t.name, description: typeof t.description === "string" ? t.description : "" };
      let params = t.parameters;
      try {
        if (typeof params === "string") params = params === "" ? undefined : JSON.parse(params);
        else if (isObject(params)) params = JSON.parse(JSON.stringify(params));
        else params = undefined;
      } catch {
        params = undefined;
      }
      if (params !== undefined) spec.parameters = params;
      this.#specs.push(spec);
    }
  }

  /**
   * Every call into the module comes here first: a quick turn whose model
   * is running begins in the module now, as it would have before its
   * model was called, so that the call meets the module as it would
   * without quick turns.
   */
  enter() {
    if (this.quick.pending.length !== 0) this.quick.enter();
  }

  // call writes frame into the module's input buffer, calls fn and
  // returns the answer's bytes (valid until the next call).
  call(fn, frame) {
    if (this.quick.pending.length !== 0) {
      // Beginning the quick turns writes their frames over this one.
      frame = frame.slice();
      this.enter();
    }
    const ex = this.ex;
    const at = ex.agentrt_in(frame.length);
    new Uint8Array(ex.mem.buffer, at, frame.length).set(frame);
    return this.#out(fn(this.#n, frame.length));
  }

  #out(n) {
    return new Uint8Array(this.ex.mem.buffer, this.ex.agentrt_out(), n);
  }

  // action decodes an action frame, throwing a refusal as its error.
  action(bytes) {
    if (bytes.length > 4 && bytes[4] === KIND.refused) throw refusedError(readRefused(bytes));
    return readAction(bytes);
  }

  /** Begins a turn; throws (a refusal) or returns the turn to drive. */
  begin(sessionId, input, policy, history, withHistory, runId, inspect, onEvent) {
    policy = checkPolicy(policy);
    const mirror = this.mirrors.get(sessionId);
    let packed;
    let historyMirror;
    if (withHistory) {
      // A cold session's mirror is built while packing, and only where a
      // JavaScript model will be handed the messages.
      let onRecord;
      if (mirror === undefined && this.modelFn !== null && Array.isArray(history)) {
        onRecord = mirrorInto(historyMirror = []);
      }
      // The memo serves the session of the last history packed (a host
      // passing its history again). Another session's history is packed
      // plainly: remembering it costs more than a cold seed should, and
      // the memo starts with the session's next history.
      if (this.#memoSession === sessionId) packed = pack(history ?? [], historyError, onRecord, this.#memo);
      else {
        this.#memo.forget();
        packed = pack(history ?? [], historyError, onRecord, undefined, this.#scratch);
        this.#memoSession = sessionId;
      }
    }
    const frame = writeBegin(this.w.reset(), {
      sessionId, input, runId, history: packed, inspect, events: onEvent !== undefined,
      historyMirror: historyMirror !== undefined, policy,
      // A history the glue packed from an array holds only strings it
      // encoded itself: valid UTF-8 (docs/adr/0011-history-valid-flag.md).
      historyValid: packed !== undefined && packed !== history,
      mirrorGen: mirror ? mirror.gen : 0, mirrorLen: mirror ? mirror.msgs.length : 0,
    });
    const first = this.action(this.call(this.ex.agentrt_begin, frame));
    const turn = {
      handle: first.handle, runId, sessionId, onEvent, historyMirror, first,
      timeoutMs: policy ? policy.timeoutMs ?? 0 : 0, timer: undefined, expired: false,
      allowed: policy && Array.isArray(policy.allowedTools) ? policy.allowedTools : undefined,
      wake: null, interrupted: false, closed: false, request: undefined, gen: 0,
    };
    this.#active.set(runId, turn);
    this.busy.set(sessionId, (this.busy.get(sessionId) ?? 0) + 1);
    return turn;
  }

  // unbusy counts a turn of sessionId out. A count of 0 stays in the
  // map until the session goes (forget, prune): deleting and adding a
  // key on every turn costs V8 more than the whole check it serves.
  unbusy(sessionId) {
    const k = this.busy.get(sessionId);
    if (k !== undefined && k > 0) this.busy.set(sessionId, k - 1);
  }

  // #interrupt stops waiting for the turn's model, tool or session: it is
  // asked for its next action at once.
  #interrupt(turn) {
    turn.interrupted = true;
    if (turn.wake) turn.wake();
  }

  /** Cancels the run with runId through core (cancelRun); reports whether this call did. */
  cancel(core, runId) {
    this.enter();
    const ok = core.cancelRun(runId) === true;
    const turn = this.#active.get(runId);
    if (ok && turn) this.#interrupt(turn);
    return ok;
  }

  /** Drops the mirror of the session with id (it is being deleted). */
  forget(id) {
    this.mirrors.delete(id);
    if (this.busy.get(id) === 0) this.busy.delete(id);
  }

  /** Drops every mirror and stops waiting turns (the runtime closed). */
  close() {
    this.mirrors.clear();
    for (const turn of this.#active.values()) this.#interrupt(turn);
  }

  /** Aborts the signals of the model requests in flight (the instance died). */
  abortModels(reason) {
    for (const turn of this.#active.values()) if (turn.request) ModelRequest.stop(turn.request, reason);
  }

  // #prune drops the mirrors of sessions the module no longer holds.
  #prune() {
    if ((this.mirrors.size === 0 && this.busy.size === 0) || this.#listSessions === undefined) return;
    const live = new Set(this.#listSessions());
    for (const id of this.mirrors.keys()) if (!live.has(id)) this.mirrors.delete(id);
    for (const [id, k] of this.busy) if (k === 0 && !live.has(id)) this.busy.delete(id);
  }

  // #events hands a frame's events to the turn's listener, in the shape
  // of the module's events; run.completed carries the result.
  #events(turn, events, a) {
    for (const e of events) {
      const ev = { type: e.type, runId: turn.runId, sessionId: turn.sessionId, seq: e.seq };
      if (e.seed !== undefined) ev.seed = e.seed;
      if (e.type === "model.delta") {
        ev.delta = e.delta;
        ev.step = e.step;
      }
      if (e.toolCall !== undefined) ev.toolCall = e.toolCall;
      if (e.message !== undefined) ev.message = e.message;
      if (e.type === "run.completed" && a.kind === ACTION.done) ev.result = a.result;
      if (e.error !== undefined) ev.error = refusedError(e.error);
      turn.onEvent(ev);
    }
  }

  async #callTool(turn, a) {
    const call = a.call;
    const tool = this.#tools.get(call.name);
    let out;
    let failure;
    let args;
    if (call.arguments === "") args = {};
    else {
      try {
        args = JSON.parse(call.arguments);
      } catch (e) {
        failure = "arguments are not valid JSON: " + text(e);
      }
    }
    if (failure === undefined) {
      let v;
      try {
        v = tool.call(args, { runId: turn.runId, sessionId: turn.sessionId, toolCallId: call.id });
      } catch (e) {
        failure = "threw: " + text(e);
      }
      if (failure === undefined && isThenable(v)) {
        const s = await this.settle(turn, v);
        if (s === null) return this.resume(turn);
        if (s.ok) v = s.value;
        else failure = "rejected: " + text(s.reason);
      }
      if (turn.interrupted) return this.resume(turn);
      if (failure === undefined) {
        if (typeof v === "string") out = v;
        else if (v === undefined) out = "";
        else {
          try {
            out = JSON.stringify(v);
          } catch {
            out = undefined;
          }
          if (typeof out !== "string") failure = "the result cannot be converted to JSON";
        }
      }
    }
    const w = this.w.reset();
    const frame = failure === undefined ? writeToolResult(w, turn.handle, false, out) : writeToolResult(w, turn.handle, true, failure);
    return this.action(this.call(this.ex.agentrt_feed, frame));
  }

  /**
   * Drives the turn to its end: the Result, or a thrown error. A turn
   * whose model answers at once (not a thenable) and that calls no tool
   * ends within this call, which returns its Result; otherwise it returns
   * a Promise of it, from the first answer that has to be awaited on.
   */
  drive(turn) {
    let a = turn.first;
    turn.first = undefined;
    let ends = true;
    try {
      for (;;) {
        if (a.events !== undefined && turn.onEvent) this.#events(turn, a.events, a);
        switch (a.kind) {
          case ACTION.model: {
            this.#arm(turn);
            const next = this.#callModel(turn, a);
            if (next instanceof Promise) {
              ends = false;
              return this.driveAsync(turn, next);
            }
            a = next;
            continue;
          }
          case ACTION.done:
          case ACTION.failed:
            return this.#outcome(turn, a);
          case ACTION.wait:
          case ACTION.tool:
            ends = false;
            return this.driveAsync(turn, a);
          default:
            throw new AgentrtError("internal", `agentrt: unexpected action ${a.kind}`);
        }
      }
    } finally {
      if (ends) this.end(turn);
    }
  }

  // driveAsync is drive from an action, or a Promise of one, on. An
  // action is taken at once: a wait must be queued before the caller
  // returns, or a turn on its session that ends within the same call (a
  // model that answers at once) releases the session before the waiter
  // is queued, and nothing wakes it.
  async driveAsync(turn, next) {
    try {
      let a = next instanceof Promise ? await next : next;
      for (;;) {
        if (next !== a && a.events !== undefined && turn.onEvent) this.#events(turn, a.events, a);
        next = undefined;
        switch (a.kind) {
          case ACTION.wait:
            await this.#wait(turn);
            a = this.resume(turn);
            continue;
          case ACTION.model:
            this.#arm(turn);
            a = await this.#callModel(turn, a);
            continue;
          case ACTION.tool:
            this.#arm(turn);
            a = await this.#callTool(turn, a);
            continue;
          case ACTION.done:
          case ACTION.failed:
            return this.#outcome(turn, a);
          default:
            throw new AgentrtError("internal", `agentrt: unexpected action ${a.kind}`);
        }
      }
    } finally {
      this.end(turn);
    }
  }

  // #outcome ends a turn on its done or failed action, for both drive
  // loops: the Result, with the reply kept on the mirror, or the thrown
  // error, with the mirror dropped.
  #outcome(turn, a) {
    if (a.kind === ACTION.done) {
      this.#keepReply(turn, a.result);
      return a.result;
    }
    this.#dropMirror(turn);
    throw refusedError(a.error);
  }

  // #keepReply adds a completed turn's reply to the session's mirror when
  // the mirror holds everything before it: the module sends each message
  // once, in the next model action's tail, so without this the mirror
  // lags the session by the last reply, and a quick turn, which needs the
  // whole session, could not use it.
  #keepReply(turn, res) {
    const m = this.mirrors.get(turn.sessionId);
    if (m !== undefined && m.gen === turn.gen && m.msgs.length === res.messageCount - 1) m.msgs.push(res.reply);
  }

  // #dropMirror forgets the session's mirror after a turn that failed
  // once it had a model call: it rolled its messages back, which gives the
  // session a new generation. The next turn's model action sends the
  // whole session, as it would for the old mirror; a quick turn would
  // call its model on the old one first.
  #dropMirror(turn) {
    if (turn.gen !== 0) this.mirrors.delete(turn.sessionId);
  }

  // end takes an ended turn off the path.
  end(turn) {
    turn.closed = true;
    if (turn.timer !== undefined) clearTimeout(turn.timer);
    this.#active.delete(turn.runId);
    this.unbusy(turn.sessionId);
    this.#release(turn.sessionId);
    this.countEnded();
  }

  // countEnded counts a turn that ended, and prunes the mirrors every
  // PRUNE_EVERY turns.
  countEnded() {
    if (++this.#ended % PRUNE_EVERY === 0) this.#prune();
  }

  // resume asks for the next action after a wait or an interruption.
  resume(turn) {
    this.enter();
    turn.interrupted = false;
    return this.action(this.#out(this.ex.agentrt_next(this.#n, turn.handle, turn.expired ? 1 : 0)));
  }

  // #arm starts the policy's timeout once the turn holds its session.
  #arm(turn) {
    if (turn.timeoutMs > 0 && turn.timer === undefined) {
      turn.timer = setTimeout(() => {
        turn.expired = true;
        this.#interrupt(turn);
      }, turn.timeoutMs);
    }
  }

  // settle waits for v when it is a thenable, or until the turn is
  // interrupted: { ok, value } or { ok: false, reason }, or null when
  // interrupted.
  settle(turn, v) {
    return new Promise((resolve) => {
      turn.wake = () => resolve(null);
      v.then((value) => resolve({ ok: true, value }), (reason) => resolve({ ok: false, reason }));
    }).finally(() => { turn.wake = null; });
  }

  #wait(turn) {
    return new Promise((resolve) => {
      if (turn.interrupted) return resolve();
      turn.wake = resolve;
      let q = this.#waiting.get(turn.sessionId);
      if (!q) this.#waiting.set(turn.sessionId, q = []);
      q.push(resolve);
    }).finally(() => { turn.wake = null; });
  }

  // #release wakes the turns waiting for a session a turn has left.
  #release(sessionId) {
    const q = this.#waiting.get(sessionId);
    if (!q) return;
    this.#waiting.delete(sessionId);
    for (const wake of q) wake();
  }

  // messages applies a model action's window to the session's mirror and
  // returns the messages [start, end) as a new array.
  messages(turn, a) {
    if (a.generation === 0) {
      // The module sent the window alone: no mirror of this session.
      this.mirrors.delete(turn.sessionId);
      turn.historyMirror = undefined;
      return a.tail.slice();
    }
    let m = this.mirrors.get(turn.sessionId);
    if (a.adopt && turn.historyMirror !== undefined) m = { gen: a.generation, msgs: turn.historyMirror };
    turn.historyMirror = undefined;
    if (m === undefined || m.gen !== a.generation || m.msgs.length < a.from) {
      if (a.from !== 0) {
        // The module counted on a mirror this glue does not hold: use the
        // window if the tail covers it, and start the mirror again.
        this.mirrors.delete(turn.sessionId);
        if (a.from <= a.start) return a.tail.slice(a.start - a.from);
        throw new AgentrtError("internal", "agentrt: the session mirror is out of step with the module");
      }
      m = { gen: a.generation, msgs: [] };
    }
    const msgs = m.msgs;
    if (msgs.length !== a.from) msgs.length = a.from;
    for (const x of a.tail) msgs.push(x);
    m.gen = turn.gen = a.generation;
    this.mirrors.set(turn.sessionId, m);
    return msgs.slice(a.start, a.end);
  }

  // allowedSpecs returns the tool specs the turn's policy allows, as a
  // new array (the shared empty one when there are none).
  allowedSpecs(turn) {
    const allowed = turn.allowed;
    const specs = allowed === undefined ? this.#specs : this.#specs.filter((t) => allowed.includes(t.name));
    return specs.length === 0 ? NO_TOOLS : specs.slice();
  }

  // #callModel hands the model its request and feeds its reply. It
  // returns the next action, or a Promise of it when the model answered
  // with a thenable.
  #callModel(turn, a) {
    const handle = turn.handle;
    let answered = false;
    const req = new ModelRequest(turn.runId, turn.sessionId, this.system, this.messages(turn, a), this.allowedSpecs(turn), a.step,
      (t) => {
        if (answered || turn.closed || typeof t !== "string") return;
        const out = this.action(this.call(this.ex.agentrt_feed, writeDelta(this.w.reset(), handle, t)));
        if (out.events !== undefined && turn.onEvent) this.#events(turn, out.events, out);
      });
    let v;
    let failure;
    try {
      v = this.modelFn(req);
    } catch (e) {
      failure = "model threw: " + text(e);
    }
    if (failure === undefined && isThenable(v)) {
      turn.request = req;
      return this.settle(turn, v).then((s) => {
        turn.request = undefined;
        answered = true;
        if (s === null) {
          // Cancelled, timed out or closed while the model was working.
          ModelRequest.stop(req, turn.expired ? timeoutError() : abortError());
          return this.resume(turn);
        }
        return s.ok ? this.feedModel(turn, handle, s.value) : this.feedModel(turn, handle, undefined, "model rejected: " + text(s.reason));
      });
    }
    answered = true;
    return this.feedModel(turn, handle, v, failure);
  }

  // feedModel feeds the model's answer v, or its failure, to the turn
  // and returns the next action.
  feedModel(turn, handle, v, failure) {
    if (turn.interrupted) return this.resume(turn);
    let reply;
    if (failure === undefined) {
      try {
        reply = readReply(v, (message) => new ReplyRefused(message));
      } catch (e) {
        failure = e instanceof ReplyRefused ? e.message : "the model's reply cannot be read: " + text(e);
      }
    }
    const w = this.w.reset();
    const frame = failure === undefined ? writeModelReply(w, handle, reply) : writeModelReply(w, handle, undefined, failure);
    return this.action(this.call(this.ex.agentrt_feed, frame));
  }
}
