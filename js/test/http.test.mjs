// Behaviour of js/http.js (streamRun, runStatus, cancelRun) against a fake
// durable deployment: a Node http server on 127.0.0.1 that speaks the
// resumable-run protocol of docs/worker.md ("Resumable runs"): `id: <seq>`
// on every event, GET .../runs/{runId}/events with Last-Event-ID, GET and
// DELETE of a run, 404 run_lost for a run it does not know. The tests'
// fetch (cutting) cuts the streams where a test asks, as a dropped
// connection does (a cut made by the client is the same on Node, Bun and
// Deno; a socket closed by the server reaches each differently).
import { test, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { AgentrtError } from "../glue.js";
import { streamRun, resumeRun, runStatus, cancelRun } from "../http.js";

const SESSION = "chat/1";

// The fake. runs maps a run id to {status, events: [{type, data}]} with
// seq = index + 1; cuts[i] is how many events of the i-th streamed
// answer the client receives before its connection fails (undefined:
// all, then the end);
// refuse[i], when set, answers the i-th stream request with that status
// and error code instead; overlap replays one event before Last-Event-ID.
const fake = { requests: [], runs: new Map(), cuts: [], refuse: [], overlap: false, deltas: 4, streams: 0, url: "", server: null };

function runEvents(runId, deltas) {
  const evs = [{ type: "run.started" }];
  for (let i = 1; i <= deltas; i++) evs.push({ type: "model.delta", delta: `d${i}` });
  const reply = { role: "assistant", content: "done" };
  evs.push({ type: "message.appended", message: reply });
  evs.push({ type: "run.completed", result: { runId, sessionId: SESSION, reply, appended: [reply], messageCount: 2 } });
  return evs;
}

function sse(res, run, runId, after) {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "agentrt-run-id": runId });
  fake.streams++;
  for (let seq = fake.overlap && after > 0 ? after : after + 1; seq <= run.events.length; seq++) {
    const ev = { ...run.events[seq - 1], runId, sessionId: SESSION, seq };
    // A CRLF-separated event now and then: the reader takes every line ending.
    const nl = seq % 3 === 0 ? "\r\n" : "\n";
    res.write(`id: ${seq}${nl}event: ${ev.type}${nl}data: ${JSON.stringify(ev)}${nl}${nl}`);
  }
  res.end();
}

// cutting is the tests' fetch: the i-th streamed request's answer (in
// the order the fake counts them) ends after fake.cuts[i] events with a
// network error, the rest of the body never received.
let clientStreams = 0;
async function cutting(input, init) {
  const i = init.headers?.Accept === "text/event-stream" ? clientStreams++ : -1;
  const res = await fetch(input, init);
  const cut = i >= 0 ? fake.cuts[i] : undefined;
  if (cut === undefined || !res.ok) return res;
  const text = await res.text();
  let end = 0;
  for (let n = 0; n < cut; n++) {
    const m = /\r\n\r\n|\n\n/.exec(text.slice(end));
    if (!m) break;
    end += m.index + m[0].length;
  }
  const bytes = new TextEncoder().encode(text.slice(0, end));
  const body = new ReadableStream({
    start(c) {
      if (bytes.length) c.enqueue(bytes);
    },
    pull(c) {
      c.error(new TypeError("terminated"));
    },
  });
  return new Response(body, { status: res.status, headers: res.headers });
}

function fail(res, status, code, message) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { code, message } }));
}

