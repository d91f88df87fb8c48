// The glue's fast path (wasmexport functions, the wire, a mirror of each
// session) against the module's syscall/js API called raw: the same
// histories and turns must give the same results, sessions, events and
// model requests on both.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadRuntime } from "../glue.js";
import { compiledModule, wasmExecURL } from "./env.mjs";
import { rawAPI, countingExports } from "./helpers.mjs";

// rawRuntime starts a Go instance of the module and returns its
// syscall/js Runtime object, created with config.
async function rawRuntime(module, config) {
  const core = (await rawAPI(module)).createRuntime(config);
  if (core instanceof Error) throw core;
  return core;
}

// A deterministic model that records what it is sent: it asks for the add
// tool when the last user message says "add", and otherwise answers with
// the number of messages it received and the last one's text.
function recordingModel(log) {
  return (req) => {
    log.push({ step: req.step, system: req.system, tools: req.tools.map((t) => t.name), messages: JSON.parse(JSON.stringify(req.messages)) });
    const last = req.messages[req.messages.length - 1];
    if (last.role === "user" && last.content.startsWith("add") && req.step === 1) {
      return { content: "", toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] };
    }
    if (last.content === "boom") throw new Error("the model failed");
    return Promise.resolve({ content: `${req.messages.length}:${last.content}` });
  };
}

const tools = [{ name: "add", description: "adds", parameters: { type: "object" }, call: (args) => String(args.a + args.b) }];

const history = [
  { role: "system", content: "be brief" },
  { role: "user", content: "hello", id: "u1" },
  { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "add", arguments: "{\"a\":2}" } }] },
  { role: "tool", tool_call_id: "c1", content: "2" },
  { role: "assistant", content: "two", id: "a1" },
];

// A step's last argument HEAD runs it with ifHead the session's head
// before it, STALE with the head the session had after the conditional
// run's step before it, a string with that ifHead.
const HEAD = Symbol("head");
const STALE = Symbol("stale");

// steps are the turns both paths run, in order: [method, args...]
const steps = [
  ["startRunWithHistory", "s1", "first", history],
  ["startRunWithHistory", "s1", "second", history],
  ["startRun", "s1", "add please"],
  ["startRunWithPolicy", "s1", "windowed", { maxContextMessages: 3 }],
  ["startRun", "s1", "boom"],
  ["startRun", "s1", "after the failure"],
  ["startRunWithPolicyAndHistory", "s1", "replaced", { seedMode: "reconcile" }, [{ role: "user", content: "other" }]],
  ["deleteSession", "s1"],
  ["startRunWithHistory", "s1", "reseeded", history],
  ["startRunWithHistory", "s2", "fresh", [{ role: "user", content: "x" }, { role: "assistant", content: "y" }]],
  // Conditional runs (docs/adr/0025-conversation-heads.md): on the
  // session's head, on a head it had two turns ago (refused with the
  // turns after it as missing), on one it never had, and with a history.
  ["startRun", "s1", "on the head", HEAD],
  ["startRun", "s1", "two more"],
  ["startRunWithPolicy", "s1", "stale", {}, STALE],
  ["startRun", "s1", "never", "h1-AAAAAAAAAAAAAAAAAAAAAA"],
  ["startRunWithHistory", "s3", "cold", history, STALE],
  ["startRunWithPolicyAndHistory", "s1", "warm", {}, history, HEAD],
];

// plain copies v as JSON would, without run ids (each path names runs its
// own way) and with errors as { code, message, index, head, missing }.
function plain(v) {
  if (v instanceof Error) return { code: v.code, message: v.message, index: v.index, head: v.head, missing: plain(v.missing) };
  if (Array.isArray(v)) return v.map(plain);
  if (v === null || typeof v !== "object") return v;
  const out = {};
  for (const [k, x] of Object.entries(v)) if (k !== "runId" && x !== undefined) out[k] = plain(x);
  return out;
}

async function play(rt, log, events, raw) {
  const out = [];
  const session = (id) => (rt.session ? rt.session(id) : rt.getSession(id));
  let stale;
  for (const [method, ...args] of steps) {
    if (method === "deleteSession") {
      out.push(rt.deleteSession(args[0]));
      continue;
    }
    const options = { inspect: true, onEvent: (ev) => events.push(plain(ev)) };
    if (!raw) options.runId = `run-${out.length}`;
    const last = args[args.length - 1];
    if (last === HEAD || last === STALE || (typeof last === "string" && last.startsWith("h1-"))) {
      args.pop();
      options.ifHead = last === HEAD ? session("s1").head : last === STALE ? stale : last;
      if (last === HEAD) stale = options.ifHead;
    }
    try {
      const res = await rt[method](...args, options);
      out.push(plain(res));
    } catch (e) {
      out.push(plain(e instanceof Error ? e : Object.assign(new Error(e.message), e)));
    }
    out.push(plain(rt.session ? rt.session("s1") : rt.getSession("s1")));
  }
  return out;
}

