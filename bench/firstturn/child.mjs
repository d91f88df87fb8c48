// One sample of bench/firstturn.mjs in a fresh Node, Bun or Deno process:
// it generates the stored history (before the clock starts: the host has
// it already), runs probe.mjs once and prints its figures as one line of
// JSON. The argument is the probe's options as JSON (who, path, glue,
// peer, wasm, wasmExec, n, inittrace).
//
//   node bench/firstturn/child.mjs '{"who":"peer",...}'

import { makeHistory } from "../history.mjs";
import { probe } from "./probe.mjs";

const o = JSON.parse((globalThis.Deno ? Deno.args[0] : process.argv[2]) ?? "{}");
const fs = await import("node:fs/promises");
const local = (url) => (String(url).startsWith("file:") ? new URL(url) : null);
async function readBytes(url) {
  const f = local(url);
  if (f) return fs.readFile(f);
  return new Uint8Array(await (await fetch(url)).arrayBuffer());
}
async function readText(url) {
  const f = local(url);
  if (f) return fs.readFile(f, "utf8");
  return (await fetch(url)).text();
}
o.history = makeHistory(o.n ?? 1000);
try {
  const cpuNow = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
  const r = await probe({ ...o, readBytes, readText, cpuNow });
  console.log(JSON.stringify(r));
} catch (e) {
  console.log(JSON.stringify({ error: String(e && e.stack ? e.stack : e) }));
}
// A Go instance never exits on its own.
if (globalThis.Deno) Deno.exit(0);
else process.exit(0);
