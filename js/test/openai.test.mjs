// Behaviour of js/openai.js against a fake OpenAI-compatible endpoint: a
// Node http server on 127.0.0.1 that speaks chat.completions streaming
// (Server-Sent Events), tool calls included. Runs under `node --test`,
// `bun test` and `deno test -A`.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { loadRuntime, AgentrtError } from "../glue.js";
import { openAIModel, toOpenAIMessages, DEFAULT_MAX_RESPONSE_BYTES } from "../openai.js";
import { compiledModule, wasmExecURL } from "./env.mjs";
import { deferred, rejectsWith } from "./helpers.mjs";

const KEY = "sk-test-0123456789abcdef/+=?&\"key";

// The fake endpoint. Each request is recorded; `next` answers it. Answers
// are arrays of SSE "data:" payloads (objects are JSON-encoded), or a
// function (req, res) that writes the answer itself.
const fake = { requests: [], answers: [], url: "", server: null, closed: [] };

function chunk(delta, finish = null) {
  return { id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] };
}

before(async () => {
  fake.server = createServer((req, res) => {
    let body = "";
    req.on("data", (b) => { body += b; });
    req.on("end", () => {
      let parsed = null;
      try { parsed = JSON.parse(body); } catch { /* recorded as null */ }
      fake.requests.push({ url: req.url, method: req.method, headers: req.headers, body: parsed });
      const answer = fake.answers.shift();
      if (typeof answer === "function") return answer(req, res);
      if (!answer) {
        res.writeHead(500, { "content-type": "text/plain" });
        return res.end("no answer queued");
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const d of answer) res.write(`data: ${typeof d === "string" ? d : JSON.stringify(d)}\n\n`);
      res.end();
    });
  });
  await new Promise((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${fake.server.address().port}/v1/`;
});

after(async () => {
  fake.server.closeAllConnections?.();
  await new Promise((resolve) => fake.server.close(resolve));
});

function reset() {
  fake.requests.length = 0;
  fake.answers.length = 0;
}

function request(extra = {}) {
  const deltas = [];
  return {
    deltas,
    req: {
      runId: "r1",
      sessionId: "s1",
      system: "Be brief.",
      messages: [{ role: "user", content: "hi" }],
      tools: [],
      delta: (t) => deltas.push(t),
      ...extra,
    },
  };
}

describe("openAIModel", () => {
  test("rejects bad options with a TypeError naming the option", () => {
    const cases = [
      [undefined, "options"],
      [{ model: "m" }, "options.baseURL"],
      [{ baseURL: "ftp://x/v1", model: "m" }, "options.baseURL"],
      [{ baseURL: "/v1", model: "m" }, "options.baseURL"],
      [{ baseURL: fake.url || "http://127.0.0.1/v1" }, "options.model"],
      [{ baseURL: "http://127.0.0.1/v1", model: "m", apiKey: 5 }, "options.apiKey"],
      [{ baseURL: "http://127.0.0.1/v1", model: "m", signal: "x" }, "options.signal"],
      [{ baseURL: "http://127.0.0.1/v1", model: "m", body: [] }, "options.body"],
      [{ baseURL: "http://127.0.0.1/v1", model: "m", maxResponseBytes: 0 }, "options.maxResponseBytes"],
      [{ baseURL: "http://127.0.0.1/v1", model: "m", maxResponseBytes: -1 }, "options.maxResponseBytes"],
      [{ baseURL: "http://127.0.0.1/v1", model: "m", maxResponseBytes: 1.5 }, "options.maxResponseBytes"],
      [{ baseURL: "http://127.0.0.1/v1", model: "m", maxResponseBytes: "8388608" }, "options.maxResponseBytes"],
      [{ baseURL: "http://127.0.0.1/v1", model: "m", maxResponseBytes: Infinity }, "options.maxResponseBytes"],
    ];
    for (const [options, name] of cases) {
      assert.throws(() => openAIModel(options), (e) => e instanceof TypeError && e.code === "invalid_argument" && e.message.includes(name), name);
    }
  });

  test("streams text deltas and sends the system prompt, messages, model and key", async () => {
    reset();
    fake.answers.push([chunk({ role: "assistant", content: "" }), chunk({ content: "Hel" }), chunk({ content: "lo" }), chunk({}, "stop"), "[DONE]"]);
    const model = openAIModel({ baseURL: fake.url, model: "fake-1", apiKey: KEY, body: { temperature: 0 } });
    const { req, deltas } = request();
    const reply = await model(req);
    assert.deepEqual(reply, { content: "Hello", toolCalls: [] });
    assert.deepEqual(deltas, ["Hel", "lo"]);
    const got = fake.requests[0];
    assert.equal(got.method, "POST");
    assert.equal(got.url, "/v1/chat/completions");
    assert.equal(got.headers.authorization, "Bearer " + KEY);
    assert.equal(got.body.model, "fake-1");
    assert.equal(got.body.stream, true);
    assert.equal(got.body.temperature, 0);
    assert.deepEqual(got.body.messages, [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }]);
    assert.equal(got.body.tools, undefined);
  });

  test("assembles tool calls streamed in pieces, by index", async () => {
    reset();
    fake.answers.push([
      chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "add", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"a\":" } }] }),
      chunk({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "time", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "1,\"b\":2}" } }] }),
      chunk({}, "tool_calls"),
      "[DONE]",
    ]);
    const model = openAIModel({ baseURL: fake.url, model: "fake-1" });
    const { req } = request({ tools: [{ name: "add", description: "Adds", parameters: { type: "object" } }, { name: "time", parameters: "" }] });
    const reply = await model(req);
    assert.deepEqual(reply, {
      content: "",
      toolCalls: [
        { id: "call_a", name: "add", arguments: "{\"a\":1,\"b\":2}" },
        { id: "call_b", name: "time", arguments: "{}" },
      ],
    });
    const tools = fake.requests[0].body.tools;
    assert.deepEqual(tools[0], { type: "function", function: { name: "add", description: "Adds", parameters: { type: "object" } } });
    assert.deepEqual(tools[1].function.parameters, { type: "object", properties: {} });
    assert.equal(fake.requests[0].headers.authorization, undefined);
  });

  test("reads events split across chunks, CRLF lines, comments and multi-line data", async () => {
    reset();
    fake.answers.push((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const text = ": keep-alive\r\n\r\n" +
        "event: message\r\ndata: " + JSON.stringify(chunk({ content: "a\u00e9" })) + "\r\n\r\n" +
        "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\n" + "data: \"delta\":{\"content\":\"b\"}}]}\n\n" +
        "data: [DONE]\n\n";
      const bytes = Buffer.from(text);
      // One byte at a time: lines and UTF-8 sequences cut anywhere.
      let i = 0;
      const tick = () => {
        if (i >= bytes.length) return res.end();
        res.write(bytes.subarray(i, i + 1));
        i++;
        setImmediate(tick);
      };
      tick();
    });
    const model = openAIModel({ baseURL: fake.url, model: "m" });
    const { req, deltas } = request();
    const reply = await model(req);
    assert.equal(reply.content, "a\u00e9b");
    assert.deepEqual(deltas, ["a\u00e9", "b"]);
  });

  test("reads a plain JSON answer", async () => {
    reset();
    fake.answers.push((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: "plain", tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: { x: 1 } } }] } }] }));
    });
    const model = openAIModel({ baseURL: fake.url, model: "m" });
    const { req, deltas } = request();
    assert.deepEqual(await model(req), { content: "plain", toolCalls: [{ id: "c1", name: "t", arguments: "{\"x\":1}" }] });
    assert.deepEqual(deltas, ["plain"]);
  });

  test("fails with model_error, never showing the key in any encoding", async () => {
    const encodings = [KEY, JSON.stringify(KEY).slice(1, -1), encodeURIComponent(KEY)];
    for (const [i, shown] of encodings.entries()) {
      for (const offset of [0, 150, 290, 299]) {
        reset();
        fake.answers.push((req, res) => {
          res.writeHead(401, { "content-type": "application/json" });
          res.end("x".repeat(offset) + shown + " is not a valid key");
        });
        const model = openAIModel({ baseURL: fake.url, model: "m", apiKey: KEY });
        const err = await rejectsWith(assert, model(request().req), "model_error");
        assert.ok(err instanceof AgentrtError);
        assert.match(err.message, /answered 401/);
        for (const piece of encodings) {
          assert.ok(!err.message.includes(piece.slice(0, 12)), `encoding ${i} at ${offset}: ${err.message}`);
        }
      }
    }
    reset();
    fake.answers.push([chunk({ content: "x" }), { error: { message: "overloaded, key " + KEY } }]);
    const err = await rejectsWith(assert, openAIModel({ baseURL: fake.url, model: "m", apiKey: KEY })(request().req), "model_error");
    assert.match(err.message, /overloaded/);
    assert.ok(!err.message.includes(KEY));
    reset();
    fake.answers.push(["not json"]);
    await rejectsWith(assert, openAIModel({ baseURL: fake.url, model: "m" })(request().req), "model_error");
    // Nothing listens on port 9 of 127.0.0.1 (discard): a network failure.
    await rejectsWith(assert, openAIModel({ baseURL: "http://127.0.0.1:9/v1", model: "m" })(request().req), "model_error");
  });

  test("redacts the key in every encoding the Go model's openai.Redact knows", async () => {
    // Ensure each way an upstream may quote the key (openai/redact_test.go
    // lists the same) is removed, with no 8 characters of the key or 12
    // of its encoded form left, and that text without the key is kept.
    const key = "sk-proj_AbC/dEf+gH.iJ~kLmNoP0123456789qRsTuVwX";
    const bytes = [...new TextEncoder().encode(key)];
    const b64 = (s) => btoa(String.fromCharCode(...new TextEncoder().encode(s)));
    const encodings = {
      raw: key,
      json: JSON.stringify(key).slice(1, -1),
      "json-every-char": bytes.map((b) => "\\u" + b.toString(16).padStart(4, "0")).join(""),
      "json-twice": JSON.stringify(`{"key":"${key.replaceAll("/", "\\/")}"}`).slice(1, -1),
      "json-mixed-upper": bytes.map((b, i) => (i % 3 === 0 ? "\\u" + b.toString(16).toUpperCase().padStart(4, "0") : String.fromCharCode(b))).join(""),
      "url-query": new URLSearchParams({ k: key }).toString().slice(2),
      "url-every-char": bytes.map((b) => "%" + b.toString(16).padStart(2, "0")).join(""),
      "url-twice": encodeURIComponent(encodeURIComponent(key)),
      "base64-bearer": b64("Bearer " + key),
      "base64-basic": b64("user:" + key),
      "base64url-key": b64(key).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, ""),
      "base64-offset2": b64("ab" + key + "c"),
    };
    const errorFor = async (k, text) => {
      const model = openAIModel({ baseURL: "http://127.0.0.1:9/v1", model: "m", apiKey: k, fetch: async () => new Response(text, { status: 401 }) });
      const err = await rejectsWith(assert, model(request().req), "model_error");
      return err.message.slice(err.message.indexOf("answered 401: ") + "answered 401: ".length);
    };
    for (const [name, enc] of Object.entries(encodings)) {
      const got = await errorFor(key, `before ${enc} after`);
      for (let i = 0; i + 8 <= key.length; i++) assert.ok(!got.includes(key.slice(i, i + 8)), `${name}: ${got} leaks ${key.slice(i, i + 8)}`);
      for (let i = 0; i + 12 <= enc.length; i++) assert.ok(!got.includes(enc.slice(i, i + 12)), `${name}: ${got} leaks ${enc.slice(i, i + 12)}`);
      assert.ok(got.startsWith("before ") && got.includes("[redacted]"), `${name}: ${got}`);
    }
    for (const s of ["plain text", "sk-proj_ alone", "\\u0073k-", "%7", "\\"]) assert.equal(await errorFor(key, s), s);
    assert.equal(await errorFor("abc", "abc"), "abc", "a 3-byte key is not looked for");
  });

  test("an AbortSignal aborts a streaming request: cancelled, and the connection closes", async () => {
    reset();
    const closed = deferred();
    const started = deferred();
    fake.answers.push((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify(chunk({ content: "partial" }))}\n\n`);
      started.resolve();
      res.on("close", () => closed.resolve());
      // Never ends: only the abort stops it.
    });
    const ac = new AbortController();
    const model = openAIModel({ baseURL: fake.url, model: "m", signal: ac.signal });
    const { req, deltas } = request();
    const p = model(req);
    await started.promise;
    // Let the first event reach the model before aborting.
    for (let i = 0; i < 50 && deltas.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(deltas, ["partial"]);
    ac.abort();
    const err = await rejectsWith(assert, p, "cancelled");
    assert.equal(err.name, "AbortError");
    await closed.promise;

    // A signal function sees the request and may pick a signal per run.
    reset();
    const seen = [];
    const done = new AbortController();
    done.abort();
    const perRun = openAIModel({ baseURL: fake.url, model: "m", signal: (r) => { seen.push(r.runId); return done.signal; } });
    await rejectsWith(assert, perRun(request().req), "cancelled");
    assert.deepEqual(seen, ["r1"]);
    assert.equal(fake.requests.length, 0, "an aborted signal sends nothing");
  });

  // Ensure an answer over maxResponseBytes, streamed or not, fails with
  // model_error naming the bound (never a reply cut at the bound), that
  // the upstream request is aborted (the server sees its connection
  // close, even while it would send forever), and that an answer of
  // exactly the bound is read.
  test("an answer over maxResponseBytes fails with model_error naming the bound and aborts the request", async () => {
    const bound = 64 << 10;
    const event = `data: ${JSON.stringify(chunk({ content: "y".repeat(1000) }))}\n\n`;
    const huge = "x".repeat(4 * bound);
    const cases = {
      "sse-endless": { type: "text/event-stream", endless: event },
      "sse-one-event": { type: "text/event-stream", text: `data: ${JSON.stringify(chunk({ content: huge }))}\n\ndata: [DONE]\n\n` },
      "sse-many-events": { type: "text/event-stream", text: event.repeat(Math.ceil((2 * bound) / event.length)) + "data: [DONE]\n\n" },
      "json-large": { type: "application/json", text: JSON.stringify({ choices: [{ message: { role: "assistant", content: huge } }] }) },
      "json-trailing-space": { type: "application/json", text: JSON.stringify({ choices: [{ message: { role: "assistant", content: "ok" } }] }) + " ".repeat(2 * bound) },
      "json-endless": { type: "application/json", text: `{"choices":[{"message":{"role":"assistant","content":"`, endless: "z".repeat(4096) },
    };
    for (const [name, c] of Object.entries(cases)) {
      reset();
      const closed = deferred();
      let sent = 0;
      fake.answers.push((req, res) => {
        res.writeHead(200, { "content-type": c.type });
        res.on("close", () => closed.resolve());
        if (c.text) sent += Buffer.byteLength(c.text);
        if (!c.endless) {
          res.end(c.text);
          return;
        }
        if (c.text) res.write(c.text);
        // Sends until the client leaves.
        const pump = () => {
          while (!res.destroyed && sent < 1024 * bound) {
            sent += c.endless.length;
            if (!res.write(c.endless)) return res.once("drain", pump);
          }
        };
        pump();
      });
      const model = openAIModel({ baseURL: fake.url, model: "m", maxResponseBytes: bound });
      const { req, deltas } = request();
      const err = await rejectsWith(assert, model(req), "model_error");
      assert.ok(err instanceof AgentrtError, name);
      assert.match(err.message, new RegExp(`larger than ${bound} bytes`), name);
      assert.ok(deltas.join("").length <= bound, `${name}: ${deltas.join("").length} bytes of deltas`);
      const t = setTimeout(() => closed.reject(new Error(`${name}: the upstream request was not aborted (${sent} bytes sent)`)), 5000);
      await closed.promise.finally(() => clearTimeout(t));
      assert.ok(sent < 1024 * bound, `${name}: the server sent all ${sent} bytes`);
    }

    // Exactly the bound is read; one byte more is refused.
    // An answer of size bytes whose content is all the bytes its frame leaves.
    const sized = (frame, size) => {
      const content = "z".repeat(size - frame.length);
      return { content, text: frame.replace(`"content":""`, `"content":"${content}"`) };
    };
    const frames = {
      "application/json": JSON.stringify({ choices: [{ message: { role: "assistant", content: "" } }] }),
      "text/event-stream": `data: ${JSON.stringify(chunk({ content: "" }))}\n\ndata: [DONE]\n\n`,
    };
    for (const [type, frame] of Object.entries(frames)) {
      for (const size of [bound, bound + 1]) {
        reset();
        const { content, text } = sized(frame, size);
        assert.equal(Buffer.byteLength(text), size);
        fake.answers.push((req, res) => {
          res.writeHead(200, { "content-type": type });
          res.end(text);
        });
        const p = openAIModel({ baseURL: fake.url, model: "m", maxResponseBytes: bound })(request().req);
        if (size === bound) {
          const reply = await p;
          assert.equal(reply.content, content, `${type} of exactly the bound`);
        } else {
          const err = await rejectsWith(assert, p, "model_error");
          assert.match(err.message, new RegExp(`larger than ${bound} bytes`), `${type} of the bound and one byte`);
        }
      }
    }

    // The default is 8 MiB, as the Go model's.
    assert.equal(DEFAULT_MAX_RESPONSE_BYTES, 8 * 1024 * 1024);
  });

  // Ensure what a server sends after [DONE] is not part of the answer
  // (the Go model stops reading there): the reply is kept, and a server
  // that sends on forever has its request aborted at the bound.
  test("what follows [DONE] is not the answer, and is read only up to the bound", async () => {
    reset();
    const closed = deferred();
    fake.answers.push((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.on("close", () => closed.resolve());
      res.write(`data: ${JSON.stringify(chunk({ content: "done" }))}\n\ndata: [DONE]\n\n`);
      const junk = ": more\n".repeat(512);
      const pump = () => {
        while (!res.destroyed) if (!res.write(junk)) return res.once("drain", pump);
      };
      pump();
    });
    const reply = await openAIModel({ baseURL: fake.url, model: "m", maxResponseBytes: 64 << 10 })(request().req);
    assert.deepEqual(reply, { content: "done", toolCalls: [] });
    await closed.promise;

    // In one write, so the answer and what follows arrive together.
    reset();
    fake.answers.push((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`data: ${JSON.stringify(chunk({ content: "whole" }))}\n\ndata: [DONE]\n\n` + "x".repeat(256 << 10));
    });
    assert.deepEqual(await openAIModel({ baseURL: fake.url, model: "m", maxResponseBytes: 64 << 10 })(request().req), { content: "whole", toolCalls: [] });
  });

  // Ensure the body of a non-2xx answer is read only in part (64 KiB, as
  // the Go model), so an error body that never ends still fails the call
  // at once and ends the request.
  test("an error answer's body is read only in part", async () => {
    reset();
    const closed = deferred();
    let sent = 0;
    fake.answers.push((req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.on("close", () => closed.resolve());
      const text = "overloaded ".repeat(400);
      const pump = () => {
        while (!res.destroyed && sent < 256 << 20) {
          sent += text.length;
          if (!res.write(text)) return res.once("drain", pump);
        }
      };
      pump();
    });
    const err = await rejectsWith(assert, openAIModel({ baseURL: fake.url, model: "m" })(request().req), "model_error");
    assert.match(err.message, /answered 500: overloaded overloaded/);
    await closed.promise;
    assert.ok(sent < 256 << 20, `the server sent all ${sent} bytes`);
  });

  // Ensure the rules the Go model shares (openai/agree_test.go checks the
  // same there): error objects fail the call, arguments as objects read as
  // their JSON and blank ones as "{}", [DONE] with spaces ends the stream,
  // a tool call index out of range and a plain answer without choices fail.
  test("reads answers by the rules of the Go model", async () => {
    const call = async (answer) => {
      reset();
      fake.answers.push(answer);
      return openAIModel({ baseURL: fake.url, model: "m", apiKey: KEY })(request().req);
    };
    const plain = (obj) => (req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(obj));
    };
    const tc = (index, fn, id) => chunk({ tool_calls: [{ index, ...(id ? { id } : {}), function: fn }] });

    let err = await rejectsWith(assert, call([chunk({ content: "par" }), { error: "overloaded" }]), "model_error");
    assert.match(err.message, /sent an error: "overloaded"/);
    err = await rejectsWith(assert, call(plain({ error: { message: "quota exceeded for " + KEY } })), "model_error");
    assert.match(err.message, /answered an error: quota exceeded for \[redacted\]/);
    assert.deepEqual(await call([{ error: null, ...chunk({ content: "fine" }) }, "[DONE]"]), { content: "fine", toolCalls: [] });

    assert.deepEqual(await call([tc(0, { name: "t", arguments: { x: 1 } }, "c1"), tc(1, { name: "u", arguments: "  " }, "c2"), "[DONE]"]), {
      content: "",
      toolCalls: [{ id: "c1", name: "t", arguments: "{\"x\":1}" }, { id: "c2", name: "u", arguments: "{}" }],
    });
    const calls = [
      { id: "c1", type: "function", function: { name: "u", arguments: null } },
      { id: "c2", type: "function", function: { name: "v", arguments: " " } },
    ];
    assert.deepEqual((await call(plain({ choices: [{ message: { role: "assistant", content: null, tool_calls: calls } }] }))).toolCalls, [
      { id: "c1", name: "u", arguments: "{}" },
      { id: "c2", name: "v", arguments: "{}" },
    ]);

    assert.deepEqual(await call((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`data: ${JSON.stringify(chunk({ content: "whole" }))}\n\ndata:  [DONE] \r\n\r\ndata: ${JSON.stringify(chunk({ content: "not this" }))}\n\n`);
    }), { content: "whole", toolCalls: [] });

    for (const index of [-1, 1025]) {
      err = await rejectsWith(assert, call([tc(index, { name: "t", arguments: "{}" }, "c1"), "[DONE]"]), "model_error");
      assert.match(err.message, /index out of range/, String(index));
    }
    assert.equal((await call([tc(1024, { name: "t", arguments: "{}" }, "c1"), "[DONE]"])).toolCalls.length, 1);

    for (const answer of [{ choices: [] }, {}, { choices: null }]) {
      err = await rejectsWith(assert, call(plain(answer)), "model_error");
      assert.match(err.message, /no choices/, JSON.stringify(answer));
    }
  });

  // Ensure a stream that ends without [DONE] and without a finish_reason
  // (a cut connection) fails the call model_error instead of standing as
  // a shorter reply, that either end marker makes the answer whole (as
  // openai/agree_test.go checks for the Go model), and that a run through
  // the runtime stores nothing of a cut answer.
  test("a stream cut before [DONE] or a finish_reason fails model_error", async () => {
    const call = async (answer) => {
      reset();
      fake.answers.push(answer);
      return openAIModel({ baseURL: fake.url, model: "m", apiKey: KEY })(request().req);
    };
    const raw = (text, destroy) => (req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (destroy) {
        res.write(text);
        res.flushHeaders();
        setImmediate(() => res.socket.destroy());
      } else res.end(text);
    };
    const ev = (d, finish) => `data: ${JSON.stringify(chunk(d, finish))}\n\n`;
    for (const [name, answer] of Object.entries({
      "ends after a chunk": [chunk({ content: "The answer is" })],
      "ends inside a tool call": [chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "t", arguments: "{\"a\"" } }] })],
      "ends at once": [],
      "connection destroyed": raw(ev({ content: "The answer is" }), true),
      "ends inside an event": raw(ev({ content: "The answer" }) + "data: {\"choices\":[{\"delta\":{\"con", false),
    })) {
      const err = await rejectsWith(assert, call(answer), "model_error");
      assert.ok(err instanceof AgentrtError, name);
    }
    assert.deepEqual(await call([chunk({ content: "whole" }), chunk({}, "stop")]), { content: "whole", toolCalls: [] });
    assert.deepEqual(await call([chunk({ content: "x" }, "tool_calls")]), { content: "x", toolCalls: [] });
    assert.deepEqual(await call([chunk({ content: "whole" }), "[DONE]"]), { content: "whole", toolCalls: [] });

    reset();
    const rt = await loadRuntime({
      wasm: await compiledModule(), wasmExec: wasmExecURL,
      model: openAIModel({ baseURL: fake.url, model: "m", apiKey: KEY }),
    });
    try {
      fake.answers.push([chunk({ content: "first" }), "[DONE]"]);
      assert.equal((await rt.run({ sessionId: "s", input: "one" })).reply.content, "first");
      fake.answers.push([chunk({ content: "cut sh" })]);
      await rejectsWith(assert, rt.run({ sessionId: "s", input: "two" }), "model_error");
      assert.deepEqual(rt.session("s").messages.map((m) => m.content), ["one", "first"]);
    } finally {
      rt.close();
    }
  });

  test("toOpenAIMessages converts tool calls and tool results to OpenAI's shape", () => {
    const out = toOpenAIMessages({
      system: "",
      messages: [
        { role: "user", content: "add" },
        { role: "assistant", content: "", tool_calls: [{ id: "c1", name: "add", arguments: "" }] },
        { role: "tool", content: "3", tool_call_id: "c1" },
      ],
    });
    assert.deepEqual(out, [
      { role: "user", content: "add" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "add", arguments: "{}" } }] },
      { role: "tool", content: "3", tool_call_id: "c1" },
    ]);
  });
});

