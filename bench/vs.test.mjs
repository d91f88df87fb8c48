// The side-by-side benchmark's command line and table (bench/vs.mjs):
// its arguments are checked before anything is built or run, and each
// row shows both builds' ratios to the peer and their ratio, with the
// median and the spread of the pairs. No timing is measured here.
import test from "node:test";
import assert from "node:assert/strict";
import { parseArgs, summarize, table } from "./vs.mjs";

test("vs: arguments and their defaults", () => {
  const o = parseArgs(["--base", "b/dist"]);
  assert.equal(o.base, "b/dist");
  assert.equal(o.pairs, 10);
  assert.equal(o.short, false);
  assert.ok(o.this.endsWith("dist"));
  const s = parseArgs(["--short", "--base", "x", "--this", "y", "--json", "f.json"]);
  assert.deepEqual([s.pairs, s.short, s.this, s.json], [3, true, "y", "f.json"]);
  assert.equal(parseArgs(["--base", "x", "--short", "--pairs", "5"]).pairs, 5);
  assert.deepEqual(parseArgs(["--base", "x"]).rows, ["seed1000", "seed10000", "turn100", "turn5000", "coldstart"]);
  assert.deepEqual(parseArgs(["--base", "x", "--rows", "turn100,coldstart"]).rows, ["turn100", "coldstart"]);
});

test("vs: bad arguments are refused by name", () => {
  assert.throws(() => parseArgs([]), /--base DIR .* is required/);
  assert.throws(() => parseArgs(["--base"]), /--base needs a value/);
  assert.throws(() => parseArgs(["--base", "x", "--pairs", "0"]), /--pairs must be a whole number/);
  assert.throws(() => parseArgs(["--base", "x", "--pairs", "2.5"]), /--pairs must be a whole number/);
  assert.throws(() => parseArgs(["--base", "x", "--pairs", "--short"]), /--pairs needs a value/);
  assert.throws(() => parseArgs(["--base", "x", "--fast"]), /unknown argument --fast/);
  assert.throws(() => parseArgs(["--base", "x", "--rows", "turn100,turn7"]), /--rows takes keys among .*, not turn100,turn7/);
  assert.throws(() => parseArgs(["--base", "x", "--rows", ","]), /--rows takes keys/);
});

test("vs: summarize gives the median and the spread", () => {
  assert.deepEqual(summarize([3, 1, 2]), { n: 3, median: 2, min: 1, max: 3 });
  assert.deepEqual(summarize([4, 1, NaN, 2, 3]), { n: 4, median: 2.5, min: 1, max: 4 });
  assert.equal(summarize([]).n, 0);
});

test("vs: the table has a row per measured figure, this build against the base", () => {
  const out = table({
    turn100: { thisRatio: [0.8, 0.9, 1.0], baseRatio: [0.8, 0.8, 0.8], thisMs: [0.004, 0.005, 0.006], baseMs: [0.004, 0.004, 0.004] },
    seed1000: { thisRatio: [1.0, 1.1], baseRatio: [1.0, 1.0], thisMs: [1, 1.1], baseMs: [1, 1] },
  }, { this: "new", base: "old" });
  const lines = out.split("\n");
  assert.match(lines[0], /\| row \| new \/ peer \| old \/ peer \| new \/ old \|/);
  assert.equal(lines.length, 4, out);
  // The rows come in the table's order, whatever the samples' order.
  assert.match(lines[2], /^\| cold seed, 1,000 messages, JS model \| 1\.05x \(1\.00-1\.10\) \| 1\.00x \(1\.00-1\.00\) \| 1\.05x \(1\.00-1\.10\) \| 1\.00 ms → 1\.05 ms \| yes \|$/);
  assert.match(lines[3], /^\| warm turn, 100 messages \| 0\.90x \(0\.80-1\.00\) \| 0\.80x \(0\.80-0\.80\) \| 1\.13x \(1\.00-1\.25\) \| 4\.0 µs → 5\.0 µs \| no \|$/);
});

test("vs: the end of make test names the check when a change touches a hot path, and only then", async () => {
  const { execFileSync } = await import("node:child_process");
  const { mkdtempSync, writeFileSync, mkdirSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join, dirname } = await import("node:path");
  const { fileURLToPath } = await import("node:url");
  const hint = join(dirname(fileURLToPath(import.meta.url)), "..", "scripts", "hot-paths-hint.sh");
  const dir = mkdtempSync(join(tmpdir(), "hint-"));
  const git = (...a) => execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...a], { cwd: dir, encoding: "utf8" });
  const run = (...a) => execFileSync("bash", [hint, ...a], { cwd: dir, encoding: "utf8" });
  try {
    git("init", "-q", "-b", "main");
    mkdirSync(join(dir, "core"));
    mkdirSync(join(dir, "docs"));
    writeFileSync(join(dir, "core", "a.go"), "package core\n");
    git("add", ".");
    git("commit", "-qm", "a");
    assert.equal(run(), "", "nothing changed: no hint");
    git("checkout", "-qb", "topic");
    writeFileSync(join(dir, "docs", "x.md"), "x\n");
    writeFileSync(join(dir, "core", "a_test.go"), "package core\n");
    git("add", ".");
    git("commit", "-qm", "docs");
    assert.equal(run(), "", "docs and tests only: no hint");
    writeFileSync(join(dir, "core", "a.go"), "package core\n\nvar X = 1\n");
    const out = run();
    assert.match(out, /touches 1 file\(s\)/);
    assert.match(out, /core\/a\.go/);
    assert.match(out, /make bench-vs SHORT=1/);
    git("commit", "-qam", "core");
    assert.match(run(), /core\/a\.go/, "a committed change on the branch counts too");
    assert.match(run("v1"), /^$/, "an unknown base: no hint, no failure");
    git("tag", "v1", "main");
    assert.match(run("v1"), /make bench-vs BASE=v1 SHORT=1/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("vs/together: arguments, and two builds measured in one process", async () => {
  const { parseArgs: together, measure } = await import("./vs/together.mjs");
  const o = together(["--base", "b"]);
  assert.deepEqual([o.base, o.size, o.rounds], ["b", 100, 100]);
  assert.ok(o.this.endsWith("dist"));
  assert.deepEqual([together(["--base", "b", "--size", "5000", "--rounds", "3"]).size, together(["--base", "b", "--rounds", "3"]).rounds], [5000, 3]);
  assert.throws(() => together([]), /--base DIR .* is required/);
  assert.throws(() => together(["--base", "b", "--size", "2"]), /--size must be a whole number of at least 3, not 2/);
  assert.throws(() => together(["--base", "b", "--rounds"]), /--rounds needs a value/);
  assert.throws(() => together(["--base", "b", "--fast"]), /unknown argument --fast/);
  // The built dist/ against itself: two instances, one process, a figure
  // for each (no timing is asserted).
  const { fileURLToPath } = await import("node:url");
  const { join, dirname } = await import("node:path");
  const dist = process.env.AGENTRT_DIST ?? join(dirname(fileURLToPath(import.meta.url)), "..", "dist");
  const r = await measure({ this: dist, base: dist, size: 10, rounds: 1 });
  assert.equal(r.turns, 7);
  assert.ok(r.this > 0 && r.base > 0 && r.ratio > 0, JSON.stringify(r));
});
