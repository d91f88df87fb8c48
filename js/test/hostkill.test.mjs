// The host app of js/test/hostapp.mjs played at random on the glue, in
// every mode the engine has: its model, tools and steps, and the
// invariants it checks after each, are there. A kill closes the
// runtime; the next step loads a fresh one, whose sessions seed from the
// app's stored history.
//
// Seeded: AGENTRT_HOSTKILL_SEED replays a seed (it is in the test's
// name), AGENTRT_HOSTKILL_STEPS sets the steps per mode,
// AGENTRT_HOSTKILL_VERBOSE prints what the steps met (kills, completed
// runs, resumes, tool runs). Runs under `node --test`, `bun test`, `deno
// test -A` and the browser runner.
import { test } from "node:test";
import { AgentrtError } from "../glue.js";
import { runtimes, runtimeModes, modeConfig } from "./helpers.mjs";
import { hostApp } from "./hostapp.mjs";

const { load, release } = runtimes();

const env = (k) => (typeof process !== "undefined" && process.env ? process.env[k] : undefined);
const SEED = Number(env("AGENTRT_HOSTKILL_SEED") ?? Math.floor(Math.random() * 2 ** 31));
const STEPS = Number(env("AGENTRT_HOSTKILL_STEPS") ?? 60);

for (const mode of runtimeModes) {
  test(`a host app killed at random never loses, duplicates or corrupts a conversation (${mode}, seed ${SEED})`, async () => {
    let rt = null;
    const kill = () => {
      app.killed();
      release(rt);
      rt = null;
    };
    const app = hostApp(SEED, kill);
    // checker answers checkHistory for the app, whatever happens to rt.
    const checker = await load({});
    const check = (history) => checker.checkHistory(history);
    for (let n = 0; n < STEPS; n++) {
      if (rt === null) {
        rt = await load(modeConfig(mode, { model: app.model, tools: app.tools }));
        app.started();
      }
      const s = await app.next(n, check);
      if (s === null) continue;
      if (s.remove) {
        await rt.deleteSession(s.id);
        app.removed(s);
        app.check(s, await check(app.stored(s.id)), await rt.session(s.id));
        continue;
      }
      const request = { sessionId: s.id, policy: { timeoutMs: 100 } };
      if (s.input !== undefined) request.input = s.input;
      if (s.approvals !== undefined) request.approvals = s.approvals;
      if (s.history !== undefined) request.history = s.history;
      let result = null, error = null;
      try {
        result = await rt.run(request);
      } catch (e) {
        error = e instanceof AgentrtError ? e : Object.assign(new Error(`not an AgentrtError: ${e}`), { code: "internal" });
      }
      if (app.settle(s, result, error, rt !== null)) kill(); // after the run, before the app stored it
      app.check(s, await check(app.stored(s.id)), rt === null ? undefined : await rt.session(s.id));
    }
    release(rt);
    release(checker);
    if (env("AGENTRT_HOSTKILL_VERBOSE")) console.log(mode, SEED, JSON.stringify(app.counts));
    app.enough();
  });
}
