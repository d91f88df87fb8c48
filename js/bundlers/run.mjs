// The package in real apps: one small app, built from the packed tarball
// with each bundler (Vite, webpack 5, Rollup, Parcel, esbuild), served, and
// run in Chromium: a turn, a reload, and a cold seed from the stored
// history. Vite's output also runs in Firefox ESR and WebKit, and in
// Chromium so do the Vite dev server and the unbundled package loaded from
// a CDN-style origin (CORS); and, on the three engines, the Vite build as
// a Capacitor-style app (its own localhost origin, the webview shell's
// strict Content Security Policy). The app does nothing but
// `import { loadRuntime } from "agentrt"` and call it without options. A
// second app calls it with `worker: true` (ADR 0021), built with Vite and
// webpack and run in Chromium: the bundlers must find the worker entry
// from the glue alone.
//
//   node js/bundlers/run.mjs [--browsers chromium,firefox,webkit] [--only vite,webpack,...]
//
// dist/ must be built first (`make build`), or set AGENTRT_DIST. Every app
// is built once, in a temporary folder outside the repository; each
// bundler's emitted files and sizes are printed (docs/package.md records
// them). A browser that is not installed is skipped, unless CI is set: then
// it is a failure. The last line reads "N passed, N failed".

import { execFileSync } from "node:child_process";
import { createReadStream, existsSync, readFileSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { ENGINE_NAMES, Results, assertEqual, runEngines, runSteps, watchPage } from "../../web-demo/test/browsers.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const DIST = process.env.AGENTRT_DIST ? path.resolve(process.env.AGENTRT_DIST) : path.join(ROOT, "dist");
const require = createRequire(path.join(ROOT, "package.json"));
// A guard against hangs, not a speed assertion.
const WAIT_MS = 120_000;

const results = new Results();

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

// ---------------------------------------------------------------------------
// The app.

// The app keeps its history in localStorage and runs one turn per page
// load, passing the stored history back; it reports on window.__agentrt.
const MAIN = `import { loadRuntime } from "agentrt";

async function main() {
  const key = "agentrt-history";
  const phases = [];
  const rt = await loadRuntime({ onProgress: (p) => { if (!phases.includes(p.phase)) phases.push(p.phase); } });
  const history = JSON.parse(localStorage.getItem(key) || "[]");
  const input = "turn " + (history.length / 2 + 1);
  const result = await rt.run({ sessionId: "chat", input, history });
  history.push(...result.appended);
  localStorage.setItem(key, JSON.stringify(history));
  return { seed: result.seed, reply: result.reply.content, stored: history.length, phases, go: typeof globalThis.Go };
}

main().then(
  (r) => { window.__agentrt = r; document.body.dataset.done = "1"; },
  (e) => { window.__agentrt = { error: String((e && e.stack) || e) }; document.body.dataset.done = "1"; },
);
`;

// The same app with the runtime in a dedicated Web Worker (ADR 0021): the
// bundler must find the package's worker entry from the plain import
// alone, and emit it with the glue and the module it needs.
const WORKER_MAIN = MAIN
  .replace("await loadRuntime({ onProgress", "await loadRuntime({ worker: true, onProgress")
  .replace("go: typeof globalThis.Go }", "go: typeof globalThis.Go, inWorker: typeof rt.stats().then === \"function\" }");

const page = (script, type = "module") => `<!doctype html>
<html><head><meta charset="utf-8"><title>agentrt app</title></head>
<body><script type="${type}" src="${script}"></script></body></html>
`;

// makeApp writes the user's project into dir: package.json, the app, its
// page, and the package installed from the tarball.
async function makeApp(dir, tarball, cache, main = MAIN) {
  await mkdir(path.join(dir, "src"), { recursive: true });
  await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: "agentrt-bundler-app", private: true, type: "module" }, null, 2));
  await writeFile(path.join(dir, "src", "main.js"), main);
  await writeFile(path.join(dir, "index.html"), page("./src/main.js"));
  execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", "--cache", cache, tarball], { cwd: dir, encoding: "utf8" });
}

