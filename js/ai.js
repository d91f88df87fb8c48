// agentrt/ai: agentrt inside the Vercel AI SDK (ai@7).
//
//   import { useChat } from "@ai-sdk/react";
//   import { loadRuntime } from "agentrt";
//   import { AgentrtChatTransport, languageModel, aiTools, toUIMessages } from "agentrt/ai";
//   const rt = await loadRuntime({ worker: true, model: languageModel(provider("model-id")), tools: aiTools({ weather }) });
//   const chat = useChat({ transport: new AgentrtChatTransport({ runtime: rt }) });
//
// The one module of the package that imports `ai` (an optional peer
// dependency); it imports the glue through "./glue.js" only. The mapping
// tables and the rules are in docs/ai-sdk.md, the decisions in
// docs/adr/0022-ai-sdk-layer.md.

import { asSchema } from "ai";
import { AgentrtError, toModuleHistory } from "./glue.js";
import { argError, isObject, toUIMessages } from "./uimessages.js";
import { ChunkMapper, jsonOf, messageOf } from "./aichunks.js";

export { toUIMessages };

let idPrefix = null;
let idCount = 0;
/**
 * An id unique across page loads: a random part drawn once (where crypto
 * is), then a count. Not a UUID per call: Node's WebCrypto randomUUID
 * costs about 8 µs, a tenth of a warm turn, and a turn needs two ids.
 */
