// agentrt glue: the public Runtime, one Go instance of the module and the
// sessions it holds, and loadRuntime, which makes one.

import {
  AgentrtError, argError, toError, isObject, closedError, lostError, abortError, reportCallbackError,
} from "./errors.js";
import { wellFormed } from "./request.js";
import { withRepaired } from "./heal.js";
import { endsRun, endType } from "./approve.js";
import { idleLater, idleNow } from "./idle.js";
import { GLUE_RUN_PREFIX, readRequest, readOptions, isDetached } from "./args.js";
import { loadRemote } from "./remote.js";
import { loadShared } from "./shared.js";
import { compileModule, loadGo, progressReporter, startInstance, disposeInstance, checkConfig, toURL, packagedModule } from "./load.js";
import { checkResult } from "./controlframes.js";
import { RunHub } from "./hub.js";

/** A config key (loadRuntime's options) that logs every run for rt.reconnect, watched or not: shared mode's worker sets it. */
export const LOG_RUNS = Symbol.for("agentrt.logRuns");

/**
 * A runtime: one Go instance of the module and the sessions it holds.
 * Created by loadRuntime; close() frees it.
 *
 * If the instance's Go program exits (a fatal error in Go, such as running
 * out of memory), the calls in flight reject with code "internal", and a
 * fresh instance of the same module and configuration is started for the
 * next call: its sessions are cold, and the host's history seeds them.
 */
class Runtime {
  #boot;
  #inst;
  #restarting = null;
  #closed = false;
  #runs = 0;
  #version;

  /**
   * The methods that hand back an async iterator at once, each with the
   * reader of its arguments: worker mode (js/remote.js) checks them with
   * it on the page and hands its iterator back at once too. Every other
   * method is forwarded to the worker as it is, and answers a Promise.
   */
  static iterates = {
    stream: (request) => { readRequest(request); },
    reconnect: (runId, options) => { readReconnect(runId, options); },
  };

  // The runs' event log behind watch and reconnect (js/hub.js).
  #hub = new RunHub();
  #logAll = false;

  constructor(boot, inst, logAll = false) {
    this.#logAll = logAll;
    this.#boot = boot;
    this.#version = inst.version;
    this.#adopt(inst);
  }

