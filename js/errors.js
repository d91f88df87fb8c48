// agentrt glue: its error type and the helpers that make every failure
// one (see the error convention in glue.js).

/** The TypeErrors of bad arguments, which are AgentrtErrors too. */
const argErrors = new WeakSet();

/**
 * The error type of agentrt. `code` is stable and machine-readable (see
 * docs/contract.md, "Errors": invalid_argument, invalid_history, session_busy,
 * limit_exceeded, model_error, tool_error, cancelled, timeout, internal;
 * plus load_failed from loadRuntime); `index`, when set, is the position of
 * the message at fault in the history the host passed.
 */
export class AgentrtError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {{index?: number, cause?: unknown, name?: string, appended?: object[], head?: string, missing?: object[]}} [options]
   */
  constructor(code, message, options = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = options.name || "AgentrtError";
    this.code = code;
    if (Number.isInteger(options.index) && options.index >= 0) this.index = options.index;
    // The messages a failed run keeps in its session (the results of
    // calls a person approved): the host stores them as it stores a
    // Result's appended (docs/glue.md, "Approvals").
    if (Array.isArray(options.appended) && options.appended.length > 0) this.appended = options.appended;
    // history_diverged: the conversation's head, and the messages a
    // caller that is only behind lacks (docs/glue.md, "Conditional runs").
    if (typeof options.head === "string") this.head = options.head;
    if (Array.isArray(options.missing)) this.missing = options.missing;
  }

  /**
   * `e instanceof AgentrtError` is true for every error the glue rejects or
   * throws, the TypeErrors of bad arguments included.
   */
  static [Symbol.hasInstance](v) {
    return Function.prototype[Symbol.hasInstance].call(this, v) || (this === AgentrtError && isObject(v) && argErrors.has(v));
  }
}

export function argError(name, what) {
  const err = new TypeError(`agentrt: ${name} ${what}`);
  err.code = "invalid_argument";
  argErrors.add(err);
  return err;
}

// describe returns a thrown value's text without trusting it: a host's
// exception may be a Proxy or have a throwing getter.
export function describe(e) {
  try {
    if (e instanceof Error && typeof e.message === "string") return e.message;
    return String(e);
  } catch {
    return "(a value that cannot be shown)";
  }
}

export function closedError() {
  return new AgentrtError("invalid_argument", "agentrt: the runtime is closed");
}

// lostError is the rejection of a call that met an instance whose Go
// program had exited (a fatal error such as running out of memory).
export function lostError(cause) {
  return new AgentrtError("internal", "agentrt: the module's Go program exited" +
    (cause === undefined ? "" : ` (${describe(cause)})`) +
    "; a fresh instance serves the next call, its sessions cold until the host's history seeds them",
    { cause });
}

export function abortError(cause) {
  return new AgentrtError("cancelled", "agentrt: the run was aborted", { name: "AbortError", cause, appended: appendedOf(cause) });
}

// appendedOf returns the messages a failed run kept (an error's
// appended), or undefined.
function appendedOf(e) {
  try {
    return isObject(e) && Array.isArray(e.appended) ? e.appended : undefined;
  } catch {
    return undefined;
  }
}

export function timeoutError() {
  return new AgentrtError("timeout", "agentrt: the run's policy.timeoutMs passed", { name: "TimeoutError" });
}

// toError returns e as an AgentrtError: one is returned as it is; an
// error with a string code (the module's) is copied with its code, index
// and name; anything else (a host's exception) gets fallbackCode.
export function toError(e, fallbackCode = "internal") {
  if (e instanceof AgentrtError) return e;
  let code, message, index, name, appended, head, missing;
  try {
    if (isObject(e) && typeof e.code === "string") {
      code = e.code;
      message = typeof e.message === "string" ? e.message : code;
      index = e.index;
      name = e.name === "AbortError" ? e.name : undefined;
      appended = appendedOf(e);
      head = e.head;
      missing = e.missing;
    }
  } catch {
    code = undefined;
  }
  if (code === undefined) return new AgentrtError(fallbackCode, `agentrt: ${describe(e)}`, { cause: e });
  return new AgentrtError(code, message, { index, cause: e, name, appended, head, missing });
}

export function isObject(v) {
  return v !== null && typeof v === "object";
}

export function isBytes(v) {
  return v instanceof ArrayBuffer || ArrayBuffer.isView(v);
}

export function isSignal(v) {
  return isObject(v) && typeof v.aborted === "boolean" && typeof v.addEventListener === "function";
}

// reportCallbackError reports an exception of a host callback like an event
// listener's: reportError where the host has it, else console.error (Node
// has no reportError, and an uncaught exception would end its process).
export function reportCallbackError(e) {
  try {
    if (typeof globalThis.reportError === "function") {
      globalThis.reportError(e);
      return;
    }
  } catch { /* fall through */ }
  try {
    console.error("agentrt: an onEvent callback threw:", e);
  } catch { /* nowhere to report it */ }
}

// ---------------------------------------------------------------------------
// History: read by js/history.js, the rules of docs/contract.md
export function historyError(index, message) {
  return new AgentrtError("invalid_history", message, index >= 0 ? { index } : {});
}


// text describes a thrown or rejected value as the module does: an
// Error's message, a string as it is, anything else as String(v).
export function text(v) {
  try {
    let s;
    if (typeof v === "string") s = v;
    else if (isObject(v) && typeof v.message === "string") s = v.message;
    else s = String(v);
    return s.length > 1024 ? s.slice(0, 1024) + "..." : s;
  } catch {
    return "(a value that cannot be shown)";
  }
}

export function refusedError(e) {
  return new AgentrtError(e.code, e.message, { index: e.index, appended: e.appended, head: e.head, missing: e.missing });
}

