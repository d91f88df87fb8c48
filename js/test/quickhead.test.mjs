// Quick turns with ifHead (docs/adr/0012-quick-turn.md, decision 1;
// docs/adr/0025-conversation-heads.md): a warm turn whose ifHead is the
// head the glue was last told for its mirror of the session is a quick
// turn, committed with its ifHead, and its result has the head; any
// other ifHead begins in the module, which refuses a stale one
// history_diverged before the model is called. Where the engine lets a
// test count the module's export calls (Node, the main thread), the
// suite checks which path each turn took.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runtimes, runtimeModes, modeConfig, countingExports, rejectsWith, HEAD_FORM } from "./helpers.mjs";

const { load, release } = runtimes();

// model answers at once with the count of messages it was handed and the
// last one's text, except "later" (a Promise) and "boom" (it throws); it
// logs every call's input, and calls hook first when there is one.
function model(log, hook) {
  return (req) => {
    const last = req.messages[req.messages.length - 1];
    log.push(last.content);
    if (hook) {
      const r = hook(req, last);
      if (r !== undefined) return r;
    }
    if (last.content === "boom") throw new Error("the model failed");
    const reply = `${req.messages.length}:${last.content}`;
    return last.content === "later" ? Promise.resolve(reply) : reply;
  };
}

// open loads a runtime of mode with the logging model whose export calls
// are counted (counts stays empty where they cannot be).
async function open(mode, log, hook) {
  const counts = {};
  const restore = countingExports(counts);
  let rt;
  try {
    rt = await load(modeConfig(mode, { model: model(log, hook) }));
  } finally {
    restore();
  }
  // calls returns the begins and commits since the last call, or null
  // where they are not counted.
  let seen = { begin: 0, commit: 0 };
  const calls = () => {
    if (counts.agentrt_begin === undefined && counts.agentrt_commit === undefined) return null;
    const now = { begin: counts.agentrt_begin ?? 0, commit: counts.agentrt_commit ?? 0 };
    const d = { begin: now.begin - seen.begin, commit: now.commit - seen.commit };
    seen = now;
    return d;
  };
  return { rt, calls };
}

// path asserts which path the turns since the last check took, where the
// calls are counted: quick (commits, no begin) or ordinary (begins).
function path(calls, want, what) {
  const d = calls();
  if (d === null) return;
  assert.deepEqual(d, want, what);
}

const history = [{ role: "user", content: "hello" }, { role: "assistant", content: "hi" }];

