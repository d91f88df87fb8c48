// Races between a run and the calls a host makes on its session meanwhile
// (delete, an early stream exit, cancel, close, revert, a second run),
// with synchronous and asynchronous tools and models that throw, hang or
// settle twice: each run finishes on its session, removed or not, or
// fails typed, and never `internal`.
//
// The last two tables run in each mode (helpers.mjs, runtimeModes): on
// the main thread, and where the host has Web Workers (the browser pages
// of js/test/browser/run.mjs) in worker mode (docs/adr/0021-worker-mode.md),
// where the runtime's calls cross to a worker and its model and tools are
// called back on this side.
import { describe, test, before } from "node:test";
import assert from "node:assert/strict";
import { compiledModule } from "./env.mjs";
import { AgentrtError } from "../glue.js";
import { runtimes, deferred, runtimeModes, modeConfig } from "./helpers.mjs";

// One runtime per test, each released when the next test loads its own:
// a page keeping every test's instance runs out of wasm memory.
const { load: loadKept, release } = runtimes();
let previous;
const load = async (config) => {
  release(previous);
  return (previous = await loadKept(config));
};

before(async () => {
  await compiledModule();
});

const addSync = { name: "add", description: "adds", parameters: { type: "object" }, call: (args) => String(args.a + args.b) };
const addAsync = { name: "add", description: "adds", parameters: { type: "object" }, call: async (args) => String(args.a + args.b) };

// gatedModel asks for the add tool on step 1 after the gate opens, and
// answers with the number of messages it received on step 2. entered,
// when given, is resolved when step 1 reaches the gate.
function gatedModel(gate, entered) {
  return async (req) => {
    if (req.step === 1 && req.messages[req.messages.length - 1].content.startsWith("add")) {
      entered?.resolve();
      await gate.promise;
      return { content: "", toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] };
    }
    return { content: `${req.messages.length}:${req.messages[req.messages.length - 1].content}` };
  };
}

// warm gives session id two completed turns, so that its mirror is in use.
async function warm(rt, id) {
  await rt.run({ sessionId: id, input: "one" });
  await rt.run({ sessionId: id, input: "two" });
}

// suffix names a test's worker-mode copy; the main thread's keeps its name.
const suffix = (mode) => (mode === "main" ? "" : ` (${mode})`);

// The tests of the next two loops run in each mode (helpers.mjs, runtimeModes). In
// worker mode the host's calls reach the worker in the order they are
// made, so a run waits at its model before deleteSession is sent.
for (const mode of runtimeModes) {
const loadIn = (config) => load(modeConfig(mode, config));
for (const [toolName, tool] of [["sync", addSync], ["async", addAsync]]) {
  for (const [pathName, policy] of [["wire path", { maxSteps: 5 }], ["quick path", undefined]]) {
    test(`deleteSession while a run waits for its model before a ${toolName} tool (${pathName}): the run finishes on the removed session${suffix(mode)}`, async () => {
      const gate = deferred();
      const entered = deferred();
      const rt = await loadIn({ model: gatedModel(gate, entered), tools: [tool] });
      await warm(rt, "s");
      const p = rt.run({ sessionId: "s", input: "add please", ...(policy ? { policy } : {}) });
      await new Promise((r) => setTimeout(r, 0));
      await entered.promise;
      assert.equal(await rt.deleteSession("s"), true);
      gate.resolve();
      const res = await p;
      assert.equal(res.reply.content, "7:3");
      assert.equal(await rt.session("s"), null);
      // The id serves a new session afterwards.
      const again = await rt.run({ sessionId: "s", input: "fresh" });
      assert.equal(again.reply.content, "1:fresh");
    });

    test(`an early stream exit while another run waits before a ${toolName} tool (${pathName}): the run finishes or fails typed${suffix(mode)}`, async () => {
      const gate = deferred();
      const rt = await loadIn({ model: gatedModel(gate), tools: [tool] });
      await warm(rt, "s");
      const p = rt.run({ sessionId: "s", input: "add please", ...(policy ? { policy } : {}) });
      await new Promise((r) => setTimeout(r, 0));
      const it = rt.stream({ sessionId: "s", input: "streamed" })[Symbol.asyncIterator]();
      const first = it.next();
      gate.resolve();
      await it.return();
      await first.catch(() => {});
      const res = await p.then((r) => r, (e) => e);
      if (res instanceof Error) assert.notEqual(res.code, "internal", String(res));
      else assert.equal(res.reply.content, "7:3");
    });
  }
}

for (const [toolName, wrap] of [["sync", (f) => f], ["async", (f) => async (a) => f(a)]]) {
  for (const [pathName, policy] of [["wire path", { maxSteps: 5 }], ["quick path", undefined]]) {
    test(`a ${toolName} tool deletes its own session (${pathName}): the run finishes on the removed session${suffix(mode)}`, async () => {
      let rt;
      let deleted;
      const tool = { name: "add", description: "adds", parameters: { type: "object" }, call: wrap((args) => {
        deleted = rt.deleteSession("s");
        return String(args.a + args.b);
      }) };
      rt = await loadIn({ model: gatedModel({ promise: Promise.resolve() }), tools: [tool] });
      await warm(rt, "s");
      const res = await rt.run({ sessionId: "s", input: "add please", ...(policy ? { policy } : {}) });
      assert.equal(await deleted, true);
      assert.equal(res.reply.content, "7:3");
      assert.equal(await rt.session("s"), null);
      const again = await rt.run({ sessionId: "s", input: "fresh" });
      assert.equal(again.reply.content, "1:fresh");
    });
  }
}

}