  /** The module's version. */
  get version() { return this.#version; }

  /** The global name the current instance published its exports at. */
  get globalName() { return this.#inst.name; }

  /** Whether close() was called. */
  get closed() { return this.#closed; }

  /** Where the runtime runs: "main" (this thread). */
  get mode() { return "main"; }

  /**
   * Calls onEvent with every event of every run on sessionId as it
   * happens, from run.started to its terminal event; returns the function
   * that stops it. An onEvent that throws is reported and changes nothing.
   * @param {string} sessionId
   * @param {(event: object) => void} onEvent
   * @returns {() => void}
   */
  watch(sessionId, onEvent) {
    if (typeof sessionId !== "string" || sessionId === "") throw argError("sessionId", "must be a non-empty string");
    if (typeof onEvent !== "function") throw argError("onEvent", "must be a function");
    if (this.#closed) throw closedError();
    return this.#hub.watch(sessionId, onEvent);
  }

  /**
   * The events of run runId with seq > options.after (default 0): those
   * logged, then each as it comes, ending with the terminal event. The log
   * holds the runs that were watched or had an onEvent (every run in shared
   * mode), up to RUN_LOG_EVENTS events each (run.gap first when trimmed)
   * and ENDED_RUNS ended runs; any other run is run_lost.
   * @param {string} runId
   * @param {{ after?: number }} [options]
   * @returns {AsyncIterableIterator<object>}
   */
  reconnect(runId, options) {
    const { after } = readReconnect(runId, options);
    if (this.#closed) throw closedError();
    return this.#hub.reconnect(runId, after);
  }

  /**
   * The ids of the logged runs of sessionId in flight (a page that reloads
   * mid-run finds its run here, then reconnects to it).
   * @param {string} sessionId
   * @returns {string[]}
   */
  activeRuns(sessionId) {
    if (typeof sessionId !== "string") throw argError("sessionId", "must be a string");
    return this.#hub.active(sessionId);
  }

  #adopt(inst) {
    this.#inst = inst;
    inst.onExit = () => this.#lost(inst);
  }

  // #lost handles the exit of inst's Go program: the calls waiting for it
  // reject, and a fresh instance is started in its place.
  #lost(inst, cause) {
    if (inst.dead) return;
    inst.dead = true;
    delete globalThis[inst.name];
    for (const reject of inst.pending) reject(lostError(cause));
    inst.pending.clear();
    if (inst.driver) inst.driver.abortModels(lostError(cause));
    if (!this.#closed && this.#inst === inst && !this.#restarting) this.#restart();
  }

  #restart() {
    const p = startInstance(this.#boot).then((fresh) => {
      this.#restarting = null;
      if (this.#closed) disposeInstance(fresh);
      else this.#adopt(fresh);
    }, () => {
      // The next call tries again.
      this.#restarting = null;
    });
    this.#restarting = p;
  }

  // #ready returns the live instance, waiting for a restart when the last
  // one exited.
  async #ready() {
    for (let attempt = 0; ; attempt++) {
      if (this.#closed) throw closedError();
      const inst = this.#inst;
      if (inst.go.exited) this.#lost(inst);
      if (!inst.dead) return inst;
      if (attempt === 2) throw new AgentrtError("internal", "agentrt: the module's Go program exited and a fresh instance could not be started");
      if (!this.#restarting) this.#restart();
      await this.#restarting;
    }
  }

  // #now returns the live instance for a synchronous call; while a fresh
  // one is starting it throws.
  #now() {
    if (this.#closed) throw closedError();
    const inst = this.#inst;
    if (inst.go.exited) this.#lost(inst);
    if (inst.dead) {
      throw new AgentrtError("internal", "agentrt: the module's Go program exited; a fresh instance is starting, retry");
    }
    return inst;
  }

  // #start runs one turn; it is the body of run(), stream() and the four
  // ADR entry points. Arguments are checked by the caller.
  async #start(sessionId, input, policy, history, withHistory, options, onStarted) {
    sessionId = wellFormed(sessionId);
    const inst = this.#restarting || this.#inst.dead || this.#inst.go.exited ? await this.#ready() : this.#now();
    const signal = options && options.signal ? options.signal : undefined;
    if (signal && signal.aborted) throw abortError(signal.reason);
    const driver = inst.driver;
    // Go's collector finishes what this turn begins once the host is idle.
    idleLater(inst);
    const runId = options && options.runId !== undefined ? options.runId : `${GLUE_RUN_PREFIX}${++this.#runs}`;
    const onEvent = options && options.onEvent;
    const hub = this.#hub;
    const logged = this.#logAll || onEvent !== undefined || hub.watching(sessionId);
    const listener = logged ? (ev) => {
      if (onEvent) {
        try {
          onEvent(ev);
        } catch (e) {
          reportCallbackError(e);
        }
      }
      hub.record(ev);
    } : undefined;
    const inspect = Boolean(options && options.inspect);
    // The history as passed, for a healed copy (heal.js): later changes
    // to the host's array do not reach it.
    const held = withHistory && policy && policy.repair === true && Array.isArray(history) ? history.slice() : undefined;
    let driven;
    const approvals = options ? options.approvals : undefined;
    // A run with ifHead is quick only on a mirror of that head (quick.js
    // quickable); core checks it again as it commits.
    const ifHead = options ? options.ifHead : undefined;
    if (!onStarted && !withHistory && policy === undefined && !listener && !inspect && approvals === undefined &&
      !(options && options.runId !== undefined) && driver.quick.quickable(sessionId, input, ifHead)) {
      // A quick turn (docs/adr/0012-quick-turn.md): begin and drive in one.
      try {
        driven = driver.quick.run(sessionId, input, runId, ifHead);
      } catch (e) {
        if (inst.go.exited) {
          this.#lost(inst, e);
          throw lostError(e);
        }
        throw toError(e);
      }
    } else {
      let turn;
      try {
        turn = driver.begin({ sessionId, input, policy, history, withHistory, runId, inspect, onEvent: listener, approvals, ifHead });
      } catch (e) {
        if (inst.go.exited) {
          this.#lost(inst, e);
          throw lostError(e);
        }
        const err = toError(e);
        if (logged) hub.end(runId, err);
        throw err;
      }
      if (onStarted) onStarted(runId, inst);
      try {
        driven = driver.drive(turn);
      } catch (e) {
        if (inst.go.exited) this.#lost(inst, e);
        const err = toError(e);
        if (logged) hub.end(runId, err);
        throw err;
      }
    }
    // A turn whose model answered at once has ended.
    if (!(driven instanceof Promise)) {
      if (logged) hub.end(runId);
      return withRepaired(driven, held);
    }
    // The turn's Promise never settles if the Go program exits: #lost
    // rejects it instead.
    const settled = new Promise((resolve, reject) => {
      inst.pending.add(reject);
      driven.then((v) => {
        inst.pending.delete(reject);
        resolve(v);
      }, (e) => {
        inst.pending.delete(reject);
        if (inst.go.exited) this.#lost(inst, e);
        reject(e);
      });
    });
    let aborted = false;
    const onAbort = () => {
      try {
        if (!inst.dead && driver.cancel(runId)) aborted = true;
      } catch { /* the run ends anyway */ }
    };
    if (signal) signal.addEventListener("abort", onAbort, { once: true });
    try {
      const res = withRepaired(await settled, held);
      if (logged) hub.end(runId);
      return res;
    } catch (e) {
      const err = aborted ? abortError(e) : toError(e);
      if (logged) hub.end(runId, err);
      throw err;
    } finally {
      if (signal) signal.removeEventListener("abort", onAbort);
    }
  }

  // #revert takes a completed turn the host never received off its session
  // (the no-divergence rule, docs/adr/0004-memory-budget-and-no-divergence.md).
  #revert(inst, sessionId, runId) {
    if (inst.dead || inst.go.exited) return; // a fresh instance is cold
    sessionId = wellFormed(sessionId);
    try {
      inst.driver.enter();
      inst.driver.forget(sessionId);
      inst.driver.op("revertRun", sessionId, runId);
    } catch { /* the instance is going away */ }
  }

  /**
   * Runs one turn. See RunRequest in glue.d.ts.
   * @param {object} request
   * @returns {Promise<object>} the Result
   */
  run(request) {
    let r;
    try {
      r = readRequest(request);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#start(r.sessionId, r.input, r.policy ?? undefined, r.history, r.history !== undefined && r.history !== null, r);
  }

  /**
   * Runs one turn and yields its events as they come; the last is
   * run.completed with `result`. A refusal, failure or cancel makes the
   * iterator throw; leaving the loop early cancels the run, or, when it had
   * completed before its result was handed out, takes its turn back off the
   * session.
   * @param {object} request
   * @returns {AsyncIterableIterator<object>}
   */
  stream(request) {
    const req = readRequest(request);
    if (this.#closed) throw closedError();
    const { sessionId, input, policy, history } = req;
    const userOnEvent = req.onEvent;
    const queue = [];
    const waiting = [];
    let started = null;
    let runId;
    let runInst;
    let settled = false;
    let result = null;
    let delivered = false;
    let finished = false;
    let heldCompleted = null;
    let completedPushed = false;
    let lastSeq = 0;
    const push = (item) => {
      queue.push(item);
      for (const w of waiting.splice(0)) w();
    };
    const onEvent = (ev) => {
      if (settled) return;
      if (isObject(ev) && typeof ev.seq === "number") lastSeq = ev.seq;
      if (userOnEvent) {
        try {
          userOnEvent(ev);
        } catch (e) {
          reportCallbackError(e);
        }
      }
      if (isObject(ev) && endsRun(ev.type)) {
        if (ev.result === undefined) {
          heldCompleted = ev;
          return;
        }
        completedPushed = true;
      }
      push({ event: ev });
    };
    const start = () => {
      const options = { runId: req.runId, signal: req.signal, inspect: req.inspect, onEvent, approvals: req.approvals, ifHead: req.ifHead };
      started = this.#start(sessionId, input, policy ?? undefined, history,
        history !== undefined && history !== null, options, (id, inst) => { runId = id; runInst = inst; })
        .then((res) => {
          if (settled) return;
          settled = true;
          result = res;
          let done = heldCompleted;
          if (done) done.result = res;
          else if (!completedPushed) {
            done = { type: endType(res), runId: res.runId, sessionId: res.sessionId, seq: lastSeq + 1, result: res };
          }
          if (done) push({ event: done });
          push({ end: true });
        }, (err) => {
          if (settled) return;
          settled = true;
          push({ error: err });
        });
    };
    const iterator = {
      next: async () => {
        if (finished) return { value: undefined, done: true };
        if (!started) start();
        while (queue.length === 0) {
          await new Promise((resolve) => { waiting.push(resolve); });
          if (finished) return { value: undefined, done: true };
        }
        const item = queue.shift();
        if (item.event !== undefined) {
          if (isObject(item.event) && endsRun(item.event.type)) delivered = true;
          return { value: item.event, done: false };
        }
        finished = true;
        if (item.error) throw item.error;
        return { value: undefined, done: true };
      },
      return: async (value) => {
        if (!finished) {
          finished = true;
          for (const w of waiting.splice(0)) w();
          if (started) {
            if (!settled && runId !== undefined && !runInst.dead) {
              try { runInst.driver.cancel(runId); } catch { /* it ends anyway */ }
            }
            await started;
            // The run completed before its result reached the host: the
            // session must not keep a turn the host never stored.
            if (result !== null && !delivered && !this.#closed) this.#revert(runInst, sessionId, result.runId ?? runId);
          }
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

  /**
   * The ADR entry point: a turn with the default policy and no history.
   * @returns {Promise<object>}
   */
  startRun(sessionId, input, options) {
    let o;
    try {
      o = readOptions(sessionId, input, undefined, options, undefined, false);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#start(sessionId, input, undefined, undefined, false, o);
  }

  /**
   * The ADR entry point: a turn with a policy and no history.
   * @returns {Promise<object>}
   */
  startRunWithPolicy(sessionId, input, policy, options) {
    let o;
    try {
      o = readOptions(sessionId, input, policy, options, undefined, false);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#start(sessionId, input, policy ?? {}, undefined, false, o);
  }

  /**
   * The ADR entry point: a turn that seeds an empty session from history.
   * @returns {Promise<object>}
   */
  startRunWithHistory(sessionId, input, history, options) {
    let o;
    try {
      o = readOptions(sessionId, input, undefined, options, history, true);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#start(sessionId, input, undefined, history, true, o);
  }

  /**
   * The ADR entry point: a turn that seeds the session from history as
   * policy.seedMode says.
   * @returns {Promise<object>}
   */
  startRunWithPolicyAndHistory(sessionId, input, policy, history, options) {
    let o;
    try {
      o = readOptions(sessionId, input, policy, options, history, true);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#start(sessionId, input, policy ?? {}, history, true, o);
  }

  /**
   * Cancels the active run with runId; reports whether this call did.
   * @param {string} runId
   * @returns {boolean}
   */
  cancelRun(runId) {
    if (typeof runId !== "string") throw argError("runId", "must be a string");
    return this.#call((inst) => inst.driver.cancel(runId));
  }

  /**
   * A snapshot of the session with id, or null when there is none.
   * @param {string} id
   * @returns {object | null}
   */
  session(id) {
    if (typeof id !== "string") throw argError("id", "must be a string");
    const key = wellFormed(id);
    return this.#call((inst) => inst.driver.session(key));
  }

  /**
   * Removes the session with id; reports whether there was one.
   * @param {string} id
   * @returns {boolean}
   */
  deleteSession(id) {
    if (typeof id !== "string") throw argError("id", "must be a string");
    const key = wellFormed(id);
    return this.#call((inst) => {
      inst.driver.forget(key);
      return inst.driver.op("deleteSession", key);
    });
  }

  /**
   * The ids of all sessions, sorted.
   * @returns {string[]}
   */
  listSessions() {
    return this.#call((inst) => inst.driver.listSessions());
  }

  /**
   * The runtime's counters.
   * @returns {object}
   */
  stats() {
    return this.#call((inst) => inst.driver.stats(false));
  }

  /**
   * The problems of a history, found without running anything: every
   * problem `policy.repair` fixes (`repair` names its kind), then the
   * first it does not fix (`repair: null`). The history is read as a
   * run reads it, in every host shape; a message of the wrong shape is a
   * problem, not an exception.
   * @param {object[] | Uint8Array} history
   * @returns {{ ok: boolean, problems: { code: string, index: number, message: string, repair: string | null }[] }}
   */
  checkHistory(history) {
    if (!Array.isArray(history) && !(history instanceof Uint8Array)) {
      throw argError("history", "must be an Array of messages or a packed Uint8Array");
    }
    // As run refuses it (args.js): its bytes cannot be read.
    if (history instanceof Uint8Array && isDetached(history.buffer)) {
      throw argError("history", "is a Uint8Array whose buffer is detached (transferred)");
    }
    if (history instanceof Uint8Array) {
      // Packed already: checked by the module's agentrt_check.
      return checkResult(this.#call((inst) => inst.driver.checkPacked(history)));
    }
    // An Array: packed and checked by agentrt_check too (control.js).
    return this.#call((inst) => inst.driver.checkHistory(history));
  }

  /**
   * Cancels every active run, and frees the instance: its global is
   * deleted and every later call fails. Idempotent.
   */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    const inst = this.#inst;
    this.#inst = { ...inst, dead: true, pending: new Set() };
    try {
      if (inst.driver && !inst.dead && !inst.go.exited) inst.driver.enter();
    } catch { /* it is being closed */ }
    disposeInstance(inst);
  }

  #call(f) {
    const inst = this.#now();
    let v;
    try {
      inst.driver.enter();
      v = f(inst);
      idleNow(inst);
    } catch (e) {
      if (inst.go.exited) {
        this.#lost(inst, e);
        throw lostError(e);
      }
      throw toError(e);
    }
    if (inst.go.exited) {
      this.#lost(inst);
      throw lostError();
    }
    return v;
  }
}

// readReconnect checks reconnect's arguments: a run id and { after }, a
// non-negative integer seq (default 0).
function readReconnect(runId, options) {
  if (typeof runId !== "string" || runId === "") throw argError("runId", "must be a non-empty string");
  if (options !== undefined && !isObject(options)) throw argError("options", "must be an object");
  const after = options && options.after !== undefined ? options.after : 0;
  if (!Number.isSafeInteger(after) || after < 0) throw argError("options.after", "must be a non-negative integer");
  return { after };
}

/**
 * Loads a new agentrt runtime: its own Go instance, published under its own
 * global name. The module is compiled from `wasm` unless it is a
 * WebAssembly.Module already (see compile); without `wasm`, from the
 * agentrt.wasm next to this file, as the npm package ships it. When no `Go`
 * class is defined yet, wasm_exec.js is loaded from `wasmExec`, or imported
 * from beside this file (see loadGo). `onProgress` is called with the
 * download and compile progress (see compile), and last with phase "done".
 *
 * @param {object} options
 * @returns {Promise<Runtime>}
 */
export async function loadRuntime(options = {}) {
  // Worker mode (docs/adr/0021-worker-mode.md): this same function runs
  // in a dedicated Web Worker, and the page gets a RemoteRuntime.
  let worker;
  try {
    worker = isObject(options) ? options.worker : undefined;
    if (worker !== undefined && worker !== false) checkConfig(options);
  } catch (e) {
    throw toError(e, "invalid_argument");
  }
  if (worker === "shared") return loadShared(options, Runtime);
  if (worker !== undefined && worker !== false) return loadRemote(options, Runtime);
  let wasm, wasmExec, systemPrompt, model, tools, limits, execURL, nearURL, report;
  try {
    checkConfig(options);
    ({ wasmExec, systemPrompt, model, tools, limits } = options);
    report = progressReporter(options.onProgress, "options.onProgress");
    wasm = options.wasm === undefined ? packagedModule() : options.wasm;
    if (wasmExec !== undefined) execURL = toURL(wasmExec, "options.wasmExec");
    else if (typeof wasm === "string" || wasm instanceof URL) nearURL = new URL("wasm_exec.js", toURL(wasm, "options.wasm"));
  } catch (e) {
    throw toError(e, "invalid_argument");
  }

  const [module, Go] = await Promise.all([compileModule(wasm, report), loadGo(execURL, nearURL)]);
  const config = {};
  if (systemPrompt !== undefined) config.systemPrompt = systemPrompt;
  if (model !== undefined) config.model = model;
  if (tools !== undefined) config.tools = tools;
  if (limits !== undefined) config.limits = limits;
  // The module asks the driver for token counts (js/count.js).
  if (options.countTokens !== undefined) [config.countTokens, config.countByAction] = [options.countTokens, true];
  const boot = { module, Go, config };
  const rt = new Runtime(boot, await startInstance(boot), options[LOG_RUNS] === true);
  if (report) report("done");
  return rt;
}