// ---------------------------------------------------------------------------
// The bundlers: each builds app into out with its defaults, and what it
// needs to bundle at all (Rollup's resolve and asset plugins, esbuild's
// copy of the module, which it does not emit).

const BUNDLERS = {
  async vite(app, out) {
    const { build } = await import(require.resolve("vite"));
    await build({ root: app, configFile: false, logLevel: "error", build: { outDir: out, emptyOutDir: true } });
  },
  async webpack(app, out) {
    const webpack = require("webpack");
    const stats = await new Promise((resolve, reject) => {
      webpack({ mode: "production", context: app, entry: "./src/main.js", output: { path: out, clean: true } }, (err, s) => (err ? reject(err) : resolve(s)));
    });
    if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }));
    await writeFile(path.join(out, "index.html"), page("./main.js", "text/javascript"));
  },
  async rollup(app, out) {
    const { rollup } = await import(require.resolve("rollup"));
    const { nodeResolve } = await import(require.resolve("@rollup/plugin-node-resolve"));
    const { importMetaAssets } = await import(require.resolve("@web/rollup-plugin-import-meta-assets"));
    const bundle = await rollup({ input: path.join(app, "src", "main.js"), plugins: [nodeResolve({ browser: true, rootDir: app }), importMetaAssets()], onwarn() {} });
    await bundle.write({ dir: out, format: "es" });
    await bundle.close();
    await writeFile(path.join(out, "index.html"), page("./main.js"));
  },
  async parcel(app, out) {
    const { Parcel } = require("@parcel/core");
    const parcel = new Parcel({
      entries: path.join(app, "index.html"),
      defaultConfig: require.resolve("@parcel/config-default"),
      mode: "production",
      shouldAutoInstall: false,
      shouldDisableCache: true,
      cacheDir: path.join(app, ".parcel-cache"),
      defaultTargetOptions: { distDir: out, publicUrl: "./" },
      logLevel: "error",
    });
    await parcel.run();
  },
  async esbuild(app, out) {
    const esbuild = require("esbuild");
    await esbuild.build({ entryPoints: [path.join(app, "src", "main.js")], absWorkingDir: app, bundle: true, format: "esm", minify: true, outdir: out, logLevel: "error" });
    // esbuild does not emit new URL(..., import.meta.url) assets: the one
    // file a host copies next to the bundle (docs/package.md).
    await copyFile(path.join(app, "node_modules", "agentrt", "agentrt.wasm"), path.join(out, "agentrt.wasm"));
    await writeFile(path.join(out, "index.html"), page("./main.js"));
  },
};

// emitted lists the files under dir with their raw and gzip sizes.
async function emitted(dir, base = dir) {
  const out = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await emitted(p, base)));
    else out.push({ file: path.relative(base, p), raw: (await stat(p)).size, gzip: gzipSync(readFileSync(p), { level: 9 }).length });
  }
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

// ---------------------------------------------------------------------------
// Serving.

const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".json": "application/json", ".map": "application/json" };

// The policy a webview shell applies to its pages (docs/webview.md).
const SHELL_CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'";

// serveDir serves dir's files on a free port of 127.0.0.1, with CORS open
// when cors is set (a CDN) and the webview shell's Content Security Policy
// when csp is set, at host (the URL's host name). It resolves with
// { url, close }.
function serveDir(dir, { cors = false, csp = false, host = "127.0.0.1" } = {}) {
  const server = createServer(async (req, res) => {
    let p = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (csp) res.setHeader("content-security-policy", SHELL_CSP);
    if (p === "/favicon.ico") { res.writeHead(204).end(); return; }
    if (p.endsWith("/")) p += "index.html";
    const file = path.join(dir, path.normalize(p));
    if (!file.startsWith(dir + path.sep)) { res.writeHead(403).end(); return; }
    try {
      const s = await stat(file);
      const headers = { "content-type": TYPES[path.extname(file)] || "application/octet-stream", "content-length": s.size, "cache-control": "no-store" };
      if (cors) headers["access-control-allow-origin"] = "*";
      res.writeHead(200, headers);
      createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404).end("not found");
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({
    url: `http://${host}:${server.address().port}/`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  })));
}

