// One cold start, timed from its first import to its first answered turn:
// agentrt (the glue and agentrt.wasm) or the plain-JavaScript peer
// (bench/baselines/peer.mjs), in whatever engine runs this file: Node, Bun
// or Deno (bench/firstturn/child.mjs, one process per sample) or a
// browser (bench/firstturn/page.html, one page per sample). It imports
// nothing statically, so the time of every import is its own.
//
// The turn seeds a cold session from the host's stored history and calls
// a JavaScript model that reads req.messages, as a real host's model
// building its request does.

const now = () => performance.now();

// The model of the first turn: it reads the messages it is handed.
function readingModel(marks) {
  return (req) => {
    marks.model ??= now();
    const m = req.messages;
    const last = m[m.length - 1];
    if (m.length === 0 || typeof last.content !== "string") throw new Error("probe: bad request");
    let n = 0;
    for (let i = 0; i < m.length; i++) n += m[i].content === null ? 0 : 1;
    if (n === 0) throw new Error("probe: no content");
    marks.modelDone = now();
    return { content: "ok" };
  };
}

const inPage = typeof document !== "undefined" && typeof document.createElement === "function";

function scriptTag(url) {
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = url;
    s.onload = () => resolve();
    s.onerror = () => reject(new Error(`script ${url} failed to load`));
    document.head.appendChild(s);
  });
}

// loadGoClass defines globalThis.Go from wasm_exec.js, as the glue would,
// so that the probe can watch the instance the glue starts.
async function loadGoClass(execURL, readText) {
  if (typeof globalThis.Go === "function") return;
  if (inPage) await scriptTag(execURL);
  else new Function(await readText(execURL))();
}

// watchGo wraps globalThis.Go so that the instance the glue starts marks
// when it was made (before WebAssembly.instantiate), when go.run began
// (instantiated) and when go.run returned (the Go runtime started, every
// package's init ran, main published its exports and blocked). With
// godebug set, the instance runs with GODEBUG=godebug, and what it prints
// is collected in out.
function watchGo(marks, godebug, out) {
  const G = globalThis.Go;
  globalThis.Go = class extends G {
    constructor() {
      super();
      marks.goNew ??= now();
    }
    run(instance) {
      if (godebug) this.env = { ...this.env, GODEBUG: godebug };
      marks.goRun ??= now();
      const log = console.log, err = console.error;
      if (out) console.log = console.error = (...a) => out.push(a.join(" "));
      let p;
      try {
        p = super.run(instance);
      } finally {
        console.log = log; console.error = err;
      }
      marks.goRan ??= now();
      return p;
    }
  };
}

/**
 * probe runs one cold start and resolves with its phases in milliseconds.
 *
 * o.who: "agentrt" or "peer", or a floor: "module" (agentrt.wasm read,
 * compiled and instantiated, not run) or "minimal" (the minimal GOOS=js
 * module in o.wasm, run until its main blocked), always on the bytes
 * path; o.path: "bytes" (read the module's bytes,
 * then WebAssembly.compile) or "stream" (fetch + compileStreaming);
 * o.glue, o.peer, o.wasm, o.wasmExec: URLs; o.history: the stored
 * messages; o.readBytes(url), o.readText(url): how the engine reads a
 * file (fetch in a page); o.cpuNow(): the process's CPU time in ms, all
 * its threads (where the engine tells it; the result's cpu is then the
 * CPU time of the whole start); o.inittrace: run the instance with
 * GODEBUG=inittrace=1 and return the sum of the packages' init times
 * instead of timing the rest (a separate sample: printing costs time).
 */
