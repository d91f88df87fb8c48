// The JS peer: a compact plain-JavaScript implementation of agentrt's
// contract (docs/contract.md), written as the benchmark's honest
// alternative, "what a team would write instead of using agentrt". It
// has the module's API shape (createPeer returns what createRuntime
// returns) and its behaviour: whole-history validation with tool linkage
// and limits, both seed modes, the current-input rule, a per-session
// queue (or session_busy), windowing, the tool loop with maxSteps, events
// with per-run sequence numbers, cancel and timeout, rollback of failed
// turns, LRU eviction and the built-in echo model. Its correctness test
// is peer.test.mjs (node --test).
//
// Messages the model receives are the stored objects themselves: the
// model must read them and never change them (the Go core makes the same
// demand of its models).

const ROLES = new Set(["user", "assistant", "tool", "system"]);

/** Default limits, as in the module. */
export const DEFAULT_LIMITS = Object.freeze({
  maxSessions: 1000, maxMessagesPerSession: 100000, maxSessionBytes: 64 << 20,
  maxSeedMessages: 100000, maxSeedBytes: 64 << 20, maxMessageBytes: 1 << 20,
});

/** The error of a refused or failed run: code, message, index. */
export class PeerError extends Error {
  constructor(code, message, index) {
    super(message);
    this.code = code;
    if (index !== undefined) this.index = index;
  }
}

const fail = (code, message, index) => { throw new PeerError(code, message, index); };

/** UTF-8 byte length of a string without encoding it. */
function utf8(s) {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) n += c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 1 : 2;
  }
  return n;
}

function sizeOf(m) {
  let n = utf8(m.content) + (m.id ? utf8(m.id) : 0) + (m.tool_call_id ? utf8(m.tool_call_id) : 0);
  if (m.tool_calls) for (const c of m.tool_calls) n += utf8(c.id) + utf8(c.name) + utf8(c.arguments);
  return n;
}

const str = (v) => typeof v === "string";

function toolCalls(raw, where) {
  if (raw == null) return undefined;
  if (!Array.isArray(raw)) fail(...where("tool_calls must be an array"));
  if (raw.length === 0) return undefined;
  return raw.map((c, j) => {
    if (c === null || typeof c !== "object") fail(...where("tool call " + j + " is not an object"));
    let args = c.arguments ?? "{}";
    if (!str(args)) args = JSON.stringify(args);
    if (!str(c.id ?? "") || !str(c.name ?? "")) fail(...where("tool call " + j + " has a non-string id or name"));
    return { id: c.id ?? "", name: c.name ?? "", arguments: args };
  });
}

/** Copies one host message into the stored shape, or throws at index i. */
function normalize(h, i) {
  const where = (msg) => ["invalid_history", msg, i];
  if (h === null || typeof h !== "object") fail(...where("message is not an object"));
  if (!ROLES.has(h.role)) fail(...where("unknown role " + JSON.stringify(String(h.role)).slice(0, 66)));
  const calls = toolCalls(h.tool_calls ?? h.toolCalls, where);
  const tcid = h.tool_call_id ?? h.toolCallId;
  let content = h.content;
  if (content == null) {
    if (!(h.role === "assistant" && calls)) fail(...where(h.role + " message has no content"));
    content = "";
  } else if (!str(content)) fail(...where("content must be a string"));
  if (tcid != null && !str(tcid)) fail(...where("tool_call_id must be a string"));
  if (h.id != null && !str(h.id)) fail(...where("id must be a string"));
  const m = { role: h.role, content };
  if (tcid) m.tool_call_id = tcid;
  if (calls) m.tool_calls = calls;
  if (h.id) m.id = h.id;
  return m;
}

/**
 * Validates a whole history and returns its non-system messages, copied,
 * and the count of skipped system messages; throws a PeerError
 * (invalid_history or limit_exceeded, with the index) otherwise.
 */
