// agentrt's OpenAI-compatible model: a model function for loadRuntime that
// calls a chat.completions endpoint (OpenAI, or any server that speaks its
// protocol: llama.cpp, vLLM, Ollama, LM Studio, ...), streams the answer's
// text as model.delta events and returns its tool calls.
//
//   import { loadRuntime } from "agentrt";
//   import { openAIModel } from "agentrt/openai";
//   const rt = await loadRuntime({
//     model: openAIModel({ baseURL: "https://api.openai.com/v1", model: "gpt-4o-mini", apiKey }),
//   });
//
// One dependency-free ES module: it needs only fetch, ReadableStream,
// TextEncoder, TextDecoder and btoa (browsers, webviews, Node 20+, Bun,
// Deno, workerd).

import { AgentrtError } from "./glue.js";

/** Longest upstream error text kept in a message, in characters. */
const MAX_ERROR_TEXT = 300;

/**
 * The bound on an upstream answer, in bytes received, when the
 * maxResponseBytes option is not given: 8 MiB, as the Go model's
 * openai.DefaultMaxResponseBytes.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 << 20;

/** The highest tool call index a stream may use (as the Go model). */
const MAX_TOOL_CALL_INDEX = 1024;

/** The most of a non-2xx answer's body that is read, in bytes (as the Go model). */
const MAX_ERROR_BODY = 64 << 10;

function argError(name, what) {
  const err = new TypeError(`agentrt/openai: ${name} ${what}`);
  err.code = "invalid_argument";
  return err;
}

function isSignal(v) {
  return v !== null && typeof v === "object" && typeof v.aborted === "boolean" && typeof v.addEventListener === "function";
}

/**
 * Returns a model function for an OpenAI-compatible chat.completions
 * endpoint. Each call POSTs the agent's system prompt, the session's
 * messages and the tools with `stream: true`, hands every text delta to
 * `request.delta` as it arrives (Server-Sent Events), and returns
 * `{ content, toolCalls }`. A server that answers plain JSON instead of a
 * stream is read too. A stream is whole once it sends `data: [DONE]` or
 * a choice's `finish_reason`: one that ends before either (a dropped
 * connection) fails the call with model_error, as the Go model does,
 * rather than stand as a shorter reply.
 *
 * The key is sent as `Authorization: Bearer` and never appears in an
 * error message (raw, JSON-escaped or URL-encoded).
 *
 * @param {object} options
 * @param {string | URL} options.baseURL the API root, e.g. "https://api.openai.com/v1"
 * @param {string} options.model the model name sent upstream
 * @param {string} [options.apiKey] the API key, if the endpoint needs one
 * @param {Record<string, string>} [options.headers] extra request headers
 * @param {Record<string, unknown>} [options.body] extra request fields, e.g. `{ temperature: 0 }`
 * @param {AbortSignal | ((request: object) => AbortSignal | undefined)} [options.signal]
 *   also aborts the HTTP request: a signal, or a function of the model
 *   request returning one. The request's own `signal`, which the runtime
 *   aborts when the run is cancelled, times out or its instance dies, is
 *   always used; this one is combined with it.
 * @param {typeof fetch} [options.fetch] the fetch to use (default: globalThis.fetch)
 * @param {number} [options.maxResponseBytes] the bound on an answer, in
 *   bytes received, streamed or not (default 8 MiB). An answer over it is
 *   not cut: the request is aborted and the call fails with model_error
 *   naming the bound.
 * @returns {(request: object) => Promise<{content: string, toolCalls: Array<{id: string, name: string, arguments: string}>}>}
 */
