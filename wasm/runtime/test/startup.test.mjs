// The module's start-up: what runs before the first call. The edge's
// package (wasm/internal/jsedge) makes its JavaScript lookups, interned
// strings, callbacks and scratch arrays on first use, so that a module
// loaded and not yet called pays nothing for them. GODEBUG=inittrace=1
// makes the Go runtime print every package's init to stderr.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { distDir } from "../testlib/helpers.mjs";

// inittrace starts an instance with GODEBUG=inittrace=1 and returns the
// init lines it wrote to stderr, and its published object.
async function inittrace() {
  await import(pathToFileURL(path.join(distDir, "wasm_exec.js")).href);
  const mod = await WebAssembly.compile(await readFile(path.join(distDir, "agentrt.wasm")));
  const fs = globalThis.fs;
  const write = fs.writeSync;
  const decoder = new TextDecoder();
  let stderr = "";
  fs.writeSync = (fd, buf) => {
    if (fd === 2) {
      stderr += decoder.decode(buf);
      return buf.length;
    }
    return write(fd, buf);
  };
  const name = "agentrt_startup_test";
  try {
    const go = new globalThis.Go();
    go.env = { AGENTRT_GLOBAL: name, GODEBUG: "inittrace=1" };
    const instance = await WebAssembly.instantiate(mod, go.importObject);
    go.run(instance);
  } finally {
    fs.writeSync = write;
  }
  return { lines: stderr.split("\n").filter((l) => l.startsWith("init ")), api: globalThis[name] };
}

test("TestModule_Startup: the edge's package does no work at init, and works on first use", async () => {
  const { lines, api } = await inittrace();
  assert.ok(lines.length > 0, "no init trace: GODEBUG=inittrace=1 was not honoured");
  const edge = lines.filter((l) => l.includes("/wasm/internal/jsedge "));
  for (const l of edge) {
    const m = l.match(/, (\d+) allocs/);
    assert.ok(m && Number(m[1]) === 0, "wasm/internal/jsedge allocates at init: " + l);
  }
  // Everything made lazily works on the first calls: a model call with a
  // delta (the delta function), frozen messages (the scratch array), a
  // Promise (the resolvers) and field reads (the interned strings).
  const rt = api.createRuntime({
    model: (req) => {
      req.delta("d");
      assert.ok(Object.isFrozen(req.messages[0]));
      assert.ok(Object.isFrozen(req.tools));
      return Promise.resolve({ content: "seen " + req.messages.length });
    },
  });
  const events = [];
  const res = await rt.startRun("s", "hi", { onEvent: (e) => events.push(e.type) });
  assert.equal(res.reply.content, "seen 1");
  assert.ok(events.includes("model.delta"), "no model.delta event: " + events.join(","));
});
