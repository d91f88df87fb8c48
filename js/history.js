// agentrt history: reads the messages a host passes, in every shape the
// runtime accepts; pack.js packs what it reads in the module's packed
// format.
//
// These are the rules of core/hostmsg (docs/contract.md, "Messages and
// host messages"), written once more in JavaScript because the glue must
// read the shapes before it packs them. The corpus in testdata/contract/
// holds both to the same results: same messages, same error code, index
// and message text.
// Imported by glue.js, driver.js, quick.js and pack.js, which reads every
// message through readAt.

import { argError, historyError } from "./errors.js";

/** What absent or null tool-call arguments become. */
export const EMPTY_ARGUMENTS = "{}";

// Part types that carry no text for the model: OpenAI's image, audio and
// file parts, the AI SDK's reasoning, file, source and step parts, the
// parts ai@7 added (custom, reasoning-file, steering-message); and every
// "data-" part.
const SKIPPED = new Set(["image_url", "input_audio", "file", "reasoning", "source-url", "source-document", "step-start",
  "custom", "reasoning-file", "steering-message"]);

/** Reports whether parts of type t are left out of a message. */
export function skippedPart(t) {
  return SKIPPED.has(t) || (t.length > 5 && t.startsWith("data-"));
}

/**
 * The error a history refusal becomes when the caller names none: an
 * AgentrtError invalid_history at the host message's index.
 */
export function defaultFail(index, message) {
  return historyError(index, message);
}

/**
 * A TypeError with code invalid_argument: name what (an AgentrtError to
 * instanceof, as every argument error of the glue).
 */
export { argError };

/** Reports whether v is an object (arrays included), not null. */
export function isObject(v) {
  return v !== null && typeof v === "object";
}

function isRecord(v) {
  return isObject(v) && !Array.isArray(v);
}

function nullish(v) {
  return v === undefined || v === null;
}

function optionalString(v) {
  return v === undefined || v === null || typeof v === "string";
}

/**
 * Returns s in double quotes, cut to at most 64 bytes of UTF-8 at a
 * character boundary (and "..." appended), as core/hostmsg cuts it.
 */
export function quote(s) {
  let bytes = 0;
  let i = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0);
    const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes + n > 64) return `"${s.slice(0, i)}..."`;
    bytes += n;
    i += ch.length;
  }
  return `"${s}"`;
}

// A reading failure: the message's text, without its index. read* functions
// throw it; the exported functions turn it into the caller's error.
class Refused {
  constructor(message) {
    this.message = message;
  }
}

/**
 * The one rule for tool-call arguments (and a tool part's input): a string
 * is kept as it is, null or absent is "{}", an object is its JSON text,
 * anything else is refused. at is the field's path for the message.
 */
function readArguments(a, at) {
  if (typeof a === "string") return a;
  if (nullish(a)) return EMPTY_ARGUMENTS;
  if (!isRecord(a)) throw new Refused(`${at} must be JSON text or an object`);
  let s;
  try {
    s = JSON.stringify(a);
  } catch {
    s = undefined;
  }
  if (typeof s !== "string") throw new Refused(`${at} cannot be converted to JSON`);
  return s;
}

// readCall reads one tool call, in the module's shape ({id, name,
// arguments}) or OpenAI's ({id, type: "function", function: {name,
// arguments}}). at is the call's path, "tool_calls[j]".
function readCall(c, at) {
  if (!isRecord(c)) throw new Refused(`${at} must be an object`);
  const id = c.id;
  if (!optionalString(id)) throw new Refused(`${at}.id must be a string`);
  let src = c;
  let path = at;
  if (!nullish(c.function)) {
    if (!nullish(c.type) && c.type !== "function") throw new Refused(`${at}.type must be "function"`);
    if (!isRecord(c.function)) throw new Refused(`${at}.function must be an object`);
    src = c.function;
    path = `${at}.function`;
  }
  const name = src.name;
  if (!optionalString(name)) throw new Refused(`${path}.name must be a string`);
  const args = readArguments(src.arguments, `${path}.arguments`);
  return { id: id ?? "", name: name ?? "", arguments: args };
}

// contentText joins the text of OpenAI content parts with nothing between
// them; refusal parts are text; skipped types are left out.
function contentText(parts, field) {
  let text = "";
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k];
    const at = `${field}[${k}]`;
    const t = partType(p, at);
    if (t === "text") {
      if (typeof p.text !== "string") throw new Refused(`${at}.text must be a string`);
      text += p.text;
    } else if (t === "refusal") {
      if (typeof p.refusal !== "string") throw new Refused(`${at}.refusal must be a string`);
      text += p.refusal;
    } else if (!skippedPart(t)) {
      throw new Refused(`${at}: unknown part type ${quote(t)}`);
    }
  }
  return text;
}