test("the fast path and the syscall/js path give the same results, sessions, events and model requests", async () => {
  const module = await compiledModule();
  const fastLog = [];
  const fastEvents = [];
  const fast = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, systemPrompt: "sys", model: recordingModel(fastLog), tools });
  const rawLog = [];
  const rawEvents = [];
  const raw = await rawRuntime(module, { systemPrompt: "sys", model: recordingModel(rawLog), tools });
  try {
    const got = await play(fast, fastLog, fastEvents, false);
    const want = await play(raw, rawLog, rawEvents, true);
    assert.deepEqual(got, want);
    assert.deepEqual(fastLog, rawLog);
    assert.deepEqual(fastEvents, rawEvents);
    assert.ok(fastLog.length >= 10, "the model was called on every turn");
    assert.ok(fastEvents.some((e) => e.type === "tool.finished"));
  } finally {
    fast.close();
    raw.close();
  }
});

test("a warm turn hands the model the stored messages, cached in the mirror and never changed by it", async () => {
  const module = await compiledModule();
  const seen = [];
  const rt = await loadRuntime({
    wasm: module, wasmExec: wasmExecURL,
    model: (req) => {
      seen.push(req.messages);
      assert.ok(Object.isFrozen(req.messages[0]));
      return { content: "ok" };
    },
  });
  try {
    await rt.startRunWithHistory("s", "one", history);
    await rt.startRunWithHistory("s", "two", history);
    assert.equal(seen[1].length, seen[0].length + 2);
    // The messages of the first request are the same objects in the second.
    for (let i = 0; i < seen[0].length; i++) assert.equal(seen[1][i], seen[0][i]);
    assert.deepEqual(seen[1].map((m) => m.content), ["hello", "", "2", "two", "one", "ok", "two"]);
  } finally {
    rt.close();
  }
});

// Quick turns (docs/adr/0012-quick-turn.md): a warm turn without history,
// policy, events or a host's run id is run model first and stored with
// one commit. A runtime whose turns all pass an empty policy (the same
// defaults) never takes a quick turn: both must give the same results,
// sessions, stats and model requests.

// quickModel answers at once, except "later" (a Promise), "add" (a tool
// call), "boom" (it throws) and "bad" (a reply that cannot be read); a
// reply "big" is over maxMessageBytes. A hook may call the runtime from
// inside the model.
function quickModel(log, hook) {
  return (req) => {
    const last = req.messages[req.messages.length - 1];
    log.push({ step: req.step, n: req.messages.length, messages: JSON.parse(JSON.stringify(req.messages)) });
    if (hook) {
      const r = hook(req, last);
      if (r !== undefined) return r;
    }
    if (last.role === "user" && last.content.startsWith("add") && req.step === 1) {
      return { content: "", toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] };
    }
    if (last.content === "boom") throw new Error("the model failed");
    if (last.content === "bad") return { content: 42 };
    if (last.content === "big") return "x".repeat(3000);
    if (last.content === "later") return Promise.resolve({ content: `${req.messages.length}:later` });
    if (last.content === "lone") return "\ud800!";
    return `${req.messages.length}:${last.content}`;
  };
}

const quickSteps = [
  ["run", "q", "seed", [{ role: "user", content: "h" }, { role: "assistant", content: "i" }]],
  ["run", "q", "one"], ["run", "q", "two"], ["run", "q", "later"], ["run", "q", "three"],
  ["run", "q", "add it"], ["run", "q", "four"], ["run", "q", "boom"], ["run", "q", "five"],
  ["run", "q", "bad"], ["run", "q", "six"], ["run", "q", "big"], ["run", "q", "seven"],
  ["run", "q", "lone \udc00"], ["run", "q", "lone"], ["run", "q", "eight"],
  ["run", "r", "other", [{ role: "user", content: "r" }]], ["run", "r", "r1"], ["run", "q", "nine"],
  ["deleteSession", "q"], ["run", "q", "cold"], ["run", "q", "seed", [{ role: "user", content: "h" }]], ["run", "q", "ten"],
  ["run", "r", "r2"], ["parallel", "q", "p1", "p2", "later", "p3"], ["run", "q", "eleven"],
  ["run", "q", "x".repeat(2000)], ["run", "q", "twelve"],
];

