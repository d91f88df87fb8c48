// agentrt glue: the runs' event log behind rt.watch and rt.reconnect
// (docs/adr/0026-shared-worker-mode.md). Every event of a logged run is
// handed to the session's watchers as it happens and kept in the run's
// bounded log, from which a reconnect replays what a caller missed.

import { AgentrtError, reportCallbackError } from "./errors.js";
import { endsRun } from "./approve.js";

/** Events kept per run; older ones are trimmed and a reconnect past them gets run.gap. */
export const RUN_LOG_EVENTS = 1000;
/** Ended runs kept for reconnects; the oldest ended run is dropped first. */
export const ENDED_RUNS = 32;

// runLost is the error of a reconnect to a run the log does not hold.
function runLost(runId) {
  return new AgentrtError("run_lost", `agentrt: run ${JSON.stringify(String(runId))} is not known here (it never ran on this runtime, or its log was dropped)`);
}

/**
 * RunHub keeps the logged runs' events and the sessions' watchers.
 * record(ev) takes each event of a run, end(runId, err) says the run is
 * over (err when it ended without a terminal event).
 */
export class RunHub {
  /** Runs by id: { sessionId, events, dropped, done, error, wake }. */
  #runs = new Map();
  /** Watchers by session id. */
  #watchers = new Map();
  /** Ended run ids, oldest first. */
  #ended = [];

  /** Whether sessionId has a watcher. */
  watching(sessionId) {
    return this.#watchers.has(sessionId);
  }

  #run(runId, sessionId) {
    let r = this.#runs.get(runId);
    if (!r || (r.done && r.sessionId !== sessionId)) {
      if (r) this.#forget(runId);
      r = { sessionId, events: [], dropped: 0, done: false, error: null, wake: new Set() };
      this.#runs.set(runId, r);
    }
    return r;
  }

  #forget(runId) {
    this.#runs.delete(runId);
    const i = this.#ended.indexOf(runId);
    if (i >= 0) this.#ended.splice(i, 1);
  }

  /** Logs one event of a run and hands it to its session's watchers. */
  record(ev) {
    if (ev === null || typeof ev !== "object" || typeof ev.runId !== "string") return;
    const r = this.#run(ev.runId, ev.sessionId);
    if (r.done) return;
    r.events.push(ev);
    if (r.events.length > RUN_LOG_EVENTS) {
      r.events.shift();
      r.dropped++;
    }
    const ws = this.#watchers.get(ev.sessionId);
    if (ws) {
      for (const fn of [...ws]) {
        try {
          fn(ev);
        } catch (e) {
          reportCallbackError(e);
        }
      }
    }
    if (endsRun(ev.type)) this.end(ev.runId);
    else this.#wake(r);
  }

  #wake(r) {
    for (const w of [...r.wake]) w();
  }

  /**
   * Ends a run's log: a reconnect then ends after its last event, or, when
   * the run ended without a terminal event, throws err.
   */
  end(runId, err = null) {
    const r = this.#runs.get(runId);
    if (!r || r.done) return;
    r.done = true;
    const last = r.events[r.events.length - 1];
    if (!(last && endsRun(last.type))) r.error = err ?? new AgentrtError("internal", "agentrt: the run ended without a terminal event");
    this.#ended.push(runId);
    while (this.#ended.length > ENDED_RUNS) this.#runs.delete(this.#ended.shift());
    this.#wake(r);
  }

  /** Ids of the logged runs of sessionId that are in flight. */
  active(sessionId) {
    const out = [];
    for (const [id, r] of this.#runs) if (!r.done && r.sessionId === sessionId) out.push(id);
    return out;
  }

  /**
   * Adds a watcher of every logged run's events on sessionId; returns the
   * function that removes it (idempotent).
   */
  watch(sessionId, fn) {
    let ws = this.#watchers.get(sessionId);
    if (!ws) this.#watchers.set(sessionId, ws = new Set());
    // One entry per call, so the same function watched twice is called twice.
    const entry = (ev) => fn(ev);
    ws.add(entry);
    return () => {
      ws.delete(entry);
      if (ws.size === 0 && this.#watchers.get(sessionId) === ws) this.#watchers.delete(sessionId);
    };
  }

  /**
   * An async iterator of runId's events with seq > after: what the log
   * holds, then each event as it comes, ending with the terminal one.
   * When events past after were trimmed, the first is
   * { type: "run.gap", runId, sessionId, after, next, dropped }. It throws
   * run_lost when the log does not hold the run.
   */
  reconnect(runId, after = 0) {
    let started = false;
    let finished = false;
    let next = 0; // index into the run's events, counted from the first ever logged
    let wake = null;
    let r = null;
    const iterator = {
      next: async () => {
        if (finished) return { value: undefined, done: true };
        if (!started) {
          started = true;
          r = this.#runs.get(runId);
          if (!r) {
            finished = true;
            throw runLost(runId);
          }
          const firstKept = r.events.length ? r.events[0].seq : Infinity;
          if (r.dropped > 0 && firstKept > after + 1) {
            next = r.dropped;
            return { value: { type: "run.gap", runId, sessionId: r.sessionId, after, next: firstKept, dropped: firstKept - after - 1 }, done: false };
          }
          next = r.dropped + r.events.findIndex((e) => e.seq > after);
          if (next < r.dropped) next = r.dropped + r.events.length;
        }
        for (;;) {
          if (next < r.dropped) next = r.dropped; // trimmed while the caller was slow
          const i = next - r.dropped;
          if (i < r.events.length) {
            const ev = r.events[i];
            next++;
            if (endsRun(ev.type)) finished = true;
            return { value: ev, done: false };
          }
          if (r.done) {
            finished = true;
            if (r.error) throw r.error;
            return { value: undefined, done: true };
          }
          if (this.#runs.get(runId) !== r) {
            finished = true;
            throw runLost(runId);
          }
          await new Promise((resolve) => {
            wake = resolve;
            r.wake.add(resolve);
          });
          r.wake.delete(wake);
          if (finished) return { value: undefined, done: true };
        }
      },
      return: async (value) => {
        finished = true;
        if (wake && r) {
          r.wake.delete(wake);
          wake();
        }
        return { value, done: true };
      },
      throw: async (err) => {
        await iterator.return();
        throw err;
      },
      [Symbol.asyncIterator]() { return iterator; },
    };
    return iterator;
  }
}
