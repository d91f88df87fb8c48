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
// busy, which slows the worker's start where cores are few.

const now = () => performance.now();

// The model of the first turn: it reads the messages it is handed, as
// probe.mjs's does.
function readingModel() {
  return (req) => {
    const m = req.messages;
    let n = 0;
    for (let i = 0; i < m.length; i++) n += m[i].content === null ? 0 : 1;
    if (n === 0) throw new Error("blocked: no content");
    return { content: "ok" };
  };
}

function sampler() {
  const ch = new MessageChannel();
  let last = now(), busy = 0, on = true;
  const long = [];
  const gap = (t) => {
    const g = t - last;
    last = t;
    if (g > 2) busy += g;
    if (g > 50) long.push(g);
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
      return { busy, longTasks: long.length, longest: long.length ? Math.max(...long) : 0 };
    },
  };
}

/**
 * blocked runs one cold start and returns { total, busy, longTasks,
 * longest } in ms (longTasks a count).
 *
 * o.who: "main", "worker" or "peer"; o.glue, o.peer, o.wasm, o.wasmExec:
 * URLs; o.history: the stored history.
 */
export async function blocked(o) {
  const input = "the first question after a cold start";
  const history = o.history;
  const s = sampler();
  const t0 = now();
  let res;
  if (o.who === "peer") {
    const { createPeer } = await import(o.peer);
    const peer = createPeer({ model: readingModel() });
    res = await peer.startRunWithHistory("s", input, history);
  } else {
    const glue = await import(o.glue);
    const rt = await glue.loadRuntime({
      wasm: o.wasm, model: readingModel(),
      ...(o.who === "worker" ? { worker: true } : { wasmExec: o.wasmExec }),
    });
    res = await rt.run({ sessionId: "s", input, history });
    await rt.close();
  }
  const total = now() - t0;
  const b = s.stop();
  if (res.seed?.mode !== "cold" || res.seed.seeded !== history.length || res.reply?.content !== "ok") {
    throw new Error(`blocked: the first turn gave ${JSON.stringify({ seed: res.seed, reply: res.reply?.content })}, want a cold seed of ${history.length} and "ok"`);
  }
  return { total, ...b };
}
