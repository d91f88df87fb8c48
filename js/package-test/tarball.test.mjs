// The tarball as npm shows it: README.md and LICENSE beside the files a
// host needs and nothing else, and the fields npm's page links from.
//
//   node --test js/package-test/tarball.test.mjs     (after `make build`)
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const DIST = process.env.AGENTRT_DIST ? path.resolve(process.env.AGENTRT_DIST) : path.join(ROOT, "dist");

function packed() {
  assert.ok(existsSync(path.join(DIST, "package.json")), `${DIST} is not a built package: run \`make build\``);
  const cache = mkdtempSync(path.join(tmpdir(), "agentrt-npm-cache-"));
  try {
    return JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--cache", cache], { cwd: DIST, encoding: "utf8" }))[0];
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

test("the tarball holds README.md, LICENSE and only the files a host loads", () => {
  const p = packed();
  const files = p.files.map((f) => f.path).sort();
  for (const f of ["LICENSE", "README.md", "agentrt.wasm", "glue.js", "glue.d.ts", "package.json", "wasm_exec.js"]) {
    assert.ok(files.includes(f), `${f} is in the tarball: ${files}`);
  }
  const extra = files.filter((f) => !/^(LICENSE|README\.md|package\.json|agentrt\.wasm|[\w-]+\.js|[\w-]+\.d\.ts)$/.test(f));
  assert.deepEqual(extra, [], "nothing but the modules, their types, the module, README, LICENSE and package.json");
  assert.ok(files.every((f) => !f.includes("/")), `no directories: ${files}`);
  // A guard on what a user downloads: the module is most of it.
  assert.ok(p.size < 1_000_000, `the tarball is ${p.size} bytes`);
});

test("LICENSE is the full Apache-2.0 text, as package.json says", () => {
  const license = readFileSync(path.join(DIST, "LICENSE"), "utf8");
  assert.match(license, /Apache License\s+Version 2\.0, January 2004/);
  assert.match(license, /END OF TERMS AND CONDITIONS/);
  assert.ok(license.length > 10_000, "the full text, not a notice");
  const pkg = JSON.parse(readFileSync(path.join(DIST, "package.json"), "utf8"));
  assert.equal(pkg.license, "Apache-2.0");
});

test("README.md has the quick start, the history loop and links; package.json links the repository", () => {
  const readme = readFileSync(path.join(DIST, "README.md"), "utf8");
  assert.match(readme, /import \{ loadRuntime \} from "agentrt"/);
  assert.match(readme, /\.push\(\.\.\.result\.appended\)/, "the loop stores appended");
  assert.match(readme, /history: stored/, "and passes history back");
  assert.match(readme, /npm install \.\/agentrt-[\d.]+\.tgz/, "how to install before a publish");
  const pkg = JSON.parse(readFileSync(path.join(DIST, "package.json"), "utf8"));
  assert.match(pkg.repository.url, /^git\+https:\/\/github\.com\/agentrt\/agentrt\.git$/);
  assert.ok(pkg.homepage.startsWith("https://github.com/agentrt/agentrt"), pkg.homepage);
  assert.match(readme, new RegExp(pkg.version.replace(/\./g, "\\.")), "the tarball name in README carries the version");
});

// docs/package.md's account of the tarball: the table of files, "The
// tarball holds N files" and the publish step's list of npm's contents.
test("docs/package.md names the tarball's files and states their count", () => {
  const files = packed().files.map((f) => f.path).sort();
  const md = readFileSync(path.join(ROOT, "docs/package.md"), "utf8");
  const names = (text) => [...text.matchAll(/`([\w.-]+\.(?:js|ts|wasm|json|md)|LICENSE)`/g)].map((m) => m[1]);
  const table = md.slice(0, md.indexOf("\n\n", md.indexOf("| file | what |")));
  const rows = table.split("\n").filter((l) => l.startsWith("| `")).flatMap((l) => names(l.split(" | ")[0]));
  assert.deepEqual([...new Set(rows)].sort(), files, "the table of files");
  const count = md.match(/The tarball holds (\d+) files/);
  assert.ok(count, "docs/package.md states how many files the tarball holds");
  assert.equal(Number(count[1]), files.length, "the count of files");
  const step = md.match(/read npm's list of the tarball's contents:([\s\S]*?)and nothing else/);
  assert.ok(step, "docs/package.md's publish step lists the tarball's contents");
  assert.deepEqual([...new Set(names(step[1]))].sort(), files, "the publish step's list");
});