// ---------------------------------------------------------------------------
// The browser steps: a first turn, then a reload that seeds the new
// runtime cold from the stored history.

// harmless accepts Chromium's report of the module's request as
// net::ERR_ABORTED, which it makes at times for a response whose body a
// script read to its end through a stream reader (the progress count),
// after every byte arrived: the app's turn, which needs the whole module,
// is checked on its own.
// The Vite dev server answers the browser's own favicon.ico request with
// 404; the app has no icon, and that is no concern of the package's.
const harmless = (problem) => /request failed: \S+\.wasm net::ERR_ABORTED$/.test(problem) ||
  /\/favicon\.ico\b/.test(problem);

async function report(p) {
  await p.waitForFunction(() => document.body && document.body.dataset.done === "1", { timeout: WAIT_MS });
  const r = await p.evaluate(() => JSON.stringify(window.__agentrt));
  const got = JSON.parse(r);
  if (got.error) throw new Error(`the app failed: ${got.error}`);
  return got;
}

function appSteps(ctx, name, url, worker = false) {
  return [
    [worker ? `${name}: loads in a worker and runs a turn` : `${name}: loads with no options and runs a turn`, async () => {
      // One page per browser, for every app in turn (closing WebKit's
      // last window would end its WebDriver session).
      if (!ctx.shared.page) {
        ctx.shared.page = await ctx.browser.newPage();
        ctx.shared.page.setDefaultTimeout(WAIT_MS);
        ctx.shared.watch = watchPage(ctx.shared.page, "app");
      }
      ctx.page = ctx.shared.page;
      ctx.watch = ctx.shared.watch;
      ctx.allowed = harmless;
      await ctx.page.goto(url);
      const r = await report(ctx.page);
      assertEqual(r.seed.mode, "noop", "seed mode of the first turn (empty history)");
      assertEqual(r.stored, 2, "messages stored");
      assertEqual(r.reply, "echo: turn 1 (model received 1 messages)", "reply");
      // In worker mode the module runs in the worker: the page has no Go.
      assertEqual(r.go, worker ? "undefined" : "function", "typeof Go on the page");
      if (worker) assertEqual(r.inWorker, true, "stats() answers with a Promise (worker mode)");
      assertEqual(r.phases.at(-1), "done", `last progress phase (${r.phases})`);
      assert(r.phases.includes("download") || r.phases.includes("compile"), `progress phases: ${r.phases}`);
    }],
    [`${name}: after a reload, seed.mode cold with the stored history`, async () => {
      ctx.allowed = harmless;
      await ctx.page.reload();
      const r = await report(ctx.page);
      assertEqual(r.seed.mode, "cold", "seed mode after the reload");
      assertEqual(r.seed.seeded, 2, "messages seeded");
      assertEqual(r.stored, 4, "messages stored");
      assertEqual(r.reply, "echo: turn 2 (model received 3 messages)", "reply");
    }],
  ];
}

// ---------------------------------------------------------------------------