export function openAIModel(options) {
  if (options === null || typeof options !== "object") throw argError("options", "must be an object");
  const { baseURL, model, apiKey, headers, body, signal } = options;
  let root;
  try {
    root = new URL(String(baseURL ?? ""));
  } catch {
    throw argError("options.baseURL", "must be an absolute http(s) URL, e.g. https://api.openai.com/v1");
  }
  if (root.protocol !== "http:" && root.protocol !== "https:") {
    throw argError("options.baseURL", "must be an absolute http(s) URL, e.g. https://api.openai.com/v1");
  }
  if (typeof model !== "string" || model === "") throw argError("options.model", "must be a non-empty string");
  if (apiKey !== undefined && apiKey !== null && typeof apiKey !== "string") throw argError("options.apiKey", "must be a string");
  if (headers !== undefined && (headers === null || typeof headers !== "object")) throw argError("options.headers", "must be an object");
  if (body !== undefined && (body === null || typeof body !== "object" || Array.isArray(body))) throw argError("options.body", "must be an object");
  if (signal !== undefined && signal !== null && !isSignal(signal) && typeof signal !== "function") {
    throw argError("options.signal", "must be an AbortSignal or a function returning one");
  }
  const { maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES } = options;
  if (!Number.isSafeInteger(maxResponseBytes) || maxResponseBytes <= 0) {
    throw argError("options.maxResponseBytes", "must be a positive integer (bytes)");
  }
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== "function") throw argError("options.fetch", "must be a function (this host has no global fetch)");

  const url = root.href.replace(/\/+$/, "") + "/chat/completions";
  const redact = redactor(apiKey || "");

  return async function openAIComplete(request) {
    const runSignal = pickSignal(signal, request);
    const payload = { ...body, model, stream: true, messages: toOpenAIMessages(request) };
    const tools = toOpenAITools(request.tools);
    if (tools.length) payload.tools = tools;
    const h = { ...headers, "content-type": "application/json", accept: "text/event-stream, application/json" };
    if (apiKey) h.authorization = "Bearer " + apiKey;

    if (runSignal && runSignal.aborted) throw aborted(runSignal.reason);
    let res;
    try {
      res = await fetchFn(url, { method: "POST", headers: h, body: JSON.stringify(payload), signal: runSignal });
    } catch (e) {
      if (runSignal && runSignal.aborted) throw aborted(runSignal.reason);
      throw modelError(`cannot reach ${url}: ${redact(errorText(e))}`, e);
    }
    if (!res.ok) {
      // Only the start of an error body is read: its text is cut to 300
      // characters anyway, and an endless one must not hold the run.
      const head = await readBody(res, MAX_ERROR_BODY, false).catch(() => null);
      const text = head ? fromUTF8.decode(head.bytes) : "";
      throw modelError(`${url} answered ${res.status}: ${redact(text)}`);
    }
    try {
      return await readChatResponse(res, (text) => request.delta(text), redact, maxResponseBytes);
    } catch (e) {
      if (runSignal && runSignal.aborted) throw aborted(runSignal.reason);
      if (e instanceof AgentrtError) throw e;
      throw modelError(`reading the answer of ${url}: ${redact(errorText(e))}`, e);
    }
  };
}

// pickSignal returns the signal that aborts the HTTP request: the model
// request's own (the run's), the option's, or both combined.
function pickSignal(signal, request) {
  const own = request && isSignal(request.signal) ? request.signal : undefined;
  const given = typeof signal === "function" ? signal(request) : signal;
  const mine = isSignal(given) ? given : undefined;
  if (own && mine) return anySignal(own, mine);
  return own || mine;
}

// anySignal aborts when a or b does. Where AbortSignal.any is missing
// (Safari before 17.4), listeners combine them; they stay on a long-lived
// signal until one of the two aborts.
function anySignal(a, b) {
  if (typeof AbortSignal.any === "function") return AbortSignal.any([a, b]);
  const ac = new AbortController();
  const on = (s) => () => {
    a.removeEventListener("abort", onA);
    b.removeEventListener("abort", onB);
    ac.abort(s.reason);
  };
  const onA = on(a);
  const onB = on(b);
  if (a.aborted) ac.abort(a.reason);
  else if (b.aborted) ac.abort(b.reason);
  else {
    a.addEventListener("abort", onA, { once: true });
    b.addEventListener("abort", onB, { once: true });
  }
  return ac.signal;
}

function errorText(e) {
  return e && typeof e.message === "string" ? e.message : String(e);
}

function modelError(message, cause) {
  return new AgentrtError("model_error", `agentrt/openai: ${message}`, cause === undefined ? {} : { cause });
}

function aborted(reason) {
  return new AgentrtError("cancelled", "agentrt/openai: the request was aborted", { name: "AbortError", cause: reason });
}

const REDACTED = "[redacted]";
const utf8 = new TextEncoder();
const fromUTF8 = new TextDecoder();

