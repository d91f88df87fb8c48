// agentrt glue: the driver, the host side of the wire (docs/wire.md).
// Turns are driven through the module's wasmexport functions, one export
// call per model or tool answer, with a mirror of each session's messages
// (mirror.js) from which model requests are sliced.

import { readReply } from "./history.js";
import { packHistory as pack, PackMemo, PackScratch, mirrorInto } from "./pack.js";
import { checkSeedSize, checkSeedCount } from "./seedsize.js";
import {
  ACTION, KIND, Writer, writeBegin, writeCommit, writeModelReply, writeToolResult, writeDelta, writeLimitsQuery, readAction, readRefused,
  readLimits, writeApproval,
} from "./wire.js";
import { WireIO, Control } from "./control.js";
import { AgentrtError, historyError, isObject, text, refusedError, timeoutError, abortError } from "./errors.js";
import { ModelRequest, ReplyRefused, checkPolicy, adopt, utf8Over, utf8Bytes, replyOver, toolOver, deliverEvents } from "./request.js";
import { Tools } from "./tools.js";
import { QuickTurns } from "./quick.js";
import { counterOf, countRejected, writeCounts } from "./count.js";
import { askApproval } from "./approve.js";
import { Mirrors } from "./mirror.js";

/**
 * TurnDriver is the glue's one driver of a turn, the host side of the
 * wire: it runs turns through the module's wasmexport functions, one
 * export call per model or tool answer, frames in linear memory, and a
 * mirror of each session's messages from which model requests are
 * sliced. See docs/adr/0007-js-boundary.md and docs/wire.md.
 */
export class TurnDriver {
  #ex;
  #n;
  #w = new Writer(4096);
  // Frames in and out of linear memory, and the control exports.
  #io;
  #control;
  // The last history packed: a host that passes its whole history on
  // every turn has only its new messages encoded.
  #memo = new PackMemo();
  #memoSession = undefined;
  // The buffer other histories are packed into: begin copies the bytes
  // into its frame before anything packs again.
  #scratch = new PackScratch();
  #model;
  #system;
  #tools;
  // The host's mirror of each session's messages, by session id.
  #mirrors = new Mirrors();
  #active = new Map(); // runId -> turn
  #waiting = new Map(); // sessionId -> [wake]
  // dropped as a callback of the frame decoders.
  #onDropped = (d) => this.dropped(d);
  // settle, for the tools' calls.
  #settleFn = (turn, p) => this.settle(turn, p);
  // The limits in force, as the module reports them (wire.js readLimits):
  // sizes are checked against them before anything is copied.
  #limits;
  // #busy counts the turns in flight per session; #quick holds the quick
  // turns (docs/adr/0012-quick-turn.md).
  #busy = new Map(); // sessionId -> turns in flight
  #quick;
  // The host's token counter (js/count.js), or null.
  #counter;

  constructor(exports, number, config) {
    if (!exports || typeof exports.agentrt_begin !== "function" || typeof exports.agentrt_op !== "function" ||
      !(exports.mem instanceof WebAssembly.Memory) || !Number.isInteger(number)) {
      throw new AgentrtError("load_failed", "agentrt: the module has no wire exports (agentrt_begin)");
    }
    this.#ex = exports;
    this.#n = number;
    this.#io = new WireIO(exports, number);
    this.#control = new Control(exports, number, this.#io, this.#w, () => this.enter());
    this.#model = typeof config.model === "function" ? config.model : null;
    this.#system = typeof config.systemPrompt === "string" ? config.systemPrompt : "";
    this.#quick = new QuickTurns(this, exports);
    this.#limits = readLimits(this.call(exports.agentrt_feed, writeLimitsQuery(this.#w.reset())));
    this.#tools = new Tools(config.tools);
    this.#counter = counterOf(config.countTokens);
  }

  /** The limits in force, as the module reports them (wire.js readLimits). */
  get limits() {
    return this.#limits;
  }

  /** The host's model function, or null when the module answers model calls. */
  get model() {
    return this.#model;
  }

  /** The system prompt every model request carries. */
  get system() {
    return this.#system;
  }

  /** The quick turns of this driver (quick.js). */
  get quick() {
    return this.#quick;
  }

  /** The session mirrors (mirror.js), from which model requests are sliced. */
  get mirrors() {
    return this.#mirrors;
  }

