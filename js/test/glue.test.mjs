// Behaviour of js/glue.js against the real module. Runs under
// `node --test`, `bun test` and `deno test -A`.
import { describe, test, before } from "node:test";
import assert from "node:assert/strict";
import { loadRuntime, compile, AgentrtError } from "../glue.js";
import { compiledModule, wasmURL, wasmExecURL } from "./env.mjs";
import { runtimes, deferred, received, rejectsWith } from "./helpers.mjs";

let wasm;
// load returns a new runtime on the shared compiled module and track
// adopts one opened otherwise: both are closed after the suite.
const { load, track } = runtimes();

before(async () => {
  wasm = await compiledModule();
});

// A two-turn conversation as a host stores it.
const twoTurns = [
  { role: "user", content: "hello", id: "m1" },
  { role: "assistant", content: "hi there", id: "m2" },
];

describe("loadRuntime", () => {
  test("loads from a file URL, finding wasm_exec.js next to the module", async () => {
    const hadGo = typeof globalThis.Go === "function";
    const rt = await loadRuntime({ wasm: wasmURL });
    track(rt);
    if (!hadGo) assert.equal(typeof globalThis.Go, "function");
    const r = await rt.run({ sessionId: "s", input: "ping" });
    assert.equal(r.status, "completed");
    assert.match(r.reply.content, /^echo: ping/);
  });

  test("loads from bytes and from a compiled module, which compiles once", async () => {
    const { readFile } = await import("node:fs/promises");
    const bytes = await readFile(wasmURL);
    const module = await compile(bytes);
    assert.ok(module instanceof WebAssembly.Module);
    assert.equal(await compile(module), module);
    const a = await load({ wasm: module });
    const b = await loadRuntime({ wasm: new Uint8Array(bytes), wasmExec: wasmExecURL });
    track(b);
    assert.equal((await a.run({ sessionId: "x", input: "a" })).status, "completed");
    assert.equal((await b.run({ sessionId: "x", input: "b" })).status, "completed");
    assert.equal(typeof a.version, "string");
    assert.ok(a.version.length > 0);
  });

  test("rejects bad options with a TypeError naming the option", async () => {
    const cases = [
      [null, "options"],
      ["agentrt.wasm", "options"],
      [{ wasm: null }, "options.wasm"],
      [{ wasm: 42 }, "wasm"],
      [{ wasm, systemPrompt: 7 }, "options.systemPrompt"],
      [{ wasm, model: "gpt" }, "options.model"],
      [{ wasm, tools: {} }, "options.tools"],
      [{ wasm, tools: [null] }, "options.tools[0]"],
      [{ wasm, tools: [{ name: "t" }] }, "options.tools[0].call"],
      [{ wasm, tools: [{ name: "", call() {} }] }, "options.tools[0].name"],
      [{ wasm, tools: [{ name: "pay", call() {}, needsApproval: "yes" }] }, "options.tools[0].needsApproval"],
      [{ wasm, limits: [] }, "options.limits"],
      [{ wasm, wasmExec: 5 }, "options.wasmExec"],
    ];
    for (const [options, name] of cases) {
      const p = loadRuntime(options);
      assert.ok(p instanceof Promise, `loadRuntime(${name}) returns a Promise`);
      const err = await rejectsWith(assert, p, "invalid_argument");
      assert.ok(err instanceof TypeError, `${name}: ${err}`);
      assert.ok(err.message.includes(name), `${JSON.stringify(err.message)} names ${name}`);
    }
  });

  test("without wasm, the module next to glue.js is loaded (load_failed where there is none)", async () => {
    // js/ has no agentrt.wasm beside glue.js; the package (dist/) has.
    const err = await rejectsWith(assert, loadRuntime(), "load_failed");
    assert.ok(err.message.includes("agentrt.wasm"), err.message);
  });

  test("a module that cannot be read fails with load_failed", async () => {
    const err = await rejectsWith(assert, loadRuntime({ wasm: new URL("no-such.wasm", wasmURL) }), "load_failed");
    assert.ok(err instanceof AgentrtError);
    await rejectsWith(assert, loadRuntime({ wasm: new Uint8Array([0, 1, 2, 3]) }), "load_failed");
  });

  test("a configuration the module refuses fails with its code and leaves no global", async () => {
    const before = Object.keys(globalThis).filter((k) => k.startsWith("agentrt_")).length;
    await rejectsWith(assert, loadRuntime({ wasm, limits: { maxSessions: -1 } }), "invalid_argument");
    const dup = { name: "t", call: () => "x" };
    await rejectsWith(assert, loadRuntime({ wasm, tools: [dup, dup] }), "invalid_argument");
    assert.equal(Object.keys(globalThis).filter((k) => k.startsWith("agentrt_")).length, before);
  });
});

