// Types of agentrt/ai (ai.js), the AI SDK layer. Hand-written; keep in
// sync with ai.js and docs/ai-sdk.md. They use the types of the `ai`
// package (an optional peer dependency of agentrt, ^7.0.0).

import type { ChatTransport, LanguageModel, ToolSet, UIMessage, UIMessageChunk } from "ai";
import type { Message, Model, Policy, Runtime, Tool, WorkerRuntime } from "./glue.js";

/** What AgentrtChatTransport needs. */
export interface AgentrtChatTransportOptions {
  /** A runtime from loadRuntime, on the main thread or in worker mode. */
  runtime: Runtime | WorkerRuntime;
  /** The policy of every run (seedMode, maxSteps, repair, ...). */
  policy?: Policy | undefined;
}

/**
 * The AI SDK's ChatTransport over an agentrt runtime: each sendMessages
 * runs one turn on the session named by the chat's id and streams it as
 * UIMessageChunks (docs/ai-sdk.md).
 *
 * @example
 * const rt = await loadRuntime({ worker: true, model: languageModel(mock), tools: aiTools({ pay }) });
 * const { messages, sendMessage } = useChat({ transport: new AgentrtChatTransport({ runtime: rt }) });
 */
export declare class AgentrtChatTransport<UI_MESSAGE extends UIMessage = UIMessage> implements ChatTransport<UI_MESSAGE> {
  constructor(options: AgentrtChatTransportOptions);
  /** True: reconnectToStream replays a run in flight from its start chunk. */
  readonly resumeStreamIsReplay: boolean;
  /**
   * Runs one turn: the last user message is the input and the messages
   * before it the history (seeded once); when the last message is the
   * assistant's with approval-responded tool parts, the run resumes its
   * calls and the chunks continue that message. "regenerate-message" (and
   * a submit that edits a user message) seeds the session again from the
   * messages. Rejects with an AgentrtError when the run is refused before
   * it starts (nothing changed); a run that fails later ends its stream
   * with an error chunk ("CODE: message"), and abortSignal cancels it
   * and rolls it back (an abort chunk).
   */
  sendMessages(options: {
    trigger: "submit-message" | "regenerate-message";
    chatId: string;
    messageId: string | undefined;
    messages: UI_MESSAGE[];
    abortSignal: AbortSignal | undefined;
    [extra: string]: unknown;
  }): Promise<ReadableStream<UIMessageChunk>>;
  /** The chunks of the run in flight on chatId, from its start, or null when none is. */
  reconnectToStream(options: { chatId: string; [extra: string]: unknown }): Promise<ReadableStream<UIMessageChunk> | null>;
}

/**
 * An AI SDK LanguageModel object (provider spec v4, or v3) as agentrt's
 * JavaScript model: the request as the provider's prompt, text deltas as
 * model.delta events, tool calls as agentrt's; request.signal aborts the
 * call; a provider failure is model_error with the provider's message.
 * @param callOptions provider call settings sent on every call
 * @example
 * const rt = await loadRuntime({ model: languageModel(openai.chat("gpt-4o-mini")) });
 */
export declare function languageModel(model: Exclude<LanguageModel, string>, callOptions?: Record<string, unknown>): Exclude<Model, "echo">;

/**
 * AI SDK tools ({ name: tool({ description, inputSchema, execute,
 * needsApproval }) }) as agentrt's tools: JSON Schemas from zod,
 * jsonSchema() or a Standard Schema, input validated before execute. A
 * tool without execute, or a provider tool, is refused (TypeError,
 * invalid_argument).
 */
export declare function aiTools(tools: ToolSet): Tool[];

/** Options of toUIMessages. */
export interface ToUIMessagesOptions {
  /** Starts the ids of messages that have none (default "m"). */
  idPrefix?: string | undefined;
}

/**
 * agentrt messages (result.appended, session().messages, a stored history
 * in the module's shape) as UIMessages, with stable ids and tool parts in
 * the state their results imply (output-available, output-error,
 * output-denied, or approval-requested while a call waits). Seeded back,
 * they give the same session messages.
 */
export declare function toUIMessages(messages: ReadonlyArray<Message>, options?: ToUIMessagesOptions): UIMessage[];
