// agentrt glue: quick turns (docs/adr/0012-quick-turn.md), a turn whose
// model is called on the session's mirror before the module hears of it,
// and whose input and reply are then committed in one call.

import { readReply } from "./history.js";
import { ACTION, KIND, readCommitted } from "./wire.js";
import { headLink, headText, nextLink } from "./head.js";
import { AgentrtError, isObject, text, timeoutError, abortError } from "./errors.js";
import { ModelRequest, ReplyRefused, adopt, utf8Over } from "./request.js";

// A turn whose policy allows every tool, for allowedSpecs.
const ALL_TOOLS = Object.freeze({ allowed: undefined });

// A quick turn's model has no event listener: its deltas go nowhere, as
// they do on a turn without onEvent.
function ignoreDelta() {}

/**
 * QuickTurns runs the quick turns of one TurnDriver. It holds the quick
 * turns whose model is running and that have not begun in the module
 * (innermost last); `waiting` says whether there are any. A quick turn
 * checks the module's limits (TurnDriver.limits) before calling its
 * model.
 */
export class QuickTurns {
  #driver;
  #pending = [];
  #quickOK;
  #onDropped = (d) => this.#driver.dropped(d);
  // The last head this computed and its link (head.js), which the next
  // head is computed into: the ifHead of the next turn, whose link then
  // needs no decoding.
  #lastHead = "";
  #link = new Int32Array(4);

  constructor(driver, exports) {
    this.#driver = driver;
    this.#quickOK = driver.model !== null && typeof exports.agentrt_commit === "function" &&
      typeof String.prototype.toWellFormed === "function";
  }

  /** Whether a quick turn's model is running and its turn has not begun in the module. */
  get waiting() {
    return this.#pending.length !== 0;
  }