describe("the ADR scenario", () => {
  test("TestColdStartedSessionIsSeededFromSuppliedHistory: a cold session sees the seeded turns plus the input; a warm one is not re-seeded", async () => {
    const rt = await load({ systemPrompt: "Be brief." });
    const first = await rt.run({ sessionId: "chat", input: "how are you?", history: twoTurns });
    assert.deepEqual(first.seed, { mode: "cold", seeded: 2, skippedSystem: 0 });
    assert.equal(received(first.reply), 3);
    assert.equal(first.messageCount, 4);

    // The host passes its (now longer) history again: the warm session
    // already holds it, so nothing is added twice.
    const history = [...twoTurns, { role: "user", content: "how are you?" }, first.reply];
    const second = await rt.run({ sessionId: "chat", input: "and now?", history });
    assert.equal(second.seed.mode, "noop");
    assert.equal(second.seed.seeded, 0);
    assert.equal(received(second.reply), 5);
    const s = rt.session("chat");
    assert.equal(s.messageCount, 6);
    assert.deepEqual(s.messages.map((m) => m.role), ["user", "assistant", "user", "assistant", "user", "assistant"]);
    assert.equal(s.messages[0].id, "m1");
  });

  test("the four ADR entry points keep their shapes", async () => {
    const rt = await load();
    const a = await rt.startRun("a", "one");
    assert.equal(a.seed.mode, "none");
    const b = await rt.startRunWithPolicy("b", "one", { maxSteps: 2 });
    assert.equal(b.seed.mode, "none");
    const c = await rt.startRunWithHistory("c", "three", twoTurns);
    assert.deepEqual(c.seed, { mode: "cold", seeded: 2, skippedSystem: 0 });
    const d = await rt.startRunWithPolicyAndHistory("d", "x", { seedMode: "reconcile" },
      [{ role: "system", content: "s" }, ...twoTurns]);
    assert.deepEqual(d.seed, { mode: "cold", seeded: 2, skippedSystem: 1 });
    const events = [];
    const e = await rt.startRunWithPolicyAndHistory("d", "y", { seedMode: "reconcile" },
      [...twoTurns, { role: "user", content: "x" }, d.reply, { role: "user", content: "extra" },
        { role: "assistant", content: "more" }], { runId: "mine", onEvent: (ev) => events.push(ev) });
    assert.deepEqual(e.seed, { mode: "appended", seeded: 2, skippedSystem: 0 });
    assert.equal(e.runId, "mine");
    assert.ok(events.length > 0 && events.every((ev) => ev.runId === "mine"));
  });

  test("history that ends with the current input is not appended twice", async () => {
    const rt = await load();
    const r = await rt.run({ sessionId: "s", input: "again", history: [...twoTurns, { role: "user", content: "again" }] });
    assert.equal(r.seed.seeded, 3);
    assert.equal(received(r.reply), 3);
    assert.equal(rt.session("s").messageCount, 4);
  });
});

describe("cold start", () => {
  test("a second loadRuntime starts empty and is seeded from the host's history", async () => {
    const first = await load();
    const host = [];
    for (const input of ["one", "two"]) {
      const r = await first.run({ sessionId: "chat", input, history: host });
      host.push(...r.appended);
    }
    assert.equal(host.length, 4);
    first.close();

    const second = await load();
    assert.notEqual(second.globalName, first.globalName);
    assert.equal(second.session("chat"), null);
    assert.deepEqual(second.listSessions(), []);
    const r = await second.run({ sessionId: "chat", input: "three", history: host });
    assert.deepEqual(r.seed, { mode: "cold", seeded: 4, skippedSystem: 0 });
    assert.equal(received(r.reply), 5);
    assert.deepEqual(second.session("chat").messages.slice(0, 4), host);
  });
});