function partType(p, at) {
  if (!isRecord(p)) throw new Refused(`${at} must be an object`);
  if (typeof p.type !== "string") throw new Refused(`${at}.type must be a string`);
  return p.type;
}

function record(role, content, id, toolCallId, calls) {
  return { role, content, id, toolCallId, calls };
}

// uiMessage reads a Vercel AI SDK UIMessage ({id, role, parts}) into one
// or more records: text joins the current message; a tool part adds its
// call to it and queues its result, if it has one; text after tool parts
// starts a new assistant message. A call without a result (any state but
// output-available, output-error and output-denied) is left for the module
// to refuse or repair, as core/hostmsg does.
function uiMessage(role, id, parts) {
  if (!Array.isArray(parts)) throw new Refused("parts must be an array");
  const out = [];
  let cur = record(role, "", id, undefined, undefined);
  let results = [];
  let tools = 0;
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k];
    const at = `parts[${k}]`;
    const t = partType(p, at);
    if (t === "text") {
      if (typeof p.text !== "string") throw new Refused(`${at}.text must be a string`);
      if (tools > 0) {
        out.push(cur, ...results);
        cur = record(role, "", id, undefined, undefined);
        results = [];
        tools = 0;
      }
      cur.content += p.text;
    } else if (t === "dynamic-tool" || (t.length > 5 && t.startsWith("tool-"))) {
      if (role !== "assistant") throw new Refused(`${at}: only assistant messages may carry tool parts`);
      let name;
      if (t === "dynamic-tool") {
        if (typeof p.toolName !== "string") throw new Refused(`${at}.toolName must be a string`);
        name = p.toolName;
      } else {
        name = t.slice(5);
      }
      const callId = p.toolCallId;
      if (!optionalString(callId)) throw new Refused(`${at}.toolCallId must be a string`);
      const args = readArguments(p.input, `${at}.input`);
      if (typeof p.state !== "string") throw new Refused(`${at}.state must be a string`);
      let content;
      if (p.state === "output-available") {
        const o = p.output;
        if (typeof o === "string") content = o;
        else if (nullish(o)) content = "";
        else {
          try {
            content = JSON.stringify(o);
          } catch {
            content = undefined;
          }
          if (typeof content !== "string") throw new Refused(`${at}.output cannot be converted to JSON`);
        }
      } else if (p.state === "output-error") {
        if (!optionalString(p.errorText)) throw new Refused(`${at}.errorText must be a string`);
        content = p.errorText ?? "";
      } else if (p.state === "output-denied") {
        // A denied call and its result, as core.DeniedContent words it.
        let reason = "";
        if (!nullish(p.approval)) {
          const a = p.approval;
          if (typeof a !== "object" || Array.isArray(a)) throw new Refused(`${at}.approval must be an object`);
          if (typeof a.approved !== "boolean") throw new Refused(`${at}.approval.approved must be a boolean`);
          if (!optionalString(a.reason)) throw new Refused(`${at}.approval.reason must be a string`);
          reason = a.reason ?? "";
        }
        content = reason === "" ? "Tool call denied." : `Tool call denied: ${reason}`;
      }
      (cur.calls ??= []).push({ id: callId ?? "", name, arguments: args });
      tools++;
      if (content !== undefined) results.push(record("tool", content, id, callId ?? "", undefined));
    } else if (!skippedPart(t)) {
      throw new Refused(`${at}: unknown part type ${quote(t)}`);
    }
  }
  out.push(cur, ...results);
  return out;
}

/**
 * The record readMessage fills for a message that yields one, reused so
 * that packing a long history allocates nothing per message: readAt
 * returns it, or an array of records for a UIMessage.
 */
export const read = record("", null, undefined, undefined, undefined);

/**
 * Reads one host message: returns `read` (filled in) for a message that
 * yields one session message, or an array of records for a UIMessage.
 * Throws Refused.
 */
