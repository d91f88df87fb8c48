// Two builds side by side: this one's dist/ and a base build's (another
// revision, built by scripts/bench-vs.sh in a temporary worktree), run
// interleaved in the same harness, so that a regression against the base
// shows in one run instead of as noise around a bar. Each pair runs each
// build once in a fresh Node process (bench/vs/child.mjs: the glue and
// the module against the plain-JavaScript peer, a JavaScript model that
// reads its messages), the order of the two alternating from pair to
// pair, then one cold start of each build and of the peer in fresh
// processes (bench/firstturn/child.mjs: first import to the first
// answered turn of a 1,000-message seed), in a rotating order.
//
//   node bench/vs.mjs --base DIR [--this DIR] [--pairs N] [--short] [--rows KEYS] [--json FILE]
//
// For every row it prints this build's ratio to the peer, the base
// build's, and this build's against the base (the ratio of the two
// ratios within a pair; for the cold start, of the two totals), each as
// the median and the spread (min-max) over the pairs, then each build's
// own median time. --short runs 3 pairs of fewer rounds: a quick check
// before a change is handed on, its figures coarser. --rows runs only the
// rows named (comma-separated keys of ROWS). It asserts nothing
// about speed; the verdict column says whether this build's median is
// within 5% of the base's.

import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");

/** The rows of the table, in order: key, label, what each sample is. */
export const ROWS = [
  ["seed1000", "cold seed, 1,000 messages, JS model"],
  ["seed10000", "cold seed, 10,000 messages"],
  ["turn100", "warm turn, 100 messages"],
  ["turn5000", "warm turn, 5,000 messages"],
  ["coldstart", "cold start in Node, first import to first turn"],
];

/** The bound of the verdict: this build's median within 5% of the base's. */
export const BOUND = 1.05;

/**
 * parseArgs reads the command line (without node and the script) into
 * options; it throws an Error naming the argument it refuses.
 */
export function parseArgs(argv) {
  const o = { base: "", this: path.join(root, "dist"), pairs: 0, short: false, json: "", baseLabel: "", thisLabel: "", rows: ROWS.map(([k]) => k) };
  const value = (i, name) => {
    if (i >= argv.length || argv[i].startsWith("--")) throw new Error(`vs: ${name} needs a value`);
    return argv[i];
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--base") o.base = value(++i, a);
    else if (a === "--this") o.this = value(++i, a);
    else if (a === "--pairs") {
      const n = Number(value(++i, a));
      if (!Number.isInteger(n) || n < 1 || n > 1000) throw new Error(`vs: --pairs must be a whole number from 1 to 1000, not ${argv[i]}`);
      o.pairs = n;
    } else if (a === "--short") o.short = true;
    else if (a === "--json") o.json = value(++i, a);
    else if (a === "--rows") {
      const keys = value(++i, a).split(",").filter(Boolean);
      const known = ROWS.map(([k]) => k);
      const bad = keys.find((k) => !known.includes(k));
      if (bad !== undefined || keys.length === 0) throw new Error(`vs: --rows takes keys among ${known.join(",")}, not ${argv[i]}`);
      o.rows = keys;
    }
    else if (a === "--base-label") o.baseLabel = value(++i, a);
    else if (a === "--this-label") o.thisLabel = value(++i, a);
    else throw new Error(`vs: unknown argument ${a}`);
  }
  if (!o.base) throw new Error("vs: --base DIR (the base build's dist/) is required");
  if (!o.pairs) o.pairs = o.short ? 3 : 10;
  return o;
}