describe("stream", () => {
  test("yields the events in order with sequence numbers 1..n, ending with the result", async () => {
    const rt = await load();
    const seen = [];
    const events = [];
    for await (const ev of rt.stream({ sessionId: "s", input: "stream me please", history: twoTurns,
      onEvent: (ev) => seen.push(ev.type) })) {
      events.push(ev);
    }
    const types = events.map((e) => e.type);
    assert.equal(types[0], "run.started");
    assert.equal(types[1], "session.seeded");
    assert.equal(types.at(-1), "run.completed");
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
    const runId = events[0].runId;
    assert.ok(events.every((e) => e.runId === runId && e.sessionId === "s"));
    assert.deepEqual(events[1].seed, { mode: "cold", seeded: 2, skippedSystem: 0 });

    // The user message is appended before the model answers; the reply after.
    const appended = events.filter((e) => e.type === "message.appended");
    assert.deepEqual(appended.map((e) => e.message.role), ["user", "assistant"]);
    assert.ok(types.indexOf("model.delta") > types.indexOf("message.appended"));
    const result = events.at(-1).result;
    assert.equal(result.status, "completed");
    assert.equal(result.runId, runId);
    const text = events.filter((e) => e.type === "model.delta").map((e) => e.delta).join("");
    assert.equal(text, result.reply.content);
    assert.deepEqual(appended[1].message, result.reply);
    assert.deepEqual(seen, types);
  });

  test("tool calls show up as tool.started and tool.finished", async () => {
    const calls = [];
    const rt = await load({
      tools: [{ name: "add", description: "adds", call: (args, ctx) => { calls.push([args, ctx]); return args.a + args.b; } }],
    });
    const events = [];
    for await (const ev of rt.stream({ sessionId: "t", input: '/tool add {"a":2,"b":3}' })) events.push(ev);
    const types = events.map((e) => e.type);
    const started = types.indexOf("tool.started");
    assert.ok(started > 0 && types.indexOf("tool.finished") > started, types.join(","));
    assert.equal(events[started].toolCall.name, "add");
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0][0], { a: 2, b: 3 });
    assert.equal(calls[0][1].sessionId, "t");
    assert.equal(calls[0][1].runId, events[0].runId);
    const result = events.at(-1).result;
    assert.match(result.reply.content, /tool add returned: 5/);
    assert.deepEqual(result.appended.map((m) => m.role), ["user", "assistant", "tool", "assistant"]);
  });

  test("a refusal makes the iterator throw and creates nothing", async () => {
    const rt = await load();
    const events = [];
    const it = rt.stream({ sessionId: "s", input: "x", history: [{ role: "robot", content: "beep" }] });
    const err = await rejectsWith(assert, (async () => { for await (const ev of it) events.push(ev); })(),
      "invalid_history", 0);
    assert.match(err.message, /robot/);
    assert.deepEqual(events, []);
    assert.deepEqual(rt.listSessions(), []);
  });

  test("leaving the loop early cancels the run", async () => {
    const entered = deferred();
    const rt = await load({ model: () => { entered.resolve(); return new Promise(() => {}); } });
    let n = 0;
    for await (const ev of rt.stream({ sessionId: "s", input: "hi" })) {
      n++;
      if (ev.type === "message.appended") {
        await entered.promise;
        break;
      }
    }
    assert.ok(n >= 2);
    const stats = rt.stats();
    assert.equal(stats.activeRuns, 0);
    assert.equal(rt.session("s"), null, "the cancelled first turn leaves no session");
  });

  test("next() called many times at once hands out each event once, in order", async () => {
    const rt = await load();
    const it = rt.stream({ sessionId: "s", input: "a b c d" });
    const all = [];
    for (;;) {
      const batch = await Promise.all([it.next(), it.next(), it.next()]);
      all.push(...batch.filter((r) => !r.done).map((r) => r.value));
      if (batch.some((r) => r.done)) break;
    }
    assert.deepEqual(all.map((e) => e.seq), all.map((_, i) => i + 1));
    assert.equal(all.at(-1).type, "run.completed");
    assert.deepEqual(await it.next(), { value: undefined, done: true });
  });

  test("return() while next() waits ends both and cancels the run", async () => {
    const entered = deferred();
    const rt = await load({ model: () => { entered.resolve(); return new Promise(() => {}); } });
    const it = rt.stream({ sessionId: "s", input: "x" });
    const seen = [];
    while (seen.at(-1)?.type !== "message.appended") seen.push((await it.next()).value);
    await entered.promise;
    const pending = it.next();
    assert.deepEqual(await it.return("bye"), { value: "bye", done: true });
    assert.deepEqual(await pending, { value: undefined, done: true });
    assert.equal(rt.stats().activeRuns, 0);
    assert.equal(rt.session("s"), null);
  });

  test("bad arguments throw a TypeError at once", () => {
    return load().then((rt) => {
      assert.throws(() => rt.stream(null), (e) => e instanceof TypeError && /request/.test(e.message));
      assert.throws(() => rt.stream({ sessionId: 1, input: "x" }), (e) => e instanceof TypeError && /sessionId/.test(e.message));
      assert.throws(() => rt.stream({ sessionId: "s", input: "x", history: "[]" }), (e) => e instanceof TypeError && /history/.test(e.message));
    });
  });
});

