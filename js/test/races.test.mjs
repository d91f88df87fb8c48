// Races between a turn in flight and what the host does to its session
// meanwhile: deleting it, leaving a stream on it early, cancelling,
// closing, a second run. A turn between a tool and its next model step
// finishes (on the removed session, when it was removed) or fails with a
// typed code: never `internal`. Runs under `node --test`, `bun test` and
// `deno test -A`.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
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
const loadMode = load;

// toolsSeen counts the tool messages of a model request.
const toolsSeen = (req) => req.messages.filter((m) => m.role === "tool").length;

// A model that asks for the tool t rounds times, then answers.
function toolModel(rounds) {
  return (req) => {
    const n = toolsSeen(req);
    if (n < rounds) return { content: "", toolCalls: [{ id: "c" + n, name: "t", arguments: "{}" }] };
    return { content: `answer after ${req.messages.length}` };
  };
}

// tool returns the tool t calling onCall(ctx) first, answering at once
// (sync) or through a promise.
function tool(sync, onCall) {
  return {
    name: "t", description: "t", parameters: { type: "object" },
    call: (_args, ctx) => {
      onCall(ctx);
      return sync ? "ok" : Promise.resolve("ok");
    },
  };
}

// settledOf reports how p settled: { ok, value } or { ok: false, error }.
async function settledOf(p) {
  try {
    return { ok: true, value: await p };
  } catch (error) {
    return { ok: false, error };
  }
}

// assertTyped asserts a run's outcome is a Result or a typed error other
// than internal.
function assertTyped(s, what) {
  if (s.ok) {
    assert.equal(typeof s.value.status, "string", what);
    return;
  }
  assert.ok(s.error instanceof AgentrtError, `${what}: ${s.error}`);
  assert.notEqual(s.error.code, "internal", `${what}: ${s.error.message}`);
}

// suffix names a table's worker-mode copy; the main thread's keeps its name.
const suffix = (mode) => (mode === "main" ? "" : ` (${mode})`);

// The session's removal and an early stream exit run in each mode
// (helpers.mjs, runtimeModes); in worker mode the tool's deleteSession
// reaches the worker before the tool's answer does.
for (const [mode, sync] of runtimeModes.flatMap((m) => [[m, true], [m, false]])) {
  const kind = sync ? "a synchronous" : "an asynchronous";
  const load = (config) => loadMode(modeConfig(mode, config));
  describe(`a session removed under a turn at ${kind} tool${suffix(mode)}`, () => {
    for (const warm of [false, true]) {
      // A warm session's turn starts as a quick turn (its model called on
      // the mirror first), a cold one's in the module.
      test(`the turn finishes on the removed session, each time its tool deletes it (${warm ? "warm" : "cold"} session)`, async () => {
        let rt;
        const model = toolModel(3);
        rt = await load({
          model: (req) => (req.messages.at(-1).content === "warm" ? { content: "warmed" } : model(req)),
          tools: [tool(sync, (ctx) => rt.deleteSession(ctx.sessionId))],
        });
        if (warm) assert.equal((await rt.run({ sessionId: "s", input: "warm" })).messageCount, 2);
        const first = await rt.run({ sessionId: "s", input: "first" });
        assert.equal(first.status, "completed");
        assert.equal(first.messageCount, warm ? 10 : 8);
        assert.equal(await rt.session("s"), null);
        const again = await rt.run({ sessionId: "s", input: "again" });
        assert.equal(again.status, "completed");
        assert.equal(again.reply.content, "answer after 7");
      });
    }

    test("a stream left early reverts its turn while another run on its session is at the tool: each ends typed", async () => {
      let rt;
      let leave;
      let left = Promise.resolve();
      rt = await load({
        // The tool is asked for once, by the run's input.
        model: (req) => {
          const last = req.messages[req.messages.length - 1];
          if (last.role === "user" && last.content === "run") return { content: "", toolCalls: [{ id: "c", name: "t", arguments: "{}" }] };
          return { content: `answer after ${req.messages.length}` };
        },
        tools: [{
          name: "t", description: "t", parameters: { type: "object" },
          // The asynchronous tool answers once the stream has been left.
          call: () => {
            if (leave) leave();
            return sync ? "ok" : left.then(() => "ok");
          },
        }],
      });
      // The stream's turn completes but its host never takes the result:
      // leaving reverts it and drops the session's mirror while the run
      // below is between its tool and its next model step.
      await rt.run({ sessionId: "s", input: "warm" });
      const it = rt.stream({ sessionId: "s", input: "streamed" });
      const firstEvent = await it.next();
      assert.equal(firstEvent.done, false);
      leave = () => { leave = undefined; left = it.return(); };
      const r = await settledOf(rt.run({ sessionId: "s", input: "run" }));
      await left;
      assertTyped(r, "run");
      const after = await rt.run({ sessionId: "s", input: "after" });
      assert.equal(after.status, "completed");
    });
  });
}