  /**
   * Begins the pending quick turns in the module, as they would have
   * begun before their model was called (TurnDriver.enter).
   */
  enter() {
    for (const q of this.#pending.splice(0)) this.#upgrade(q);
  }

  /**
   * Whether a turn without history, policy, events, inspection or a
   * host's run id may be a quick turn: a JavaScript model, a mirror of
   * the session, no turn of it in flight, and an input that a turn would
   * append (not the mirror's last message again) within the limits. A
   * turn with ifHead is quick only when the mirror's head, the one the
   * module gave for exactly its messages (mirror.js), is ifHead: any
   * other turn with ifHead begins in the module, which refuses it
   * history_diverged (or runs it) before its model is called. core's
   * Commit checks the head again.
   *
   * The last two tests copy core's rules (the current-input rule and the
   * size of a message) to decide before the model is called, without a
   * call into the module. They cannot change a turn's result: core's
   * Commit checks both again (store.commit: a session whose last message
   * is the same user input is stale, core/quick_test.go), and a stale or
   * refused commit runs the turn the ordinary way.
   */
  quickable(sessionId, input, ifHead) {
    const d = this.#driver;
    if (!this.#quickOK || d.inFlight(sessionId) > 0) return false;
    const m = d.mirrors.get(sessionId);
    if (m === undefined || (ifHead !== undefined && m.head !== ifHead)) return false;
    const msgs = m.msgs;
    const n = msgs.length;
    const limits = d.limits;
    if (n === 0 || n + 2 > limits.maxMessagesPerSession || input.length * 3 > limits.maxMessageBytes) return false;
    const last = msgs[n - 1];
    // Calls awaiting approval end the session: the module refuses an input.
    if (last.tool_calls !== undefined) return false;
    return !(last.role === "user" && last.content === input.toWellFormed());
  }

  /**
   * Runs a quick turn (docs/adr/0012-quick-turn.md): the model first, on
   * the session's mirror and the input, then one commit of the input and
   * the reply. A reply the module cannot commit as it is (a thenable, tool
   * calls, a failure, a refused or stale commit), or a model that called
   * the module, gets the turn begun in the module as it would have been
   * without quick turns; the answer in hand is fed to it. ifHead, when
   * given (quickable admitted it), goes with the commit, or with the
   * begin. Returns what drive returns.
   */
  run(sessionId, input, runId, ifHead) {
    const d = this.#driver;
    const m = d.mirrors.get(sessionId);
    const n = m.msgs.length;
    const inputMsg = Object.freeze({ role: "user", content: input.toWellFormed() });
    // One copy of the right length: slicing first and pushing after
    // would copy the session twice once the copy grows.
    const msgs = m.msgs;
    msgs.push(inputMsg);
    const messages = msgs.slice();
    msgs.pop();
    const req = new ModelRequest(runId, sessionId, d.system, messages, d.allowedSpecs(ALL_TOOLS), 1, ignoreDelta);
    const q = { sessionId, input, runId, ifHead, gen: m.gen, n, req, turn: undefined, error: undefined, matched: false };
    d.busy(sessionId);
    this.#pending.push(q);
    let v;
    let failure;
    let reply;
    let pending;
    try {
      try {
        v = d.model(req);
      } catch (e) {
        failure = "model threw: " + text(e);
      }
      // The reply is read while the turn is still pending: a getter of it
      // that calls the module must find the turn begun, as it does on the
      // ordinary path, where the reply is read by a turn that holds its
      // session.
      if (failure === undefined && q.turn === undefined && q.error === undefined) {
        let s;
        if (isObject(v) || typeof v === "function") {
          s = adopt(v);
          if (s instanceof Promise) pending = s;
          else if (s.ok) v = s.value;
          else failure = "the model's reply cannot be read: " + text(s.reason);
        }
        if (pending === undefined && failure === undefined) {
          try {
            reply = readReply(v, (message) => new ReplyRefused(message));
          } catch (e) {
            failure = e instanceof ReplyRefused ? e.message : "the model's reply cannot be read: " + text(e);
          }
        }
      }
    } finally {
      const at = this.#pending.lastIndexOf(q);
      if (at >= 0) this.#pending.length = at;
      d.unbusy(sessionId);
    }
    if (q.turn === undefined && q.error === undefined) {
      // Nothing called the module while the model ran: it is as it was.
      if (reply !== undefined && reply.toolCalls.length === 0 && !utf8Over(reply.content, d.limits.maxMessageBytes)) {
        const res = this.#commit(q, m, inputMsg, reply.content);
        if (res !== undefined) return res;
      }
      this.#upgrade(q);
    }
    if (q.error !== undefined) throw q.error;
    const turn = q.turn;
    if (!q.matched) return d.drive(turn);
    const held = { v, reply, failure, pending };
    return d.driveFrom(turn, () => this.#feedHeld(turn, req, held));
  }

  // #commit stores the quick turn q in one call and returns its Result,
  // or undefined when the module did not store it (stale or refused).
  //
  // A turn with ifHead commits as one without: quickable let it run only
  // on a mirror whose head is ifHead, and the module stores a commit only
  // on the session of the mirror's generation and length, which names
  // its messages (a session's generation changes whenever they change
  // other than by appending). So the commit's own check of ifHead would
  // always pass, and the head after the turn is the mirror's followed by
  // the two messages, computed here as core computes it (head.js).
  // Checking it in the module and reading its head back cost a warm turn
  // about 1 µs (docs/BENCHMARKS.md, "ifHead on a warm turn").
  #commit(q, m, inputMsg, content) {
    const d = this.#driver;
    const ifHead = q.ifHead;
    // The mirror's head is still ifHead (nothing changed it while the
    // model ran), or the module decides, the ordinary way.
    if (ifHead !== undefined && m.head !== ifHead) return undefined;
    const out = d.commit(q.sessionId, q.runId, q.input, q.gen, q.n, content);
    if (out.length < 5 || out[4] !== KIND.committed) return undefined;
    const count = readCommitted(out, this.#onDropped);
    if (count < 0) return undefined;
    // The Result a turn of the default policy without history gives
    // (core.Runtime.Commit's doc): built here, as encoding it in the
    // committed frame and decoding it again costs a warm turn about 1 µs.
    const reply = Object.freeze({ role: "assistant", content: content.toWellFormed() });
    m.msgs.push(inputMsg, reply);
    if (ifHead === undefined) {
      // The mirror is the session after the commit; its head is unknown.
      m.head = undefined;
      return {
        runId: q.runId, sessionId: q.sessionId, status: "completed", reply, appended: [inputMsg, reply],
        seed: { mode: "none", seeded: 0, skippedSystem: 0 }, messageCount: count, modelCalls: [{ step: 1, messageCount: q.n + 1 }],
      };
    }
    // The link of ifHead: the one kept when this computed it last.
    const link = this.#link;
    if (ifHead !== this.#lastHead) {
      const from = headLink(ifHead);
      if (from === undefined) throw new AgentrtError("internal", "agentrt: a mirror's head is not a head");
      link.set(from);
    }
    nextLink(nextLink(link, inputMsg, link), reply, link);
    const head = headText(link);
    this.#lastHead = head;
    m.head = head;
    // result.head, as the ordinary path's result of a run with ifHead has.
    return {
      runId: q.runId, sessionId: q.sessionId, status: "completed", reply, appended: [inputMsg, reply],
      seed: { mode: "none", seeded: 0, skippedSystem: 0 }, messageCount: count, modelCalls: [{ step: 1, messageCount: q.n + 1 }], head,
    };
  }

  // #upgrade begins the quick turn q in the module, as it would have
  // begun before its model was called. When the module asks for the model
  // on the very window the model was handed, the model's answer is the
  // answer to that call (q.matched); otherwise the first request's signal
  // aborts and the turn goes on as any other, calling the model again.
  #upgrade(q) {
    const d = this.#driver;
    let turn;
    try {
      turn = d.begin({ sessionId: q.sessionId, input: q.input, runId: q.runId, ifHead: q.ifHead });
    } catch (e) {
      q.error = e;
      ModelRequest.stop(q.req, e);
      return;
    }
    q.turn = turn;
    const a = turn.first;
    if (a.kind === ACTION.model && a.step === 1 && a.generation === q.gen && !a.adopt && a.from === q.n &&
      a.start === 0 && a.end === q.n + 1) {
      turn.first = undefined;
      d.mirrors.messages(turn, a);
      turn.request = q.req;
      q.matched = true;
      return;
    }
    ModelRequest.stop(q.req, new AgentrtError("cancelled", "agentrt: the session changed while the model ran; it is asked again"));
  }

  // #feedHeld feeds the answer a quick turn's model gave (the reply read
  // already, a failure, or a value or thenable to read) to its turn, as
  // #callModel would have, and returns the next action or a Promise of it.
  #feedHeld(turn, req, held) {
    const d = this.#driver;
    const handle = turn.handle;
    let v = held.v;
    let failure = held.failure;
    let p = held.pending;
    if (p === undefined && failure === undefined && held.reply === undefined && (isObject(v) || typeof v === "function")) {
      // The model called the module before its answer was read.
      const s = adopt(v);
      if (s instanceof Promise) p = s;
      else if (s.ok) v = s.value;
      else failure = "the model's reply cannot be read: " + text(s.reason);
    }
    if (p !== undefined) {
      return d.settle(turn, p).then((s) => {
        turn.request = undefined;
        if (s === null) {
          ModelRequest.stop(req, turn.expired ? timeoutError() : abortError());
          return d.resume(turn);
        }
        return s.ok ? d.feedModel(turn, handle, s.value) : d.feedModel(turn, handle, undefined, "model rejected: " + text(s.reason));
      });
    }
    turn.request = undefined;
    if (held.reply === undefined) return d.feedModel(turn, handle, v, failure);
    if (turn.interrupted) return d.resume(turn);
    return d.feedReply(handle, held.reply);
  }
}