async function playQuick(rt, quick) {
  const out = [];
  for (const [op, sid, ...args] of quickSteps) {
    const run = (input, history) => {
      const req = { sessionId: sid, input };
      if (history) req.history = history;
      if (!quick) req.policy = {};
      return rt.run(req).then(plain, (e) => ({ code: e.code, message: e.message, index: e.index }));
    };
    if (op === "deleteSession") out.push(rt.deleteSession(sid));
    else if (op === "parallel") out.push(await Promise.all(args.map((input) => run(input))));
    else out.push(await run(args[0], args[1]));
    out.push(plain(rt.session("q")), plain(rt.session("r")));
  }
  const st = rt.stats();
  out.push({ sessions: st.sessions, messages: st.messages, bytes: st.bytes, activeRuns: st.activeRuns, evictions: st.evictions,
    runsCompleted: st.runsCompleted, runsFailed: st.runsFailed, runsCancelled: st.runsCancelled });
  return out;
}

test("quick turns give the same results, sessions, stats and model requests as ordinary turns", async () => {
  const module = await compiledModule();
  const counts = {};
  const restore = countingExports(counts);
  const quickLog = [];
  const plainLog = [];
  const limits = { maxMessageBytes: 2500 };
  let quick, ordinary;
  try {
    quick = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, model: quickModel(quickLog), tools, limits });
    ordinary = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, model: quickModel(plainLog), tools, limits });
  } finally {
    restore();
  }
  try {
    const before = { ...counts };
    const got = await playQuick(quick, true);
    const mid = { ...counts };
    const want = await playQuick(ordinary, false);
    assert.deepEqual(got, want);
    assert.deepEqual(quickLog, plainLog);
    if (mid.agentrt_commit !== undefined) {
      // The quick runtime committed most turns, the other none.
      assert.ok(mid.agentrt_commit - (before.agentrt_commit ?? 0) >= 15, `commits: ${mid.agentrt_commit}`);
      assert.equal(counts.agentrt_commit, mid.agentrt_commit);
    }
  } finally {
    quick.close();
    ordinary.close();
  }
});

// reentrantModel calls the runtime from inside the model on some inputs.
function reentrant(rt, quick, log) {
  const opts = (o) => (quick ? o : { ...o, policy: {} });
  const inner = [];
  const hook = (req, last) => {
    if (req.step !== 1 || last.role !== "user") return undefined;
    switch (last.content) {
      case "nest":
        inner.push(rt.run(opts({ sessionId: req.sessionId, input: "inner" })).then(plain, (e) => ({ code: e.code })));
        return undefined;
      case "nest other":
        inner.push(rt.run(opts({ sessionId: "other", input: "inner other" })).then(plain, (e) => ({ code: e.code })));
        return undefined;
      case "delete":
        inner.push(rt.deleteSession(req.sessionId));
        return undefined;
      case "look":
        inner.push(plain(rt.session(req.sessionId)), rt.stats().activeRuns);
        return undefined;
      case "cancel me":
        inner.push(rt.cancelRun(req.runId));
        return undefined;
      case "cancel me later":
        inner.push(rt.cancelRun(req.runId));
        return Promise.resolve("too late");
    }
    return undefined;
  };
  return { model: quickModel(log, hook), inner };
}

test("a model that calls the runtime meets it as on an ordinary turn", async () => {
  const module = await compiledModule();
  const outcomes = [];
  for (const quick of [true, false]) {
    const log = [];
    let rt;
    const r = reentrant({ run: (x) => rt.run(x), deleteSession: (id) => rt.deleteSession(id), session: (id) => rt.session(id),
      stats: () => rt.stats(), cancelRun: (id) => rt.cancelRun(id) }, quick, log);
    rt = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, model: r.model });
    const out = [];
    const run = (sessionId, input, history) => {
      const req = { sessionId, input };
      if (history) req.history = history;
      if (!quick) req.policy = {};
      return rt.run(req).then(plain, (e) => ({ code: e.code, message: e.message }));
    };
    try {
      out.push(await run("s", "seed", [{ role: "user", content: "h" }]));
      out.push(await run("other", "seed", [{ role: "user", content: "o" }]));
      for (const input of ["a", "nest", "b", "nest other", "c", "look", "d", "delete", "e", "cancel me", "f", "cancel me later", "g"]) {
        out.push(await run("s", input));
        out.push(await Promise.all(r.inner.splice(0)));
        if (input === "delete") out.push(await run("s", "reseed", [{ role: "user", content: "h" }]));
        out.push(plain(rt.session("s")), plain(rt.session("other")));
      }
      const st = rt.stats();
      out.push([st.sessions, st.messages, st.runsCompleted, st.runsFailed, st.runsCancelled, st.activeRuns]);
      out.push(log);
    } finally {
      rt.close();
    }
    outcomes.push(out);
  }
  assert.deepEqual(outcomes[0], outcomes[1]);
});