// The neighbouring races: at each tool call of a run, the host deletes
// the session, cancels the run, reverts, closes the runtime or starts a
// second run on the session; the models answer, throw, never answer or
// settle twice. Each run ends with a Result or a typed error, and the
// runtime (unless closed) runs the next turn. The table runs in each mode
// (helpers.mjs, runtimeModes): on the main thread, and in worker mode
// where the host has Web Workers (docs/adr/0021-worker-mode.md), where the
// host's calls and the tool's answer cross to the worker by message.
for (const mode of runtimeModes) describe(`races at a tool call, across models and tools${suffix(mode)}`, () => {
  const models = {
    answers: (req) => toolModel(2)(req),
    throws: (req) => {
      if (toolsSeen(req) >= 1) throw new Error("boom");
      return toolModel(2)(req);
    },
    "settles twice": (req) => ({
      then(resolve, reject) {
        resolve(toolModel(2)(req));
        resolve({ content: "second" });
        reject(new Error("late"));
      },
    }),
    hangs: (req) => (toolsSeen(req) >= 1 ? new Promise(() => {}) : toolModel(2)(req)),
  };
  // A hanging model is ended by its policy's timeout.
  const policy = { timeoutMs: 300 };
  const races = {
    delete: (rt, ctx) => rt.deleteSession(ctx.sessionId),
    cancel: (rt, ctx) => rt.cancelRun(ctx.runId),
    // The test waits for the later cancel (in later) before it ends.
    "cancel later": (rt, ctx, others, later) => later.push(new Promise((resolve) => setTimeout(() => resolve(rt.cancelRun(ctx.runId)), 0))),
    "second run": (rt, ctx, others) => others.push(settledOf(rt.run({ sessionId: ctx.sessionId, input: "second", policy }))),
    "delete and run": (rt, ctx, others) => {
      rt.deleteSession(ctx.sessionId);
      others.push(settledOf(rt.run({ sessionId: ctx.sessionId, input: "new", policy })));
    },
    close: (rt) => rt.close(),
  };
  for (const sync of [true, false]) {
    for (const [modelName, model] of Object.entries(models)) {
      for (const [raceName, race] of Object.entries(races)) {
        test(`${raceName}, a model that ${modelName}, ${sync ? "sync" : "async"} tool`, async () => {
          let rt;
          let once = true;
          const others = [];
          const later = [];
          rt = await load(modeConfig(mode, {
            model,
            tools: [tool(sync, (ctx) => {
              if (!once) return;
              once = false;
              race(rt, ctx, others, later);
            })],
          }));
          const s = await settledOf(rt.run({ sessionId: "s", input: "go", policy }));
          await Promise.all(later);
          assertTyped(s, "run");
          for (const o of await Promise.all(others)) assertTyped(o, "second run");
          if (raceName === "close") return;
          const after = await settledOf(rt.run({ sessionId: "s", input: "after", policy }));
          assertTyped(after, "next run");
        });
      }
    }
  }
});
