// A user's TypeScript file, type-checked under --strict against the
// installed package (js/package-test/package.test.mjs copies it next to
// node_modules/agentrt). It stores each turn's messages and passes them
// back as history, the loop every host writes. It is never run.
import { loadRuntime, AgentrtError, type Message, type HistoryMessage, type Result } from "agentrt";
import { openAIModel } from "agentrt/openai";

// Settings as a host reads them, each possibly missing: under
// exactOptionalPropertyTypes (which `tsc --init` turns on) they must still
// be passable as they are.
interface Settings {
  apiKey: string | undefined;
  baseURL: string;
  timeoutMs: number | undefined;
  signal: AbortSignal | undefined;
  system: string | undefined;
}

export async function chat(inputs: string[], apiKey: string | undefined, settings: Settings): Promise<readonly Message[]> {
  const rt = await loadRuntime({
    systemPrompt: "Be brief.",
    model: apiKey ? openAIModel({ baseURL: "https://api.openai.com/v1", model: "gpt-4o-mini", apiKey }) : "echo",
  });
  const other = await loadRuntime({
    systemPrompt: settings.system,
    model: openAIModel({ baseURL: settings.baseURL, model: "m", apiKey: settings.apiKey, signal: settings.signal }),
  });
  const first = await other.run({ sessionId: "s", input: "hi", signal: settings.signal, policy: { timeoutMs: settings.timeoutMs } });
  const firstId: string | undefined = first.appended[0]?.id;
  other.close();
  // The host's durable history: what the runtime appended, as it was.
  let stored: Message[] = [];
  for (const input of inputs) {
    try {
      const result: Result = await rt.run({ sessionId: "chat-1", input, history: stored });
      stored = [...stored, ...result.appended];
    } catch (e) {
      if (e instanceof AgentrtError && e.code === "invalid_history") console.log(e.index);
      throw e;
    }
  }
  // A session snapshot is history too, and so is a store of the wider shape.
  const snapshot = rt.session("chat-1");
  if (snapshot) await rt.run({ sessionId: "chat-2", input: "copy", history: snapshot.messages });
  const loose: HistoryMessage[] = stored;
  await rt.run({ sessionId: "chat-3", input: "loose", history: loose });
  rt.close();
  return firstId === undefined ? stored : [...stored];
}
