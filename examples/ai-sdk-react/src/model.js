// The model behind the chat: an AI SDK LanguageModel (provider spec v4),
// handed to agentrt through languageModel() from agentrt/ai.
//
// By default it is mockModel(), which needs no network and answers the
// same way every time:
//   - "pay Alice 25" (or "send Bob 10") calls the transfer tool, which
//     needs the user's approval;
//   - "weather in Paris" calls the weather tool, which runs at once;
//   - after a tool result it says what the tool answered (or that the
//     call was denied);
//   - anything else is echoed with the number of messages the model was
//     sent and how many times it was asked that same prompt ("take 2"
//     after a regenerate: the old answer is not in the prompt).
//
// An OpenAI-compatible endpoint (OpenAI, a local Ollama, llama.cpp or
// LM Studio server, a proxy of yours) is used instead when the page's
// query names one (?endpoint=http://127.0.0.1:11434/v1&model=llama3.2) or
// the build's environment does (VITE_OPENAI_BASE_URL, VITE_OPENAI_MODEL,
// VITE_OPENAI_API_KEY). A key put in the environment is built into the
// page: use it with a local server or a proxy, never with a real key on a
// public site.

/** The text of a prompt message's content (a string or an array of parts). */
function contentText(content) {
  if (typeof content === "string") return content;
  return content.filter((p) => p.type === "text").map((p) => p.text).join("");
}

/** What a tool result part of the prompt says, as text. */
function toolOutputText(output) {
  if (!output) return "";
  switch (output.type) {
    case "text":
    case "error-text":
      return String(output.value);
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    case "execution-denied":
      return output.reason ? `Tool call denied: ${output.reason}` : "Tool call denied.";
    case "content":
      return output.value.filter((p) => p.type === "text").map((p) => p.text).join("");
    default:
      return JSON.stringify(output);
  }
}

// The mock's answer to prompt: { text } or { toolCall: { toolName, input } }.
function answer(prompt, takes) {
  const messages = prompt.filter((m) => m.role !== "system");
  const last = messages[messages.length - 1];
  if (last?.role === "tool") {
    const said = last.content.filter((p) => p.type === "tool-result").map((p) => ({ name: p.toolName, text: toolOutputText(p.output) }));
    const denied = said.filter((s) => s.text.startsWith("Tool call denied"));
    if (denied.length) return { text: `Understood: the ${denied.map((s) => s.name).join(", ")} call was denied, so nothing was done.` };
    return { text: said.map((s) => `The ${s.name} tool answered: ${s.text}`).join(" ") };
  }
  const text = last ? contentText(last.content) : "";
  const pay = /\b(?:pay|send)\s+([A-Za-z]+)\s+\$?(\d+(?:\.\d+)?)/i.exec(text);
  if (pay) return { toolCall: { toolName: "transfer", input: { to: pay[1], amount: Number(pay[2]) } } };
  const weather = /\bweather(?:\s+in\s+([A-Za-z ]+?))?\s*[?.!]*$/i.exec(text);
  if (weather) return { toolCall: { toolName: "weather", input: { city: weather[1]?.trim() || "Paris" } } };
  const key = JSON.stringify(messages);
  const take = (takes.get(key) ?? 0) + 1;
  takes.set(key, take);
  return { text: `Echo: ${text} (the model was sent ${messages.length} messages; take ${take})` };
}

const usage = (input, output) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

const pause = (signal) => new Promise((resolve, reject) => {
  if (signal?.aborted) { reject(signal.reason); return; }
  setTimeout(resolve, 15);
});

/**
 * mockModel returns a LanguageModel (specification v4) that answers by the
 * rules above, streaming its text word by word. It honours abortSignal.
 */
export function mockModel() {
  let calls = 0;
  const takes = new Map();
  const respond = (options) => {
    calls++;
    const a = answer(options.prompt, takes);
    const id = `mock-${calls}`;
    return { a, id, inputTokens: options.prompt.length };
  };
  return {
    specificationVersion: "v4",
    provider: "mock",
    modelId: "mock-echo",
    supportedUrls: {},
    async doGenerate(options) {
      const { a, id, inputTokens } = respond(options);
      await pause(options.abortSignal);
      const content = a.toolCall
        ? [{ type: "tool-call", toolCallId: `call-${id}`, toolName: a.toolCall.toolName, input: JSON.stringify(a.toolCall.input) }]
        : [{ type: "text", text: a.text }];
      return {
        content,
        finishReason: { unified: a.toolCall ? "tool-calls" : "stop", raw: undefined },
        usage: usage(inputTokens, 1),
        warnings: [],
      };
    },
    async doStream(options) {
      const { a, id, inputTokens } = respond(options);
      const signal = options.abortSignal;
      const stream = new ReadableStream({
        async start(controller) {
          try {
            controller.enqueue({ type: "stream-start", warnings: [] });
            controller.enqueue({ type: "response-metadata", id, modelId: "mock-echo" });
            if (a.toolCall) {
              const input = JSON.stringify(a.toolCall.input);
              const callId = `call-${id}`;
              controller.enqueue({ type: "tool-input-start", id: callId, toolName: a.toolCall.toolName });
              controller.enqueue({ type: "tool-input-delta", id: callId, delta: input });
              controller.enqueue({ type: "tool-input-end", id: callId });
              controller.enqueue({ type: "tool-call", toolCallId: callId, toolName: a.toolCall.toolName, input });
            } else {
              controller.enqueue({ type: "text-start", id });
              for (const word of a.text.match(/\S+\s*/g) ?? []) {
                await pause(signal);
                controller.enqueue({ type: "text-delta", id, delta: word });
              }
              controller.enqueue({ type: "text-end", id });
            }
            controller.enqueue({
              type: "finish",
              finishReason: { unified: a.toolCall ? "tool-calls" : "stop", raw: undefined },
              usage: usage(inputTokens, 1),
            });
            controller.close();
          } catch (e) {
            controller.error(e);
          }
        },
      });
      return { stream };
    },
  };
}

/**
 * endpointConfig reads the OpenAI-compatible endpoint from the page's
 * query (endpoint, model) or the build's environment; null means the mock.
 */
export function endpointConfig(search = location.search) {
  const q = new URLSearchParams(search);
  const env = import.meta.env;
  const baseURL = q.get("endpoint") || env.VITE_OPENAI_BASE_URL || "";
  if (!baseURL) return null;
  return {
    baseURL,
    model: q.get("model") || env.VITE_OPENAI_MODEL || "gpt-4o-mini",
    apiKey: env.VITE_OPENAI_API_KEY || "none",
  };
}

/**
 * chooseModel resolves with { model, label }: the endpoint's chat model
 * through @ai-sdk/openai when one is configured (imported only then), or
 * the mock.
 */
export async function chooseModel(config = endpointConfig()) {
  if (!config) return { model: mockModel(), label: "mock model (no network)" };
  const { createOpenAI } = await import("@ai-sdk/openai");
  const provider = createOpenAI({ baseURL: config.baseURL, apiKey: config.apiKey });
  // .chat(): the Chat Completions API, which OpenAI-compatible servers speak.
  return { model: provider.chat(config.model), label: `${config.model} at ${config.baseURL}` };
}