describe("abort", () => {
  test("aborting mid-model-call rejects with AbortError and leaves the session as seeding left it", async () => {
    const entered = deferred();
    let calls = 0;
    const rt = await load({
      model: (req) => {
        calls++;
        entered.resolve(req);
        return new Promise(() => {}); // never answers
      },
    });
    const ac = new AbortController();
    const p = rt.run({ sessionId: "s", input: "wait", history: twoTurns, signal: ac.signal });
    const req = await entered.promise;
    assert.equal(req.messages.length, 3);
    assert.equal(rt.stats().activeRuns, 1);
    ac.abort();
    const err = await rejectsWith(assert, p, "cancelled");
    assert.equal(err.name, "AbortError");
    assert.equal(calls, 1);
    const s = rt.session("s");
    assert.equal(s.messageCount, 2, "the seeded turns stay, the input is rolled back");
    assert.deepEqual(s.messages.map((m) => m.content), ["hello", "hi there"]);
    assert.equal(rt.stats().activeRuns, 0);
  });

  test("a cancelled first turn with no history leaves no empty session", async () => {
    const entered = deferred();
    const rt = await load({ model: () => { entered.resolve(); return new Promise(() => {}); } });
    const ac = new AbortController();
    const p = rt.run({ sessionId: "fresh", input: "x", signal: ac.signal });
    await entered.promise;
    ac.abort(new Error("user left"));
    await rejectsWith(assert, p, "cancelled");
    assert.equal(rt.session("fresh"), null);
    assert.deepEqual(rt.listSessions(), []);
  });

  test("an already-aborted signal rejects at once and creates nothing", async () => {
    let calls = 0;
    const events = [];
    const rt = await load({ model: () => { calls++; return { content: "no" }; } });
    const err = await rejectsWith(assert, rt.run({ sessionId: "s", input: "x", history: twoTurns,
      signal: AbortSignal.abort(), onEvent: (e) => events.push(e) }), "cancelled");
    assert.equal(err.name, "AbortError");
    assert.equal(calls, 0);
    assert.deepEqual(events, []);
    assert.deepEqual(rt.listSessions(), []);
    assert.equal(rt.stats().activeRuns, 0);
    const it = rt.stream({ sessionId: "s", input: "x", signal: AbortSignal.abort() });
    await rejectsWith(assert, it.next(), "cancelled");
    assert.deepEqual(rt.listSessions(), []);
  });

  test("a run queued behind a busy session can be aborted before it starts", async () => {
    const entered = deferred();
    const release = deferred();
    const rt = await load({ model: (req) => { entered.resolve(); return release.promise.then(() => ({ content: "done" })); } });
    const first = rt.run({ sessionId: "s", input: "first" });
    await entered.promise;
    const ac = new AbortController();
    const queued = rt.run({ sessionId: "s", input: "second", signal: ac.signal });
    ac.abort();
    await rejectsWith(assert, queued, "cancelled");
    release.resolve();
    const r = await first;
    assert.equal(r.reply.content, "done");
    assert.deepEqual(rt.session("s").messages.map((m) => m.content), ["first", "done"]);
  });

  test("an abort after the run completed changes nothing", async () => {
    const rt = await load();
    const ac = new AbortController();
    const r = await rt.run({ sessionId: "s", input: "x", signal: ac.signal });
    ac.abort();
    assert.equal(r.status, "completed");
    assert.equal(rt.session("s").messageCount, 2);
  });
});

