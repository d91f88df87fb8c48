// The glue's fast path (wasmexport functions, the wire, a mirror of each
// session) against the module's syscall/js API called raw: the same
// histories and turns must give the same results, sessions, events and
// model requests on both.
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadRuntime } from "../glue.js";
import { compiledModule, wasmExecURL } from "./env.mjs";

let seq = 0;

// rawRuntime starts a Go instance of the module and returns its
// syscall/js Runtime object, created with config.
async function rawRuntime(module, config) {
  const name = `agentrt_paths_${++seq}`;
  const go = new globalThis.Go();
  go.env = { AGENTRT_GLOBAL: name };
  const instance = await WebAssembly.instantiate(module, go.importObject);
  go.run(instance);
  for (let i = 0; i < 100 && !globalThis[name]; i++) await new Promise((r) => setTimeout(r, 0));
  const core = globalThis[name].createRuntime(config);
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
];

// plain copies v as JSON would, without run ids (each path names runs its
// own way) and with errors as { code, message, index }.
function plain(v) {
  if (v instanceof Error) return { code: v.code, message: v.message, index: v.index };
  if (Array.isArray(v)) return v.map(plain);
  if (v === null || typeof v !== "object") return v;
  const out = {};
  for (const [k, x] of Object.entries(v)) if (k !== "runId" && x !== undefined) out[k] = plain(x);
  return out;
}

async function play(rt, log, events, raw) {
  const out = [];
  for (const [method, ...args] of steps) {
    if (method === "deleteSession") {
      out.push(rt.deleteSession(args[0]));
      continue;
    }
    const options = { inspect: true, onEvent: (ev) => events.push(plain(ev)) };
    if (!raw) options.runId = `run-${out.length}`;
    try {
      const res = await rt[method](...args, options);
      out.push(plain(res));
    } catch (e) {
      out.push({ code: e.code, message: e.message, index: e.index });
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