function readMessage(m) {
  if (!isRecord(m)) throw new Refused("message must be an object");
  let role = m.role;
  if (typeof role !== "string") throw new Refused("role must be a string");
  if (role === "developer") role = "system";
  const id = m.id;
  if (!optionalString(id)) throw new Refused("id must be a string");
  let content = m.content;
  if (typeof content === "string") {
    // the common case
  } else if (nullish(content)) {
    if (!nullish(m.parts)) return uiMessage(role, id ?? undefined, m.parts);
    content = null;
  } else if (Array.isArray(content)) {
    content = contentText(content, "content");
  } else {
    throw new Refused("content must be a string, an array of parts, or null");
  }
  const toolCallId = m.tool_call_id ?? m.toolCallId;
  if (!optionalString(toolCallId)) throw new Refused("tool_call_id must be a string");
  const rawCalls = m.tool_calls ?? m.toolCalls;
  let calls;
  if (!nullish(rawCalls)) {
    if (!Array.isArray(rawCalls)) throw new Refused("tool_calls must be an array");
    calls = new Array(rawCalls.length);
    for (let j = 0; j < rawCalls.length; j++) calls[j] = readCall(rawCalls[j], `tool_calls[${j}]`);
  }
  read.role = role;
  read.content = content;
  read.id = typeof id === "string" ? id : undefined;
  read.toolCallId = typeof toolCallId === "string" ? toolCallId : undefined;
  read.calls = calls;
  return read;
}

/**
 * Reads history[index] (already fetched as m, by at): `read` filled in, or
 * an array of records for a UIMessage. A host's getter or Proxy trap may
 * throw anything: that is a refusal of the message too, `fail(index, ...)`.
 */
export function readAt(m, index, fail) {
  try {
    return readMessage(m);
  } catch (e) {
    if (e instanceof Refused) throw fail(index, e.message);
    throw fail(index, `history[${index}] cannot be read: ${describe(e)}`);
  }
}

/** Returns history[i]; a Proxy may make even that throw: fail(i, ...). */
export function at(history, i, fail) {
  try {
    return history[i];
  } catch (e) {
    throw fail(i, `history[${i}] cannot be read: ${describe(e)}`);
  }
}

/** Reads history.length, which a Proxy may make throw or lie: fail(-1, ...). */
export function lengthOf(history, fail) {
  let n;
  try {
    n = history.length;
  } catch (e) {
    throw fail(-1, `history.length cannot be read: ${describe(e)}`);
  }
  if (!Number.isSafeInteger(n) || n < 0) throw fail(-1, "history.length is not a valid length");
  return n;
}

function describe(e) {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return "an exception";
  }
}

function moduleMessage(r) {
  const out = { role: r.role, content: r.content };
  if (r.id !== undefined) out.id = r.id;
  if (r.toolCallId !== undefined) out.tool_call_id = r.toolCallId;
  if (r.calls !== undefined) out.tool_calls = r.calls;
  return out;
}

/**
 * Converts a history to the module's message shape: the messages the
 * session will hold (system messages included), in order. A UIMessage may
 * yield several. Errors are `fail(index, message)`, index being the host
 * message's position in history.
 *
 * @param {ReadonlyArray<object>} history
 * @param {(index: number, message: string) => Error} [fail]
 * @returns {Array<object>} new objects; the input is not changed
 */
export function toModuleHistory(history, fail = defaultFail) {
  if (!Array.isArray(history)) throw argError("history", "must be an array");
  const n = lengthOf(history, fail);
  const out = [];
  for (let i = 0; i < n; i++) {
    const r = readAt(at(history, i, fail), i, fail);
    if (r === read) out.push(moduleMessage(r));
    else for (const x of r) out.push(moduleMessage(x));
  }
  return out;
}

/**
 * Reads a model's reply as core/hostmsg's Reply does: a string is the
 * content; an object is {content, tool_calls?} (toolCalls accepted too).
 * Returns {content, toolCalls} with each call {id, name, arguments}, or
 * throws `fail(message)`. The glue's fast path reads its model's replies
 * with it, where the module's syscall/js path reads them in Go.
 *
 * @param {unknown} v
 * @param {(message: string) => Error} [fail]
 */
export function readReply(v, fail = (message) => Object.assign(new Error(message), { code: "model_error" })) {
  try {
    if (typeof v === "string") return { content: v, toolCalls: [] };
    if (!isRecord(v)) throw new Refused("the model must answer an object { content, toolCalls? } or a string");
    let content = v.content;
    if (nullish(content)) content = "";
    else if (Array.isArray(content)) content = contentText(content, "reply.content");
    else if (typeof content !== "string") throw new Refused("reply.content must be a string, an array of parts, or null");
    const raw = v.tool_calls ?? v.toolCalls;
    const toolCalls = [];
    if (!nullish(raw)) {
      if (!Array.isArray(raw)) throw new Refused("reply.tool_calls must be an array");
      for (let j = 0; j < raw.length; j++) toolCalls.push(readCall(raw[j], `reply.tool_calls[${j}]`));
    }
    return { content, toolCalls };
  } catch (e) {
    if (e instanceof Refused) throw fail(e.message);
    throw e;
  }
}