describe("history shapes", () => {
  test("OpenAI chat messages are converted (content null, function tool calls, object arguments)", async () => {
    const rt = await load();
    const openai = [
      { role: "system", content: "You are helpful." },
      { role: "user", content: "what is 2+3?" },
      { role: "assistant", content: null, tool_calls: [
        { id: "call_1", type: "function", function: { name: "add", arguments: '{"a":2,"b":3}' } },
        { id: "call_2", type: "function", function: { name: "mul", arguments: { a: 2, b: 3 } } },
      ] },
      { role: "tool", tool_call_id: "call_1", content: "5" },
      { role: "tool", tool_call_id: "call_2", content: "6" },
      { role: "assistant", content: "5 and 6", refusal: null },
    ];
    const r = await rt.run({ sessionId: "oa", input: "thanks", history: openai });
    assert.deepEqual(r.seed, { mode: "cold", seeded: 5, skippedSystem: 1 });
    assert.equal(received(r.reply), 6);
    const m = rt.session("oa").messages;
    assert.deepEqual(m[1].tool_calls, [
      { id: "call_1", name: "add", arguments: '{"a":2,"b":3}' },
      { id: "call_2", name: "mul", arguments: '{"a":2,"b":3}' },
    ]);
    assert.equal(m[1].content, "");
    assert.equal(m[2].tool_call_id, "call_1");
    // The same history passed again on the warm session is a no-op.
    const again = await rt.run({ sessionId: "oa", input: "bye", history: openai, policy: { seedMode: "reconcile" } });
    assert.equal(again.seed.mode, "noop");
  });

  test("camelCase and the module's own shape seed the same session", async () => {
    const rt = await load();
    const snake = [
      { role: "user", content: "q" },
      { role: "assistant", content: "", tool_calls: [{ id: "c", name: "f", arguments: { x: 1 } }] },
      { role: "tool", tool_call_id: "c", content: "r" },
      { role: "assistant", content: "a" },
    ];
    const camel = [
      { role: "user", content: "q" },
      { role: "assistant", content: "", toolCalls: [{ id: "c", name: "f", arguments: '{"x":1}' }] },
      { role: "tool", toolCallId: "c", content: "r" },
      { role: "assistant", content: "a" },
    ];
    await rt.run({ sessionId: "snake", input: "x", history: snake });
    await rt.run({ sessionId: "camel", input: "x", history: camel });
    assert.deepEqual(rt.session("snake").messages, rt.session("camel").messages);
  });

  test("a packed Uint8Array is passed through", async () => {
    const { packHistory } = await import("../glue.js");
    const rt = await load();
    const r = await rt.run({ sessionId: "p", input: "x", history: packHistory(twoTurns) });
    assert.equal(r.seed.seeded, 2);
  });

  test("a packed Uint8Array is checked for UTF-8; an array's lone surrogates become U+FFFD", async () => {
    const { packHistory } = await import("../glue.js");
    const rt = await load();
    const bytes = packHistory([{ role: "user", content: "ab" }]);
    bytes[bytes.indexOf(0x61)] = 0xff; // "a" -> a byte that is never UTF-8
    await rejectsWith(assert, rt.run({ sessionId: "u", input: "x", history: bytes }), "invalid_history", 0);
    assert.deepEqual(rt.listSessions(), []);
    await rt.run({ sessionId: "u", input: "x", history: [{ role: "user", content: "a\ud800b", id: "\udc00" }] });
    assert.deepEqual(rt.session("u").messages[0], { role: "user", content: "a\ufffdb", id: "\ufffd" });
  });
});