  /** How many turns of the session with id are in flight. */
  inFlight(id) {
    return this.#busy.get(id) ?? 0;
  }

  /** Counts a turn of sessionId in; unbusy counts it out. */
  busy(sessionId) {
    this.#busy.set(sessionId, (this.#busy.get(sessionId) ?? 0) + 1);
  }

  /**
   * Commits a quick turn in one call (agentrt_commit, docs/wire.md):
   * the input and the reply's content on a mirror of generation gen and
   * length n. Returns the answer's bytes (valid until the next call). A
   * turn with ifHead commits without it (quick.js, #commit).
   */
  commit(sessionId, runId, input, gen, n, content) {
    return this.call(this.#ex.agentrt_commit, writeCommit(this.#w.reset(), sessionId, runId, input, gen, n, content));
  }

  /** Feeds the model's reply, read already, to the turn with handle and returns the next action. */
  feedReply(handle, reply) {
    return this.#feed(this.replyFrame(handle, reply));
  }

  /**
   * Every call into the module comes here first: a quick turn whose model
   * is running begins in the module now, as it would have before its
   * model was called, so that the call meets the module as it would
   * without quick turns.
   */
  enter() {
    if (this.#quick.waiting) this.#quick.enter();
  }

  // call writes frame into the module's input buffer, calls fn and
  // returns the answer's bytes (valid until the next call).
  call(fn, frame) {
    if (this.#quick.waiting) {
      // Beginning the quick turns writes their frames over this one.
      frame = frame.slice();
      this.enter();
    }
    return this.#io.out(this.#io.put(fn, frame));
  }

  // The control exports (js/control.js).
  /**
   * Runs the operation name of the module's table (cancelRun,
   * deleteSession, revertRun, ...) with args: its answer.
   */
  op(name, ...args) { return this.#control.op(name, args); }
  /** A snapshot of the session with id, or null when there is none. */
  session(id) { return this.#control.session(id); }
  /** The ids of the module's sessions, sorted. */
  listSessions() { return this.#control.listSessions(); }
  /** What seeding a packed history would meet: { ok, problems, awaiting }. */
  checkPacked(packed) { return this.#control.checkPacked(packed); }
  /** What seeding an Array of host messages would meet: { ok, problems }. */
  checkHistory(history) { return this.#control.checkArray(history, this.#limits.maxSeedMessages); }
  /** The runtime's counters; gc collects garbage first. */
  stats(gc) { return this.#control.stats(gc); }
  /** Closes the runtime in the module. */
  closeRuntime() { this.#control.close(); }

  // action decodes an action frame, throwing a refusal as its error, and
  // drops the mirrors of the sessions it reports dropped.
  action(bytes) {
    if (bytes.length > 4 && bytes[4] === KIND.refused) throw refusedError(readRefused(bytes));
    return readAction(bytes, this.#onDropped);
  }

  /**
   * Drops the mirrors of the sessions the module reported dropped
   * (evicted or deleted), or every mirror for true: the mirrors follow
   * the module's store, so the glue holds no more than its budget.
   */
  dropped(d) {
    if (d === true) {
      // The turns in flight keep their own mirrors (turn.mirror): the
      // module evicts only idle sessions, and a turn's next model action
      // counts on the mirror it was sent.
      this.#mirrors.clear();
      for (const [id, k] of this.#busy) if (k === 0) this.#busy.delete(id);
      return;
    }
    for (const id of d) this.forget(id);
  }

  /**
   * Refuses an input the module would refuse for its size, before it is
   * copied into the module's memory.
   */
  checkInput(input) {
    const max = this.#limits.maxMessageBytes;
    if (utf8Over(input, max)) {
      throw new AgentrtError("limit_exceeded", `input is ${utf8Bytes(input)} bytes, more than maxMessageBytes (${max})`);
    }
  }

  /**
   * Refuses a packed history the module would refuse for its size or its
   * count, before it is copied into the module's memory (js/seedsize.js).
   */
  checkSeed(packed, history, policy) {
    const check = (h) => this.checkHistory(h);
    checkSeedSize(this.#limits, check, packed, history, policy);
    checkSeedCount(this.#limits, check, packed, history, policy);
  }

  /**
   * The model-reply frame of a reply read by readReply; one over
   * maxMessageBytes is refused unsent (the run fails limit_exceeded).
   */
  replyFrame(handle, reply) {
    const max = this.#limits.maxMessageBytes;
    if (replyOver(reply, max)) return writeModelReply(this.#w.reset(), handle, undefined, `the model's reply is more than maxMessageBytes (${max})`, true);
    return writeModelReply(this.#w.reset(), handle, reply);
  }

  /**
   * Begins a turn; throws (a refusal) or returns the turn to drive. `t`
   * is { sessionId, input, runId, policy?, history?, withHistory?,
   * inspect?, onEvent?, approvals?, ifHead? }: one object, so that a field added later is a
   * name, not a ninth position.
   */
  begin(t) {
    const { sessionId, input, history, withHistory, runId, inspect, onEvent, approvals, ifHead } = t;
    const policy = checkPolicy(t.policy);
    this.checkInput(input);
    const mirror = this.#mirrors.get(sessionId);
    let packed;
    let historyMirror;
    if (withHistory) {
      // A cold session's mirror is built while packing, and only where a
      // JavaScript model will be handed the messages.
      let onRecord;
      if (mirror === undefined && this.#model !== null && Array.isArray(history)) {
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
      this.checkSeed(packed, history, policy);
    }
    const frame = writeBegin(this.#w.reset(), {
      sessionId, input, runId, history: packed, inspect,
      events: onEvent !== undefined || (policy !== undefined && (policy.maxContextTokens ?? 0) !== 0),
      historyMirror: historyMirror !== undefined, policy,
      // A history the glue packed from an array holds only strings it
      // encoded itself: valid UTF-8 (docs/adr/0011-history-valid-flag.md).
      historyValid: packed !== undefined && packed !== history,
      mirrorGen: mirror ? mirror.gen : 0, mirrorLen: mirror ? mirror.msgs.length : 0, approvals, ifHead,
      // A run with ifHead is a host keeping heads: its result has the
      // head (result.head). Other runs, the warm turns among them, ask
      // the module for none, so they cost what they did.
      wantHead: ifHead !== undefined,
    });
    const first = this.action(this.call(this.#ex.agentrt_begin, frame));
    const turn = {
      handle: first.handle, runId, sessionId, onEvent, historyMirror, first,
      timeoutMs: policy ? policy.timeoutMs ?? 0 : 0, timer: undefined, expired: false,
      allowed: policy && Array.isArray(policy.allowedTools) ? policy.allowedTools : undefined,
      wake: null, interrupted: false, closed: false, request: undefined, gen: 0, open: true,
      // mirror is the mirror the module counts on for this turn: the one
      // begin described, then the one each model action extended. It is
      // the session's mirror in this.#mirrors until the session is
      // forgotten (detached): a turn on a removed or reverted session
      // goes on with its own, and leaves the map to the session's next
      // turns.
      mirror, detached: false,
      // context is the last model.context event's (policy.maxContextTokens).
      context: undefined,
    };
    this.#active.set(runId, turn);
    this.busy(sessionId);
    return turn;
  }

  // unbusy counts a turn of sessionId out. A count of 0 stays in the
  // map until the session goes (forget, dropped): deleting and adding a
  // key on every turn costs V8 more than the whole check it serves.
  unbusy(sessionId) {
    const k = this.#busy.get(sessionId);
    if (k !== undefined && k > 0) this.#busy.set(sessionId, k - 1);
  }

  // #interrupt stops waiting for the turn's model, tool or session: it is
  // asked for its next action at once.
  #interrupt(turn) {
    turn.interrupted = true;
    if (turn.wake) turn.wake();
  }

  /** Cancels the run with runId (cancelRun) and wakes its turn; reports whether this call did. */
  cancel(runId) {
    const ok = this.op("cancelRun", runId);
    const turn = this.#active.get(runId);
    if (ok && turn) this.#interrupt(turn);
    return ok;
  }

  /**
   * Drops the mirror of the session with id (it is being deleted or
   * reverted, or the module dropped it). A turn in flight on it keeps its
   * own mirror, which the module still counts on, but no longer shares
   * it: the next turn on id starts from no mirror.
   */
  forget(id) {
    this.#mirrors.delete(id);
    const k = this.#busy.get(id);
    if (k === 0) this.#busy.delete(id);
    else if (k !== undefined) for (const turn of this.#active.values()) if (turn.sessionId === id) turn.detached = true;
  }

  /** Drops every mirror and stops waiting turns (the runtime closed). */
  close() {
    this.#mirrors.clear();
    for (const turn of this.#active.values()) this.#interrupt(turn);
  }

  /** Aborts the signals of the model requests in flight (the instance died). */
  abortModels(reason) {
    for (const turn of this.#active.values()) if (turn.request) ModelRequest.stop(turn.request, reason);
  }

  // #callTool calls the tool the action names and feeds its answer;
  // it returns the next action.
  async #callTool(turn, a) {
    const r = await this.#tools.call(turn, a.call, this.#settleFn);
    if (r === null) return this.resume(turn);
    const w = this.#w.reset();
    let frame;
    if (r.out !== undefined && toolOver(r.out, a.call.id, this.#limits.maxMessageBytes)) {
      // The module would fail the turn for this output once copied: it is
      // told so unsent (oversize), and fails it as it would have.
      frame = writeToolResult(w, turn.handle, true, "", true);
    } else {
      frame = r.failure === undefined ? writeToolResult(w, turn.handle, false, r.out) : writeToolResult(w, turn.handle, true, r.failure);
    }
    return this.#feed(frame);
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
        if (a.events !== undefined) deliverEvents(turn, a.events, a);
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
          case ACTION.count: {
            const next = this.#count(turn, a);
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
          case ACTION.approve:
            ends = false;
            return this.driveAsync(turn, a);
          default:
            throw new AgentrtError("internal", `agentrt: unexpected action ${a.kind}`);
        }
      }
    } finally {
      if (ends) this.#finish(turn);
    }
  }

  // driveFrom drives the turn on from first(), which answers the call the
  // turn has out (a quick turn's model, called before the turn began),
  // with the same ends as drive.
  driveFrom(turn, first) {
    let next;
    try {
      next = first();
    } catch (e) {
      this.#finish(turn);
      throw e;
    }
    if (next instanceof Promise) return this.driveAsync(turn, next);
    turn.first = next;
    return this.drive(turn);
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
        if (next !== a && a.events !== undefined) deliverEvents(turn, a.events, a);
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
          case ACTION.count:
            a = await this.#count(turn, a);
            continue;
          case ACTION.approve: {
            // Ask the tool's needsApproval (js/approve.js).
            this.#arm(turn);
            const r = await askApproval(this.#tools.get(a.call.name), turn, a.call, this.#settleFn);
            a = r === null ? this.resume(turn) : this.#feed(writeApproval(this.#w.reset(), turn.handle, r));
            continue;
          }
          case ACTION.done:
          case ACTION.failed:
            return this.#outcome(turn, a);
          default:
            throw new AgentrtError("internal", `agentrt: unexpected action ${a.kind}`);
        }
      }
    } finally {
      this.#finish(turn);
    }
  }

  // #finish ends the turn on every way out of the drive loops: a turn the
  // module has not ended (a throw in the driver, a refused frame) is
  // abandoned first, so that no exit leaves it holding its session.
  #finish(turn) {
    if (turn.open) this.#abandon(turn);
    this.end(turn);
  }

  // #abandon ends in the module a turn its driver gives up on: it
  // cancels the run and drains it (a model or tool call asked for again
  // is answered with a failure), so that the module rolls it back and
  // frees its session. A turn the module completed meanwhile is reverted:
  // its host never receives the Result.
  #abandon(turn) {
    turn.open = false;
    try {
      this.op("cancelRun", turn.runId);
      let a = this.action(this.#io.out(this.#ex.agentrt_next(this.#n, turn.handle, 0)));
      for (let i = 0; i < 16; i++) {
        if (a.kind === ACTION.done) {
          this.op("revertRun", turn.sessionId, turn.runId);
          break;
        }
        if (a.kind === ACTION.failed) break;
        const w = this.#w.reset();
        if (a.kind === ACTION.model) a = this.#feed(writeModelReply(w, turn.handle, undefined, "the run was abandoned"));
        else if (a.kind === ACTION.tool) a = this.#feed(writeToolResult(w, turn.handle, true, "the run was abandoned"));
        else a = this.action(this.#io.out(this.#ex.agentrt_next(this.#n, turn.handle, 0)));
      }
    } catch {
      // Refused: the module has ended the turn already.
    }
    this.#mirrors.drop(turn);
  }

  // #outcome ends a turn on its done or failed action, for both drive
  // loops: the Result, with the reply kept on the mirror, or the thrown
  // error, with the mirror dropped.
  #outcome(turn, a) {
    turn.open = false;
    if (a.kind === ACTION.done) {
      if (turn.context !== undefined) a.result.context = turn.context;
      this.#mirrors.keepReply(turn, a.result);
      return a.result;
    }
    // A run refused for its ifHead changed nothing: the mirror keeps its
    // head for the caller's retry with the error's head.
    this.#mirrors.drop(turn, a.error.code === "history_diverged");
    throw refusedError(a.error);
  }

  // end takes an ended turn off the path.
  end(turn) {
    turn.closed = true;
    if (turn.timer !== undefined) clearTimeout(turn.timer);
    this.#active.delete(turn.runId);
    this.unbusy(turn.sessionId);
    this.#release(turn.sessionId);
  }

  // resume asks for the next action after a wait or an interruption.
  resume(turn) {
    this.enter();
    turn.interrupted = false;
    return this.action(this.#io.out(this.#ex.agentrt_next(this.#n, turn.handle, turn.expired ? 1 : 0)));
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

  // settle waits for p, a host's answer adopted (adopt: it never
  // rejects), or until the turn is interrupted: p's { ok, value } or
  // { ok: false, reason }, or null when interrupted. A turn interrupted
  // before the wait (a cancel between a tool and the next model step)
  // does not wait: nothing would wake it.
  settle(turn, p) {
    return new Promise((resolve) => {
      if (turn.interrupted) return resolve(null);
      turn.wake = () => resolve(null);
      p.then(resolve);
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

  // allowedSpecs returns the tool specs the turn's policy allows, as a
  // new array (the shared empty one when there are none).
  allowedSpecs(turn) {
    return this.#tools.specs(turn.allowed);
  }

  // #callModel hands the model its request and feeds its reply. It
  // returns the next action, or a Promise of it when the model answered
  // with a thenable.
  #callModel(turn, a) {
    const handle = turn.handle;
    let answered = false;
    const req = new ModelRequest(turn.runId, turn.sessionId, this.#system, this.#mirrors.messages(turn, a), this.allowedSpecs(turn), a.step,
      (t) => {
        if (answered || turn.closed || typeof t !== "string") return;
        const out = this.#feed(writeDelta(this.#w.reset(), handle, t));
        if (out.events !== undefined) deliverEvents(turn, out.events, out);
      });
    let v;
    let failure;
    try {
      v = this.#model(req);
    } catch (e) {
      failure = "model threw: " + text(e);
    }
    let s;
    if (failure === undefined && (isObject(v) || typeof v === "function") && !((s = adopt(v)) instanceof Promise)) {
      if (s.ok) v = s.value;
      else failure = "the model's reply cannot be read: " + text(s.reason);
    }
    if (s instanceof Promise) {
      turn.request = req;
      return this.settle(turn, s).then((s) => {
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

  // #count answers a count action with the host's counter (js/count.js):
  // the next action, or a Promise of it (worker mode's counter asks the
  // page), which a cancel or the timeout stops waiting for.
  #count(turn, a) {
    this.#arm(turn);
    const feed = (r) => {
      if (turn.interrupted) return this.resume(turn);
      return this.#feed(writeCounts(this.#w.reset(), turn.handle, r));
    };
    const r = this.#counter === null ? countRejected("the runtime has no countTokens") : this.#counter(a.count);
    if (!(r instanceof Promise)) return feed(r);
    return this.settle(turn, r.then((value) => ({ ok: true, value }), (reason) => ({ ok: false, reason })))
      .then((s) => s === null ? this.resume(turn) : feed(s.ok ? s.value : countRejected(s.reason)));
  }

  // #feed hands the module frame, an answer to a turn, through
  // agentrt_feed and returns the turn's next action.
  #feed(frame) {
    return this.action(this.call(this.#ex.agentrt_feed, frame));
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
    const frame = failure === undefined ? this.replyFrame(handle, reply) : writeModelReply(this.#w.reset(), handle, undefined, failure);
    return this.#feed(frame);
  }
}