// later runs f after depth microtasks.
function later(depth, f) {
  let p = Promise.resolve();
  for (let i = 0; i < depth; i++) p = p.then(() => {});
  p.then(f);
}

for (const [toolName, wrap] of [["sync", (f) => f], ["async", (f) => async (a) => f(a)]]) {
  for (const [pathName, policy] of [["wire path", { maxSteps: 5 }], ["quick path", undefined]]) {
    for (const [what, act] of [
      ["deleteSession", (rt) => rt.deleteSession("s")],
      ["an early stream exit", (rt) => {
        const it = rt.stream({ sessionId: "s", input: "streamed" })[Symbol.asyncIterator]();
        it.next().catch(() => {});
        it.return().catch(() => {});
      }],
    ]) {
      test(`${what} between a ${toolName} tool and the next model step (${pathName}): the run finishes or fails typed`, async () => {
        for (let depth = 0; depth < 8; depth++) {
          let rt;
          const tool = { name: "add", description: "adds", parameters: { type: "object" }, call: wrap((args) => {
            later(depth, () => act(rt));
            return String(args.a + args.b);
          }) };
          rt = await load({ model: gatedModel({ promise: Promise.resolve() }), tools: [tool] });
          await warm(rt, "s");
          const res = await rt.run({ sessionId: "s", input: "add please", ...(policy ? { policy } : {}) }).then((r) => r, (e) => e);
          if (res instanceof Error) assert.notEqual(res.code, "internal", `depth ${depth}: ${res}`);
          else assert.equal(res.reply.content, "7:3", `depth ${depth}`);
          // The id serves a session afterwards.
          await new Promise((r) => setTimeout(r, 0));
          const again = await rt.run({ sessionId: "s", input: "fresh" });
          assert.match(again.reply.content, /:fresh$/);
          rt.close();
        }
      });
    }
  }
}

// Step-2 models: one that answers, throws, hangs until its request is
// aborted, or settles twice (answers, then answers and rejects again).
const secondSteps = {
  answers: (req) => ({ content: `${req.messages.length}:${req.messages[req.messages.length - 1].content}` }),
  throws: () => {
    throw new Error("the model failed");
  },
  hangs: (req) => new Promise((_, reject) => req.signal.addEventListener("abort", () => reject(new Error("aborted")))),
  "settles twice": () => ({
    then(resolve, reject) {
      resolve({ content: "first" });
      resolve({ content: "second" });
      reject(new Error("late"));
    },
  }),
};

// The calls a host makes on the session while the run is between its
// tool and its next model step; close ends the runtime.
const acts = {
  deleteSession: (rt) => rt.deleteSession("s"),
  cancelRun: (rt) => rt.cancelRun("r1"),
  close: (rt) => rt.close(),
  "a second run": (rt) => {
    rt.run({ sessionId: "s", input: "second run" }).catch(() => {});
  },
};

