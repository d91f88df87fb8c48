// agentrt/ai's toUIMessages (docs/ai-sdk.md): agentrt messages as the AI
// SDK's UIMessages, with the argument checks and value rules js/ai.js
// shares. It imports nothing of the AI SDK.

/** A TypeError of code invalid_argument naming the argument. */
export function argError(name, what) {
  const err = new TypeError(`agentrt/ai: ${name} ${what}`);
  err.code = "invalid_argument";
  return err;
}

/** Reports whether v is a non-null object. */
export const isObject = (v) => v !== null && typeof v === "object";

/**
 * A tool call's arguments or a tool's result as a UIMessage carries it:
 * the parsed JSON value when writing it back gives the same text (so a
 * history read back holds the same message), otherwise the text itself.
 */
export function uiValue(text) {
  if (typeof text !== "string" || text === "") return text;
  try {
    const v = JSON.parse(text);
    if (isObject(v) && JSON.stringify(v) === text) return v;
  } catch { /* not JSON: the text */ }
  return text;
}

const DENIED = "Tool call denied.";
const DENIED_PREFIX = "Tool call denied: ";
const REPORTED_PREFIX = "error: ";

// --- toUIMessages: agentrt messages as UIMessages ---

/** FNV-1a of s folded into h, for stable ids. */
function fnv(h, s) {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619) >>> 0;
  }
  return h;
}

/** The tool part of call c, with the state its result r implies. */
function toolPart(c, r) {
  const part = { type: `tool-${c.name}`, toolCallId: c.id, input: uiValue(c.arguments) };
  if (r === undefined) {
    return Object.assign(part, { state: "approval-requested", approval: { id: c.id } });
  }
  const content = r.content ?? "";
  if (content === DENIED || content.startsWith(DENIED_PREFIX)) {
    const reason = content === DENIED ? undefined : content.slice(DENIED_PREFIX.length);
    return Object.assign(part, { state: "output-denied", approval: reason === undefined ? { id: c.id, approved: false } : { id: c.id, approved: false, reason } });
  }
  if (content.startsWith(REPORTED_PREFIX)) return Object.assign(part, { state: "output-error", errorText: content });
  return Object.assign(part, { state: "output-available", output: uiValue(content) });
}

/**
 * Returns agentrt messages (result.appended, session().messages, stored
 * history in the module's shape) as UIMessages: a user or system message
 * each, and one assistant UIMessage for each assistant turn (its steps,
 * tool calls and results). Ids are a message's own id when it has one,
 * otherwise derived from the conversation up to it and `idPrefix`: the
 * same messages give the same ids. Seeded back, they give the same
 * session messages.
 *
 * @param {ReadonlyArray<object>} messages
 * @param {{ idPrefix?: string }} [options]
 */
export function toUIMessages(messages, options) {
  if (!Array.isArray(messages)) throw argError("messages", "must be an array of agentrt messages");
  const prefix = options && options.idPrefix !== undefined ? options.idPrefix : "m";
  if (typeof prefix !== "string") throw argError("options.idPrefix", "must be a string");
  const results = new Map();
  for (const m of messages) if (isObject(m) && m.role === "tool") results.set(m.tool_call_id ?? m.toolCallId, m);
  const out = [];
  let h = 2166136261;
  let cur = null; // the assistant UIMessage being built
  let afterTools = false; // the last assistant message of cur had calls
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObject(m) || typeof m.role !== "string") throw argError(`messages[${i}]`, "must be an agentrt message");
    h = fnv(fnv(h, m.role), `\u0000${m.content ?? ""}\u0000`);
    const id = typeof m.id === "string" && m.id !== "" ? m.id : `${prefix}${i}-${h.toString(36)}`;
    if (m.role === "tool") continue; // with its call
    if (m.role === "assistant") {
      const calls = m.tool_calls ?? m.toolCalls ?? [];
      if (cur === null || !afterTools) {
        cur = { id, role: "assistant", parts: [] };
        out.push(cur);
      }
      cur.parts.push({ type: "step-start" });
      // A text part ends the tool parts of the step before, also empty.
      if (m.content || cur.parts.length > 1) cur.parts.push({ type: "text", text: m.content ?? "" });
      for (const c of calls) {
        h = fnv(h, `${c.id}\u0000${c.arguments}`);
        cur.parts.push(toolPart(c, results.get(c.id)));
      }
      afterTools = calls.length > 0;
      continue;
    }
    cur = null;
    out.push({ id, role: m.role === "system" ? "system" : "user", parts: [{ type: "text", text: m.content ?? "" }] });
  }
  return out;
}
