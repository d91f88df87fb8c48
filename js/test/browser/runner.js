// Runs the glue's suites in this page: imports each file named in the
// query (?files=glue.test.mjs,pack.test.mjs), collecting the tests it
// registers through the node:test stand-in, then runs them in order. The
// results land in window.agentrtTestResults ({ done, results: [{ file,
// name, ok, skipped, error, ms }] }) for the driver (run.mjs), and in the
// page. Outside a page (node --test imports every file under js/test/) it
// does nothing.

import { beginFile, run } from "./node-test.js";

async function main() {
  const state = { done: false, results: [] };
  window.agentrtTestResults = state;
  const list = document.getElementById("results");
  const report = (file) => (r) => {
    state.results.push({ file, ...r });
    const li = document.createElement("li");
    li.className = r.skipped ? "skip" : r.ok ? "pass" : "fail";
    li.textContent = `${r.skipped ? "skip" : r.ok ? "ok" : "FAIL"}  ${file}: ${r.name}${r.ok ? "" : `\n${r.error}`}`;
    list.appendChild(li);
  };
  const files = (new URL(location.href).searchParams.get("files") || "").split(",").filter(Boolean);
  for (const file of files) {
    const tree = beginFile("");
    try {
      await import(new URL(`../${file}`, import.meta.url).href);
    } catch (e) {
      report(file)({ name: "(import)", ok: false, error: String(e && e.stack ? `${e.message}\n${e.stack}` : e), ms: 0 });
      continue;
    }
    await run(tree, report(file));
  }
  state.done = true;
  document.body.dataset.done = "true";
}

if (typeof document !== "undefined") main();
