// loadRuntime({ onProgress }) and compile(wasm, { onProgress }) over HTTP:
// the phases in order, the bytes counted, the total from Content-Length
// and none for a compressed body, and a bad callback refused.
//
//   node --test js/bundlers/progress.test.mjs      (after `make build`)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const DIST = process.env.AGENTRT_DIST ? path.resolve(process.env.AGENTRT_DIST) : path.join(ROOT, "dist");
const { loadRuntime, compile } = await import(pathToFileURL(path.join(DIST, "glue.js")).href);
const WASM = readFileSync(path.join(DIST, "agentrt.wasm"));
const GZ = gzipSync(WASM);

let server, base;
before(async () => {
  server = createServer((req, res) => {
    if (req.url === "/plain.wasm") {
      res.writeHead(200, { "content-type": "application/wasm", "content-length": WASM.length });
      res.end(WASM);
    } else if (req.url === "/gzip.wasm") {
      res.writeHead(200, { "content-type": "application/wasm", "content-encoding": "gzip", "content-length": GZ.length });
      res.end(GZ);
    } else if (req.url === "/octet.wasm") {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": WASM.length });
      res.end(WASM);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${server.address().port}/`;
});
after(() => new Promise((r) => { server.closeAllConnections(); server.close(r); }));

function phases(seen) {
  return seen.map((p) => p.phase).filter((p, i, a) => p !== a[i - 1]);
}

test("a streamed download reports its bytes against Content-Length, then compile and done", async () => {
  const seen = [];
  const m = await compile(base + "plain.wasm", { onProgress: (p) => seen.push(p) });
  assert.ok(m instanceof WebAssembly.Module);
  assert.deepEqual(phases(seen), ["download", "compile", "done"]);
  const downloads = seen.filter((p) => p.phase === "download");
  assert.ok(downloads.length >= 2, `several download reports: ${downloads.length}`);
  for (let i = 1; i < downloads.length; i++) assert.ok(downloads[i].loaded >= downloads[i - 1].loaded, "loaded grows");
  assert.ok(downloads.every((p) => p.total === WASM.length), "the total is Content-Length");
  assert.deepEqual(seen.at(-1), { phase: "done", loaded: WASM.length, total: WASM.length });
});

test("a compressed body has no total while it downloads; its size is known at the end", async () => {
  const seen = [];
  await compile(base + "gzip.wasm", { onProgress: (p) => seen.push(p) });
  assert.ok(seen.filter((p) => p.phase === "download").every((p) => p.total === undefined), "no total from a compressed length");
  assert.deepEqual(seen.at(-1), { phase: "done", loaded: WASM.length, total: WASM.length });
});

test("a server that does not say application/wasm: counted, then compiled whole", async () => {
  const seen = [];
  await compile(base + "octet.wasm", { onProgress: (p) => seen.push(p) });
  assert.deepEqual(phases(seen), ["download", "compile", "done"]);
  assert.equal(seen.at(-1).loaded, WASM.length);
});

test("loadRuntime reports done last, once the runtime is ready; a throwing callback changes nothing", async () => {
  const seen = [];
  const rt = await loadRuntime({ wasm: base + "plain.wasm", onProgress: (p) => { seen.push(p.phase); throw new Error("ignored"); } });
  try {
    assert.equal(seen.at(-1), "done");
    assert.equal(seen.filter((p) => p === "done").length, 1, "one done");
    const r = await rt.run({ sessionId: "s", input: "hi" });
    assert.equal(r.status, "completed");
  } finally {
    rt.close();
  }
});

test("onProgress that is not a function is refused", async () => {
  await assert.rejects(loadRuntime({ onProgress: 1 }), (e) => e.code === "invalid_argument" && /options\.onProgress/.test(e.message));
  await assert.rejects(compile(WASM, { onProgress: "x" }), (e) => e instanceof TypeError && /options\.onProgress/.test(e.message));
});
