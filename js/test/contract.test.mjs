// The host-message corpus (testdata/contract/) against the glue and the
// module's array path, in this engine. Runs under `node --test`,
// `bun test` and `deno test -A`, and in Chromium, Firefox and WebKit
// through js/test/browser (which serves testdata/), where the glue in
// worker mode is one more path (corpus.mjs, workerCorpusPath): the same
// cases, the same expected answers.
//
// Every case seeds a fresh session with its history and the input "next",
// then reads the session back: the messages before the new turn must be
// the case's session, or the run must be refused with the case's code,
// index and message, leaving no session behind.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { toModuleHistory } from "../history.js";
import { compiledModule } from "./env.mjs";
import { canonical, checkRepair, corpusPaths, workerCorpusPath, loadCorpus, onPath } from "./corpus.mjs";
import { hasWebWorker } from "./helpers.mjs";

let wasm;
const cases = await loadCorpus();

// Every case seeds a new session on each path (corpus.mjs, corpusPaths),
// and in worker mode where the host has Web Workers.
const paths = hasWebWorker ? [...corpusPaths, workerCorpusPath] : corpusPaths;
for (const path of paths) {
  describe(`contract: ${path.name}`, () => {
    let p;
    before(async () => {
      wasm ??= await compiledModule();
      p = await path.open(wasm);
    });
    after(() => p && p.close());
    cases.forEach((c, i) => {
      test(c.name, () => onPath(path, wasm, p, c, async (p) => {
        const id = `case-${i}`;
        let result;
        let err;
        try {
          result = await p.seed(id, structuredClone(c.history));
        } catch (e) {
          err = e;
        }
        if (c.error) {
          assert.ok(err instanceof Error, `accepted; want ${JSON.stringify(c.error)}`);
          assert.deepEqual({ code: err.code, index: err.index, message: err.message }, c.error);
          assert.equal(await p.session(id), null, "a refused history left a session behind");
          return;
        }
        if (err) assert.fail(`refused with ${err.code} at ${err.index}: ${err.message}`);
        const held = (await p.session(id)).slice(0, -2).map(canonical);
        assert.deepEqual(held, c.session.map(canonical));
        assert.equal(result.seed.seeded, held.length);
        assert.equal(result.seed.skippedSystem, c.skippedSystem ?? 0);
      }));
    });
  });
}

describe("contract: history.js alone", () => {
  for (const c of cases) {
    // The shape refusals are history.js's own; the others are the seeding
    // rules, the module's.
    test(c.name, () => {
      let err;
      let got;
      try {
        got = toModuleHistory(c.history);
      } catch (e) {
        err = e;
      }
      if (err) {
        assert.ok(c.error, `refused with ${err.message}; the corpus accepts it`);
        assert.deepEqual({ code: err.code, index: err.index, message: err.message }, c.error);
        return;
      }
      if (c.session) {
        const held = got.filter((m) => m.role !== "system").map(canonical);
        assert.deepEqual(held, c.session.map(canonical));
      }
    });
  }
});

// In worker mode, checkHistory and policy.repair over every case too (the
// main thread's paths run them in repair.test.mjs): the answers cross
// from the worker by message and must be the corpus's.
if (hasWebWorker) {
  describe(`contract: checkHistory and repair, ${workerCorpusPath.name}`, () => {
    let p;
    before(async () => {
      wasm ??= await compiledModule();
      p = await workerCorpusPath.open(wasm);
    });
    after(() => p && p.close());
    cases.forEach((c, i) => {
      test(c.name, () => onPath(workerCorpusPath, wasm, p, c, async (p) => {
        await checkRepair(c, p, `repaired-${i}`);
      }));
    });
  });
}
