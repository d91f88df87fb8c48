// agentrt/ai in a real page of Chromium, Firefox ESR and WebKit, on the
// main thread and in worker mode (js/test/browser/ai-page.js): the built
// package from dist/ with the pinned AI SDK, whose packages (ai, ai/test,
// zod) esbuild bundles into a scratch folder for the page's import map.
//
//   node js/test/browser/ai.mjs [--browsers chromium,firefox,webkit]
//
// dist/ must be built (`make build`). A browser that is not installed is
// skipped, unless CI is set: then it fails.
import { execFileSync } from "node:child_process";
import { createReadStream, existsSync } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "../../..");
const DIST = process.env.AGENTRT_DIST ? path.resolve(process.env.AGENTRT_DIST) : path.join(ROOT, "dist");
const ESBUILD = path.join(ROOT, "node_modules/.bin/esbuild");
// A guard against hangs, not a speed assertion.
const WAIT_MS = 300_000;
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".wasm": "application/wasm" };

// The AI SDK's packages as one ES module each, for the import map.
const BUNDLES = { "ai.js": "node_modules/ai/dist/index.js", "aitest.js": "node_modules/ai/dist/test/index.js", "zod.js": "node_modules/zod/index.js" };

function serve(bundles) {
  const mounts = [["/dist/", DIST], ["/bundles/", bundles], ["/js/", path.join(ROOT, "js")]];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, "http://x");
    const mount = mounts.find(([prefix]) => url.pathname.startsWith(prefix));
    const file = mount && path.join(mount[1], path.normalize(decodeURIComponent(url.pathname.slice(mount[0].length))));
    if (!file || !file.startsWith(mount[1]) || !(await stat(file).catch(() => null))?.isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream", "cache-control": "no-store" });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({
    url: `http://127.0.0.1:${server.address().port}/`,
    stop: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  })));
}

async function main() {
  const { ENGINE_NAMES, Results, runEngines, watchPage } = await import("../../../web-demo/test/browsers.mjs");
  let browsers = ENGINE_NAMES;
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--browsers") browsers = String(argv[++i]).split(",").filter(Boolean);
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  const results = new Results();
  const scratch = await mkdtemp(path.join(tmpdir(), "agentrt-ai-browser-"));
  let server = null;
  try {
    if (!existsSync(path.join(DIST, "ai.js"))) throw new Error(`${DIST}/ai.js is missing: run \`make build\` or set AGENTRT_DIST`);
    for (const [name, entry] of Object.entries(BUNDLES)) {
      execFileSync(ESBUILD, [entry, "--bundle", "--format=esm", "--platform=browser", "--log-level=error", `--outfile=${path.join(scratch, name)}`], { cwd: ROOT });
    }
    server = await serve(scratch);
    await runEngines(browsers, scratch, results, async (engine, browser) => {
      const page = await browser.newPage();
      const watch = watchPage(page, "page");
      page.setDefaultTimeout(WAIT_MS);
      try {
        await page.goto(`${server.url}js/test/browser/ai.html`);
        await page.waitForFunction(() => window.agentrtAIResults && window.agentrtAIResults.done, { timeout: WAIT_MS });
        const got = await page.evaluate(() => window.agentrtAIResults.results);
        for (const r of got) {
          if (r.ok) results.pass(`${engine.name}: ${r.name}`);
          else results.fail(`${engine.name}: ${r.name}`, r.error);
        }
        if (!got.length) results.fail(`${engine.name}: cases`, "the page ran no case");
        for (const p of await watch.take()) console.log(`        (${engine.name}) ${p}`);
      } catch (e) {
        results.fail(`${engine.name}: the page`, e);
        for (const p of await watch.take()) console.log(`        (${engine.name}) ${p}`);
      } finally {
        await page.close().catch(() => {});
      }
    });
  } catch (e) {
    results.fail("setup", e);
  } finally {
    if (server) await server.stop();
    await rm(scratch, { recursive: true, force: true });
  }
  results.summary();
}

// `node --test js/test/` imports every file under js/test/: this driver
// only runs when invoked directly.
if (process.env.NODE_TEST_CONTEXT) {
  console.log("js/test/browser/ai.mjs: run it with node, not node --test");
} else {
  await main();
}
