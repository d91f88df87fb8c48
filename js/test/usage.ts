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
  type Result,
  type RunEvent,
  type Runtime,
  type Session,
} from "../glue.js";

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

  // Host history in the module's shape and in OpenAI's.
  const history: HistoryMessage[] = [
    { role: "system", content: "old prompt" },
    { role: "user", content: "hi", id: "m1" },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "add", arguments: { a: 1, b: 2 } } }] },
    { role: "tool", tool_call_id: "c1", content: "3" },
    { role: "assistant", content: "3", toolCalls: [] },
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
  const cancelled: boolean = rt.cancelRun("r1");
  console.log(deleted, ids, active, cancelled, rt.version, rt.globalName, toModuleHistory(history).length);
  rt.close();

  try {
    await rt.run({ sessionId: "s", input: "x" });
  } catch (e) {
    if (e instanceof AgentrtError) console.log(e.code, e.index, e.name);
  }

  // @ts-expect-error wasm is required
  await loadRuntime({ systemPrompt: "x" });
  // @ts-expect-error the model is "echo" or a function
  await loadRuntime({ wasm, model: "gpt-4" });
  // @ts-expect-error input is required
  await rt.run({ sessionId: "s" });
  // @ts-expect-error seedMode is a closed set
  await rt.run({ sessionId: "s", input: "x", policy: { seedMode: "always" } });
  // @ts-expect-error history is an array or packed bytes
  await rt.run({ sessionId: "s", input: "x", history: "[]" });
  // @ts-expect-error session ids are strings
  rt.session(1);
  // @ts-expect-error a tool needs call
  await loadRuntime({ wasm, tools: [{ name: "t" }] });
}
