// A user's TypeScript file for agentrt/ai, type-checked under --strict
// against the installed package and the installed ai (js/package-test/
// ai.test.mjs copies it next to node_modules). It is never run.
import type { ChatTransport, UIMessage } from "ai";
import { tool, jsonSchema } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { loadRuntime, type Result } from "agentrt";
import { AgentrtChatTransport, aiTools, languageModel, toUIMessages } from "agentrt/ai";

export async function setUp(worker: boolean): Promise<ChatTransport<UIMessage>> {
  const tools = aiTools({
    pay: tool({ description: "pays", inputSchema: z.object({ amount: z.number() }), needsApproval: true, execute: async ({ amount }) => `paid ${amount}` }),
    look: tool({ inputSchema: jsonSchema<{ q: string }>({ type: "object", properties: { q: { type: "string" } } }), execute: ({ q }) => q.length }),
  });
  const model = languageModel(new MockLanguageModelV4(), { temperature: 0 });
  const rt = worker ? await loadRuntime({ worker: true, model, tools }) : await loadRuntime({ model, tools });
  return new AgentrtChatTransport({ runtime: rt, policy: { maxSteps: 4 } });
}

export function store(result: Result, prefix: string | undefined): UIMessage[] {
  return toUIMessages(result.appended, { idPrefix: prefix });
}