describe("refusals", () => {
  const cases = [
    { name: "unknown role", history: [...twoTurns, { role: "robot", content: "x" }], code: "invalid_history", index: 2 },
    { name: "an unknown role", history: [{ role: "robot", content: "x" }], code: "invalid_history", index: 0 },
    { name: "missing content", history: [{ role: "user" }], code: "invalid_history", index: 0 },
    { name: "content of the wrong type", history: [...twoTurns, { role: "user", content: 42 }], code: "invalid_history", index: 2 },
    { name: "a content part of an unknown type", history: [{ role: "user", content: [{ type: "video", url: "x" }] }], code: "invalid_history", index: 0 },
    { name: "role of the wrong type", history: [{ role: 1, content: "x" }], code: "invalid_history", index: 0 },
    { name: "a message that is not an object", history: [twoTurns[0], "hello"], code: "invalid_history", index: 1 },
    { name: "orphan tool result", history: [{ role: "user", content: "x" }, { role: "tool", tool_call_id: "nope", content: "r" }], code: "invalid_history", index: 1 },
    { name: "unanswered tool call", history: [{ role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] }, { role: "user", content: "x" }], code: "invalid_history", index: 0 },
    { name: "tool call of another type", history: [{ role: "assistant", content: null, tool_calls: [{ id: "c", type: "custom", function: { name: "f" } }] }], code: "invalid_history", index: 0 },
    { name: "arguments of the wrong type", history: [{ role: "assistant", content: null, tool_calls: [{ id: "c", name: "f", arguments: 5 }] }], code: "invalid_history", index: 0 },
    { name: "a message over maxMessageBytes", history: [twoTurns[0], { role: "assistant", content: "x".repeat(2048) }], code: "limit_exceeded", index: 1 },
  ];
  for (const c of cases) {
    test(`${c.name}: ${c.code} at index ${c.index}, nothing created, no events`, async () => {
      const rt = await load({ limits: { maxMessageBytes: 1024 } });
      const events = [];
      await rejectsWith(assert, rt.run({ sessionId: "s", input: "x", history: c.history, onEvent: (e) => events.push(e) }), c.code, c.index);
      assert.deepEqual(events, []);
      assert.deepEqual(rt.listSessions(), []);
      assert.equal(rt.stats().sessions, 0);
    });
  }

  test("a refused run on a warm session changes nothing", async () => {
    const rt = await load();
    await rt.run({ sessionId: "s", input: "x", history: twoTurns });
    const before = rt.session("s");
    await rejectsWith(assert, rt.run({ sessionId: "s", input: "y", history: [{ role: "who", content: "?" }] }), "invalid_history", 0);
    assert.deepEqual(rt.session("s"), before);
  });

  test("huge input and history are refused with limit_exceeded, and the runtime keeps serving", async () => {
    const rt = await load();
    await rejectsWith(assert, rt.run({ sessionId: "s", input: "x".repeat(2 << 20) }), "limit_exceeded");
    const big = [{ role: "user", content: "é".repeat(1 << 20) }];
    await rejectsWith(assert, rt.run({ sessionId: "s", input: "x", history: big }), "limit_exceeded", 0);
    assert.equal((await rt.run({ sessionId: "s", input: "still here" })).status, "completed");
  });

  test("a busy session with onBusy reject is refused with session_busy", async () => {
    const entered = deferred();
    const release = deferred();
    const rt = await load({ model: () => { entered.resolve(); return release.promise; } });
    const first = rt.run({ sessionId: "s", input: "a" });
    await entered.promise;
    await rejectsWith(assert, rt.run({ sessionId: "s", input: "b", policy: { onBusy: "reject" } }), "session_busy");
    release.resolve({ content: "ok" });
    assert.equal((await first).reply.content, "ok");
  });

  test("bad arguments reject with a TypeError naming the argument", async () => {
    const rt = await load();
    const cases = [
      [() => rt.run(), "request"],
      [() => rt.run({ sessionId: 1, input: "x" }), "sessionId"],
      [() => rt.run({ sessionId: "s", input: null }), "input"],
      [() => rt.run({ sessionId: "s", input: "x", history: {} }), "history"],
      [() => rt.run({ sessionId: "s", input: "x", policy: "fast" }), "policy"],
      [() => rt.run({ sessionId: "s", input: "x", signal: {} }), "signal"],
      [() => rt.run({ sessionId: "s", input: "x", onEvent: 1 }), "onEvent"],
      [() => rt.run({ sessionId: "s", input: "x", runId: 5 }), "runId"],
      [() => rt.startRun(Symbol("s"), "x"), "sessionId"],
      [() => rt.startRunWithHistory("s", "x", "[]"), "history"],
      [() => rt.startRunWithPolicy("s", "x", 3), "policy"],
    ];
    for (const [call, name] of cases) {
      const p = call();
      assert.ok(p instanceof Promise, `${name}: returns a Promise`);
      const err = await rejectsWith(assert, p, "invalid_argument");
      assert.ok(err instanceof TypeError, `${name}: ${err}`);
      assert.ok(err.message.includes(name), `${JSON.stringify(err.message)} names ${name}`);
    }
    assert.throws(() => rt.session(1), TypeError);
    assert.throws(() => rt.deleteSession({}), TypeError);
    assert.throws(() => rt.cancelRun(null), TypeError);
    assert.deepEqual(rt.listSessions(), []);
  });

  test("the module's own argument checks reach the host as coded Errors", async () => {
    const rt = await load();
    await rejectsWith(assert, rt.run({ sessionId: "", input: "x" }), "invalid_argument");
    await rejectsWith(assert, rt.run({ sessionId: "s", input: "x", policy: { seedMode: "sometimes" } }), "invalid_argument");
    await rejectsWith(assert, rt.run({ sessionId: "s".repeat(600), input: "x" }), "invalid_argument");
    assert.deepEqual(rt.listSessions(), []);
  });

  test("a throwing model fails the run with model_error and the instance keeps serving", async () => {
    let fail = true;
    const rt = await load({ model: () => { if (fail) throw new Error("boom"); return { content: "fine" }; } });
    await rejectsWith(assert, rt.run({ sessionId: "s", input: "x" }), "model_error");
    assert.equal(rt.session("s"), null);
    fail = false;
    assert.equal((await rt.run({ sessionId: "s", input: "x" })).reply.content, "fine");
  });
});

