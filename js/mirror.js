// agentrt glue: the session mirrors, the host's copies of each session's
// messages, from which the driver (driver.js) slices model requests. A
// model action names the generation and length of the mirror the module
// counts on and sends the messages after it (docs/wire.md); the mirrors
// follow the module's store.

import { AgentrtError } from "./errors.js";

/**
 * Mirrors holds the mirror of each session, by session id: { gen, msgs,
 * head }, the session's generation, its messages as model requests hand
 * them, and the head of those messages when the glue was told it (a run
 * with ifHead returns it: docs/adr/0025-conversation-heads.md), else
 * undefined. A quick turn with ifHead runs only on a mirror whose head is
 * that ifHead (quick.js), so every change of msgs here forgets the head
 * or sets the one the module gave for the new messages. A turn holds the
 * mirror the module counts on for it (turn.mirror); it is the session's
 * here until the session is forgotten (turn.detached).
 */
export class Mirrors {
  #byId = new Map();

  /** The mirror of the session with id ({ gen, msgs, head }), or undefined. */
  get(id) {
    return this.#byId.get(id);
  }

  /** Drops the mirror of the session with id. */
  delete(id) {
    this.#byId.delete(id);
  }

  /** Drops every mirror. */
  clear() {
    this.#byId.clear();
  }

  /**
   * Applies a model action's window to the turn's mirror and returns the
   * messages [start, end) as a new array. The module counts the mirror
   * per turn, from the one begin described (turn.mirror), so the turn's
   * own mirror is the one extended, whatever became of the session's
   * entry here meanwhile (forget, dropped, close); it is shared here
   * again unless the turn is detached.
   */
  messages(turn, a) {
    if (a.generation === 0) {
      // The module sent the window alone: no mirror of this session.
      turn.mirror = undefined;
      if (!turn.detached) this.#byId.delete(turn.sessionId);
      turn.historyMirror = undefined;
      return a.tail.slice();
    }
    let m = turn.mirror;
    if (a.adopt && turn.historyMirror !== undefined) m = { gen: a.generation, msgs: turn.historyMirror, head: undefined };
    turn.historyMirror = undefined;
    if (m === undefined || m.gen !== a.generation || m.msgs.length < a.from) {
      // A mirror of the same generation is the same messages: the
      // session's, when it holds what the module counts on, serves too.
      const shared = turn.detached ? undefined : this.#byId.get(turn.sessionId);
      if (shared !== undefined && shared.gen === a.generation && shared.msgs.length >= a.from) m = shared;
      else if (a.from !== 0) {
        // The module counted on a mirror this glue does not hold: use the
        // window if the tail covers it, and start the mirror again.
        turn.mirror = undefined;
        if (!turn.detached) this.#byId.delete(turn.sessionId);
        if (a.from <= a.start) return a.tail.slice(a.start - a.from);
        throw new AgentrtError("internal", "agentrt: the session mirror is out of step with the module");
      } else m = { gen: a.generation, msgs: [], head: undefined };
    }
    const msgs = m.msgs;
    if (msgs.length !== a.from) msgs.length = a.from;
    for (const x of a.tail) msgs.push(x);
    // The turn goes on: the messages' head is known again when it ends.
    m.head = undefined;
    m.gen = turn.gen = a.generation;
    turn.mirror = m;
    if (!turn.detached) this.#byId.set(turn.sessionId, m);
    return msgs.slice(a.start, a.end);
  }

  /**
   * Adds a completed turn's reply to the session's mirror when the mirror
   * holds everything before it: the module sends each message once, in
   * the next model action's tail, so without this the mirror lags the
   * session by the last reply, and a quick turn, which needs the whole
   * session, could not use it.
   */
  keepReply(turn, res) {
    const m = turn.mirror;
    if (m === undefined) return;
    if (m.gen === turn.gen && m.msgs.length === res.messageCount - 1) {
      m.msgs.push(res.reply);
      // The mirror is the session after the turn: its head is the
      // result's (a run with ifHead), or unknown.
      m.head = res.head;
    } else m.head = undefined;
  }

  /**
   * Forgets the session's mirror after a turn that failed once it had a
   * model call: it rolled its messages back, which gives the session a
   * new generation. The next turn's model action sends the whole session,
   * as it would for the old mirror; a quick turn would call its model on
   * the old one first.
   */
  drop(turn, unchanged = false) {
    const own = turn.mirror;
    turn.mirror = undefined;
    // A failed turn forgets the head it might have changed. unchanged
    // says that the module refused the turn before anything changed
    // (history_diverged): the mirror and its head are still the session's.
    if (own !== undefined && !unchanged) own.head = undefined;
    if (turn.detached) return;
    const m = this.#byId.get(turn.sessionId);
    if (m === undefined) return;
    if (!unchanged) m.head = undefined;
    if (turn.gen !== 0 && m.gen === turn.gen) this.#byId.delete(turn.sessionId);
  }
}