for (const [toolName, wrap] of [["sync", (f) => f], ["async", (f) => async (a) => f(a)]]) {
  for (const [modelName, step2] of Object.entries(secondSteps)) {
    for (const [what, act] of Object.entries(acts)) {
      // A hanging model ends only when something stops its run.
      if (modelName === "hangs" && (what === "deleteSession" || what === "a second run")) continue;
      test(`${what} between a ${toolName} tool and a model that ${modelName}: the run finishes or fails typed`, async () => {
        for (let depth = 0; depth < 8; depth++) {
          let rt;
          const tool = { name: "add", description: "adds", parameters: { type: "object" }, call: wrap((args) => {
            later(depth, () => act(rt));
            return String(args.a + args.b);
          }) };
          const model = (req) => {
            const last = req.messages[req.messages.length - 1];
            if (req.step === 1 && last.content.startsWith("add")) return { content: "", toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] };
            if (req.runId === "r1") return step2(req);
            return { content: `${req.messages.length}:${last.content}` };
          };
          rt = await load({ model, tools: [tool] });
          await warm(rt, "s");
          const res = await rt.run({ sessionId: "s", input: "add please", runId: "r1" }).then((r) => r, (e) => e);
          if (res instanceof Error) {
            assert.ok(typeof res.code === "string", `depth ${depth}: ${res}`);
            assert.notEqual(res.code, "internal", `depth ${depth}: ${res}`);
          } else {
            assert.ok(["7:3", "first"].includes(res.reply.content), `depth ${depth}: ${res.reply.content}`);
          }
          if (what === "close") continue;
          await new Promise((r) => setTimeout(r, 0));
          const again = await rt.run({ sessionId: "s", input: "fresh" });
          assert.match(again.reply.content, /:fresh$/);
          const s = rt.session("s");
          assert.equal(s.messages[s.messages.length - 1].content, again.reply.content);
          rt.close();
        }
      });
    }
  }
}

// The spots of a turn of run "r1" on a warm session: the model's first
// call asks for the tool t, the tool answers "ok", the model's second call
// answers. normalAnswer is what each spot answers when it is not hostile.
const normalAnswer = {
  "the model's first call": () => ({ content: "", toolCalls: [{ id: "c1", name: "t", arguments: "{}" }] }),
  "the tool": () => "ok",
  "the model's second call": (req) => ({ content: `answer after ${req.messages.length}` }),
};

// turnCallees returns the model and tools of a turn whose spot calls
// hostile(answer, signal) instead of answering; the other calls, and every
// call of a run other than "r1", answer as normalAnswer says.
function turnCallees(spot, hostile) {
  const at = (name, req, signal, runId) => {
    const answer = normalAnswer[name](req);
    return runId === "r1" && name === spot ? hostile(answer, signal) : answer;
  };
  return {
    model: (req) => {
      if (req.runId !== "r1") return { content: `answer after ${req.messages.length}` };
      return at(req.step === 1 ? "the model's first call" : "the model's second call", req, req.signal, req.runId);
    },
    tools: [{ name: "t", description: "t", parameters: { type: "object" }, call: (_args, ctx) => at("the tool", undefined, undefined, ctx.runId) }],
  };
}

// messagesOf is the session's messages as plain data, or null.
async function messagesOf(rt, id) {
  const s = await rt.session(id);
  return s === null ? null : JSON.parse(JSON.stringify(s.messages));
}

// settle reports how p settled: the Result, or the error.
const settle = (p) => p.then((value) => ({ ok: true, value }), (error) => ({ ok: false, error }));

// untilTrue waits for f() to hold, a few event-loop turns at most.
async function untilTrue(f, what) {
  for (let i = 0; i < 200 && !f(); i++) await new Promise((r) => setTimeout(r, 0));
  assert.ok(f(), what);
}

// checkEnd asserts what a turn of run "r1" left: a completed turn (its four
// messages kept) or the error with code want, the session as it was before
// (unless the runtime was closed); then that the runtime serves the next
// turn, or, closed, refuses it as closed.
async function checkEnd(rt, s, want, before, closed) {
  if (s.ok) {
    assert.equal(s.value.status, "completed");
    assert.equal(s.value.reply.content, "answer after 5");
  } else {
    assert.ok(s.error instanceof AgentrtError, `not an AgentrtError: ${s.error}`);
    assert.equal(s.error.code, want, s.error.message);
  }
  if (closed) {
    assert.equal(rt.closed, true);
    const next = await settle(Promise.resolve().then(() => rt.run({ sessionId: "s", input: "after" })));
    assert.equal(next.ok, false);
    assert.equal(next.error.code, "invalid_argument", next.error.message);
    return;
  }
  const held = await messagesOf(rt, "s");
  if (s.ok) assert.equal(held.length, before.length + 4);
  else assert.deepEqual(held, before, "a failed turn changed the session");
  const next = await rt.run({ sessionId: "s", input: "after" });
  assert.equal(next.status, "completed");
  assert.equal(next.messageCount, held.length + 2);
}

