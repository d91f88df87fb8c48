// Test helpers for the module suite: load dist/ with the wasm_exec.js
// that the build copied there (no glue), and a small packed-history
// encoder written from docs/packed-history.md.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const distDir = process.env.AGENTRT_DIST
  ? path.resolve(process.env.AGENTRT_DIST)
  : path.resolve(here, "../../../dist");

let compiled;

// loadModule compiles dist/agentrt.wasm once per process.
async function loadModule() {
  if (!compiled) {
    compiled = (async () => {
      await import(pathToFileURL(path.join(distDir, "wasm_exec.js")).href);
      const bytes = await readFile(path.join(distDir, "agentrt.wasm"));
      return WebAssembly.compile(bytes);
    })();
  }
  return compiled;
}

let seq = 0;

// startInstance starts a new Go instance of the module, publishing its
// object at globalThis[name] (a fresh name when omitted), and returns it.
export async function startInstance(name) {
  const mod = await loadModule();
  name ??= "agentrt_test_" + ++seq;
  const go = new globalThis.Go();
  go.env = { AGENTRT_GLOBAL: name };
  const instance = await WebAssembly.instantiate(mod, go.importObject);
  go.run(instance); // resolves only when the program exits: never here
  const api = globalThis[name];
  if (!api) throw new Error("the module did not publish globalThis." + name);
  return api;
}

// startDefault starts an instance without AGENTRT_GLOBAL, so it publishes
// at globalThis.agentrt.
export async function startDefault() {
  const mod = await loadModule();
  const go = new globalThis.Go();
  go.env = {};
  const instance = await WebAssembly.instantiate(mod, go.importObject);
  go.run(instance);
  return globalThis.agentrt;
}

// rejection awaits p, which must reject, and returns the Error.
export async function rejection(p) {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected the promise to reject");
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// snapshot is everything observable about a runtime's sessions.
export function snapshot(rt) {
  const ids = rt.listSessions();
  const stats = rt.stats();
  return JSON.stringify({
    ids,
    sessions: ids.map((id) => rt.getSession(id)),
    sessionsCount: stats.sessions,
    messages: stats.messages,
    bytes: stats.bytes,
  });
}

const roles = { user: 0, assistant: 1, tool: 2, system: 3 };

// encodePacked writes history in the packed format (version 1).
export function encodePacked(history) {
  const enc = new TextEncoder();
  const out = [0x41, 0x52, 0x48, 1];
  const uvarint = (n) => {
    while (n >= 0x80) {
      out.push((n & 0x7f) | 0x80);
      n = Math.floor(n / 128);
    }
    out.push(n);
  };
  const str = (s) => {
    const b = enc.encode(s);
    uvarint(b.length);
    for (const x of b) out.push(x);
  };
  uvarint(history.length);
  for (const m of history) {
    const role = roles[m.role] ?? 255;
    const calls = m.tool_calls ?? m.toolCalls;
    const tcid = m.tool_call_id ?? m.toolCallId;
    let flags = 0;
    if (m.content != null) flags |= 1;
    if (m.id != null && m.id !== "") flags |= 2;
    if (tcid != null && tcid !== "") flags |= 4;
    if (calls != null) flags |= 8;
    out.push(role, flags);
    if (role === 255) str(m.role);
    if (flags & 1) str(m.content);
    if (flags & 2) str(m.id);
    if (flags & 4) str(tcid);
    if (flags & 8) {
      uvarint(calls.length);
      for (const c of calls) {
        str(c.id ?? "");
        str(c.name ?? "");
        str(typeof c.arguments === "string" ? c.arguments : c.arguments == null ? "" : JSON.stringify(c.arguments));
      }
    }
  }
  return new Uint8Array(out);
}
