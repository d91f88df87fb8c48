// The host-message corpus (testdata/contract/) against the glue and the
// module's array path, in this engine. Runs under `node --test`,
// `bun test` and `deno test -A`, and in Chromium, Firefox and WebKit
// through js/test/browser (which serves testdata/).
//
// Every case seeds a fresh session with its history and the input "next",
// then reads the session back: the messages before the new turn must be
// the case's session, or the run must be refused with the case's code,
// index and message, leaving no session behind.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { loadRuntime } from "../glue.js";
import { toModuleHistory } from "../history.js";
import { compiledModule, wasmExecURL } from "./env.mjs";
import { canonical, loadCorpus } from "./corpus.mjs";

// The history paths a case runs on. open() returns a seeder on a fresh
// runtime: seed(sessionId, history) seeds that (new) session and returns
// { result, messages } (messages: the session's), or throws the refusal
// after checking that no session was left behind. A new path (another
// wire) is one more entry.
const paths = [
  {
    name: "glue (packed)",
    async open() {
      const rt = await loadRuntime({ wasm, wasmExec: wasmExecURL });
      return {
        async seed(id, history) {
          try {
            const result = await rt.run({ sessionId: id, input: "next", history });
            return { result, messages: rt.session(id).messages };
          } catch (e) {
            assert.equal(rt.session(id), null, "a refused history left a session behind");
            throw e;
          }
        },
        close: () => rt.close(),
      };
    },
  },
  {
    name: "module (array)",
    async open() {
      const rt = await loadRuntime({ wasm, wasmExec: wasmExecURL });
      // The module's raw exports, to reach its array path.
      const raw = globalThis[rt.globalName].createRuntime({});
      return {
        async seed(id, history) {
          try {
            const result = await raw.startRunWithHistory(id, "next", history);
            return { result, messages: raw.getSession(id).messages };
          } catch (e) {
            assert.equal(raw.getSession(id), null, "a refused history left a session behind");
            throw e;
          }
        },
        close: () => {
          raw.close();
          rt.close();
        },
      };
    },
  },
];

let wasm;
const cases = await loadCorpus();

for (const path of paths) {
  describe(`contract: ${path.name}`, () => {
    let seeder;
    before(async () => {
      wasm ??= await compiledModule();
      seeder = await path.open();
    });
    after(() => seeder && seeder.close());
    cases.forEach((c, i) => {
      test(c.name, async () => {
        let out;
        let err;
        try {
          out = await seeder.seed(`case-${i}`, structuredClone(c.history));
        } catch (e) {
          err = e;
        }
        if (c.error) {
          assert.ok(err instanceof Error, `accepted; want ${JSON.stringify(c.error)}`);
          assert.deepEqual({ code: err.code, index: err.index, message: err.message }, c.error);
          return;
        }
        if (err) assert.fail(`refused with ${err.code} at ${err.index}: ${err.message}`);
        const held = out.messages.slice(0, -2).map(canonical);
        assert.deepEqual(held, c.session.map(canonical));
        assert.equal(out.result.seed.seeded, held.length);
        assert.equal(out.result.seed.skippedSystem, c.skippedSystem ?? 0);
      });
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