describe("isolation", () => {
  test("two runtimes have their own instance, global and sessions", async () => {
    const a = await load({ systemPrompt: "A" });
    const b = await load({ systemPrompt: "B" });
    assert.notEqual(a.globalName, b.globalName);
    assert.equal(typeof globalThis[a.globalName], "object");
    assert.equal(typeof globalThis[b.globalName], "object");

    await a.run({ sessionId: "same", input: "from a", history: twoTurns });
    await b.run({ sessionId: "same", input: "from b" });
    assert.equal(a.session("same").messageCount, 4);
    assert.equal(b.session("same").messageCount, 2);
    await a.run({ sessionId: "only-a", input: "x" });
    assert.deepEqual(a.listSessions(), ["only-a", "same"]);
    assert.deepEqual(b.listSessions(), ["same"]);

    a.close();
    a.close(); // idempotent
    assert.equal(a.closed, true);
    assert.equal(globalThis[a.globalName], undefined);
    await rejectsWith(assert, a.run({ sessionId: "same", input: "x" }), "invalid_argument");
    assert.throws(() => a.session("same"), (e) => e.code === "invalid_argument");
    assert.throws(() => a.stream({ sessionId: "same", input: "x" }), (e) => e.code === "invalid_argument");
    assert.equal((await b.run({ sessionId: "same", input: "still" })).messageCount, 4);
    assert.deepEqual(b.deleteSession("same"), true);
    assert.deepEqual(b.deleteSession("same"), false);
    assert.equal(b.session("same"), null);
  });

  test("runtimes loaded at the same time each get their own instance", async () => {
    const rts = await Promise.all(Array.from({ length: 5 }, (_, i) => load({ systemPrompt: `rt ${i}` })));
    const names = new Set(rts.map((rt) => rt.globalName));
    assert.equal(names.size, 5);
    await Promise.all(rts.map((rt, i) => rt.run({ sessionId: "s", input: `to ${i}` })));
    rts.forEach((rt, i) => assert.equal(rt.session("s").messages[0].content, `to ${i}`));
    for (const rt of rts) rt.close();
    for (const name of names) assert.equal(name in globalThis, false);
  });

  test("close cancels an active run", async () => {
    const entered = deferred();
    const rt = await load({ model: () => { entered.resolve(); return new Promise(() => {}); } });
    const p = rt.run({ sessionId: "s", input: "x" });
    await entered.promise;
    rt.close();
    await rejectsWith(assert, p, "cancelled");
  });

  test("concurrent runs on many sessions and one queued session all complete", async () => {
    const rt = await load();
    const runs = [];
    for (let i = 0; i < 20; i++) {
      runs.push(rt.run({ sessionId: `s${i}`, input: `hi ${i}`, history: twoTurns }));
      runs.push(rt.run({ sessionId: "shared", input: `turn ${i}` }));
    }
    const results = await Promise.all(runs);
    assert.equal(results.length, 40);
    assert.equal(rt.session("shared").messageCount, 40);
    for (let i = 0; i < 20; i++) assert.equal(rt.session(`s${i}`).messageCount, 4);
    const stats = rt.stats();
    assert.equal(stats.sessions, 21);
    assert.equal(stats.activeRuns, 0);
  });

  test("an onEvent that throws does not break the run", async () => {
    const rt = await load();
    const errors = [];
    const onError = (e) => { errors.push(e); };
    // The glue reports the callback's exception like an event listener's
    // (reportError or an uncaught exception); catch it here.
    const restore = catchReported(onError);
    try {
      const r = await rt.run({ sessionId: "s", input: "x", onEvent: () => { throw new Error("host bug"); } });
      assert.equal(r.status, "completed");
      await new Promise((resolve) => setTimeout(resolve, 0));
    } finally {
      restore();
    }
    assert.ok(errors.length > 0);
    assert.ok(errors.every((e) => e.message === "host bug"));
  });
});

