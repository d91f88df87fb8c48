// The syscall/js Runtime object's methods of the table of operations
// (cancelRun, deleteSession, revertRun; docs/wire.md, "Operations"): made
// from the table's rows, they keep the answers these methods always had.
// Bad arguments answer false (the rows are quiet), arguments after the
// operation's are ignored as JavaScript functions ignore them, and a
// method runs the handler the wire's agentrt_op runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { startInstance } from "../testlib/helpers.mjs";

test("TestOps_TableMethods: answers, bad arguments and extra arguments", async () => {
  const api = await startInstance();
  const rt = api.createRuntime({});
  try {
    const r = await rt.startRun("s", "one", { runId: "r1" });
    assert.equal(r.status, "completed");
    // Bad arguments: false, nothing changed.
    for (const args of [[], [1], [null], [{}], [undefined]]) {
      assert.equal(rt.deleteSession(...args), false, `deleteSession(${args.map(String)})`);
      assert.equal(rt.cancelRun(...args), false, `cancelRun(${args.map(String)})`);
    }
    for (const args of [[], ["s"], ["s", 1], [1, "r1"], ["s", null]]) {
      assert.equal(rt.revertRun(...args), false, `revertRun(${args.map(String)})`);
    }
    assert.equal(rt.getSession("s").messages.length, 2);
    assert.equal(rt.cancelRun("no such run"), false);
    // Extra arguments are ignored: the operation still runs.
    assert.equal(rt.revertRun("s", "r1", "extra", 7), true);
    assert.equal(rt.getSession("s"), null, "a run reverted to nothing leaves no session");
    await rt.startRun("t", "two");
    assert.equal(rt.deleteSession("t", 0, ["t"]), true);
    assert.equal(rt.deleteSession("t"), false);
    assert.deepEqual(rt.listSessions(), []);
    // Each is a function of the object's own, as the other methods are.
    for (const name of ["cancelRun", "deleteSession", "revertRun"]) {
      assert.equal(typeof rt[name], "function", name);
      assert.ok(Object.prototype.hasOwnProperty.call(rt, name), name);
    }
  } finally {
    rt.close();
  }
});