export function validateHistory(history, limits = DEFAULT_LIMITS) {
  if (!Array.isArray(history)) fail("invalid_argument", "history must be an array");
  if (history.length > limits.maxSeedMessages) {
    fail("limit_exceeded", "history has more than maxSeedMessages messages", limits.maxSeedMessages);
  }
  const out = [], sizes = [];
  let skipped = 0, bytes = 0, open = -1, calls = [], answered = [];
  const unanswered = () => {
    const k = answered.indexOf(false);
    if (k >= 0) fail("invalid_history", "tool call " + calls[k].id + " has no tool result", open);
  };
  for (let i = 0; i < history.length; i++) {
    const m = normalize(history[i], i);
    const size = sizeOf(m);
    if (size > limits.maxMessageBytes) fail("limit_exceeded", "message is over maxMessageBytes", i);
    if ((bytes += size) > limits.maxSeedBytes) fail("limit_exceeded", "history exceeds maxSeedBytes", i);
    if (m.tool_calls && m.role !== "assistant") fail("invalid_history", "only assistant messages may carry tool_calls", i);
    if (m.tool_call_id && m.role !== "tool") fail("invalid_history", "only tool messages may carry tool_call_id", i);
    switch (m.role) {
      case "system": skipped++; continue;
      case "user": unanswered(); break;
      case "assistant": {
        unanswered();
        open = i; calls = m.tool_calls ?? []; answered = calls.map(() => false);
        const seen = new Set();
        for (const c of calls) {
          if (!c.id) fail("invalid_history", "a tool call has no id", i);
          if (!c.name) fail("invalid_history", "tool call " + c.id + " has no name", i);
          if (seen.has(c.id)) fail("invalid_history", "tool call id " + c.id + " is used twice", i);
          seen.add(c.id);
        }
        break;
      }
      case "tool": {
        if (!m.tool_call_id) fail("invalid_history", "tool message has no tool_call_id", i);
        const k = open < 0 ? -1 : calls.findIndex((c) => c.id === m.tool_call_id);
        if (k < 0) fail("invalid_history", "tool result " + m.tool_call_id + " answers no call of the preceding assistant message", i);
        if (answered[k]) fail("invalid_history", "tool call " + m.tool_call_id + " is answered twice", i);
        answered[k] = true;
      }
    }
    out.push(m);
    sizes.push(size);
  }
  unanswered();
  return { messages: out, sizes, skippedSystem: skipped, bytes };
}

function equal(a, b) {
  if (a.role !== b.role || a.content !== b.content || (a.tool_call_id ?? "") !== (b.tool_call_id ?? "")) return false;
  if (a.id && b.id && a.id !== b.id) return false;
  const x = a.tool_calls ?? [], y = b.tool_calls ?? [];
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) {
    if (x[i].id !== y[i].id || x[i].name !== y[i].name || x[i].arguments !== y[i].arguments) return false;
  }
  return true;
}

const isPrefix = (p, s) => p.length <= s.length && p.every((m, i) => equal(m, s[i]));

/** Drops whole blocks (a message with its tool results), oldest first. */
function windowed(msgs, sizes, maxMessages, maxBytes) {
  if (!maxMessages && !maxBytes) return msgs.slice();
  let start = msgs.length, bytes = 0;
  while (start > 0) {
    let b = start - 1;
    while (b > 0 && msgs[b].role === "tool") b--;
    let size = 0;
    for (let i = b; i < start; i++) size += sizes[i];
    const fits = (!maxMessages || msgs.length - b <= maxMessages) && (!maxBytes || bytes + size <= maxBytes);
    if (!fits && start < msgs.length) break;
    bytes += size;
    start = b;
  }
  return msgs.slice(start);
}

/** The built-in model: says how many messages it received. */
export function echo(req) {
  const msgs = req.messages, n = msgs.length;
  const received = " (model received " + n + " messages)";
  if (n === 0) return { content: "echo: (nothing)" + received };
  const last = msgs[n - 1];
  if (last.role === "tool") {
    let i = n - 1;
    while (i > 0 && msgs[i - 1].role === "tool") i--;
    const calls = i > 0 ? msgs[i - 1].tool_calls ?? [] : [];
    const parts = msgs.slice(i).map((m) =>
      "tool " + (calls.find((c) => c.id === m.tool_call_id)?.name ?? m.tool_call_id) + " returned: " + m.content);
    return { content: parts.join("; ") + received };
  }
  if (last.content.startsWith("/tool ")) {
    const spec = last.content.slice(6).trim();
    const sp = spec.indexOf(" ");
    const name = sp < 0 ? spec : spec.slice(0, sp);
    const args = sp < 0 ? "{}" : spec.slice(sp + 1).trim() || "{}";
    if (name) return { toolCalls: [{ id: "echo_" + n, name, arguments: args }] };
  }
  const content = "echo: " + last.content + received;
  for (const w of content.split(/(?<= )/)) req.delta(w);
  return { content };
}

/** A copy of a stored message in the module's shape. */
const copy = (m) => {
  const c = { role: m.role, content: m.content };
  if (m.tool_call_id) c.tool_call_id = m.tool_call_id;
  if (m.tool_calls) c.tool_calls = m.tool_calls.map((t) => ({ ...t }));
  if (m.id) c.id = m.id;
  return c;
};