before(async () => {
  fake.server = createServer((req, res) => {
    let body = "";
    req.on("data", (b) => { body += b; });
    req.on("end", () => {
      let parsed = null;
      try { parsed = JSON.parse(body); } catch { /* recorded as null */ }
      fake.requests.push({ method: req.method, url: req.url, lastEventId: req.headers["last-event-id"], auth: req.headers.authorization, body: parsed });
      const u = new URL(req.url, "http://x");
      const m = /^\/v1\/sessions\/([^/]+)\/runs(?:\/([^/]+)(\/events)?)?$/.exec(u.pathname);
      if (!m || decodeURIComponent(m[1]) !== SESSION) return fail(res, 404, "not_found", "no such route");
      const refusal = req.headers.accept === "text/event-stream" ? fake.refuse[fake.streams] : undefined;
      if (refusal) {
        fake.streams++;
        return fail(res, refusal.status, refusal.code, "refused by the test");
      }
      if (req.method === "POST" && !m[2]) {
        if (parsed?.policy?.onDisconnect !== "continue" || typeof parsed.runId !== "string" || typeof parsed.input !== "string") {
          return fail(res, 400, "invalid_argument", "bad run");
        }
        const run = { status: "completed", events: runEvents(parsed.runId, fake.deltas) };
        fake.runs.set(parsed.runId, run);
        return sse(res, run, parsed.runId, 0);
      }
      const runId = m[2] && decodeURIComponent(m[2]);
      const run = fake.runs.get(runId);
      if (!run) return fail(res, 404, "run_lost", `run "${runId}" is not known`);
      if (req.method === "GET" && m[3]) {
        const after = Number(req.headers["last-event-id"] ?? u.searchParams.get("after") ?? 0);
        return sse(res, run, runId, after);
      }
      if (req.method === "DELETE" && !m[3]) {
        run.status = "cancelled";
        run.events = run.events.slice(0, 2).concat({ type: "run.cancelled", error: { code: "cancelled", message: "stopped" } });
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ runId, status: run.status, lastEventId: run.events.length }));
    });
  });
  await new Promise((resolve) => fake.server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${fake.server.address().port}/`;
});

after(() => new Promise((resolve) => fake.server.close(resolve)));

beforeEach(() => {
  fake.requests = [];
  fake.runs = new Map();
  fake.cuts = [];
  fake.refuse = [];
  fake.overlap = false;
  fake.deltas = 4;
  fake.streams = 0;
  clientStreams = 0;
});

const NO_WAIT = { attempts: 3, delayMs: 0 };

// collect runs streamRun to its end: the events and the return value.
async function collect(options, onEvent) {
  const it = streamRun(fake.url, { sessionId: SESSION, input: "q", retry: NO_WAIT, fetch: cutting, ...options });
  const events = [];
  for (;;) {
    const step = await it.next();
    if (step.done) return { events, result: step.value };
    events.push(step.value);
    if (onEvent) await onEvent(step.value, events);
  }
}

async function rejectsCode(promise, code) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `want a rejection with code ${code}`);
  // Bad arguments are TypeErrors with the code, as agentrt/openai's.
  assert.ok(err instanceof AgentrtError || (code === "invalid_argument" && err instanceof TypeError), `want an AgentrtError, got ${err}`);
  assert.equal(err.code, code, err.message);
  return err;
}

function assertOnce(events, total) {
  assert.deepEqual(events.map((e) => e.seq), Array.from({ length: total }, (_, i) => i + 1), "each event once, in order");
  assert.equal(events[0].type, "run.started");
  assert.equal(events[total - 1].type, "run.completed");
}

test("a dropped stream is resumed with Last-Event-ID: every later event once, and the Result", async () => {
  fake.cuts = [2, 3];
  const { events, result } = await collect({ headers: { Authorization: "Bearer t" } });
  assertOnce(events, 7);
  assert.deepEqual(events.filter((e) => e.type === "model.delta").map((e) => e.delta), ["d1", "d2", "d3", "d4"]);
  assert.equal(result.messageCount, 2);
  assert.equal(result.reply.content, "done");
  const runId = fake.requests[0].body.runId;
  assert.match(runId, /^r-[0-9a-f]{16}$/);
  assert.deepEqual(fake.requests.map((r) => [r.method, r.url, r.lastEventId]), [
    ["POST", "/v1/sessions/chat%2F1/runs", undefined],
    ["GET", `/v1/sessions/chat%2F1/runs/${runId}/events`, "2"],
    ["GET", `/v1/sessions/chat%2F1/runs/${runId}/events`, "5"],
  ]);
  assert.deepEqual(fake.requests[0].body.policy, { onDisconnect: "continue" });
  assert.ok(fake.requests.every((r) => r.auth === "Bearer t"), "the headers go with every request");
});

test("events a server sends again are yielded once", async () => {
  fake.cuts = [3, 2];
  fake.overlap = true;
  const { events } = await collect({ runId: "mine", policy: { timeoutMs: 5000 } });
  assertOnce(events, 7);
  assert.deepEqual(fake.requests[0].body, { input: "q", policy: { timeoutMs: 5000, onDisconnect: "continue" }, runId: "mine" });
});

test("reconnecting after the run completed replays its tail", async () => {
  fake.cuts = [1];
  const seen = [];
  const { events, result } = await collect({ runId: "r1" }, (ev) => {
    if (ev.seq === 1) seen.push(fake.runs.get("r1").status);
  });
  assert.deepEqual(seen, ["completed"], "the run had completed when the client came back");
  assertOnce(events, 7);
  assert.equal(result.reply.content, "done");
  assert.equal(fake.requests[1].lastEventId, "1");
  const st = await runStatus(fake.url, { sessionId: SESSION, runId: "r1" });
  assert.equal(st.status, "completed");
});

test("a run the deployment lost rejects run_lost, with its status and run id", async () => {
  fake.cuts = [2];
  const events = [];
  const err = await rejectsCode(collect({ runId: "gone" }, (ev, evs) => {
    events.push(ev);
    if (evs.length === 2) fake.runs.clear(); // a restart of the deployment
  }), "run_lost");
  assert.equal(err.status, 404);
  assert.equal(err.runId, "gone");
  assert.deepEqual(events.map((e) => e.seq), [1, 2]);
  await rejectsCode(runStatus(fake.url, { sessionId: SESSION, runId: "gone" }), "run_lost");
});

test("a refused start rejects with the answer's code and fetches nothing more", async () => {
  fake.refuse = [{ status: 400, code: "invalid_history" }];
  const err = await rejectsCode(collect({}), "invalid_history");
  assert.equal(err.status, 400);
  assert.equal(fake.requests.length, 1);
});

test("retries are bounded: attempts in a row that receive nothing, then network_error", async () => {
  fake.cuts = [2];
  fake.refuse = [undefined, { status: 503, code: "internal" }, { status: 503, code: "internal" }, { status: 503, code: "internal" }, { status: 503, code: "internal" }];
  const err = await rejectsCode(collect({ retry: { attempts: 3, delayMs: 0 } }), "network_error");
  assert.equal(fake.requests.length, 4, "the start and 3 reconnections");
  assert.equal(err.cause.code, "internal");
  // A reconnection that yields events resets the count.
  fake.requests = [];
  fake.streams = clientStreams = 0;
  fake.cuts = [1, 0, 1, 0, 1];
  fake.refuse = [];
  const { events } = await collect({ retry: { attempts: 2, delayMs: 0 } });
  assertOnce(events, 7);
  // attempts: 0 never reconnects.
  fake.requests = [];
  fake.streams = clientStreams = 0;
  fake.cuts = [1];
  await rejectsCode(collect({ retry: { attempts: 0 } }), "network_error");
  assert.equal(fake.requests.length, 1);
});

test("a network failure on every request is bounded too", async () => {
  const calls = [];
  const down = async (url) => {
    calls.push(url);
    throw new TypeError("fetch failed");
  };
  const err = await rejectsCode(collect({ fetch: down, runId: "x", retry: { attempts: 2, delayMs: 0 } }), "network_error");
  assert.equal(calls.length, 2);
  assert.equal(err.cause.message, "fetch failed");
  assert.match(calls[1], /\/runs\/x\/events$/, "a start whose answer was lost is resumed by its id");
});

test("an abort stops the stream; with cancelOnAbort it stops the run too", async () => {
  for (const cancelOnAbort of [false, true]) {
    fake.requests = [];
    fake.streams = clientStreams = 0;
    fake.cuts = [2];
    const ctl = new AbortController();
    const runId = `a-${cancelOnAbort}`;
    const err = await rejectsCode(collect({ runId, signal: ctl.signal, cancelOnAbort }, (ev) => {
      if (ev.seq === 2) ctl.abort();
    }), "cancelled");
    assert.equal(err.name, "AbortError");
    const deletes = fake.requests.filter((r) => r.method === "DELETE");
    assert.equal(deletes.length, cancelOnAbort ? 1 : 0, `DELETEs with cancelOnAbort ${cancelOnAbort}`);
    assert.equal(fake.runs.get(runId).status, cancelOnAbort ? "cancelled" : "completed");
  }
  // A signal aborted before the start fetches nothing.
  fake.requests = [];
  await rejectsCode(collect({ signal: AbortSignal.abort() }), "cancelled");
  assert.equal(fake.requests.length, 0);
});

test("breaking out of the loop leaves the run going", async () => {
  fake.deltas = 50;
  for await (const ev of streamRun(fake.url, { sessionId: SESSION, input: "q", runId: "b" })) {
    if (ev.seq === 3) break;
  }
  assert.equal(fake.requests.filter((r) => r.method === "DELETE").length, 0);
  const st = await runStatus(fake.url, { sessionId: SESSION, runId: "b" });
  assert.equal(st.status, "completed");
});

test("a resumed run stopped by cancelRun ends with run.cancelled", async () => {
  fake.cuts = [2];
  const { events, result } = await collect({ runId: "s" }, async (ev) => {
    if (ev.seq === 2) {
      const st = await cancelRun(fake.url, { sessionId: SESSION, runId: "s" });
      assert.equal(st.status, "cancelled");
    }
  });
  assert.deepEqual(events.map((e) => [e.seq, e.type]), [[1, "run.started"], [2, "model.delta"], [3, "run.cancelled"]]);
  assert.equal(result, undefined);
  await rejectsCode(cancelRun(fake.url, { sessionId: SESSION, runId: "unknown" }), "run_lost");
});

test("bad arguments are refused invalid_argument and fetch nothing", async () => {
  const bad = [
    ["not a url", { sessionId: "s", input: "q" }],
    [fake.url, null],
    [fake.url, { input: "q" }],
    [fake.url, { sessionId: "", input: "q" }],
    [fake.url, { sessionId: "s", input: 5 }],
    [fake.url, { sessionId: "s", input: "q", history: {} }],
    [fake.url, { sessionId: "s", input: "q", policy: [] }],
    [fake.url, { sessionId: "s", input: "q", policy: { onDisconnect: "cancel" } }],
    [fake.url, { sessionId: "s", input: "q", runId: "" }],
    [fake.url, { sessionId: "s", input: "q", fetch: 1 }],
    [fake.url, { sessionId: "s", input: "q", signal: {} }],
    [fake.url, { sessionId: "s", input: "q", cancelOnAbort: "yes" }],
    [fake.url, { sessionId: "s", input: "q", retry: { attempts: -1 } }],
    [fake.url, { sessionId: "s", input: "q", retry: { delayMs: 1.5 } }],
    [fake.url, { sessionId: "s", input: "q", retry: null }],
  ];
  const refused = (e) => e instanceof TypeError && e.code === "invalid_argument";
  for (const [url, options] of bad) {
    assert.throws(() => streamRun(url, options), refused, JSON.stringify(options));
  }
  for (const options of [{ sessionId: "s" }, { sessionId: "s", runId: "" }, { sessionId: "s", runId: "r", after: -1 }, { sessionId: "s", runId: "r", after: "2" }]) {
    assert.throws(() => resumeRun(fake.url, options), refused, JSON.stringify(options));
  }
  await rejectsCode(runStatus(fake.url, { sessionId: "s" }), "invalid_argument");
  await rejectsCode(cancelRun(fake.url, null), "invalid_argument");
  assert.equal(fake.requests.length, 0);
});

test("resumeRun follows a run started earlier, after the event it names", async () => {
  fake.deltas = 4;
  for await (const ev of streamRun(fake.url, { sessionId: SESSION, input: "q", runId: "later", fetch: cutting })) {
    if (ev.seq === 3) break; // the app is closed
  }
  const events = [];
  const it = resumeRun(fake.url, { sessionId: SESSION, runId: "later", after: 3, retry: NO_WAIT, fetch: cutting });
  let step;
  while (!(step = await it.next()).done) events.push(step.value);
  assert.deepEqual(events.map((e) => e.seq), [4, 5, 6, 7]);
  assert.equal(step.value.reply.content, "done");
  assert.equal(fake.requests.at(-1).lastEventId, "3");
  // From the start by default, with a cut on the way.
  fake.cuts = [];
  fake.cuts[clientStreams] = 2;
  const before = fake.requests.length;
  const all = [];
  for await (const ev of resumeRun(fake.url, { sessionId: SESSION, runId: "later", retry: NO_WAIT, fetch: cutting })) all.push(ev.seq);
  assert.deepEqual(all, [1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(fake.requests.slice(before).map((r) => r.lastEventId), ["0", "2"]);
  await rejectsCode(resumeRun(fake.url, { sessionId: SESSION, runId: "nope" }).next(), "run_lost");
});
