// Type test of glue.d.ts: this file must type-check with
//   node_modules/.bin/tsc --noEmit --strict -p js/test/tsconfig.json
// Lines marked @ts-expect-error must stay errors. It is never run.
import {
  AgentrtError,
  compile,
  loadRuntime,
  packHistory,
  toModuleHistory,
  type HistoryMessage,
  type Message,
  type Result,
  type RunEvent,
  type Runtime,
  type Session,
} from "../glue.js";
import { openAIModel, toOpenAIMessages, DEFAULT_MAX_RESPONSE_BYTES, type OpenAIModelOptions } from "../openai.js";

export function models(runId: string): void {
  const controllers = new Map<string, AbortController>();
  const options: OpenAIModelOptions = {
    baseURL: new URL("https://api.openai.com/v1"),
    model: "gpt-4o-mini",
    apiKey: "sk-...",
    body: { temperature: 0 },
    signal: (req) => controllers.get(req.runId)?.signal,
  };
  void loadRuntime({ model: openAIModel(options) });
  void loadRuntime({ model: openAIModel({ baseURL: "http://127.0.0.1:8080/v1", model: "local", signal: new AbortController().signal }) });
  console.log(toOpenAIMessages({ system: "s", messages: [{ role: "user", content: runId }] }).length);
  // @ts-expect-error the model name is required
  openAIModel({ baseURL: "https://api.openai.com/v1" });
  // @ts-expect-error the key is a string
  openAIModel({ baseURL: "https://api.openai.com/v1", model: "m", apiKey: 5 });
  void openAIModel({ baseURL: "http://127.0.0.1:8080/v1", model: "local", maxResponseBytes: 2 * DEFAULT_MAX_RESPONSE_BYTES });
  // @ts-expect-error the bound is a number of bytes
  openAIModel({ baseURL: "https://api.openai.com/v1", model: "m", maxResponseBytes: "8MiB" });
}