function checkPolicy(p) {
  if (p === null || typeof p !== "object") fail("invalid_argument", "policy must be an object");
  const oneOf = (k, vals) => {
    if (p[k] !== undefined && !vals.includes(p[k])) fail("invalid_argument", "policy." + k + " must be one of " + vals.join(", "));
  };
  oneOf("seedMode", ["if-empty", "reconcile"]);
  oneOf("onBusy", ["queue", "reject"]);
  oneOf("toolErrors", ["fail", "report"]);
  for (const k of ["maxSteps", "maxContextMessages", "maxContextBytes", "timeoutMs"]) {
    if (p[k] !== undefined && !(Number.isInteger(p[k]) && p[k] >= 0)) fail("invalid_argument", "policy." + k + " must be a non-negative integer");
  }
  if (p.allowedTools !== undefined && !Array.isArray(p.allowedTools)) fail("invalid_argument", "policy.allowedTools must be an array");
  return p;
}

/**
 * Creates a peer runtime. config = { systemPrompt, model: "echo" |
 * (request) => reply | Promise<reply>, tools: [{ name, description,
 * parameters, call(args, ctx) }], limits }.
 */
export function createPeer(config = {}) {
  const limits = { ...DEFAULT_LIMITS };
  for (const [k, v] of Object.entries(config.limits ?? {})) {
    if (!(k in limits)) continue;
    if (!(Number.isInteger(v) && v >= 0)) fail("invalid_argument", "limits." + k + " must be a non-negative integer");
    if (v > 0) limits[k] = v;
  }
  const model = config.model === undefined || config.model === "echo" ? echo : config.model;
  if (typeof model !== "function") fail("invalid_argument", "model must be \"echo\" or a function");
  const tools = new Map();
  for (const t of config.tools ?? []) {
    if (!t || !str(t.name) || !t.name || typeof t.call !== "function" || tools.has(t.name)) {
      fail("invalid_argument", "each tool needs a unique name and a call function");
    }
    tools.set(t.name, t);
  }
  const specs = [...tools.values()].map((t) => ({ name: t.name, description: t.description ?? "", parameters: t.parameters ?? {} }));
  const system = config.systemPrompt ?? "";
  // id -> { msgs, sizes, bytes }, in LRU order (oldest first). sizes[i] is
  // the byte size of msgs[i].
  const sessions = new Map();
  const lanes = new Map(); // id -> { tail: Promise, waiting: number }
  const runs = new Map(); // runId -> run
  let nextRun = 0, closed = false, counters = { completed: 0, failed: 0, cancelled: 0, evictions: 0 };

  const lookup = (id) => {
    const s = sessions.get(id);
    if (s) { sessions.delete(id); sessions.set(id, s); }
    return s;
  };
  const create = (id) => {
    const s = { msgs: [], sizes: [], bytes: 0 };
    sessions.set(id, s);
    for (const [vid] of sessions) {
      if (sessions.size <= limits.maxSessions) break;
      if (!lanes.has(vid)) { sessions.delete(vid); counters.evictions++; }
    }
    return s;
  };

  function start(sessionId, input, policy, history, options = {}) {
    try {
      if (!str(sessionId) || !sessionId || sessionId.length > 512) fail("invalid_argument", "sessionId must be a non-empty string of at most 512 bytes");
      if (!str(input)) fail("invalid_argument", "input must be a string");
      checkPolicy(policy);
      if (options === null || typeof options !== "object") fail("invalid_argument", "options must be an object");
      if (utf8(input) > limits.maxMessageBytes) fail("limit_exceeded", "input is over maxMessageBytes");
      const seed = history === undefined ? null : validateHistory(history, limits);
      if (closed) fail("invalid_argument", "runtime is closed");
      const runId = options.runId ?? "run-" + ++nextRun;
      if (!str(runId) || runs.has(runId)) fail("invalid_argument", "runId must be a string not already running");
      let lane = lanes.get(sessionId);
      if (lane && policy.onBusy === "reject") fail("session_busy", "session " + sessionId + " is running another run");
      if (!lane) lanes.set(sessionId, (lane = { tail: Promise.resolve(), waiting: 0 }));
      lane.waiting++;
      const run = makeRun(runId, sessionId, input, policy, seed, options.onEvent, lane);
      runs.set(runId, run);
      const p = lane.tail.then(() => run.execute());
      lane.tail = p.catch(() => {});
      return p;
    } catch (e) {
      return Promise.reject(e);
    }
  }

  function makeRun(runId, sessionId, input, policy, seed, onEvent, lane) {
    let seq = 0, finished = false, cancelRequested = false, stop, stopErr = null, timer;
    const stopped = new Promise((_, reject) => { stop = (e) => { stopErr ??= e; reject(stopErr); }; });
    stopped.catch(() => {});
    const emit = (type, fields) => {
      if (!onEvent) return;
      try { onEvent({ type, runId, sessionId, seq: ++seq, ...fields }); } catch { /* the host's bug */ }
    };
    const race = (p) => Promise.race([p, stopped]);
    const run = {
      cancel() {
        if (finished || cancelRequested) return false;
        cancelRequested = true;
        stop(new PeerError("cancelled", "run cancelled"));
        return true;
      },
      async execute() {
        if (stopErr) return done(null, stopErr);
        if (policy.timeoutMs) timer = setTimeout(() => stop(new PeerError("timeout", "run timed out")), policy.timeoutMs);
        let sess = lookup(sessionId), created = false, mark = -1;
        try {
          emit("run.started");
          const report = { mode: "none", seeded: 0, skippedSystem: seed ? seed.skippedSystem : 0 };
          if (seed) {
            report.mode = "noop";
            const cur = sess ? sess.msgs : [], h = seed.messages;
            let from = -1, replace = false;
            if (cur.length === 0) { if (h.length) { report.mode = "cold"; from = 0; } }
            else if (policy.seedMode === "reconcile" && !isPrefix(h, cur)) {
              if (isPrefix(cur, h)) { report.mode = "appended"; from = cur.length; }
              else { report.mode = "replaced"; from = 0; replace = true; }
            }
            if (from >= 0) {
              const add = h.slice(from), addSizes = seed.sizes.slice(from);
              let size = 0;
              for (const n of addSizes) size += n;
              const base = replace || !sess ? { n: 0, b: 0 } : { n: sess.msgs.length, b: sess.bytes };
              if (base.n + add.length > limits.maxMessagesPerSession) fail("limit_exceeded", "seeding would exceed maxMessagesPerSession");
              if (base.b + size > limits.maxSessionBytes) fail("limit_exceeded", "seeding would exceed maxSessionBytes");
              if (!sess) { sess = create(sessionId); created = true; }
              if (replace) { sess.msgs = add; sess.sizes = addSizes; sess.bytes = size; }
              else {
                for (let i = 0; i < add.length; i++) { sess.msgs.push(add[i]); sess.sizes.push(addSizes[i]); }
                sess.bytes += size;
              }
              report.seeded = add.length;
            }
          }
          if (!sess) { sess = create(sessionId); created = true; }
          mark = sess.msgs.length;
          if (seed) emit("session.seeded", { seed: { ...report } });
          const result = { runId, sessionId, status: "completed", reply: null, appended: [], seed: report, messageCount: 0 };
          const append = (m) => {
            const size = sizeOf(m);
            if (sess.msgs.length + 1 > limits.maxMessagesPerSession) fail("limit_exceeded", "the session would exceed maxMessagesPerSession");
            if (sess.bytes + size > limits.maxSessionBytes) fail("limit_exceeded", "the session would exceed maxSessionBytes");
            sess.msgs.push(m);
            sess.sizes.push(size);
            sess.bytes += size;
            result.appended.push(m);
            emit("message.appended", { message: m });
          };
          const last = sess.msgs[sess.msgs.length - 1];
          if (!(last && last.role === "user" && last.content === input)) append({ role: "user", content: input });
          const maxSteps = policy.maxSteps || 8;
          const allowed = (name) => !policy.allowedTools || policy.allowedTools.includes(name);
          for (let step = 1; ; step++) {
            if (step > maxSteps) fail("limit_exceeded", "the run needs more than maxSteps model calls");
            let open = true;
            const req = {
              runId, sessionId, system,
              messages: windowed(sess.msgs, sess.sizes, policy.maxContextMessages, policy.maxContextBytes),
              tools: specs.filter((s) => allowed(s.name)),
              delta: (text) => { if (open && str(text) && text) emit("model.delta", { delta: text, step }); },
            };
            let reply;
            try {
              reply = await race(Promise.resolve().then(() => model(req)));
            } catch (e) {
              if (e === stopErr) throw e;
              fail("model_error", String(e?.message ?? e));
            } finally { open = false; }
            if (reply === null || typeof reply !== "object") fail("model_error", "the model returned no reply");
            const calls = toolCalls(reply.toolCalls ?? reply.tool_calls, (msg) => ["model_error", msg]) ?? [];
            const seen = new Set();
            calls.forEach((c, i) => {
              c.id ||= "call_" + step + "_" + i;
              if (!c.name) fail("model_error", "the model asked for a tool call with no name");
              if (seen.has(c.id)) fail("model_error", "the model used tool call id " + c.id + " twice");
              seen.add(c.id);
            });
            const content = reply.content ?? "";
            if (!str(content)) fail("model_error", "reply content must be a string");
            const msg = { role: "assistant", content };
            if (calls.length) msg.tool_calls = calls;
            if (sizeOf(msg) > limits.maxMessageBytes) fail("limit_exceeded", "the model's reply is over maxMessageBytes");
            if (calls.length && step === maxSteps) fail("limit_exceeded", "the run needs more than maxSteps model calls");
            append(msg);
            if (!calls.length) { result.reply = msg; break; }
            for (const c of calls) {
              emit("tool.started", { toolCall: c });
              let out, err;
              try {
                const tool = tools.get(c.name);
                if (!tool) throw new Error("unknown tool " + c.name);
                if (!allowed(c.name)) throw new Error("tool " + c.name + " is not allowed by the policy");
                out = await race(Promise.resolve().then(() => tool.call(JSON.parse(c.arguments), { runId, sessionId, toolCallId: c.id })));
                if (!str(out)) out = JSON.stringify(out) ?? "";
              } catch (e) {
                if (e === stopErr) throw e;
                err = new PeerError("tool_error", "tool " + c.name + " failed: " + (e?.message ?? e));
                if (policy.toolErrors !== "report") { emit("tool.finished", { toolCall: c, error: err }); throw err; }
                out = "error: " + err.message;
              }
              const res = { role: "tool", content: out, tool_call_id: c.id };
              if (sizeOf(res) > limits.maxMessageBytes) fail("limit_exceeded", "the result of tool " + c.name + " is over maxMessageBytes");
              emit("tool.finished", err ? { toolCall: c, message: res, error: err } : { toolCall: c, message: res });
              append(res);
            }
          }
          if (stopErr) throw stopErr;
          result.messageCount = sess.msgs.length;
          result.appended = result.appended.map(copy);
          result.reply = result.appended[result.appended.length - 1];
          return done(result, null);
        } catch (e) {
          const err = cancelRequested ? stopErr : e instanceof PeerError ? e : new PeerError("internal", String(e?.message ?? e));
          if (sess && mark >= 0 && sess.msgs.length > mark) {
            sess.msgs.length = mark;
            for (const n of sess.sizes.splice(mark)) sess.bytes -= n;
          }
          if (created && sess.msgs.length === 0 && sessions.get(sessionId) === sess) sessions.delete(sessionId);
          return done(null, err);
        }
      },
    };
    // done settles the run: it leaves the lane before the caller's Promise
    // settles, so a caller that awaited it finds the session idle.
    function done(result, err) {
      clearTimeout(timer);
      finished = true;
      runs.delete(runId);
      if (--lane.waiting === 0 && lanes.get(sessionId) === lane) lanes.delete(sessionId);
      if (err) {
        if (err.code === "cancelled") { counters.cancelled++; emit("run.cancelled", { error: err }); }
        else { counters.failed++; emit("run.failed", { error: err }); }
        throw err;
      }
      counters.completed++;
      emit("run.completed", { result });
      return result;
    }
    return run;
  }


  return {
    version: "peer",
    startRun: (id, input, options) => start(id, input, {}, undefined, options),
    startRunWithPolicy: (id, input, policy, options) => start(id, input, policy, undefined, options),
    startRunWithHistory: (id, input, history, options) => start(id, input, {}, history, options),
    startRunWithPolicyAndHistory: (id, input, policy, history, options) => start(id, input, policy, history, options),
    cancelRun: (runId) => runs.get(runId)?.cancel() ?? false,
    getSession(id) {
      const s = sessions.get(id);
      return s ? { id, messageCount: s.msgs.length, messages: s.msgs.map(copy) } : null;
    },
    deleteSession: (id) => sessions.delete(id),
    listSessions: () => [...sessions.keys()].sort(),
    stats() {
      let messages = 0, bytes = 0;
      for (const s of sessions.values()) { messages += s.msgs.length; bytes += s.bytes; }
      return { sessions: sessions.size, messages, bytes, activeRuns: runs.size, evictions: counters.evictions,
        runsCompleted: counters.completed, runsFailed: counters.failed, runsCancelled: counters.cancelled };
    },
    close() {
      closed = true;
      for (const r of runs.values()) r.cancel();
    },
  };
}