// Hostile callees: each throws, rejects, settles twice, or hangs (minding
// its signal, or deaf to it; a tool is handed no signal) until the host
// ends the run.
const hostiles = {
  throws: { fails: true, call: () => { throw new Error("hostile: thrown"); } },
  rejects: { fails: true, call: () => Promise.reject(new Error("hostile: rejected")) },
  "settles twice": {
    fails: false,
    call: (answer) => ({
      then(resolve, reject) {
        resolve(answer);
        resolve({ content: "second" });
        reject(new Error("late"));
      },
    }),
  },
  "hangs until its signal aborts": {
    hangs: true, models: true,
    call: (_answer, signal) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true })),
  },
  "hangs, deaf to its signal": { hangs: true, call: () => new Promise(() => {}) },
};

// closedInFlight is the code a run in flight ends with when its runtime
// is closed: cancelled in both modes (close in js/runtime.js cancels the
// active runs; worker mode rejects what is in flight the same way,
// docs/adr/0021-worker-mode.md, decision 5).
const closedInFlight = () => "cancelled";

// How the host ends a run whose callee hangs, and the code the run ends
// with ("closed": closedInFlight).
const ends = {
  cancelRun: { want: "cancelled", act: (rt) => quiet(() => rt.cancelRun("r1")) },
  "the run's AbortSignal": { want: "cancelled", act: (_rt, ctl) => ctl.abort() },
  "policy.timeoutMs": { want: "timeout", policy: { timeoutMs: 50 } },
  close: { want: "closed", act: (rt) => rt.close() },
};

// quiet calls f, ignoring what it throws or rejects with (a call on a
// runtime being closed).
function quiet(f) {
  try {
    const v = f();
    if (v && typeof v.catch === "function") v.catch(() => {});
  } catch { /* closed */ }
}

// loadHostile loads a runtime in mode whose callee at spot answers as the
// hostile h does, and runs a warm turn on session "s". It returns the
// runtime, the session's messages before the hostile turn, a promise
// that resolves once the callee is called, and signal(), the callee's
// AbortSignal (undefined until it is called).
async function loadHostile(mode, spot, h) {
  const started = deferred();
  let signal;
  const rt = await load(modeConfig(mode, turnCallees(spot, (answer, sig) => {
    signal = sig;
    started.resolve();
    return h.call(answer, sig);
  })));
  await rt.run({ sessionId: "s", input: "warm" });
  const before = await messagesOf(rt, "s");
  return { rt, before, started: started.promise, signal: () => signal };
}

for (const mode of runtimeModes) {
  describe(`hostile models and tools (${mode})`, () => {
    for (const spot of Object.keys(normalAnswer)) {
      for (const [hostileName, h] of Object.entries(hostiles)) {
        if (h.models && spot === "the tool") continue;
        for (const [endName, end] of h.hangs ? Object.entries(ends) : [["", {}]]) {
          const name = h.hangs ? `${spot} ${hostileName}, ended by ${endName}` : `${spot} ${hostileName}`;
          test(`${name}: the run ends typed and the session is unchanged when it fails`, async () => {
            const { rt, before, started, signal } = await loadHostile(mode, spot, h);
            const ctl = new AbortController();
            const p = settle(rt.run({ sessionId: "s", input: "go", runId: "r1", signal: ctl.signal, policy: end.policy }));
            if (end.act) {
              await started;
              end.act(rt, ctl);
            }
            const s = await p;
            const want = !h.hangs ? (spot === "the tool" ? "tool_error" : "model_error") : end.want === "closed" ? closedInFlight(mode) : end.want;
            if (h.hangs || h.fails) assert.equal(s.ok, false, "the run completed");
            if (h.fails) assert.match(s.error.message, /hostile: (thrown|rejected)/);
            await checkEnd(rt, s, want, before, endName === "close");
            if (h.hangs && signal()) await untilTrue(() => signal().aborted, "the model's signal is aborted");
          });
        }
      }
    }
  });

  // A runtime closed, its run cancelled or its AbortSignal aborted at each
  // spot of a turn: within the call, or a few microtasks or a macrotask
  // after the call answered. The run completes or ends with the act's code.
  describe(`a turn interrupted between its steps (${mode})`, () => {
    const acts = {
      "the runtime closed": { want: closedInFlight(mode), act: (rt) => rt.close() },
      "the run's AbortSignal aborted": { want: "cancelled", act: (_rt, ctl) => ctl.abort() },
      "the run cancelled": { want: "cancelled", act: (rt) => quiet(() => rt.cancelRun("r1")) },
    };
    const timings = {
      "within the call": (f) => f(),
      "after it answered": (f) => later(0, f),
      "one microtask after it answered": (f) => later(1, f),
      "three microtasks after it answered": (f) => later(3, f),
      "a macrotask after it answered": (f) => setTimeout(f, 0),
    };
    for (const spot of Object.keys(normalAnswer)) {
      for (const [actName, a] of Object.entries(acts)) {
        test(`${actName} at ${spot}: the run completes or ends typed, and the session is unchanged when it fails`, async () => {
          for (const [timingName, when] of Object.entries(timings)) {
            let rt;
            const ctl = new AbortController();
            rt = await load(modeConfig(mode, turnCallees(spot, (answer) => {
              when(() => a.act(rt, ctl));
              return answer;
            })));
            await rt.run({ sessionId: "s", input: "warm" });
            const before = await messagesOf(rt, "s");
            const s = await settle(rt.run({ sessionId: "s", input: "go", runId: "r1", signal: ctl.signal }));
            await new Promise((r) => setTimeout(r, 0));
            try {
              await checkEnd(rt, s, a.want, before, actName === "the runtime closed");
            } catch (e) {
              e.message = `${timingName}: ${e.message}`;
              throw e;
            }
          }
        });
      }
    }
  });
}

