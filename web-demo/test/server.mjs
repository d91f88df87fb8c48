// A static file server for the browser suites, laid out like `agentrt demo`
// (web-demo/ at /, the built module at /dist/) plus the glue's sources at
// /js/ and the shared test data at /testdata/. A directory requested with
// ?readdir is answered with the JSON array of its entries' names (what the
// browser stand-in of node:fs/promises' readdir reads). Pages under
// /shell/ are sent with the shell's strict Content Security Policy as a
// header (they carry it in a <meta> tag too, so `agentrt demo` serves
// them under the same policy).
//
//   const srv = await serve({ dist });   // srv.url, srv.requests, srv.stop()
//
// With root, that folder is served at / in place of web-demo/ (a built
// app, such as the Vite build of examples/ai-sdk-react).

import { createReadStream, existsSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { createServer } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The directory `make build` writes, or $AGENTRT_DIST. */
export const DIST = process.env.AGENTRT_DIST ? path.resolve(process.env.AGENTRT_DIST) : path.join(ROOT, "dist");

/** The policy a webview shell applies to its pages (docs/webview.md). */
export const SHELL_CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".png": "image/png",
  ".ts": "text/plain; charset=utf-8",
};

/**
 * serve listens on a free loopback port. It records every request path in
 * requests (so a test can tell whether a page fetched the .wasm). It fails
 * at once, saying how to build it, when dist holds no agentrt.wasm. root,
 * when given, is served at / instead of web-demo/.
 */
export async function serve({ dist = DIST, root = path.join(ROOT, "web-demo") } = {}) {
  if (!existsSync(path.join(dist, "agentrt.wasm"))) throw new Error(`${dist}/agentrt.wasm is missing: run \`make build\` or set AGENTRT_DIST`);
  const mounts = [
    ["/dist/", dist],
    ["/js/", path.join(ROOT, "js")],
    ["/testdata/", path.join(ROOT, "testdata")],
    ["/", path.resolve(root)],
  ];
  const requests = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, "http://x");
    requests.push(url.pathname);
    res.setHeader("cache-control", "no-store");
    res.setHeader("x-content-type-options", "nosniff");
    if (url.pathname.startsWith("/shell/")) res.setHeader("content-security-policy", SHELL_CSP);
    if (req.method !== "GET" && req.method !== "HEAD") { res.writeHead(405).end(); return; }
    let rel;
    try {
      rel = decodeURIComponent(url.pathname);
    } catch {
      // A malformed escape (%E0%A4%A): a bad request, not a thrown
      // URIError that leaves it unanswered.
      res.writeHead(400, { "content-type": "text/plain" }).end("bad request: malformed percent-escape in the path");
      return;
    }
    const listing = url.searchParams.has("readdir");
    if (rel.endsWith("/") && !listing) rel += "index.html";
    const [prefix, dir] = mounts.find(([p]) => rel.startsWith(p));
    const file = path.join(dir, rel.slice(prefix.length));
    if (!file.startsWith(dir + path.sep) && !(listing && file === dir)) { res.writeHead(404).end(); return; }
    if (listing) {
      try {
        const names = JSON.stringify(await readdir(file));
        res.writeHead(200, { "content-type": "application/json" }).end(names);
      } catch {
        res.writeHead(404, { "content-type": "text/plain" }).end("not a directory");
      }
      return;
    }
    try {
      const st = await stat(file);
      if (!st.isFile()) throw new Error("not a file");
      res.writeHead(200, {
        "content-type": TYPES[path.extname(file)] || "application/octet-stream",
        "content-length": st.size,
      });
      if (req.method === "HEAD") { res.end(); return; }
      createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    requests,
    stop: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}
