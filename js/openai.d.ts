// Types of agentrt's OpenAI-compatible model (openai.js). Hand-written;
// keep in sync with openai.js.
import type { Message, ModelRequest, ToolCall } from "./glue.js";

/** What openAIModel needs. */
export interface OpenAIModelOptions {
  /** The API root, e.g. "https://api.openai.com/v1"; "/chat/completions" is appended. */
  baseURL: string | URL;
  /** The model name sent upstream, e.g. "gpt-4o-mini". */
  model: string;
  /** Sent as `Authorization: Bearer`; never appears in error messages. */
  apiKey?: string | null | undefined;
  /** Extra request headers. */
  headers?: Record<string, string> | undefined;
  /** Extra request fields, e.g. `{ temperature: 0 }`. */
  body?: Record<string, unknown> | undefined;
  /**
   * Also aborts the HTTP request: a signal, or a function of the model
   * request that returns one. The request's own `signal` (aborted when
   * the run is cancelled, times out or its instance dies) is always
   * used; this one is combined with it. The call then rejects with code
   * "cancelled" and name "AbortError".
   */
  signal?: AbortSignal | ((request: ModelRequest) => AbortSignal | undefined) | null | undefined;
  /** The fetch to use; default globalThis.fetch. */
  fetch?: typeof fetch | undefined;
  /**
   * The bound on an answer, in bytes received, streamed or not; a
   * positive integer, default DEFAULT_MAX_RESPONSE_BYTES (8 MiB). An
   * answer over it is not cut: the request is aborted and the call
   * rejects with code "model_error" and a message naming the bound.
   */
  maxResponseBytes?: number | undefined;
}

/** The bound on an answer when maxResponseBytes is not given: 8 MiB (8388608 bytes). */
export declare const DEFAULT_MAX_RESPONSE_BYTES: number;

/** What the model function answers. */
export interface OpenAIReply {
  content: string;
  toolCalls: ToolCall[];
}

/**
 * Returns a model function for an OpenAI-compatible chat.completions
 * endpoint: it streams text deltas (Server-Sent Events) to
 * `request.delta` and returns the answer's tool calls. Failures reject
 * with an AgentrtError: "model_error", or "cancelled" when the signal
 * aborted the request.
 * @param options the endpoint, the model and the key
 * @returns a model for loadRuntime's `model` option
 * @throws TypeError (code "invalid_argument") naming the bad option
 * @example
 * import { loadRuntime } from "agentrt";
 * import { openAIModel } from "agentrt/openai";
 * const rt = await loadRuntime({
 *   model: openAIModel({ baseURL: "https://api.openai.com/v1", model: "gpt-4o-mini", apiKey: key }),
 * });
 */
export declare function openAIModel(options: OpenAIModelOptions): (request: ModelRequest) => Promise<OpenAIReply>;

/** A message in OpenAI's chat shape, as openAIModel sends it. */
export interface OpenAIMessage {
  role: string;
  content: string | null;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
}

/** The chat.completions messages of a model request: the system prompt, then the session's messages. */
export declare function toOpenAIMessages(request: { system?: string | undefined; messages: ReadonlyArray<Message> }): OpenAIMessage[];