// redactor returns a function that removes key from text in every
// encoding an upstream or a network library may quote it in, by the rules
// of the Go model's openai.Redact (keep the two in step):
//
//   - as it is;
//   - JSON-escaped, any character of it as \uXXXX (once or inside another
//     escaped string, with more backslashes) or as \/, \", \\;
//   - URL-encoded, any character as %XX (either case, or %25XX when
//     encoded twice), a space as +; the escapes may be mixed;
//   - base64 (standard or URL alphabet, any padding) of any text that
//     contains it, such as "Bearer <key>".
//
// A key shorter than 4 bytes is not looked for. The text is cut to
// MAX_ERROR_TEXT after that: cutting first could leave a piece of the key
// that no longer matches.
function redactor(key) {
  const secret = utf8.encode(key);
  const look = secret.length >= 4;
  const cores = look ? base64Cores(secret) : [];
  return (text) => {
    let out = String(text);
    if (look) {
      out = redactEscaped(out, secret);
      for (const c of cores) out = out.split(c).join(REDACTED);
    }
    return out.length > MAX_ERROR_TEXT ? out.slice(0, MAX_ERROR_TEXT) + "…" : out;
  };
}

// redactEscaped replaces the secret (UTF-8 bytes), raw or escaped
// character by character, in text. Matches start at an ASCII byte or at
// the secret's first byte, so the text between them is whole characters.
function redactEscaped(text, secret) {
  const s = utf8.encode(text);
  let out = "";
  let last = 0;
  for (let i = 0; i < s.length;) {
    const end = matchEscaped(s, i, secret);
    if (end < 0) {
      i++;
      continue;
    }
    out += fromUTF8.decode(s.subarray(last, i)) + REDACTED;
    i = last = end;
  }
  return last === 0 ? text : out + fromUTF8.decode(s.subarray(last));
}

// matchEscaped returns the end of the secret's occurrence at i, or -1.
function matchEscaped(s, i, secret) {
  let p = i;
  for (const c of secret) {
    const n = matchByte(s, p, c);
    if (n === 0) return -1;
    p += n;
  }
  return p;
}

const BACKSLASH = 0x5c, SLASH = 0x2f, QUOTE = 0x22, PERCENT = 0x25, PLUS = 0x2b, SPACE = 0x20;

// matchByte returns how many bytes of s at p spell the byte c, or 0.
function matchByte(s, p, c) {
  if (p >= s.length) return 0;
  switch (s[p]) {
    case c:
      return 1;
    case BACKSLASH: {
      let q = p;
      while (q < s.length && s[q] === BACKSLASH) q++;
      if (q < s.length && s[q] === c && (c === SLASH || c === QUOTE)) return q + 1 - p;
      if (q + 5 <= s.length && (s[q] === 0x75 || s[q] === 0x55) && s[q + 1] === 0x30 && s[q + 2] === 0x30 && hexByte(s[q + 3], s[q + 4]) === c) {
        return q + 5 - p;
      }
      if (c === BACKSLASH && q - p >= 2) return q - p;
      return 0;
    }
    case PERCENT:
      if (p + 3 <= s.length && hexByte(s[p + 1], s[p + 2]) === c) return 3;
      if (p + 5 <= s.length && s[p + 1] === 0x32 && s[p + 2] === 0x35 && hexByte(s[p + 3], s[p + 4]) === c) return 5;
      return 0;
    case PLUS:
      return c === SPACE ? 1 : 0;
  }
  return 0;
}

// hexByte returns the byte two hex digits (ASCII codes) spell, or -1.
function hexByte(h, l) {
  const a = unhex(h), b = unhex(l);
  return a < 0 || b < 0 ? -1 : (a << 4) | b;
}