describe("reentrancy", () => {
  // settles returns p's outcome, or fails the test when p has not settled
  // within ms (a turn nothing will wake).
  async function settles(p, ms = 2000) {
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
    });
    try {
      return await Promise.race([p, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  const contents = (rt, id) => rt.session(id).messages.map((m) => m.content);
  const says = (req) => ({ content: `saw ${req.messages.map((m) => m.content).join(",")}` });

  test("a turn a model that answers at once starts on its own session runs once that turn ends", async () => {
    let nested;
    const rt = await load({
      model: (req) => {
        if (req.messages.at(-1).content === "outer") nested = rt.run({ sessionId: "s", input: "inner" });
        return says(req);
      },
    });
    const r = await rt.run({ sessionId: "s", input: "outer" });
    assert.equal(r.reply.content, "saw outer");
    const n = await settles(nested);
    assert.equal(n.reply.content, "saw outer,saw outer,inner");
    assert.deepEqual(contents(rt, "s"), ["outer", "saw outer", "inner", "saw outer,saw outer,inner"]);
    assert.equal(rt.stats().activeRuns, 0);
  });

  test("a turn an event listener starts on the busy session runs once the turn ends", async () => {
    const rt = await load({ model: says });
    const nested = [];
    const onEvent = (ev) => {
      if (ev.type === "run.started" || ev.type === "message.appended") nested.push(rt.run({ sessionId: "s", input: ev.type }));
    };
    await rt.run({ sessionId: "s", input: "outer", onEvent });
    const outs = await settles(Promise.all(nested));
    assert.equal(outs.length, 3);
    assert.equal(rt.session("s").messageCount, 8);
    assert.equal(rt.stats().activeRuns, 0);
  });

  test("a history getter that runs a turn does not change the history being packed", async () => {
    // The memo of the last history packed serves a session's third turn
    // on; a getter of one of its messages runs a turn of its own, with
    // another history, on the same session or another one.
    for (const [name, other, grow] of [["same history", "s", false], ["longer history", "s", true], ["other session", "o", true]]) {
      const rt = await load({ model: says });
      let armed = false;
      let nested;
      const first = {
        role: "user",
        get content() {
          if (armed) {
            armed = false;
            nested = rt.run({ sessionId: other, input: "inner", history: [{ role: "user", content: "ZZZZ1" }, { role: "assistant", content: "ZZZZ2" }], policy: { seedMode: "reconcile" } });
          }
          return "u1";
        },
      };
      const base = [first, { role: "assistant", content: "a1" }];
      const policy = { seedMode: "reconcile" };
      await rt.run({ sessionId: "s", input: "x", history: base, policy });
      await rt.run({ sessionId: "s", input: "y", history: base, policy });
      armed = true;
      const history = grow ? [...base, { role: "user", content: "u2" }, { role: "assistant", content: "a2" }] : base;
      const r = await rt.run({ sessionId: "s", input: "outer", history, policy });
      const want = grow ? ["u1", "a1", "u2", "a2", "outer"] : ["u1", "a1", "outer"];
      assert.equal(r.reply.content, `saw ${want.join(",")}`, name);
      assert.deepEqual(contents(rt, "s"), [...want, r.reply.content], name);
      assert.equal((await settles(nested)).status, "completed", name);
      // The memo keeps serving: the same history again packs the same.
      const again = await rt.run({ sessionId: "s", input: "again", history: [...history, { role: "user", content: "outer" }, r.reply], policy });
      assert.equal(again.seed.mode, "noop", name);
    }
  });

  test("a policy is read once, so a getter that runs a turn does not break the frame being written", async () => {
    const rt = await load({ model: says });
    let reads = 0;
    let nested;
    const policy = {
      get maxSteps() {
        reads++;
        nested ??= rt.run({ sessionId: "other", input: "inner" });
        return 3;
      },
    };
    const r = await rt.run({ sessionId: "s", input: "outer", policy });
    assert.equal(r.reply.content, "saw outer");
    assert.equal(reads, 1);
    assert.equal((await settles(nested)).reply.content, "saw inner");
    // A getter that answers a checked value first and another one later
    // is held to the first.
    let k = 0;
    const fickle = { get maxContextMessages() { return ++k === 1 ? 1 : -5; } };
    await rt.run({ sessionId: "s", input: "fickle", policy: fickle });
    assert.equal(k, 1);
  });

  test("a model, a thenable and listeners may call into this runtime and another one", async () => {
    let rt2;
    const inner = [];
    const rt = await load({
      model: (req) => {
        const last = req.messages.at(-1).content;
        if (last === "sync") inner.push(rt.run({ sessionId: "b", input: "from-model" }), rt2.run({ sessionId: "s", input: "rt2" }));
        if (last === "thenable") {
          return { then(resolve) { inner.push(rt.run({ sessionId: "c", input: "from-then" })); resolve(says(req)); } };
        }
        if (last === "throws") throw new Error("boom");
        return says(req);
      },
    });
    rt2 = await load({ model: says });
    const onEvent = () => {
      rt.stats();
      rt.session("s");
      rt2.listSessions();
    };
    assert.equal((await rt.run({ sessionId: "s", input: "sync", onEvent })).reply.content, "saw sync");
    assert.equal((await rt.run({ sessionId: "s", input: "thenable", onEvent })).status, "completed");
    await rejectsWith(assert, rt.run({ sessionId: "s", input: "throws", onEvent }), "model_error");
    const outs = await settles(Promise.all(inner));
    assert.deepEqual(outs.map((r) => r.reply.content), ["saw from-model", "saw rt2", "saw from-then"]);
    assert.deepEqual(contents(rt, "s"), ["sync", "saw sync", "thenable", "saw sync,saw sync,thenable"]);
    assert.deepEqual(contents(rt2, "s"), ["rt2", "saw rt2"]);
  });

  test("events, results and messages handed out do not change with later turns", async () => {
    const rt = await load({ model: says });
    const kept = [];
    const keep = (v) => kept.push([v, JSON.stringify(v)]);
    for (let i = 0; i < 4; i++) {
      const r = await rt.run({ sessionId: i % 2 ? "a" : "b", input: `t${i}`, onEvent: keep, inspect: true });
      keep(r);
    }
    for await (const ev of rt.stream({ sessionId: "a", input: "streamed" })) keep(ev);
    await rt.run({ sessionId: "a", input: "last", history: rt.session("a").messages });
    for (const [v, json] of kept) assert.equal(JSON.stringify(v), json);
    assert.equal(kept.length, 4 * 5 + 4);
  });
});

// catchReported routes errors reported by the glue to onError until the
// returned function is called.
function catchReported(onError) {
  const saved = globalThis.reportError;
  globalThis.reportError = onError;
  return () => {
    if (saved === undefined) delete globalThis.reportError;
    else globalThis.reportError = saved;
  };
}