// A stream left while its turn's callee hangs, in each mode: the pending
// next() ends (done, or a typed rejection), the turn is taken back, the
// model's signal aborts and the session serves the next turn.
for (const mode of runtimeModes) {
  describe(`a stream left while its callee hangs (${mode})`, () => {
    for (const spot of Object.keys(normalAnswer)) {
      const h = spot === "the tool" ? hostiles["hangs, deaf to its signal"] : hostiles["hangs until its signal aborts"];
      test(`at ${spot}: the stream ends, the session is unchanged and serves the next turn`, async () => {
        const { rt, before, started, signal } = await loadHostile(mode, spot, h);
        const it = rt.stream({ sessionId: "s", input: "go", runId: "r1" })[Symbol.asyncIterator]();
        const types = [];
        const consumed = (async () => {
          for (;;) {
            const step = await it.next();
            if (step.done) return;
            types.push(step.value.type);
          }
        })();
        await started;
        await it.return();
        const s = await consumed.then(() => ({ ok: true }), (error) => ({ ok: false, error }));
        if (!s.ok) {
          assert.ok(s.error instanceof AgentrtError, `not an AgentrtError: ${s.error}`);
          assert.notEqual(s.error.code, "internal", s.error.message);
        }
        assert.ok(!types.includes("run.completed"), types.join(", "));
        if (signal()) await untilTrue(() => signal().aborted, "the model's signal is aborted");
        assert.deepEqual(await messagesOf(rt, "s"), before, "the left turn changed the session");
        const next = await rt.run({ sessionId: "s", input: "after" });
        assert.equal(next.status, "completed");
        assert.equal(next.messageCount, before.length + 2);
      });
    }
  });
}

// Worker mode only (docs/adr/0021-worker-mode.md, decision 5): the
// worker terminated at each spot of a turn, within the call or a
// microtask after it answered (before the worker's next message can reach
// this side). The run rejects with internal, as every later call does:
// nothing waits for an answer a dead worker cannot give.
if (runtimeModes.includes("worker")) {
  describe("a turn whose worker is terminated between its steps (worker)", () => {
    for (const spot of Object.keys(normalAnswer)) {
      test(`at ${spot}: the run and every later call reject with internal`, async () => {
        for (const [timingName, when] of [["within the call", (f) => f()], ["a microtask after it answered", (f) => later(0, f)]]) {
          let rt;
          rt = await load(modeConfig("worker", turnCallees(spot, (answer) => {
            when(() => rt.worker.terminate());
            return answer;
          })));
          await rt.run({ sessionId: "s", input: "warm" });
          const s = await settle(rt.run({ sessionId: "s", input: "go", runId: "r1" }));
          assert.equal(s.ok, false, `${timingName}: the run completed`);
          assert.ok(s.error instanceof AgentrtError, `${timingName}: ${s.error}`);
          assert.equal(s.error.code, "internal", `${timingName}: ${s.error.message}`);
          for (const call of [() => rt.run({ sessionId: "s", input: "after" }), () => rt.session("s"), () => rt.cancelRun("r1")]) {
            const refused = await settle(call());
            assert.equal(refused.ok, false, timingName);
            assert.equal(refused.error.code, "internal", `${timingName}: ${refused.error.message}`);
          }
        }
      });
    }
  });
}
