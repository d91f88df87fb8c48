// The host app of js/test/hostapp.mjs played at random on the module's
// syscall/js API, as a host that calls createRuntime's run methods
// itself: its model, tools and steps, and the invariants it checks after
// each, are there. A kill closes the runtime and leaves its instance, or
// drops both; the next step starts a fresh runtime, whose sessions seed
// from the app's stored history. The message objects a model request
// carries are extended turn by turn while the session's generation holds
// (wasm/internal/jsedge's Cache): the app's check that each model call saw the
// stored conversation first holds that extension to the session across
// rollbacks, resumes and cold starts.
//
// Seeded: AGENTRT_HOSTKILL_SEED replays a seed (it is in the test's
// name), AGENTRT_HOSTKILL_STEPS sets the steps, AGENTRT_HOSTKILL_VERBOSE
// prints what the steps met.
import { test } from "node:test";
import { startInstance } from "../testlib/helpers.mjs";
import { hostApp } from "../../../js/test/hostapp.mjs";

const SEED = Number(process.env.AGENTRT_HOSTKILL_SEED ?? Math.floor(Math.random() * 2 ** 31));
const STEPS = Number(process.env.AGENTRT_HOSTKILL_STEPS ?? 60);

test(`a host of the syscall/js API killed at random never loses, duplicates or corrupts a conversation (seed ${SEED})`, async () => {
  let api = null, rt = null;
  const kill = () => {
    app.killed();
    rt.close();
    rt = null;
    if (app.coin()) api = null; // the instance dropped too
  };
  const app = hostApp(SEED, kill);
  // checker answers checkHistory for the app, whatever happens to rt.
  const checker = (await startInstance()).createRuntime({});
  const check = (history) => checker.checkHistory(history);
  for (let n = 0; n < STEPS; n++) {
    if (rt === null) {
      api ??= await startInstance();
      rt = api.createRuntime({ model: app.model, tools: app.tools });
      app.started();
    }
    const s = await app.next(n, check);
    if (s === null) continue;
    if (s.remove) {
      rt.deleteSession(s.id);
      app.removed(s);
      app.check(s, check(app.stored(s.id)), rt.getSession(s.id));
      continue;
    }
    const policy = { timeoutMs: 100 };
    const options = s.approvals === undefined ? undefined : { approvals: s.approvals };
    let result = null, error = null;
    try {
      result = await (s.history !== undefined
        ? rt.startRunWithPolicyAndHistory(s.id, s.input, policy, s.history, options)
        : rt.startRunWithPolicy(s.id, s.input, policy, options));
    } catch (e) {
      error = e;
    }
    if (app.settle(s, result, error, rt !== null)) kill(); // after the run, before the app stored it
    app.check(s, check(app.stored(s.id)), rt === null ? undefined : rt.getSession(s.id));
  }
  rt?.close();
  checker.close();
  if (process.env.AGENTRT_HOSTKILL_VERBOSE) console.log(SEED, JSON.stringify(app.counts));
  app.enough();
});