async function main() {
  const args = { browsers: ENGINE_NAMES, only: [...Object.keys(BUNDLERS), "capacitor", "vite-dev", "cdn", "vite-worker", "webpack-worker"] };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--browsers") args.browsers = String(argv[++i]).split(",").filter(Boolean);
    else if (argv[i] === "--only") args.only = String(argv[++i]).split(",").filter(Boolean);
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!existsSync(path.join(DIST, "package.json")) || !existsSync(path.join(DIST, "agentrt.wasm"))) {
    throw new Error(`${DIST} is not a built package: run \`make build\` (or set AGENTRT_DIST)`);
  }
  const scratch = await mkdtemp(path.join(tmpdir(), "agentrt-bundlers-"));
  const servers = [];
  const apps = []; // { name, url, engines }
  try {
    const cache = path.join(scratch, "npm-cache");
    const packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", scratch, "--cache", cache], { cwd: DIST, encoding: "utf8" }));
    const tarball = path.join(scratch, packed[0].filename);
    const app = path.join(scratch, "app");
    await makeApp(app, tarball, cache);

    for (const [name, bundle] of Object.entries(BUNDLERS)) {
      if (!args.only.includes(name)) continue;
      const out = path.join(scratch, "out", name);
      try {
        const t0 = performance.now();
        await bundle(app, out);
        const files = await emitted(out);
        const ms = Math.round(performance.now() - t0);
        results.pass(`${name}: built in ${ms} ms: ${files.map((f) => `${f.file} ${f.raw} B (${f.gzip} B gzip)`).join(", ")}`);
        const s = await serveDir(out);
        servers.push(s);
        apps.push({ name, url: s.url, engines: name === "vite" ? ENGINE_NAMES : ["chromium"] });
        if (name === "vite" && args.only.includes("capacitor")) {
          // A Capacitor-style app: the Vite build is the web assets, served
          // at the root of the app's own origin (Capacitor's Android scheme
          // is https://localhost) under the webview shell's strict policy:
          // no eval, wasm compiled under 'wasm-unsafe-eval'.
          const c = await serveDir(out, { csp: true, host: "localhost" });
          servers.push(c);
          apps.push({ name: "capacitor", url: c.url, engines: ENGINE_NAMES });
        }
      } catch (e) {
        results.fail(`${name}: build`, e);
      }
    }
    // The worker-mode app, built with Vite and webpack, in Chromium.
    const workerApps = ["vite", "webpack"].filter((b) => args.only.includes(`${b}-worker`));
    if (workerApps.length) {
      const wapp = path.join(scratch, "app-worker");
      await makeApp(wapp, tarball, cache, WORKER_MAIN);
      for (const b of workerApps) {
        const name = `${b}-worker`;
        const out = path.join(scratch, "out", name);
        try {
          const t0 = performance.now();
          await BUNDLERS[b](wapp, out);
          const files = await emitted(out);
          const ms = Math.round(performance.now() - t0);
          results.pass(`${name}: built in ${ms} ms: ${files.map((f) => `${f.file} ${f.raw} B (${f.gzip} B gzip)`).join(", ")}`);
          const s = await serveDir(out);
          servers.push(s);
          apps.push({ name, url: s.url, engines: ["chromium"], worker: true });
        } catch (e) {
          results.fail(`${name}: build`, e);
        }
      }
    }
    if (args.only.includes("vite-dev")) {
      try {
        const { createServer: viteServer } = await import(require.resolve("vite"));
        const dev = await viteServer({ root: app, configFile: false, logLevel: "error", server: { host: "127.0.0.1", port: 0, strictPort: false } });
        await dev.listen();
        const addr = dev.httpServer.address();
        servers.push({ close: () => dev.close() });
        apps.push({ name: "vite-dev", url: `http://127.0.0.1:${addr.port}/`, engines: ["chromium"] });
      } catch (e) {
        results.fail("vite-dev: start", e);
      }
    }
    if (args.only.includes("cdn")) {
      // The package as a CDN serves it, on another origin than the page.
      const cdn = await serveDir(path.join(app, "node_modules", "agentrt"), { cors: true });
      servers.push(cdn);
      const site = path.join(scratch, "out", "cdn");
      await mkdir(site, { recursive: true });
      await writeFile(path.join(site, "main.js"), MAIN.replace('"agentrt"', JSON.stringify(cdn.url + "glue.js")));
      await writeFile(path.join(site, "index.html"), page("./main.js"));
      const s = await serveDir(site);
      servers.push(s);
      apps.push({ name: "cdn", url: s.url, engines: ["chromium"] });
    }

    await runEngines(args.browsers, scratch, results, async (engine, browser) => {
      const shared = {};
      for (const a of apps.filter((a) => a.engines.includes(engine.name))) {
        const ctx = { browser, shared, page: null, allowed: () => false };
        await runSteps(results, engine.name, appSteps(ctx, a.name, a.url, a.worker), ctx, {
          problems: () => (ctx.watch ? ctx.watch.take() : []),
          screenshot: path.join(scratch, `${engine.name}-${a.name}-failure.png`),
        });
      }
    });
  } catch (e) {
    results.fail("setup", e);
  } finally {
    for (const s of servers) await s.close().catch(() => {});
    await rm(scratch, { recursive: true, force: true });
  }
  results.summary();
}

await main();