const median = (xs) => {
  const s = [...xs].filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** summarize gives the median, min and max of the finite values of xs. */
export function summarize(xs) {
  const s = xs.filter(Number.isFinite);
  return { n: s.length, median: median(s), min: s.length ? Math.min(...s) : NaN, max: s.length ? Math.max(...s) : NaN };
}

const r2 = (v) => (Number.isFinite(v) ? v.toFixed(2) : "-");
const cell = (s) => (s.n ? `${r2(s.median)}x (${r2(s.min)}-${r2(s.max)})` : "-");
function time(ms) {
  if (!Number.isFinite(ms)) return "-";
  if (ms < 1) return (ms * 1000).toFixed(1) + " µs";
  if (ms < 100) return ms.toFixed(2) + " ms";
  return ms.toFixed(0) + " ms";
}

/**
 * table formats the pairs' samples as a Markdown table. samples maps each
 * row key to arrays of per-pair figures: thisRatio and baseRatio (to the
 * peer), thisMs and baseMs (each build's own median time).
 */
export function table(samples, labels = {}) {
  const t = labels.this || "this", b = labels.base || "base";
  const out = [
    `| row | ${t} / peer | ${b} / peer | ${t} / ${b} | time, ${b} → ${t} | ≤ ${BOUND}x |`,
    "| --- | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const [key, label] of ROWS) {
    const s = samples[key];
    if (!s) continue;
    const vs = s.thisRatio.map((v, i) => v / s.baseRatio[i]);
    const sv = summarize(vs);
    const verdict = sv.n ? (sv.median <= BOUND ? "yes" : "no") : "-";
    out.push(`| ${label} | ${cell(summarize(s.thisRatio))} | ${cell(summarize(s.baseRatio))} | ${cell(sv)} | ` +
      `${time(median(s.baseMs))} → ${time(median(s.thisMs))} | ${verdict} |`);
  }
  return out.join("\n");
}

function runChild(script, args, nodeArgs = []) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...nodeArgs, script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "", err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    p.on("error", reject);
    p.on("close", () => {
      const line = out.trim().split("\n").pop() || "";
      let r;
      try { r = JSON.parse(line); } catch {
        return reject(new Error(`vs: no result from ${path.basename(script)} (stdout ${JSON.stringify(out.slice(-300))}, stderr ${JSON.stringify(err.slice(-300))})`));
      }
      if (r.error) reject(new Error(r.error));
      else resolve(r);
    });
  });
}

function checkDist(dir) {
  for (const f of ["glue.js", "agentrt.wasm", "wasm_exec.js"]) {
    if (!existsSync(path.join(dir, f))) throw new Error(`vs: ${path.join(dir, f)} is missing: build it first`);
  }
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  checkDist(o.this);
  checkDist(o.base);
  const builds = { this: path.resolve(o.this), base: path.resolve(o.base) };
  const samples = Object.fromEntries(o.rows.map((k) => [k, { thisRatio: [], baseRatio: [], thisMs: [], baseMs: [] }]));
  const coldOpts = (who, dist) => {
    const d = dist ? pathToFileURL(dist + path.sep).href : "";
    return JSON.stringify({
      who, path: "bytes", n: 1000,
      glue: d + "glue.js", wasm: d + "agentrt.wasm", wasmExec: d + "wasm_exec.js",
      peer: pathToFileURL(path.join(root, "bench/baselines/peer.mjs")).href,
    });
  };
  for (let p = 0; p < o.pairs; p++) {
    const order = p % 2 ? ["base", "this"] : ["this", "base"];
    for (const which of order) {
      const rows = o.rows.filter((k) => k !== "coldstart");
      if (rows.length === 0) break;
      const r = await runChild(path.join(here, "vs/child.mjs"), [JSON.stringify({ dist: builds[which], short: o.short, rows })], ["--expose-gc"]);
      for (const [key] of ROWS) {
        const row = r.rows[key];
        if (!row || !samples[key]) continue;
        samples[key][which + "Ratio"].push(row.agentrt / row.peer);
        samples[key][which + "Ms"].push(row.agentrt);
      }
    }
    if (o.rows.includes("coldstart")) {
      const cold = {};
      const who = [["this", builds.this], ["base", builds.base], ["peer", ""]];
      for (let k = 0; k < who.length; k++) {
        const [name, dist] = who[(p + k) % who.length];
        const r = await runChild(path.join(here, "firstturn/child.mjs"), [coldOpts(dist ? "agentrt" : "peer", dist)]);
        cold[name] = r.total;
      }
      for (const which of ["this", "base"]) {
        samples.coldstart[which + "Ratio"].push(cold[which] / cold.peer);
        samples.coldstart[which + "Ms"].push(cold[which]);
      }
    }
    process.stderr.write(`vs: pair ${p + 1}/${o.pairs} done\n`);
  }
  const labels = { this: o.thisLabel || "this", base: o.baseLabel || "base" };
  console.log(`\n${labels.this} against ${labels.base}, ${o.pairs} interleaved pairs${o.short ? " (short)" : ""}, node ${process.version}; ratios to the JS peer: median (min-max)\n`);
  console.log(table(samples, labels));
  if (o.json) writeFileSync(o.json, JSON.stringify({ labels, pairs: o.pairs, short: o.short, samples }, null, 1));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e.message || e);
    process.exit(2);
  });
}
