// The glue's reliability cases that need Node's APIs (a child process, a
// local HTTP server, environment variables), run under `node --test`,
// `bun test` and `deno test -A`; the rest are in reliability.test.mjs,
// which browsers run too.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { wasmURL } from "./env.mjs";
import { runtimes, isAgentrtError } from "./helpers.mjs";

const { load } = runtimes();

describe("loader", () => {
  test("a retry of loadRuntime after a failed load does not fail with the old error", async () => {
    // In a fresh process: the bug needs a realm where wasm_exec.js was
    // never loaded. The script is written to a temporary directory.
    const { execFile } = await import("node:child_process");
    const { mkdtemp, writeFile, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = await mkdtemp(join(tmpdir(), "agentrt-retry-"));
    const script = join(dir, "retry-load.mjs");
    await writeFile(script, retryScript);
    const args = globalThis.Deno ? ["run", "-A"] : [];
    try {
      const out = await new Promise((resolve, reject) => {
        execFile(process.execPath, [...args, script, new URL("../glue.js", import.meta.url).href, wasmURL.href],
          (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout.trim())));
      });
      assert.equal(out, "ok");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});


const retryScript = `// A fresh realm for the loader's retry test: no Go class is defined yet.
// The first loadRuntime fails while its wasm_exec.js (from a server that
// answers 404 slowly) is still loading; the retry, with a correct path,
// must not fail with that load's error. Prints "ok" or the error.
// Usage: <runtime> retry-load.mjs <glue.js URL> <agentrt.wasm URL>
import { createServer } from "node:http";
import process from "node:process";

const [glueURL, wasmURL] = process.argv.slice(-2);
const { loadRuntime } = await import(glueURL);
const server = createServer((req, res) => setTimeout(() => {
  res.statusCode = 404;
  res.setHeader("Connection", "close");
  res.end();
}, 200));
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
try {
  try {
    await loadRuntime({ wasm: new Uint8Array([0, 1, 2, 3]), wasmExec: \`http://127.0.0.1:\${server.address().port}/wasm_exec.js\` });
    console.log("the first load did not fail");
  } catch (e) {
    if (e.code !== "load_failed") console.log("first:", e.code, e.message);
  }
  const rt = await loadRuntime({ wasm: new URL(wasmURL) });
  const r = await rt.run({ sessionId: "s", input: "x" });
  rt.close();
  console.log(r.status === "completed" ? "ok" : "status " + r.status);
} catch (e) {
  console.log("retry:", e.code, e.message);
} finally {
  server.close();
  server.closeAllConnections?.();
}
process.exit(0);
`;

// collectGarbage returns a function that runs a full collection, where the
// engine lets a test ask for one (Node through V8 flags, Bun), or null.
async function collectGarbage() {
  if (typeof globalThis.gc === "function") return () => globalThis.gc();
  // JavaScriptCore's heap figures do not settle after Bun.gc (a retained
  // heap and a collected one differ by less than the noise): Node's V8
  // only.
  if (globalThis.Bun || globalThis.Deno) return null;
  try {
    const v8 = await import("node:v8");
    const vm = await import("node:vm");
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc");
    return typeof gc === "function" ? () => gc() : null;
  } catch {
    return null;
  }
}

describe("memory", () => {
  const MiB = 1 << 20;

  // The rule of 120 sessions seeded with 3 MiB each under the default
  // 16 MiB budget, scaled down: 48 sessions of 1 MiB under 3 MiB. The
  // module evicts them as the budget says; the glue's mirrors of the
  // evicted sessions must go with them, not wait for a later turn.
  test("mirrors follow the module's evictions: the JS heap is bounded by the budget", async (t) => {
    const gc = await collectGarbage();
    if (gc === null) {
      t.skip("the engine lets no test run a garbage collection");
      return;
    }
    const rt = await load({ model: () => "ok", limits: { maxTotalBytes: 3 * MiB } });
    await rt.run({ sessionId: "warm", input: "x", history: [{ role: "user", content: "a" }, { role: "assistant", content: "b" }] });
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 48; i++) {
      // Strings of their own: a mirror holding them keeps them alive.
      const history = [];
      for (let k = 0; k < 4; k++) history.push({ role: k % 2 ? "assistant" : "user", content: `${i}.${k}`.padEnd(MiB / 4 - 64, "m") });
      const r = await rt.run({ sessionId: `s${i}`, input: "next", history });
      assert.equal(r.status, "completed");
    }
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    const st = rt.stats();
    assert.ok(st.evictions > 0, JSON.stringify(st));
    assert.ok(grown < 16 * MiB, `the JS heap grew by ${(grown / MiB).toFixed(1)} MiB over 48 MiB seeded under a 3 MiB budget`);
  });
  // The echo reply repeats the input: leave room under maxMessageBytes.
  const input = "m".repeat(MiB - 1024);

  // 300 turns, most of them past the budget (evictions):
  // the long run past where Go used to run out of memory (2,000 turns,
  // the old defaults failed after 1,200-1,900) is the module suite's
  // TestBudget_DefaultsSurviveMemoryPressure, on the same Go module and
  // the same budget; this one holds the glue's path to it.
  test("the default budget evicts through the glue: 1 MiB inputs over 300 sessions", { timeout: 300_000 }, async () => {
    const rt = await load();
    for (let i = 0; i < 300; i++) {
      const r = await rt.run({ sessionId: `s${i % 1000}`, input });
      assert.equal(r.status, "completed");
    }
    const st = rt.stats();
    assert.ok(st.budgetUsed <= st.budgetBytes, JSON.stringify(st));
    assert.ok(st.evictions > 0);
    assert.equal((await rt.run({ sessionId: "after", input: "alive?" })).status, "completed");
  });

  // The real failure: with the budget lifted, Go runs out of wasm32's
  // 4 GiB, and the glue starts a fresh instance. It takes about 100 s and
  // 4 GiB of memory, so it runs only when AGENTRT_SLOW is set.
  test("with the budget lifted, Go's out-of-memory exit is survived", { skip: !process.env.AGENTRT_SLOW && "set AGENTRT_SLOW=1", timeout: 600_000 }, async () => {
    const rt = await load({ limits: { maxTotalBytes: 2 ** 40, maxSessionBytes: 64 * MiB } });
    let err;
    for (let i = 0; i < 4000 && !err; i++) {
      try {
        await rt.run({ sessionId: `s${i % 1000}`, input });
      } catch (e) {
        err = e;
      }
    }
    isAgentrtError(err, "internal");
    assert.match(err.message, /exited/);
    const r = await rt.run({ sessionId: "after", input: "alive?", history: [{ role: "user", content: "earlier" }, { role: "assistant", content: "ok" }] });
    assert.equal(r.seed.mode, "cold");
  });
});