export async function usage(): Promise<void> {
  const wasm = await compile(new URL("./agentrt.wasm", import.meta.url));
  const rt: Runtime = await loadRuntime({
    wasm,
    wasmExec: "/wasm_exec.js",
    systemPrompt: "Be brief.",
    model: async (req) => {
      req.delta("thinking");
      const last = req.messages[req.messages.length - 1];
      return { content: `you said ${last.content} to ${req.sessionId}` };
    },
    tools: [
      {
        name: "add",
        description: "Adds two numbers",
        parameters: { type: "object" },
        call: (args: { a: number; b: number }, ctx) => `${args.a + args.b} for ${ctx.toolCallId}`,
      },
    ],
    limits: { maxSessions: 10, maxMessageBytes: 1 << 20, maxTotalBytes: 32 << 20 },
  });
  await loadRuntime({ wasm: new Uint8Array(8), model: "echo" });
  await loadRuntime({ wasm: "/agentrt.wasm" });
  // The host's token counter: a message in, a number out.
  await loadRuntime({ countTokens: (m: Message) => Math.ceil((m.content ?? "").length / 4) + 4 });
  // Without wasm: the agentrt.wasm shipped next to glue.js.
  await loadRuntime();
  await loadRuntime({ systemPrompt: "x", model: () => "a plain string answer" });
  // A model hands the run's signal to fetch: the request ends with the run.
  await loadRuntime({
    model: async (req) => {
      const signal: AbortSignal = req.signal;
      const step: number = req.step;
      const res = await fetch("https://example.invalid/v1", { method: "POST", body: JSON.stringify(req.messages), signal });
      return { content: `${step}: ${await res.text()}` };
    },
  });
  // @ts-expect-error the signal is the runtime's to set
  void loadRuntime({ model: (req) => { req.signal = new AbortController().signal; return ""; } });

  // Host history in the module's shape, OpenAI's and the AI SDK's.
  const history: HistoryMessage[] = [
    { role: "system", content: "old prompt" },
    { role: "user", content: "hi", id: "m1" },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "add", arguments: { a: 1, b: 2 } } }] },
    { role: "tool", tool_call_id: "c1", content: "3" },
    { role: "assistant", content: "3", toolCalls: [] },
    { role: "developer", content: [{ type: "text", text: "Be brief." }] },
    { id: "m5", role: "user", parts: [{ type: "text", text: "and 2 + 2?" }] },
    { id: "m6", role: "assistant", parts: [{ type: "tool-add", toolCallId: "c2", state: "output-available", input: { a: 2, b: 2 }, output: 4 }, { type: "text", text: "4" }] },
  ];
  const ac = new AbortController();
  const result: Result = await rt.run({
    sessionId: "chat-1",
    input: "and now?",
    history,
    policy: { seedMode: "reconcile", onBusy: "reject", maxSteps: 4, timeoutMs: 30_000 },
    signal: ac.signal,
    onEvent: (ev) => {
      if (ev.type === "model.delta") console.log(ev.delta.length);
    },
  });
  const mode: "cold" | "noop" | "appended" | "replaced" | "none" = result.seed.mode;
  const text: string = result.reply.content;
  console.log(mode, text, result.appended.length, result.messageCount);

  for await (const ev of rt.stream({ sessionId: "chat-1", input: "stream", history: packHistory(history) })) {
    const e: RunEvent = ev;
    if (e.type === "run.completed") console.log(e.result.reply.content, e.seq);
    if (e.type === "tool.started") console.log(e.toolCall.name);
  }

  await rt.startRun("s", "x");
  await rt.startRunWithPolicy("s", "x", { toolErrors: "report" });
  await rt.startRunWithHistory("s", "x", history, { runId: "r1" });
  await rt.startRunWithPolicyAndHistory("s", "x", {}, history, { onEvent: () => {}, signal: ac.signal });

  const s: Session | null = rt.session("chat-1");
  if (s) console.log(s.messageCount, s.messages[0].role);
  const deleted: boolean = rt.deleteSession("chat-1");
  const ids: string[] = rt.listSessions();
  const active: number = rt.stats().activeRuns;
  const budget: number | undefined = rt.stats().budgetUsed;
  console.log(budget, rt.stats().budgetBytes);
  const check = rt.checkHistory(history);
  const fixable: boolean = !check.ok && check.problems.every((p) => p.repair !== null);
  const repaired = await rt.run({ sessionId: "s", input: "x", history, policy: { repair: true } });
  const kinds: string[] = (repaired.seed.repairs ?? []).map((r) => r.kind + r.index + (r.toolCallId ?? ""));
  // The healed copy replaces the host's, then the turn is appended.
  let healed: HistoryMessage[] = [...history];
  if (repaired.seed.repaired) healed = repaired.seed.repaired;
  healed.push(...repaired.appended);
  console.log(fixable, kinds, healed.length);
  const cancelled: boolean = rt.cancelRun("r1");
  console.log(deleted, ids, active, cancelled, rt.version, rt.globalName, toModuleHistory(history).length);

  await loop(rt);
  rt.close();

  try {
    await rt.run({ sessionId: "s", input: "x" });
  } catch (e) {
    if (e instanceof AgentrtError) console.log(e.code, e.index, e.name);
    // A failed resume's kept results, stored like result.appended.
    const kept: Message[] = e instanceof AgentrtError && e.appended ? [...e.appended] : [];
    console.log(kept.length);
  }

  // @ts-expect-error the model is "echo" or a function
  await loadRuntime({ wasm, model: "gpt-4" });
  // @ts-expect-error input is required
  await rt.run({ sessionId: "s" });
  // Approvals resume a paused run, with no input.
  const paused = await rt.run({ sessionId: "s", input: "pay" });
  if (paused.status === "awaiting_approval" && paused.pendingApprovals) {
    const [p] = paused.pendingApprovals;
    await rt.run({ sessionId: "s", approvals: [{ toolCallId: p.toolCallId, approved: false, reason: "no" }] });
  }
  // @ts-expect-error approvals take no input
  await rt.run({ sessionId: "s", input: "x", approvals: [] });
  await loadRuntime({ wasm, tools: [{ name: "pay", call: () => "paid", needsApproval: async (args: { amount: number }) => args.amount > 100 }] });
  // @ts-expect-error seedMode is a closed set
  await rt.run({ sessionId: "s", input: "x", policy: { seedMode: "always" } });
  // @ts-expect-error history is an array or packed bytes
  await rt.run({ sessionId: "s", input: "x", history: "[]" });
  // @ts-expect-error session ids are strings
  rt.session(1);
  // @ts-expect-error a tool needs call
  await loadRuntime({ wasm, tools: [{ name: "t" }] });
}