test("a quick turn's model sees a close as a cancel, as on an ordinary turn", async () => {
  const module = await compiledModule();
  const got = [];
  for (const quick of [true, false]) {
    let rt;
    const model = (req) => {
      if (req.messages[req.messages.length - 1].content === "close") rt.close();
      return "ok";
    };
    rt = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, model });
    const req = (input, history) => ({ sessionId: "s", input, history, policy: quick ? undefined : {} });
    await rt.run(req("seed", [{ role: "user", content: "h" }]));
    await rt.run(req("warm"));
    got.push(await rt.run(req("close")).then(plain, (e) => ({ code: e.code, message: e.message })));
  }
  assert.deepEqual(got[0], got[1]);
  assert.equal(got[0].code, "cancelled");
});

test("a quick turn on a session the budget evicted is stored as an ordinary turn would be", async () => {
  const module = await compiledModule();
  const outcomes = [];
  const calls = [];
  for (const quick of [true, false]) {
    const log = [];
    // Room for about two sessions of this size: a turn on the third
    // evicts the least recently used.
    const rt = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, model: quickModel(log), limits: { maxTotalBytes: 6000 } });
    const policy = quick ? undefined : {};
    const run = (sessionId, input, history) => rt.run({ sessionId, input, history, policy })
      .then(plain, (e) => ({ code: e.code, message: e.message }));
    const out = [];
    try {
      const h = [{ role: "user", content: "x".repeat(1500) }];
      out.push(await run("a", "seed", h), await run("a", "warm"));
      out.push(await run("b", "seed", h), await run("c", "seed", h));
      out.push(rt.listSessions());
      out.push(await run("a", "after eviction"), plain(rt.session("a")), rt.listSessions());
      out.push(await run("a", "warm again"), plain(rt.session("a")));
      const st = rt.stats();
      out.push([st.evictions, st.runsCompleted, st.runsFailed]);
    } finally {
      rt.close();
    }
    outcomes.push(out);
    calls.push(log.length);
  }
  assert.deepEqual(outcomes[0], outcomes[1]);
  assert.ok(!outcomes[0][4].includes("a"), `a was evicted: ${outcomes[0][4]}`);
  // The module reported the eviction and the glue dropped the session's
  // mirror: the turn after it is not quick, and its model is called once,
  // on the ordinary path (it used to be called on the stale mirror first).
  assert.equal(calls[0], calls[1]);
});

test("a reply whose getters call the runtime meets it as on an ordinary turn", async () => {
  const module = await compiledModule();
  const outcomes = [];
  for (const quick of [true, false]) {
    let rt;
    const log = [];
    const inner = [];
    const policy = quick ? undefined : {};
    const model = (req) => {
      const last = req.messages.at(-1).content;
      log.push(req.messages.map((m) => m.content));
      switch (last) {
        case "run":
          // A getter that runs a turn on the same session: it waits for
          // this one, and is stored after it.
          return { get content() {
            inner.push(rt.run({ sessionId: "s", input: "inner", policy }).then(plain, (e) => ({ code: e.code })));
            inner.push(plain(rt.session("s")));
            return "outer";
          } };
        case "cancel":
          return { content: "no", get toolCalls() {
            inner.push(rt.cancelRun(req.runId));
            return undefined;
          } };
      }
      return `${req.messages.length}:${last}`;
    };
    rt = await loadRuntime({ wasm: module, wasmExec: wasmExecURL, model });
    const run = (input, history) => rt.run({ sessionId: "s", input, history, policy }).then(plain, (e) => ({ code: e.code }));
    const out = [];
    try {
      out.push(await run("seed", [{ role: "user", content: "h" }]), await run("warm"));
      for (const input of ["run", "after", "cancel", "last"]) {
        out.push(await run(input), await Promise.all(inner.splice(0)), plain(rt.session("s")));
      }
      const st = rt.stats();
      out.push([st.messages, st.runsCompleted, st.runsCancelled], log);
    } finally {
      rt.close();
    }
    outcomes.push(out);
  }
  assert.deepEqual(outcomes[0], outcomes[1]);
});

test("a delta called from inside onEvent of the module's own API is streamed after the event", async () => {
  // onEvent is called while the run holds its event lock; the model's
  // delta called from there used to wait for that lock in a loop that
  // never returned to the event loop, freezing it.
  const module = await compiledModule();
  const rt = await loadRuntime({ wasm: module, wasmExec: wasmExecURL });
  let delta;
  const core = globalThis[rt.globalName].createRuntime({ model: (req) => {
    delta = req.delta;
    req.delta("a");
    return "ok";
  } });
  const seen = [];
  const res = await core.startRun("s", "hi", { onEvent: (ev) => {
    seen.push(ev.type === "model.delta" ? `delta ${ev.delta} ${ev.seq}` : ev.type);
    if (ev.type === "model.delta" && ev.delta === "a") delta("b");
  } });
  assert.equal(res.reply.content, "ok");
  assert.deepEqual(seen, ["run.started", "message.appended", "delta a 3", "delta b 4", "message.appended", "run.completed"]);
  core.close();
  rt.close();
});
