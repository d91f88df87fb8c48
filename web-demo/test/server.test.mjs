// Hardening of the browser suites' static server (server.mjs): every
// request is answered, malformed escapes with 400, and nothing outside
// the mounted directories is served. Runs under `node --test`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { serve } from "./server.mjs";

let srv;
let dist;

before(async () => {
  dist = await mkdtemp(path.join(tmpdir(), "agentrt-server-test-"));
  await writeFile(path.join(dist, "agentrt.wasm"), "\0asm\x01\0\0\0");
  srv = await serve({ dist });
});

after(async () => {
  await srv?.stop();
  if (dist) await rm(dist, { recursive: true, force: true });
});

// get sends the path as it is (no client-side normalisation) and
// resolves with the status and body, or rejects after 5 s unanswered.
function get(rawPath) {
  const { hostname, port } = new URL(srv.url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path: rawPath, method: "GET" }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => { body += c; });
      res.on("end", () => resolve({ status: res.statusCode, body }));
    });
    req.setTimeout(5000, () => req.destroy(new Error(`${rawPath}: no answer within 5 s`)));
    req.on("error", reject);
    req.end();
  });
}

test("a malformed percent-escape in the path is answered 400", async () => {
  for (const p of ["/%E0%A4%A", "/%zz", "/%", "/js/%E0%A4%A", "/dist/%C3", "/js/%E0%A4%A?readdir"]) {
    const { status, body } = await get(p);
    assert.equal(status, 400, p);
    assert.match(body, /malformed percent-escape/, p);
  }
  // The server answers on.
  assert.equal((await get("/index.html")).status, 200);
});

test("paths outside the mounts and odd escapes are 404, well-formed ones served", async () => {
  for (const p of ["/%2e%2e/package.json", "/js/..%2f..%2fgo.mod", "/dist/..%2fgo.mod", "/a%00b", "/nope.html"]) {
    assert.equal((await get(p)).status, 404, p);
  }
  assert.equal((await get("/dist/agentrt.wasm")).status, 200);
  assert.equal((await get("/js/glue%2Ejs")).status, 200);
  const listing = await get("/js/?readdir");
  assert.equal(listing.status, 200);
  assert.ok(JSON.parse(listing.body).includes("glue.js"));
});

test("root serves a built app at / in place of the web demo, /dist/ still mounted", async () => {
  const site = await mkdtemp(path.join(tmpdir(), "agentrt-server-root-"));
  await writeFile(path.join(site, "index.html"), "<p>built app</p>");
  const app = await serve({ dist, root: site });
  try {
    const { hostname, port } = new URL(app.url);
    const fetchText = (p) => new Promise((resolve, reject) => {
      request({ hostname, port, path: p }, (res) => {
        let body = "";
        res.on("data", (c) => { body += c; });
        res.on("end", () => resolve({ status: res.statusCode, body }));
      }).on("error", reject).end();
    });
    assert.deepEqual(await fetchText("/"), { status: 200, body: "<p>built app</p>" });
    assert.equal((await fetchText("/app.js")).status, 404, "the web demo's files are not served under root");
    assert.equal((await fetchText("/dist/agentrt.wasm")).status, 200);
    assert.equal((await fetchText("/%2e%2e/package.json")).status, 404);
  } finally {
    await app.stop();
    await rm(site, { recursive: true, force: true });
  }
});
