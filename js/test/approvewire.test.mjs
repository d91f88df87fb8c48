// The approvals' frames in the JavaScript wire codec against the Go
// package's golden frames (wire/testdata/golden, written by
// `go test ./wire -update`; wire/approve_test.go): the begin frame's
// approvals, the approval frame, the approve action and a done action
// awaiting approval, with its run.awaiting_approval event.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Writer, writeBegin, writeApproval, readAction, ACTION } from "../wire.js";

const golden = (name) => new Uint8Array(readFileSync(new URL(`../../wire/testdata/golden/${name}`, import.meta.url)));

describe("approval frames", () => {
  test("the host's frames are the Go package's, byte for byte", () => {
    const begin = writeBegin(new Writer(), {
      sessionId: "s", input: "",
      approvals: [{ toolCallId: "p", approved: true, reason: "" }, { toolCallId: "q", approved: false, reason: "too much" }],
    });
    assert.deepEqual([...begin], [...golden("begin-approvals.bin")]);
    assert.deepEqual([...writeApproval(new Writer(), 3, { need: true })], [...golden("approval.bin")]);
    assert.deepEqual([...writeApproval(new Writer(), 3, { failure: "boom" })], [...golden("approval-failed.bin")]);
  });

  test("the module's frames decode", () => {
    const ask = readAction(golden("action-approve.bin"));
    assert.equal(ask.kind, ACTION.approve);
    assert.deepEqual({ ...ask.call }, { id: "p", name: "pay", arguments: '{"a":5}' });
    const done = readAction(golden("action-awaiting.bin"));
    assert.equal(done.kind, ACTION.done);
    assert.deepEqual(done.events.map((e) => e.type), ["run.awaiting_approval"]);
    const res = done.result;
    assert.equal(res.status, "awaiting_approval");
    assert.deepEqual(res.pendingApprovals, [{ toolCallId: "p", name: "pay", arguments: '{"a":5}' }]);
    assert.equal(res.reply, res.appended[1]);
    assert.equal(res.appended.length, 3);
    const plain = readAction(golden("action-done.bin")).result;
    assert.equal(plain.status, "completed");
    assert.equal("pendingApprovals" in plain, false);
  });
});