for (const mode of runtimeModes) {
  test(`a warm loop with ifHead the previous result's head is quick, and each result has the session's head (${mode})`, async () => {
    const log = [];
    const { rt, calls } = await open(mode, log);
    const copy = history.slice();
    let res = await rt.run({ sessionId: "w", input: "seed", history, ifHead: (await rt.checkHistory(history)).head });
    copy.push(...res.appended);
    path(calls, { begin: 1, commit: 0 }, "the seed begins");
    const n = 20;
    for (let i = 0; i < n; i++) {
      res = await rt.run({ sessionId: "w", input: `turn ${i}`, ifHead: res.head });
      assert.equal(res.status, "completed");
      copy.push(...res.appended);
      assert.match(res.head, HEAD_FORM);
      const s = await rt.session("w");
      assert.equal(res.head, s.head, `turn ${i}: result.head is the session's head`);
      assert.equal(res.head, (await rt.checkHistory(copy)).head, `turn ${i}: result.head is the head of the host's copy`);
      assert.equal(res.messageCount, copy.length);
      assert.deepEqual(s.messages.map((m) => m.content), copy.map((m) => m.content));
    }
    path(calls, { begin: 0, commit: n }, "every warm turn with ifHead is committed");
    assert.equal(log.length, n + 1, "one model call a turn");
    // A "later" turn (the model answers with a Promise) begins, with its
    // ifHead, and the answer in hand is fed; the next is quick again.
    res = await rt.run({ sessionId: "w", input: "later", ifHead: res.head });
    assert.equal(res.head, (await rt.session("w")).head);
    res = await rt.run({ sessionId: "w", input: "after", ifHead: res.head });
    assert.equal(res.head, (await rt.session("w")).head);
    path(calls, { begin: 1, commit: 1 }, "a thenable begins, the next turn is quick");
    assert.equal(log.length, n + 3, "the thenable's model was called once");
  });

  test(`a quick turn with ifHead has the result the ordinary path gives (${mode})`, async () => {
    const log = [];
    const { rt: quick } = await open(mode, log);
    const { rt: plain } = await open(mode, []);
    const play = async (rt, policy) => {
      const out = [];
      let res = await rt.run({ sessionId: "e", input: "seed", history, ifHead: (await rt.checkHistory(history)).head });
      for (const input of ["one", "two", "later", "three"]) {
        const req = { sessionId: "e", input, ifHead: res.head };
        if (policy) req.policy = policy;
        res = await rt.run(req);
        out.push({ ...res, runId: undefined });
      }
      out.push(await rt.session("e"));
      return out;
    };
    assert.deepEqual(await play(quick), await play(plain, {}));
    release(quick);
    release(plain);
  });

  test(`a stale ifHead is refused history_diverged with missing, without a model call (${mode})`, async () => {
    const log = [];
    const { rt, calls } = await open(mode, log);
    const r1 = await rt.run({ sessionId: "s", input: "seed", history, ifHead: (await rt.checkHistory(history)).head });
    const r2 = await rt.run({ sessionId: "s", input: "two", ifHead: r1.head });
    calls();
    // A turn without ifHead: the glue no longer knows the mirror's head.
    const plain = await rt.run({ sessionId: "s", input: "plain" });
    assert.equal(plain.head, undefined);
    path(calls, { begin: 0, commit: 1 }, "a turn without ifHead is quick as before");
    const before = await rt.session("s");
    const calledBefore = log.length;
    const e = await rejectsWith(assert, rt.run({ sessionId: "s", input: "stale", ifHead: r2.head }), "history_diverged");
    assert.equal(e.head, before.head);
    assert.deepEqual(e.missing, plain.appended);
    assert.equal(log.length, calledBefore, "the model was called for a refused run");
    assert.deepEqual(await rt.session("s"), before);
    path(calls, { begin: 1, commit: 0 }, "the stale run begins and is refused");
    // An older head still, with the mirror's head unknown: refused too.
    const e1 = await rejectsWith(assert, rt.run({ sessionId: "s", input: "stale", ifHead: r1.head }), "history_diverged");
    assert.deepEqual(e1.missing, [...r2.appended, ...plain.appended]);
    assert.equal(log.length, calledBefore);
    // The caller merges and retries with the error's head: it runs
    // (begun: the glue was not told the head), and the turn after is quick.
    calls();
    const r3 = await rt.run({ sessionId: "s", input: "merged", ifHead: e.head });
    assert.equal(r3.head, (await rt.session("s")).head);
    const r4 = await rt.run({ sessionId: "s", input: "next", ifHead: r3.head });
    assert.equal(r4.head, (await rt.session("s")).head);
    path(calls, { begin: 1, commit: 1 }, "the retry begins, the next turn is quick");
    // A stale ifHead on a mirror whose head the glue knows: refused
    // without a model call, and the mirror keeps its head (a refusal
    // changes nothing), so the retry with the error's head is quick.
    const e2 = await rejectsWith(assert, rt.run({ sessionId: "s", input: "stale", ifHead: r3.head }), "history_diverged");
    assert.equal(e2.head, r4.head);
    assert.deepEqual(e2.missing, r4.appended);
    assert.equal(log.length, calledBefore + 2);
    const r5 = await rt.run({ sessionId: "s", input: "retried", ifHead: e2.head });
    assert.equal(r5.head, (await rt.session("s")).head);
    path(calls, { begin: 1, commit: 1 }, "the refusal begins, the retry is quick");
    // A head that is not a head, on the quick path's conditions: refused
    // as before, nothing changed.
    const after = await rt.session("s");
    await rejectsWith(assert, rt.run({ sessionId: "s", input: "x", ifHead: "h1-nope" }), "invalid_argument");
    assert.deepEqual(await rt.session("s"), after);
    assert.equal(log.length, calledBefore + 3);
  });

  test(`a turn without ifHead between two with ifHead (${mode})`, async () => {
    const log = [];
    const { rt, calls } = await open(mode, log);
    const r1 = await rt.run({ sessionId: "b", input: "seed", history, ifHead: (await rt.checkHistory(history)).head });
    const r2 = await rt.run({ sessionId: "b", input: "one", ifHead: r1.head });
    await rt.run({ sessionId: "b", input: "between" });
    calls();
    // The session's head, read after the turn without ifHead, runs.
    const head = (await rt.session("b")).head;
    assert.notEqual(head, r2.head);
    const r3 = await rt.run({ sessionId: "b", input: "two", ifHead: head });
    assert.equal(r3.status, "completed");
    assert.equal(r3.head, (await rt.session("b")).head);
    const r4 = await rt.run({ sessionId: "b", input: "three", ifHead: r3.head });
    assert.equal(r4.head, (await rt.session("b")).head);
    path(calls, { begin: 1, commit: 1 }, "the head read from the session begins once, then quick");
    // A turn of the ordinary path without ifHead (a policy) in between.
    await rt.run({ sessionId: "b", input: "policy", policy: { maxSteps: 4 } });
    const called = log.length;
    const e = await rejectsWith(assert, rt.run({ sessionId: "b", input: "stale", ifHead: r4.head }), "history_diverged");
    assert.equal(e.missing.length, 2);
    assert.equal(log.length, called);
  });

  test(`deleteSession, a reverted turn, a regenerated answer and a failed turn between turns with ifHead (${mode})`, async () => {
    const log = [];
    const { rt, calls } = await open(mode, log);
    const seed = async (id) => rt.run({ sessionId: id, input: "seed", history, ifHead: (await rt.checkHistory(history)).head });
    // deleteSession: the head names a session that is gone.
    let r = await rt.run({ sessionId: "d", input: "one", ifHead: (await seed("d")).head });
    assert.equal(await rt.deleteSession("d"), true);
    let called = log.length;
    let e = await rejectsWith(assert, rt.run({ sessionId: "d", input: "two", ifHead: r.head }), "history_diverged");
    assert.equal(e.missing, undefined);
    assert.equal(log.length, called);
    assert.equal(await rt.session("d"), null);

    // A turn reverted (a stream left before its result reached the
    // host: the no-divergence rule) takes the session back: the head of
    // the reverted turn is stale, and the head before it runs.
    r = await rt.run({ sessionId: "v", input: "one", ifHead: (await seed("v")).head });
    const before = await rt.session("v");
    const it = rt.stream({ sessionId: "v", input: "gone", ifHead: r.head })[Symbol.asyncIterator]();
    assert.equal((await it.next()).done, false);
    await it.return();
    assert.deepEqual(await rt.session("v"), before, "the stream's turn was taken back");
    const gone = [...before.messages, { role: "user", content: "gone" }, { role: "assistant", content: `${before.messageCount + 1}:gone` }];
    called = log.length;
    e = await rejectsWith(assert, rt.run({ sessionId: "v", input: "two", ifHead: (await rt.checkHistory(gone)).head }), "history_diverged");
    assert.equal(e.head, r.head);
    assert.equal(log.length, called, "the model was called on a reverted turn's head");
    calls();
    const r2 = await rt.run({ sessionId: "v", input: "two", ifHead: r.head });
    assert.equal(r2.head, (await rt.session("v")).head);
    const r3 = await rt.run({ sessionId: "v", input: "three", ifHead: r2.head });
    assert.equal(r3.head, (await rt.session("v")).head);
    path(calls, { begin: 1, commit: 1 }, "after a revert, the first turn begins");

    // A regenerated answer (the history without the last answer, seed
    // mode reconcile): the old head is stale.
    const cur = (await rt.session("v")).messages;
    await rt.run({ sessionId: "v", input: cur[cur.length - 2].content, history: cur.slice(0, -2), policy: { seedMode: "reconcile" } });
    called = log.length;
    e = await rejectsWith(assert, rt.run({ sessionId: "v", input: "four", ifHead: r3.head }), "history_diverged");
    assert.equal(e.head, (await rt.session("v")).head);
    assert.equal(log.length, called, "the model was called on a regenerated session's stale head");
    const r4 = await rt.run({ sessionId: "v", input: "four", ifHead: e.head });
    assert.equal(r4.head, (await rt.session("v")).head);

    // A failed turn with ifHead rolls back: the head before it runs.
    await rejectsWith(assert, rt.run({ sessionId: "v", input: "boom", ifHead: r4.head }), "model_error");
    assert.equal((await rt.session("v")).head, r4.head);
    const r5 = await rt.run({ sessionId: "v", input: "five", ifHead: r4.head });
    assert.equal(r5.head, (await rt.session("v")).head);
    calls();
    const r6 = await rt.run({ sessionId: "v", input: "six", ifHead: r5.head });
    assert.equal(r6.head, (await rt.session("v")).head);
    path(calls, { begin: 0, commit: 1 }, "quick again after the failure");
  });

  test(`concurrent runs with one ifHead: one runs, the others are refused without a model call (${mode})`, async () => {
    for (const input of ["now", "later"]) {
      const log = [];
      const { rt } = await open(mode, log);
      const r = await rt.run({ sessionId: "c", input: "seed", history, ifHead: (await rt.checkHistory(history)).head });
      const called = log.length;
      const out = await Promise.allSettled([1, 2, 3].map((k) => rt.run({ sessionId: "c", input: `${input} ${k}`, ifHead: r.head })));
      const won = out.filter((o) => o.status === "fulfilled");
      assert.equal(won.length, 1, input);
      const s = await rt.session("c");
      assert.equal(won[0].value.head, s.head, input);
      for (const o of out) {
        if (o.status === "fulfilled") continue;
        assert.equal(o.reason.code, "history_diverged", input);
        assert.equal(o.reason.head, s.head);
        assert.deepEqual(o.reason.missing, won[0].value.appended);
      }
      assert.equal(log.length, called + 1, `${input}: the model was called for a refused run`);
      assert.equal(s.messageCount, r.messageCount + 2);
      release(rt);
    }
  });

  test(`a quick turn's model that runs a turn with the same ifHead (${mode})`, async () => {
    const log = [];
    let rt;
    let ifHead;
    let inner;
    ({ rt } = await open(mode, log, (req, last) => {
      // Its outcome is taken at once: in worker mode the refusal can
      // arrive while the test awaits something else.
      if (last.content === "reenter") inner = rt.run({ sessionId: "r", input: "inner", ifHead }).then(() => null, (e) => e);
      return undefined;
    }));
    const r = await rt.run({ sessionId: "r", input: "seed", history, ifHead: (await rt.checkHistory(history)).head });
    ifHead = r.head;
    // The quick turn begins as its model calls the runtime; the inner
    // run waits for the session, and is refused once the outer one has
    // run, its model not called.
    const called = log.length;
    const outer = await rt.run({ sessionId: "r", input: "reenter", ifHead });
    assert.equal(outer.head, (await rt.session("r")).head);
    const e = await inner;
    assert.equal(e && e.code, "history_diverged");
    assert.equal(e.head, outer.head);
    assert.deepEqual(e.missing, outer.appended);
    assert.equal(log.length, called + 1);
  });
}