function unhex(c) {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

// base64Cores returns, for each of the three alignments the secret can
// have inside a longer encoded text and for both alphabets, the run of
// base64 characters that depends on the secret's bytes alone: it appears
// in the encoding of every text that contains the secret at that
// alignment. Runs shorter than 8 characters are left out (they would
// match ordinary text).
function base64Cores(secret) {
  const std = [];
  for (let a = 0; a < 3; a++) {
    let bin = "\0".repeat(a);
    for (const b of secret) bin += String.fromCharCode(b);
    const e = btoa(bin);
    const from = Math.floor((8 * a + 5) / 6); // the first character without pad bits
    const to = Math.floor((8 * (a + secret.length)) / 6); // the characters wholly inside the secret
    if (to - from >= 8) std.push(e.slice(from, to));
  }
  return [...std, ...std.map((c) => c.replace(/\+/g, "-").replace(/\//g, "_"))];
}

/**
 * The chat.completions messages of a model request: the system prompt,
 * then each session message with its tool calls in OpenAI's shape.
 * @param {{system?: string, messages: ReadonlyArray<object>}} request
 */
export function toOpenAIMessages(request) {
  const out = [];
  if (request.system) out.push({ role: "system", content: request.system });
  for (const m of request.messages || []) out.push(toOpenAIMessage(m));
  return out;
}

function toOpenAIMessage(m) {
  const out = { role: m.role, content: m.content ?? "" };
  const calls = m.tool_calls ?? m.toolCalls;
  if (m.role === "assistant" && Array.isArray(calls) && calls.length) {
    out.content = m.content || null;
    out.tool_calls = calls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: typeof c.arguments === "string" ? c.arguments || "{}" : JSON.stringify(c.arguments ?? {}) },
    }));
  }
  if (m.role === "tool") out.tool_call_id = m.tool_call_id ?? m.toolCallId;
  return out;
}

function toOpenAITools(tools) {
  return (tools || []).map((t) => ({
    type: "function",
    function: {
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      parameters: parameters(t.parameters),
    },
  }));
}

function parameters(p) {
  if (typeof p === "string" && p !== "") {
    try {
      return JSON.parse(p);
    } catch { /* not JSON: no schema */ }
  } else if (p !== null && typeof p === "object") {
    return p;
  }
  return { type: "object", properties: {} };
}

function tooLarge(limit) {
  return modelError(`the model's answer is larger than ${limit} bytes (the bound on an upstream answer, option maxResponseBytes)`);
}

// readBody reads res's body up to limit bytes. It returns the bytes and
// whether the body had more; then the rest is not read and the request is
// aborted (cancelling the body ends the upstream fetch). With strict, more
// than limit bytes fails with tooLarge instead.
async function readBody(res, limit, strict) {
  if (!res.body) return { bytes: new Uint8Array(0), over: false };
  const reader = res.body.getReader();
  const parts = [];
  let size = 0;
  let over = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (size + value.byteLength > limit) {
        over = true;
        parts.push(value.subarray(0, limit - size));
        size = limit;
        break;
      }
      parts.push(value);
      size += value.byteLength;
    }
  } catch (e) {
    reader.cancel(e).catch(() => {});
    throw e;
  }
  if (over) {
    reader.cancel().catch(() => {});
    if (strict) throw tooLarge(limit);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.byteLength;
  }
  return { bytes, over };
}