describe("openAIModel in a runtime", () => {
  let rt;
  before(async () => {
    rt = await loadRuntime({
      wasm: await compiledModule(),
      wasmExec: wasmExecURL,
      systemPrompt: "sys",
      model: openAIModel({ baseURL: fake.url, model: "m", apiKey: KEY }),
      tools: [{ name: "add", parameters: { type: "object" }, call: ({ a, b }) => String(a + b) }],
    });
  });
  after(() => rt?.close());

  test("a turn with a tool call: deltas as events, the tool's result sent back", async () => {
    reset();
    fake.answers.push([
      chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "add", arguments: "{\"a\":2," } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "\"b\":3}" } }] }),
      "[DONE]",
    ]);
    fake.answers.push([chunk({ content: "It is " }), chunk({ content: "5." }), "[DONE]"]);
    const events = [];
    const result = await rt.run({
      sessionId: "tools",
      input: "2+3?",
      history: [{ role: "user", content: "earlier" }, { role: "assistant", content: "ok" }],
      onEvent: (e) => events.push(e),
    });
    assert.equal(result.reply.content, "It is 5.");
    assert.equal(result.seed.mode, "cold");
    assert.deepEqual(events.filter((e) => e.type === "model.delta").map((e) => e.delta), ["It is ", "5."]);
    assert.deepEqual(result.appended.map((m) => m.role), ["user", "assistant", "tool", "assistant"]);
    assert.deepEqual(result.appended[1].tool_calls, [{ id: "call_1", name: "add", arguments: "{\"a\":2,\"b\":3}" }]);
    assert.equal(fake.requests.length, 2);
    const second = fake.requests[1].body.messages;
    assert.deepEqual(second.map((m) => m.role), ["system", "user", "assistant", "user", "assistant", "tool"]);
    assert.deepEqual(second[5], { role: "tool", content: "5", tool_call_id: "call_1" });
    assert.equal(second[4].tool_calls[0].function.arguments, "{\"a\":2,\"b\":3}");
  });

  // hang queues an answer that streams one delta and never ends; the
  // returned promises settle when it started and when the connection closed.
  function hang() {
    const started = deferred();
    const closed = deferred();
    fake.answers.push((req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify(chunk({ content: "partial" }))}\n\n`);
      res.on("close", () => closed.resolve());
      started.resolve();
    });
    // The connection must close within 5 s, or the test fails.
    const limit = new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error("the upstream request was not aborted")), 5000);
      closed.promise.then(() => { clearTimeout(t); resolve(); });
    });
    limit.catch(() => {});
    return { started: started.promise, closed: limit };
  }

  const history = [{ role: "user", content: "earlier" }, { role: "assistant", content: "ok" }];

  test("a cancelled run aborts its upstream request, and the session holds nothing of the turn", async () => {
    reset();
    // By the run's own signal.
    let up = hang();
    const ac = new AbortController();
    const deltas = [];
    const p = rt.run({ sessionId: "cancel", input: "long", history, signal: ac.signal,
      onEvent: (e) => { if (e.type === "model.delta") deltas.push(e.delta); } });
    await up.started;
    for (let i = 0; i < 50 && deltas.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(deltas, ["partial"], "the stream had begun");
    ac.abort();
    const err = await rejectsWith(assert, p, "cancelled");
    assert.equal(err.name, "AbortError");
    await up.closed;
    assert.deepEqual(rt.session("cancel").messages.map((m) => m.content), ["earlier", "ok"]);

    // By cancelRun.
    up = hang();
    const q = rt.run({ sessionId: "cancel", input: "long", history, runId: "to-cancel" });
    await up.started;
    assert.equal(rt.cancelRun("to-cancel"), true);
    await rejectsWith(assert, q, "cancelled");
    await up.closed;
    assert.equal(rt.session("cancel").messageCount, 2);

    // By leaving a stream() loop early.
    up = hang();
    for await (const ev of rt.stream({ sessionId: "cancel", input: "long", history })) {
      if (ev.type === "model.delta") break;
    }
    await up.closed;
    assert.equal(rt.session("cancel").messageCount, 2);
    assert.equal(fake.requests.length, 3);
  });

  test("a run that times out aborts its upstream request, and the session holds nothing of the turn", async () => {
    reset();
    const up = hang();
    const p = rt.run({ sessionId: "slow", input: "long", history, policy: { timeoutMs: 200 } });
    await up.started;
    await rejectsWith(assert, p, "timeout");
    await up.closed;
    assert.deepEqual(rt.session("slow").messages.map((m) => m.content), ["earlier", "ok"]);
    // The session works on.
    fake.answers.push([chunk({ content: "fine" }), "[DONE]"]);
    const r = await rt.run({ sessionId: "slow", input: "again", history });
    assert.equal(r.seed.mode, "noop");
    assert.equal(r.reply.content, "fine");
  });

  test("closing the runtime aborts the upstream requests in flight", async () => {
    reset();
    const own = await loadRuntime({ wasm: await compiledModule(), wasmExec: wasmExecURL, model: openAIModel({ baseURL: fake.url, model: "m" }) });
    const up = hang();
    const p = own.run({ sessionId: "s", input: "long" });
    await up.started;
    own.close();
    await rejectsWith(assert, p, "cancelled");
    await up.closed;
  });

  test("an answer over the bound fails the run with model_error and stores nothing", async () => {
    reset();
    const own = await loadRuntime({
      wasm: await compiledModule(),
      wasmExec: wasmExecURL,
      model: openAIModel({ baseURL: fake.url, model: "m", maxResponseBytes: 4096 }),
    });
    try {
      fake.answers.push([chunk({ content: "fits" }), "[DONE]"]);
      await own.run({ sessionId: "big", input: "first", history });
      const contents = () => own.session("big").messages.map((m) => m.content);
      assert.deepEqual(contents(), ["earlier", "ok", "first", "fits"]);
      // One delta first, then the rest over the bound.
      fake.answers.push((req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`data: ${JSON.stringify(chunk({ content: "begun" }))}\n\n`);
        setTimeout(() => res.end(`data: ${JSON.stringify(chunk({ content: "w".repeat(8192) }))}\n\ndata: [DONE]\n\n`), 50);
      });
      const events = [];
      const err = await rejectsWith(assert, own.run({ sessionId: "big", input: "second", onEvent: (e) => events.push(e) }), "model_error");
      assert.match(err.message, /larger than 4096 bytes/);
      assert.deepEqual(events.filter((e) => e.type === "model.delta").map((e) => e.delta), ["begun"], "the answer had begun to stream");
      assert.deepEqual(contents(), ["earlier", "ok", "first", "fits"]);
    } finally {
      own.close();
    }
  });

  test("an upstream failure fails the run with model_error and stores nothing", async () => {
    reset();
    fake.answers.push((req, res) => { res.writeHead(503); res.end("busy"); });
    const before = rt.session("tools").messageCount;
    await rejectsWith(assert, rt.run({ sessionId: "tools", input: "again" }), "model_error");
    assert.equal(rt.session("tools").messageCount, before);
  });
});
