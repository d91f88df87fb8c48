// The main thread's blocked time during one cold start in a page, from the
// first import to the first answered turn of a session seeded from the
// host's stored history: agentrt on the main thread ("main"), agentrt in a
// dedicated Web Worker (the glue's worker mode, "worker") or the
// plain-JavaScript peer on the main thread ("peer"). bench/firstturn.mjs
// --blocked runs it in a fresh page per sample (blocked.html).
//
// A sampler keeps one tiny task queued on the main thread at all times (a
// MessageChannel ping-pong, which no engine throttles), so the thread is
// never idle and every gap between two of its ticks is time the thread
// spent in other work: the module's compile, Go's start, the glue, the
// seed, the model, rendering. Gaps over 2 ms add up to the busy time
// (Firefox's and WebKit's pages read a clock of whole milliseconds, so a
// gap of 1 ms may be a tick of a few microseconds); gaps over 50 ms are long tasks (the Long Tasks API's threshold,
// which only Chromium implements, hence the sampler in all three). A
// page cannot scroll, paint or answer input during a long task.
//
// The sampler cannot tell the page's work from the operating system
// giving the thread's core to something else (the worker itself, other
// processes): on a machine with few, busy cores its gaps include that
// time, so its figures are upper bounds. Its ping-pong also keeps a core
// busy, which slows the worker's start where cores are few. The
// calibration rows ("compute1", "compute2": workers computing while the
// page does nothing) show how much of it a machine's cores add; in
// Chromium, bench/firstturn.mjs also reads the thread's own CPU time from
// a DevTools trace, which preemption does not inflate.

const now = () => performance.now();

// The model of the first turn: it reads the messages it is handed, as
// probe.mjs's does.
function readingModel() {
  return (req) => {
    mark("model");
    const m = req.messages;
    let n = 0;
    for (let i = 0; i < m.length; i++) n += m[i].content === null ? 0 : 1;
    if (n === 0) throw new Error("blocked: no content");
    return { content: "ok" };
  };
}

// The step in progress (set by mark), which the sampler's busy stretches
// are counted to: the step in progress when each began.
let step = "import";
const STEP_AFTER = { start: "import", imported: "load", loaded: "seed", model: "answer" };

// mark marks a step for a trace and for the sampler.
function mark(name) {
  performance.mark("blocked:" + name);
  if (STEP_AFTER[name]) step = STEP_AFTER[name];
}

function sampler() {
  const ch = new MessageChannel();
  let last = now(), busy = 0, on = true, began = step;
  const long = [];
  const by = { import: 0, load: 0, seed: 0, answer: 0 };
  const gap = (t) => {
    const g = t - last;
    last = t;
    if (g > 2) {
      busy += g;
      by[began] += g;
    }
    if (g > 50) long.push(g);
    began = step;
  };
  ch.port1.onmessage = () => {
    gap(now());
    if (on) ch.port2.postMessage(0);
  };
  ch.port2.postMessage(0);
  return {
    stop() {
      on = false;
      gap(now());
      ch.port1.close();
      return {
        busy, longTasks: long.length, longest: long.length ? Math.max(...long) : 0,
        busyImport: by.import, busyLoad: by.load, busySeed: by.seed, busyAnswer: by.answer,
      };
    },
  };
}

/**
 * blocked runs one cold start and returns { total, busy, longTasks,
 * longest, busyImport, busyLoad, busySeed, busyAnswer } in ms (longTasks
 * a count; the busy time by step: import, to ready, the turn to the
 * model, the model call to the answer).
 *
 * o.who: "main", "worker", "workerbytes" (worker mode, the module's bytes
 * fetched by the page and handed to the worker), "peer", "newworker"
 * (the floor of worker mode's start: an empty module worker started and
 * heard from once, and nothing else), or "compute1" / "compute2" (the
 * sampler's calibration: one or two workers computing for 300 ms, the
 * page doing nothing); o.glue, o.peer, o.wasm, o.wasmExec, o.emptyWorker,
 * o.computeWorker: URLs;
 * o.history: the stored history; o.sampler false runs no sampler (for a
 * traced sample, whose figures come from the trace).
 *
 * The steps are marked with performance.mark for a trace (Chromium's
 * blink.user_timing): blocked:start, blocked:imported (the glue or the
 * peer imported), blocked:loaded (the runtime or the peer created),
 * blocked:model (the model called), blocked:end (the turn answered).
 */
export async function blocked(o) {
  const input = "the first question after a cold start";
  const history = o.history;
  mark("start");
  const s = o.sampler === false ? { stop: () => ({}) } : sampler();
  const t0 = now();
  let res;
  if (o.who === "compute1" || o.who === "compute2") {
    mark("imported");
    const ws = Array.from({ length: o.who === "compute1" ? 1 : 2 }, () => new Worker(o.computeWorker, { type: "module" }));
    await Promise.all(ws.map((w) => new Promise((resolve, reject) => {
      w.onmessage = resolve;
      w.onerror = () => reject(new Error("blocked: the computing worker failed"));
    })));
    for (const w of ws) w.terminate();
    const total = now() - t0;
    mark("end");
    return { total, ...s.stop() };
  }
  if (o.who === "newworker") {
    mark("imported");
    const w = new Worker(o.emptyWorker, { type: "module" });
    await new Promise((resolve, reject) => {
      w.onmessage = resolve;
      w.onerror = () => reject(new Error("blocked: the empty worker failed"));
    });
    w.terminate();
    const total = now() - t0;
    mark("end");
    return { total, ...s.stop() };
  }
  if (o.who === "peer") {
    const { createPeer } = await import(o.peer);
    mark("imported");
    const peer = createPeer({ model: readingModel() });
    mark("loaded");
    res = await peer.startRunWithHistory("s", input, history);
  } else {
    const glue = await import(o.glue);
    mark("imported");
    // workerbytes: the page reads the module's bytes (as a webview's
    // native side hands them over) and the worker compiles them.
    const wasm = o.who === "workerbytes" ? await (await fetch(o.wasm)).arrayBuffer() : o.wasm;
    const rt = await glue.loadRuntime({
      wasm, model: readingModel(),
      ...(o.who === "main" ? { wasmExec: o.wasmExec } : { worker: true }),
    });
    mark("loaded");
    res = await rt.run({ sessionId: "s", input, history });
    await rt.close();
  }
  const total = now() - t0;
  mark("end");
  const b = s.stop();
  if (res.seed?.mode !== "cold" || res.seed.seeded !== history.length || res.reply?.content !== "ok") {
    throw new Error(`blocked: the first turn gave ${JSON.stringify({ seed: res.seed, reply: res.reply?.content })}, want a cold seed of ${history.length} and "ok"`);
  }
  return { total, ...b };
}