// readChatResponse reads a chat.completions answer of at most limit bytes:
// a Server-Sent Events stream of chunks, or one JSON object.
async function readChatResponse(res, onDelta, redact, limit) {
  const type = res.headers.get("content-type") || "";
  if (!type.includes("text/event-stream")) {
    const { bytes } = await readBody(res, limit, true);
    const j = JSON.parse(fromUTF8.decode(bytes));
    if (j && j.error) throw modelError("the endpoint answered an error: " + redact(j.error.message || JSON.stringify(j.error)));
    // As the Go model: an answer without a choice is not an empty reply.
    if (!j || !Array.isArray(j.choices) || j.choices.length === 0) throw modelError("the answer has no choices");
    const msg = (j.choices[0] && j.choices[0].message) || {};
    const content = typeof msg.content === "string" ? msg.content : "";
    if (content) onDelta(content);
    return {
      content,
      toolCalls: (msg.tool_calls || []).map((c) => ({
        id: String(c.id ?? ""),
        name: String(c.function?.name ?? ""),
        arguments: stringArgs(c.function?.arguments),
      })),
    };
  }
  if (!res.body) throw modelError("the event stream has no body");

  let content = "";
  const calls = []; // by index
  let done = false;
  // finished is set once a choice carried a finish_reason: with [DONE],
  // the only ends of a whole answer (as the Go model reads them).
  let finished = false;
  const onData = (data) => {
    if (data.trim() === "[DONE]") {
      done = true;
      return;
    }
    let chunk;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw modelError("the event stream sent data that is not JSON: " + redact(data));
    }
    if (chunk && chunk.error) throw modelError("the endpoint sent an error: " + redact(chunk.error.message || JSON.stringify(chunk.error)));
    if (chunk && Array.isArray(chunk.choices)) {
      for (const c of chunk.choices) if (c && typeof c.finish_reason === "string" && c.finish_reason !== "") finished = true;
    }
    const delta = chunk && chunk.choices && chunk.choices[0] && chunk.choices[0].delta;
    if (!delta) return;
    if (typeof delta.content === "string" && delta.content !== "") {
      content += delta.content;
      onDelta(delta.content);
    }
    for (const tc of delta.tool_calls || []) {
      const i = Number.isInteger(tc.index) ? tc.index : calls.length;
      // The Go model's range: a few calls, not a sparse array of millions.
      if (i < 0 || i > MAX_TOOL_CALL_INDEX) throw modelError("the event stream has a tool call index out of range");
      const c = (calls[i] ||= { id: "", name: "", arguments: "" });
      if (tc.id) c.id = String(tc.id);
      const name = tc.function && tc.function.name;
      // OpenAI sends the name once; some servers repeat it whole.
      if (name && name !== c.name) c.name += name;
      const args = tc.function && tc.function.arguments;
      if (typeof args === "string") c.arguments += args;
      else if (args != null) c.arguments += JSON.stringify(args);
    }
  };

  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let received = 0; // bytes, against limit
  let buf = "";
  let data = []; // the data lines of the event being read
  const line = (l) => {
    if (l === "") {
      // A blank line ends an event.
      if (data.length) onData(data.join("\n"));
      data = [];
    } else if (l.startsWith("data:")) {
      data.push(l.slice(l.startsWith("data: ") ? 6 : 5));
    }
    // Comments (":") and other fields (event:, id:, retry:) carry nothing here.
  };
  try {
    while (!done) {
      const { value, done: end } = await reader.read();
      if (end) {
        buf += decoder.decode();
        for (const l of buf.split(/\r\n|\r|\n/)) if (!done) line(l);
        if (!done) line("");
        // A stream cut short (a dropped connection, a server that died)
        // would read as a complete, shorter reply.
        if (!done && !finished) throw modelError("the event stream ended before [DONE] or a finish_reason: the answer was cut");
        break;
      }
      // Of a piece that crosses the bound only the bytes within it are
      // read: an answer that ends ([DONE]) within the bound stands, any
      // other is refused whole rather than cut (a stream cut short would
      // read as a complete, shorter reply).
      const room = limit - received;
      received += value.byteLength;
      const over = received > limit;
      buf += decoder.decode(over ? value.subarray(0, room) : value, { stream: true });
      let m;
      while (!done && (m = /\r\n|\r(?!$)|\n/.exec(buf))) {
        const l = buf.slice(0, m.index);
        buf = buf.slice(m.index + m[0].length);
        line(l);
      }
      if (over && !done) throw tooLarge(limit);
    }
    if (done && received > limit) {
      // What followed [DONE] crossed the bound: not part of the answer,
      // and not read on.
      reader.cancel().catch(() => {});
    } else if (done) {
      // Read to the end (servers close right after [DONE]): cancelling
      // instead aborts the request, which browsers log as a failure. What
      // follows [DONE] is not part of the answer, but is read only up to
      // the bound: past it the request is aborted and the answer kept.
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        received += value.byteLength;
        if (received > limit) {
          reader.cancel().catch(() => {});
          break;
        }
      }
    }
  } catch (e) {
    // A bad chunk or an abort: close the connection, do not read on.
    reader.cancel(e).catch(() => {});
    throw e;
  }
  return {
    content,
    toolCalls: calls.filter(Boolean).map((c) => ({ id: c.id, name: c.name, arguments: stringArgs(c.arguments) })),
  };
}

// stringArgs is a tool call's arguments as text: "{}" for none or only
// spaces (as the Go model's argsOrEmpty), an object as its JSON.
function stringArgs(a) {
  if (typeof a === "string") return a.trim() === "" ? "{}" : a;
  if (a == null) return "{}";
  return JSON.stringify(a);
}