export async function probe(o) {
  const marks = {};
  const cpu = o.cpuNow ?? (() => NaN);
  const c0 = cpu();
  const t0 = now();
  const history = o.history;
  const input = "the first question after a cold start";
  if (o.who === "peer") {
    const { createPeer } = await import(o.peer);
    const tImport = now();
    const peer = createPeer({ model: readingModel(marks) });
    const tCreate = now();
    const res = await peer.startRunWithHistory("s", input, history);
    const t = now();
    const c = cpu() - c0;
    check(res, history.length);
    const again = await timeAgain(() => peer.startRunWithHistory("s2", input, history), history.length);
    return {
      import: tImport - t0, create: tCreate - tImport,
      seed: marks.model - tCreate, model: t - marks.model, total: t - t0, cpu: c, again,
    };
  }
  if (o.who === "module" || o.who === "minimal") return floor(o, t0, c0, cpu);
  const glue = await import(o.glue);
  await loadGoClass(o.wasmExec, o.readText);
  const tImport = now();
  let module, tDownload;
  if (o.path === "stream") {
    const res = fetch(o.wasm);
    module = await WebAssembly.compileStreaming(res.then((r) => { tDownload = now(); return r; }));
  } else {
    const bytes = await o.readBytes(o.wasm);
    tDownload = now();
    module = await WebAssembly.compile(bytes);
  }
  const tCompile = now();
  const out = o.inittrace ? [] : null;
  watchGo(marks, o.inittrace ? "inittrace=1" : "", out);
  const rt = await glue.loadRuntime({ wasm: module, wasmExec: o.wasmExec, model: readingModel(marks) });
  const tLoad = now();
  if (o.inittrace) {
    // The glue's packing of the history, on its own: its first call (its
    // code runs for the first time) and its second.
    const p0 = now();
    glue.packHistory(history);
    const p1 = now();
    glue.packHistory(history);
    const p2 = now();
    rt.close();
    return { ...initTrace(out), packFirst: p1 - p0, packSecond: p2 - p1 };
  }
  const res = await rt.run({ sessionId: "s", input, history });
  const t = now();
  const c = cpu() - c0;
  check(res, history.length);
  const again = await timeAgain(() => rt.run({ sessionId: "s2", input, history }), history.length);
  return {
    import: tImport - t0, download: tDownload - tImport, compile: tCompile - tDownload,
    instantiate: marks.goRun - tCompile, gostart: marks.goRan - marks.goRun, create: tLoad - marks.goRan,
    seed: marks.model - tLoad, model: t - marks.model, total: t - t0, cpu: c, again,
  };
}

// floor times what any GOOS=js module pays before its first turn, on the
// bytes path: wasm_exec.js, the module's bytes, WebAssembly.compile and
// WebAssembly.instantiate with a Go's importObject. For o.who "module"
// (o.wasm is agentrt.wasm) it stops there and never runs the instance; for
// "minimal" (o.wasm is the minimal GOOS=js module, whose main publishes
// globalThis.agentrtMinimal = "ok" and blocks) it also runs go.run until
// that global is set: the Go runtime's start with next to nothing to init.
async function floor(o, t0, c0, cpu) {
  await loadGoClass(o.wasmExec, o.readText);
  const tImport = now();
  const bytes = await o.readBytes(o.wasm);
  const tDownload = now();
  const module = await WebAssembly.compile(bytes);
  const tCompile = now();
  const go = new globalThis.Go();
  const instance = await WebAssembly.instantiate(module, go.importObject);
  const tInstance = now();
  const r = { import: tImport - t0, download: tDownload - tImport, compile: tCompile - tDownload, instantiate: tInstance - tCompile };
  if (o.who === "module") return { ...r, total: tInstance - t0, cpu: cpu() - c0 };
  go.run(instance).catch(() => {});
  // main sets the global before it blocks, so go.run has normally set it
  // when it returns; wait for it all the same, in case a host defers it.
  for (const until = now() + 10_000; globalThis.agentrtMinimal !== "ok"; ) {
    if (now() > until) throw new Error("probe: the minimal module never set globalThis.agentrtMinimal");
    await new Promise((ok) => setTimeout(ok, 0));
  }
  const t = now();
  return { ...r, gostart: t - tInstance, total: t - t0, cpu: cpu() - c0 };
}

// timeAgain times the same first turn on a second cold session of the
// same runtime, after the first (not part of the total): the first
// turn's extra time over it is what running its code for the first time
// cost.
async function timeAgain(turn, n) {
  const t = now();
  check(await turn(), n);
  return now() - t;
}

function check(res, n) {
  if (res.seed?.mode !== "cold" || res.seed.seeded !== n || res.reply?.content !== "ok") {
    throw new Error(`probe: the first turn gave ${JSON.stringify({ seed: res.seed, reply: res.reply?.content })}, want a cold seed of ${n} and "ok"`);
  }
}

// initTrace sums GODEBUG=inittrace=1's lines ("init pkg @t ms, c ms clock,
// b bytes, a allocs") and keeps the costliest packages.
function initTrace(lines) {
  const pkgs = [];
  for (const l of lines.join("\n").split("\n")) {
    const m = l.match(/^init (\S+) @[\d.]+ ms, ([\d.]+) ms clock, (\d+) bytes, (\d+) allocs/);
    if (m) pkgs.push({ pkg: m[1], ms: Number(m[2]), bytes: Number(m[3]), allocs: Number(m[4]) });
  }
  if (pkgs.length === 0) throw new Error("probe: GODEBUG=inittrace=1 printed nothing: " + lines.slice(0, 3).join(" | "));
  const init = pkgs.reduce((a, p) => a + p.ms, 0);
  pkgs.sort((a, b) => b.ms - a.ms);
  return { init, packages: pkgs.length, top: pkgs.slice(0, 5) };
}
