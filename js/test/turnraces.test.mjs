// Races between a run and the calls a host makes on its session meanwhile
// (delete, an early stream exit, cancel, close, revert, a second run),
// with synchronous and asynchronous tools and models that throw, hang or
// settle twice: each run finishes on its session, removed or not, or
// fails typed, and never `internal`.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { compiledModule } from "./env.mjs";
import { runtimes, deferred } from "./helpers.mjs";

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
// answers with the number of messages it received on step 2.
function gatedModel(gate) {
  return async (req) => {
    if (req.step === 1 && req.messages[req.messages.length - 1].content.startsWith("add")) {
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

for (const [toolName, tool] of [["sync", addSync], ["async", addAsync]]) {
  for (const [pathName, policy] of [["wire path", { maxSteps: 5 }], ["quick path", undefined]]) {
    test(`deleteSession while a run waits for its model before a ${toolName} tool (${pathName}): the run finishes on the removed session`, async () => {
      const gate = deferred();
      const rt = await load({ model: gatedModel(gate), tools: [tool] });
      await warm(rt, "s");
      const p = rt.run({ sessionId: "s", input: "add please", ...(policy ? { policy } : {}) });
      await new Promise((r) => setTimeout(r, 0));
      assert.equal(rt.deleteSession("s"), true);
      gate.resolve();
      const res = await p;
      assert.equal(res.reply.content, "7:3");
      assert.equal(rt.session("s"), null);
      // The id serves a new session afterwards.
      const again = await rt.run({ sessionId: "s", input: "fresh" });
      assert.equal(again.reply.content, "1:fresh");
    });

    test(`an early stream exit while another run waits before a ${toolName} tool (${pathName}): the run finishes or fails typed`, async () => {
      const gate = deferred();
      const rt = await load({ model: gatedModel(gate), tools: [tool] });
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
    test(`a ${toolName} tool deletes its own session (${pathName}): the run finishes on the removed session`, async () => {
      let rt;
      const tool = { name: "add", description: "adds", parameters: { type: "object" }, call: wrap((args) => {
        assert.equal(rt.deleteSession("s"), true);
        return String(args.a + args.b);
      }) };
      rt = await load({ model: gatedModel({ promise: Promise.resolve() }), tools: [tool] });
      await warm(rt, "s");
      const res = await rt.run({ sessionId: "s", input: "add please", ...(policy ? { policy } : {}) });
      assert.equal(res.reply.content, "7:3");
      assert.equal(rt.session("s"), null);
      const again = await rt.run({ sessionId: "s", input: "fresh" });
      assert.equal(again.reply.content, "1:fresh");
    });
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