function newId() {
  if (idPrefix === null) {
    const c = globalThis.crypto;
    if (c && typeof c.randomUUID === "function") idPrefix = c.randomUUID();
    else if (c && typeof c.getRandomValues === "function") {
      idPrefix = Array.from(c.getRandomValues(new Uint8Array(16)), (x) => x.toString(16).padStart(2, "0")).join("");
    } else idPrefix = `m-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  }
  return `${idPrefix}-${(++idCount).toString(36)}`;
}

function isToolPart(p) {
  return isObject(p) && typeof p.type === "string" && (p.type === "dynamic-tool" || (p.type.length > 5 && p.type.startsWith("tool-")));
}

/** The text a user UIMessage asks with: its text parts joined. */
function userText(m) {
  if (!Array.isArray(m.parts)) throw argError("messages", "must be UIMessages (the last one has no parts array)");
  let s = "";
  for (const p of m.parts) if (isObject(p) && p.type === "text" && typeof p.text === "string") s += p.text;
  return s;
}

/**
 * A run in flight on a chat: the chunks it has sent, for
 * reconnectToStream, and the streams that follow it.
 */
class LiveRun {
  constructor() {
    this.chunks = [];
    // The controllers of the streams that follow it: an array, not a Set,
    // since it holds one stream but after a reconnect, and a Set and its
    // iterator per chunk are garbage a warm turn pays to collect.
    this.followers = [];
    this.done = false;
  }

  push(chunk) {
    this.chunks.push(chunk);
    const f = this.followers;
    for (let i = 0; i < f.length; i++) {
      try {
        f[i].enqueue(chunk);
      } catch { /* a follower cancelled */ }
    }
  }

  end() {
    this.done = true;
    const f = this.followers;
    this.followers = [];
    for (let i = 0; i < f.length; i++) {
      try {
        f[i].close();
      } catch { /* already closed */ }
    }
  }

  /** A stream of every chunk from the start; onCancel runs when its reader cancels it. */
  follow(onCancel) {
    let ctl;
    return new ReadableStream({
      start: (c) => {
        ctl = c;
        for (const chunk of this.chunks) c.enqueue(chunk);
        if (this.done) c.close();
        else this.followers.push(c);
      },
      cancel: async () => {
        const i = this.followers.indexOf(ctl);
        if (i >= 0) this.followers.splice(i, 1);
        if (onCancel) await onCancel();
      },
    });
  }
}

const TRIGGERS = new Set(["submit-message", "regenerate-message"]);

/** Whether two messages in the module's shape are the same turn, as core's Message.Equal reads them. */
function sameTurn(a, b) {
  if (a.role !== b.role || a.content !== b.content || (a.tool_call_id ?? "") !== (b.tool_call_id ?? "")) return false;
  if (a.id && b.id && a.id !== b.id) return false;
  const x = a.tool_calls ?? [];
  const y = b.tool_calls ?? [];
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) {
    if (x[i].id !== y[i].id || x[i].name !== y[i].name || x[i].arguments !== y[i].arguments) return false;
  }
  return true;
}

/**
 * What a chat's session holds after the transport's last completed turn
 * on it: the chat's messages that turn was given (`seen`, the input
 * last), the reply's id, the messages the turn appended and the
 * session's head after it. The next turn passes no history when the
 * chat's messages are `seen` (the same objects), then the reply, then a
 * new user message, and the input and reply read as what the turn
 * appended: the session already holds them, and `ifHead` makes sure no
 * one changed it since (docs/ai-sdk.md, "Warm turns").
 */
class ChatSync {
  constructor(seen, replyId, appended, head) {
    this.seen = seen;
    this.replyId = replyId;
    this.appended = appended;
    this.head = head;
  }

  /** Whether messages (ending with a new user message) continue this chat as its session holds it. */
  continuedBy(messages) {
    const seen = this.seen;
    const n = seen.length;
    if (messages.length !== n + 2) return false;
    for (let i = 0; i < n; i++) if (messages[i] !== seen[i]) return false;
    const reply = messages[n];
    if (!isObject(reply) || reply.id !== this.replyId || reply.role !== "assistant") return false;
    let read;
    try {
      read = toModuleHistory([seen[n - 1], reply]);
    } catch {
      return false; // the full path refuses it as it always did
    }
    const appended = this.appended;
    if (read.length !== appended.length) return false;
    for (let i = 0; i < read.length; i++) if (!sameTurn(read[i], appended[i])) return false;
    return true;
  }
}

/**
 * The AI SDK's ChatTransport over an agentrt runtime (docs/ai-sdk.md):
 * each sendMessages runs one turn on session `chatId` and streams it as
 * UIMessageChunks.
 */
export class AgentrtChatTransport {
  #rt;
  #policy;
  #userPolicy;
  #live = new Map();
  #sync = new Map();
  #reading = new Map();

  /**
   * @param {{ runtime: object, policy?: object }} options the runtime
   *   (from loadRuntime, either mode) and the policy of every run
   */
  constructor(options) {
    if (!isObject(options)) throw argError("options", "must be an object");
    const rt = options.runtime;
    if (!isObject(rt) || typeof rt.run !== "function" || typeof rt.deleteSession !== "function") {
      throw argError("options.runtime", "must be a runtime from loadRuntime");
    }
    if (options.policy !== undefined && options.policy !== null && !isObject(options.policy)) {
      throw argError("options.policy", "must be an object");
    }
    this.#rt = rt;
    // The chat's messages are the conversation: a warm session that lacks
    // some of them (a failed or stopped turn the chat kept, a turn of
    // another tab) is brought up to date, so the model sees what a fresh
    // runtime seeded from the same messages would.
    this.#policy = { seedMode: "reconcile", ...options.policy };
    // A warm turn that passes no history needs no seed mode.
    this.#userPolicy = options.policy ?? undefined;
  }

  /**
   * Keeps what the chat's session holds after a completed turn on it
   * (ChatSync). A turn with ifHead has the head in its result; after one
   * with history it is read from the session, kept only when no turn of
   * this transport started on the chat meanwhile and the session still
   * ends with what the turn appended.
   */
  #synced(chatId, messages, replyId, result) {
    // A copy: a caller may push onto the array it passed.
    const seen = messages.slice();
    const appended = result.appended;
    if (typeof result.head === "string") {
      this.#sync.set(chatId, new ChatSync(seen, replyId, appended, result.head));
      return;
    }
    if (typeof this.#rt.session !== "function") return;
    const token = {};
    this.#reading.set(chatId, token);
    Promise.resolve(this.#rt.session(chatId)).then((snap) => {
      if (this.#reading.get(chatId) !== token) return;
      this.#reading.delete(chatId);
      if (!isObject(snap) || typeof snap.head !== "string" || !Array.isArray(snap.messages)) return;
      const held = snap.messages;
      const k = held.length - appended.length;
      if (k < 0) return;
      for (let i = 0; i < appended.length; i++) if (!sameTurn(held[k + i], appended[i])) return;
      this.#sync.set(chatId, new ChatSync(seen, replyId, appended, snap.head));
    }, () => {});
  }

  /** reconnectToStream replays a run from its start chunk. */
  get resumeStreamIsReplay() {
    return true;
  }

  /**
   * Runs one turn: the last user message as the input, the messages
   * before it as the history; or, when the last message is the
   * assistant's with approval-responded tool parts, the resume of its
   * calls, continuing that message. Resolves with the stream once the
   * run started; a run refused before it starts (invalid_history,
   * session_busy, ...) rejects with its AgentrtError and changes nothing.
   */
  async sendMessages(options) {
    if (!isObject(options)) throw argError("options", "must be an object");
    const { trigger, chatId, messageId, messages, abortSignal } = options;
    if (!TRIGGERS.has(trigger)) throw argError("options.trigger", 'must be "submit-message" or "regenerate-message"');
    if (typeof chatId !== "string" || chatId === "") throw argError("options.chatId", "must be a non-empty string");
    if (!Array.isArray(messages) || messages.length === 0) throw argError("options.messages", "must be a non-empty array of UIMessages");
    const last = messages[messages.length - 1];
    if (!isObject(last)) throw argError("options.messages", "must hold UIMessages");
    const request = { sessionId: chatId, policy: this.#policy };
    let replyId;
    const denied = new Set();
    // The chat as its session holds it after this transport's last turn
    // on it, taken once: a turn that fails or pauses leaves none.
    const sync = this.#sync.get(chatId);
    if (sync !== undefined) this.#sync.delete(chatId);
    this.#reading.delete(chatId);
    // The chat as the session holds it, when it holds every message but
    // the input (ChatSync.continuedBy).
    let warm = null;
    if (last.role === "user") {
      request.input = userText(last);
      // A regenerated answer, or an edited user message (submit with the
      // id of a user message): the session is seeded again from the
      // messages, so it holds only what the chat now shows.
      if (trigger === "regenerate-message" || (messageId !== undefined && messageId !== null && messageId === last.id)) {
        await this.#rt.deleteSession(chatId);
      } else if (sync !== undefined && sync.continuedBy(messages)) {
        warm = sync;
      }
      // A warm turn's history is made only if it is refused (again below).
      if (warm === null) request.history = messages.slice(0, -1);
      replyId = newId();
    } else if (last.role === "assistant" && Array.isArray(last.parts) &&
      last.parts.some((p) => isToolPart(p) && p.state === "approval-responded")) {
      request.history = messages;
      for (const p of last.parts) {
        if (isToolPart(p) && p.state === "approval-responded" && isObject(p.approval) && p.approval.approved === false) denied.add(p.toolCallId);
      }
      replyId = typeof last.id === "string" && last.id !== "" ? last.id : newId();
    } else {
      throw argError("options.messages", "must end with a user message, or an assistant message with approval-responded tool parts");
    }
    // The chat's abortSignal is the run's own (aborting it cancels the
    // run, rolled back); the chat's stream cancelled by its reader cancels
    // the run by its id. No AbortController of ours: making one and
    // listening on it cost a warm turn more than the mapping does.
    if (abortSignal !== undefined && abortSignal !== null) request.signal = abortSignal;
    const runId = `ai:${newId()}`;
    request.runId = runId;
    const live = new LiveRun();
    // The chat's stream, made before the run: with a JavaScript model on
    // the main thread the whole turn runs inside rt.run, and its chunks
    // are queued as they come, with no iterator or Promise of ours
    // between an event and its chunk.
    const stream = live.follow(async () => {
      cancelled = true;
      try {
        // A Promise in worker mode, a boolean on the main thread.
        const r = this.#rt.cancelRun(runId);
        if (r && typeof r.then === "function") r.then(undefined, () => {});
      } catch { /* the runtime closed: the run ends anyway */ }
      await settled;
      finish();
    });
    const mapper = new ChunkMapper(replyId, denied, (c) => live.push(c));
    let started = false;
    let onStarted = null;
    let ended = false;
    let cancelled = false;
    // The events mapped so far, and whether the start chunk went out (a
    // turn run again after its refusal sends no second one).
    let mapped = 0;
    let startSent = false;
    // Events come as they happen (rt.run's onEvent); the run's end comes
    // from its result.
    request.onEvent = (ev) => {
      if (ended || !isObject(ev)) return;
      const type = ev.type;
      if (type === "run.started") {
        started = true;
        if (onStarted !== null) onStarted();
        if (startSent) return;
        startSent = true;
      }
      if (type !== "run.completed" && type !== "run.awaiting_approval" && type !== "run.failed" && type !== "run.cancelled") {
        mapped++;
        mapper.event(ev);
      }
    };
    // A warm turn passes no history to read, pack and compare, on the
    // condition that the session is still at the head the last turn left.
    // Refused history_diverged otherwise (after run.started, before
    // anything changed), it runs again once, with its history.
    let retry = warm !== null;
    if (retry) {
      request.ifHead = warm.head;
      if (this.#userPolicy === undefined) delete request.policy;
      else request.policy = this.#userPolicy;
    }
    const again = (error) => {
      if (!retry || cancelled || mapped > 1 || !isObject(error) || error.code !== "history_diverged") return null;
      // The session changed since this transport's last turn (another
      // tab, deleteSession, a new runtime).
      retry = false;
      const full = { ...request, policy: this.#policy, history: messages.slice(0, -1) };
      delete full.ifHead;
      return this.#rt.run(full);
    };
    const finish = () => {
      ended = true;
      mapper.flush();
      live.end();
      if (this.#live.get(chatId) === live) this.#live.delete(chatId);
    };
    let run = this.#rt.run(request);
    for (;;) {
      if (started) break;
      // The run starts later (worker mode, a runtime restarting), or was
      // refused: wait for whichever comes first.
      const first = await Promise.race([
        new Promise((resolve) => { onStarted = resolve; }),
        run.then(() => undefined, (error) => ({ error })),
      ]);
      if (started || !first || !first.error) break;
      onStarted = null;
      const next = again(first.error);
      if (next !== null) {
        run = next;
        continue;
      }
      // Refused before it started: nothing changed.
      finish();
      throw first.error;
    }
    this.#live.set(chatId, live);
    const follow = (r) => r.then((result) => {
      if (ended) return;
      if (last.role === "user" && result.status === "completed" && Array.isArray(result.appended)) this.#synced(chatId, messages, replyId, result);
      mapper.event({ type: result.status === "awaiting_approval" ? "run.awaiting_approval" : "run.completed", result });
      finish();
    }, (error) => {
      if (ended) return;
      const next = again(error);
      if (next !== null) return follow(next);
      if (!cancelled) mapper.failed(error);
      finish();
    });
    const settled = follow(run);
    // The chat's stream follows the run from its start.
    return stream;
  }

  /**
   * The chunks of the run in flight on `chatId`, from its start chunk
   * (resumeStreamIsReplay), or null when none is.
   */
  async reconnectToStream(options) {
    if (!isObject(options) || typeof options.chatId !== "string") throw argError("options.chatId", "must be a string");
    const live = this.#live.get(options.chatId);
    if (!live || live.done) return null;
    return live.follow();
  }
}

// --- languageModel: an AI SDK LanguageModel as agentrt's model ---

/**
 * The provider prompt of a model request: the system prompt, then the
 * session's messages, tool calls and results included (docs/ai-sdk.md,
 * "languageModel").
 */
function toPrompt(system, messages) {
  const prompt = [];
  if (typeof system === "string" && system !== "") prompt.push({ role: "system", content: system });
  const names = new Map();
  for (const m of messages) {
    if (m.role === "system") {
      prompt.push({ role: "system", content: m.content ?? "" });
    } else if (m.role === "user") {
      prompt.push({ role: "user", content: [{ type: "text", text: m.content ?? "" }] });
    } else if (m.role === "assistant") {
      const content = [];
      if (m.content) content.push({ type: "text", text: m.content });
      for (const c of m.tool_calls ?? []) {
        names.set(c.id, c.name);
        let input = c.arguments;
        try {
          input = JSON.parse(c.arguments);
        } catch { /* the text as it is */ }
        content.push({ type: "tool-call", toolCallId: c.id, toolName: c.name, input });
      }
      prompt.push({ role: "assistant", content });
    } else if (m.role === "tool") {
      const part = {
        type: "tool-result", toolCallId: m.tool_call_id, toolName: names.get(m.tool_call_id) ?? "",
        output: { type: "text", value: m.content ?? "" },
      };
      const prev = prompt[prompt.length - 1];
      if (prev && prev.role === "tool") prev.content.push(part);
      else prompt.push({ role: "tool", content: [part] });
    }
  }
  return prompt;
}

function modelError(e) {
  if (e instanceof AgentrtError) return e;
  return new AgentrtError("model_error", `agentrt/ai: ${messageOf(e)}`, { cause: e });
}

/**
 * Returns agentrt's JavaScript model for an AI SDK LanguageModel of the
 * provider spec v4 (or v3): each call streams the provider's answer
 * (doStream), hands text deltas to request.delta and returns the text
 * and the tool calls. request.signal aborts the provider's call. A
 * provider failure is model_error with the provider's message.
 *
 * @param {object} model a LanguageModelV4 (or V3) object
 * @param {object} [callOptions] provider call settings sent on every call
 *   (temperature, maxOutputTokens, providerOptions, ...)
 */
export function languageModel(model, callOptions) {
  if (!isObject(model) || typeof model.doStream !== "function") {
    throw argError("model", "must be an AI SDK LanguageModel object (with doStream); a model id string needs its provider");
  }
  if (model.specificationVersion !== "v4" && model.specificationVersion !== "v3") {
    throw argError("model", `has specificationVersion ${JSON.stringify(model.specificationVersion)}: "v4" or "v3" is supported`);
  }
  if (callOptions !== undefined && !isObject(callOptions)) throw argError("callOptions", "must be an object");
  return async function aiModel(request) {
    const signal = request.signal;
    const tools = request.tools.map((t) => ({
      type: "function", name: t.name, description: t.description,
      inputSchema: isObject(t.parameters) ? t.parameters : { type: "object", properties: {} },
    }));
    const options = { ...callOptions, prompt: toPrompt(request.system, request.messages), abortSignal: signal };
    if (tools.length > 0) options.tools = tools;
    let result;
    try {
      result = await model.doStream(options);
    } catch (e) {
      throw modelError(e);
    }
    if (!isObject(result) || !result.stream || typeof result.stream.getReader !== "function") {
      throw new AgentrtError("model_error", "agentrt/ai: doStream returned no stream");
    }
    const reader = result.stream.getReader();
    let text = "";
    const toolCalls = [];
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!isObject(value)) continue;
        if (value.type === "text-delta" && typeof value.delta === "string") {
          text += value.delta;
          request.delta(value.delta);
        } else if (value.type === "tool-call" && !value.providerExecuted) {
          const input = typeof value.input === "string" ? value.input : (jsonOf(value.input ?? {}) ?? "{}");
          toolCalls.push({ id: value.toolCallId, name: value.toolName, arguments: input });
        } else if (value.type === "error") {
          throw value.error;
        }
      }
    } catch (e) {
      reader.cancel().catch(() => {});
      throw modelError(e);
    }
    return toolCalls.length > 0 ? { content: text, toolCalls } : { content: text };
  };
}

// --- aiTools: AI SDK tool() objects as agentrt's tools ---

/** The final value of a tool's execute: the last one an AsyncIterable yields. */
async function settle(out) {
  if (isObject(out) && typeof out[Symbol.asyncIterator] === "function") {
    let last;
    for await (const v of out) last = v;
    return last;
  }
  return out;
}

/**
 * Returns agentrt's tools for an AI SDK tool set ({ name: tool({...}) }):
 * each tool's description, its input schema as JSON Schema (zod,
 * jsonSchema() or a Standard Schema, through the AI SDK's asSchema), its
 * execute as the call (its input validated by the schema first) and its
 * needsApproval. A tool without execute, or a provider tool, is refused:
 * agentrt runs every tool it lists.
 *
 * @param {Record<string, object>} tools
 * @returns {Array<object>} tools for loadRuntime's `tools`
 */
export function aiTools(tools) {
  if (!isObject(tools) || Array.isArray(tools)) throw argError("tools", "must be an object of AI SDK tools by name");
  const out = [];
  for (const [name, t] of Object.entries(tools)) {
    const at = `tools.${name}`;
    if (!isObject(t)) throw argError(at, "must be a tool object");
    if (t.type !== undefined && t.type !== "function" && t.type !== "dynamic") throw argError(at, `is a ${t.type} tool: only function tools run in agentrt`);
    if (typeof t.execute !== "function") throw argError(`${at}.execute`, "must be a function: agentrt runs every tool it lists");
    let schema;
    try {
      schema = asSchema(t.inputSchema);
    } catch (e) {
      throw argError(`${at}.inputSchema`, `is not a schema: ${messageOf(e)}`);
    }
    const parameters = schema.jsonSchema;
    if (isObject(parameters) && typeof parameters.then === "function") {
      throw argError(`${at}.inputSchema`, "has a JSON Schema that is a Promise: resolve it first and pass jsonSchema(schema)");
    }
    const validate = typeof schema.validate === "function" ? schema.validate.bind(schema) : null;
    const input = async (args) => {
      if (!validate) return args;
      const r = await validate(args);
      if (r && r.success === false) throw new AgentrtError("tool_error", `agentrt/ai: ${name}: invalid input: ${messageOf(r.error)}`);
      return r && "value" in r ? r.value : args;
    };
    const tool = {
      name,
      parameters,
      call: async (args, ctx) => settle(await t.execute(await input(args), { toolCallId: ctx.toolCallId, messages: [], context: undefined })),
    };
    if (typeof t.description === "string") tool.description = t.description;
    if (typeof t.needsApproval === "function") {
      const ask = t.needsApproval;
      tool.needsApproval = async (args, ctx) => Boolean(await ask(await input(args), { toolCallId: ctx.toolCallId, messages: [], context: undefined }));
    } else if (t.needsApproval === true) {
      tool.needsApproval = true;
    }
    out.push(tool);
  }
  return out;
}