// The host's loop: store what each turn appended, pass the store back.
export async function loop(rt: Runtime): Promise<Message[]> {
  let stored: Message[] = [];
  for (const input of ["a", "b"]) {
    const result = await rt.run({ sessionId: "loop", input, history: stored });
    stored = [...stored, ...result.appended];
  }
  // A session snapshot, a reply and a wider store are history too.
  const snapshot = rt.session("loop");
  if (snapshot) await rt.startRunWithHistory("copy", "x", snapshot.messages);
  const last = await rt.run({ sessionId: "loop", input: "c", history: stored });
  const wide: HistoryMessage[] = [...stored, last.reply];
  await rt.run({ sessionId: "loop", input: "d", history: wide });
  const frozen: readonly Message[] = Object.freeze([...stored]);
  await rt.run({ sessionId: "loop", input: "e", history: frozen });
  // A host's own record type with more fields is accepted as it is.
  interface Row { role: "user" | "assistant"; content: string; createdAt: number; tool_calls?: Message["tool_calls"] }
  const rows: Row[] = [{ role: "user", content: "hi", createdAt: 1 }];
  await rt.run({ sessionId: "rows", input: "x", history: rows });
  // OpenAI-shaped rows too.
  const openai = [
    { role: "assistant" as const, content: null, tool_calls: [{ id: "c", type: "function" as const, function: { name: "t", arguments: "{}" } }] },
    { role: "tool" as const, tool_call_id: "c", content: "ok" },
  ];
  await rt.run({ sessionId: "openai", input: "x", history: openai });

  // @ts-expect-error messages the runtime hands out are frozen
  last.reply.content = "changed";
  // @ts-expect-error their tool calls too
  last.appended[0].tool_calls?.push({ id: "x", name: "y", arguments: "{}" });
  // @ts-expect-error a role the runtime refuses ("developer" is read as "system")
  await rt.run({ sessionId: "s", input: "x", history: [{ role: "robot", content: "x" }] });
  // @ts-expect-error content is text
  await rt.run({ sessionId: "s", input: "x", history: [{ role: "user", content: 5 }] });
  return stored;
}

export async function workerMode(): Promise<void> {
  const rt = await loadRuntime({ worker: true, model: (req) => `seen ${req.messages.length}` });
  const r: Result = await rt.run({ sessionId: "w", input: "hi" });
  const s: Session | null = await rt.session("w");
  const ids: string[] = await rt.listSessions();
  const cancelled: boolean = await rt.cancelRun(r.runId);
  const w: Worker = rt.worker;
  // @ts-expect-error worker mode answers with a Promise
  const sync: Session | null = rt.session("w");
  const main: Runtime = await loadRuntime({ worker: false });
  void loadRuntime({ worker: new URL("https://example.com/agentrt/worker.js") });
  // @ts-expect-error worker is a boolean, a string or a URL
  void loadRuntime({ worker: 1 });
  console.log(s, ids, cancelled, w, sync, main.session("w"));
}

export async function sharedMode(): Promise<void> {
  const rt = await loadRuntime({ worker: "shared", agent: new URL("https://example.com/agent.js"), name: "chat" });
  const mode: "main" | "worker" | "shared" = rt.mode;
  const stop: () => Promise<void> = await rt.watch("c", (ev) => { if (ev.type === "model.delta") console.log(ev.delta); });
  for await (const ev of rt.reconnect("run-1", { after: 3 })) {
    if (ev.type === "run.gap") console.log(ev.next, ev.dropped);
    else console.log(ev.seq);
  }
  const active: string[] = await rt.activeRuns("c");
  // @ts-expect-error the model comes from the agent module in shared mode
  void loadRuntime({ worker: "shared", agent: "/agent.js", model: "echo" });
  const main: Runtime = await loadRuntime({});
  const unwatch: () => void = main.watch("c", () => {});
  console.log(mode, active, unwatch);
  await stop();
}
