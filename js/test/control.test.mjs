// The control exports' inputs and frames (docs/wire.md, "Control
// exports") against the Go package's golden frames: the op input the
// glue writes and the value frame it reads, the id inputs, and the
// check-report frame it reads.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Writer, WireError } from "../wire.js";
import { writeOp, readValue, writeText, readCheck } from "../controlframes.js";

const golden = (name) => new Uint8Array(readFileSync(new URL(`../../wire/testdata/golden/${name}`, import.meta.url)));

describe("control frames", () => {
  test("the op input is the Go encoder's bytes, and a value frame reads as the Go value", () => {
    assert.deepEqual([...writeOp(new Writer(4), "revertRun", ["sé", "glue:7", null])], [...golden("op.bin")]);
    assert.deepEqual([...writeOp(new Writer(4), "revertRun", ["sé", "glue:7", undefined])], [...golden("op.bin")]);
    assert.equal(readValue(golden("value.bin")), "é");
    assert.equal(readValue(golden("value-true.bin")), true);
  });

  test("a malformed value frame throws WireError only", () => {
    const good = golden("value.bin");
    const bad = [
      good.subarray(0, good.length - 1),
      Uint8Array.of(...good, 0),
      Uint8Array.of(...good.subarray(0, 5), 9),
      golden("check.bin"),
      new Uint8Array(0),
    ];
    for (const b of bad) assert.throws(() => readValue(b), WireError);
  });

  test("an id input is its UTF-8 bytes alone, a lone surrogate as U+FFFD", () => {
    assert.deepEqual([...writeText(new Writer(2), "sé")], [0x73, 0xc3, 0xa9]);
    assert.deepEqual([...writeText(new Writer(), "\ud800")], [0xef, 0xbf, 0xbd]);
    assert.deepEqual([...writeText(new Writer(), "")], []);
  });

  test("a check-report frame reads as checkHistory's value", () => {
    assert.deepEqual(readCheck(golden("check.bin")), {
      ok: false,
      problems: [
        { code: "invalid_history", index: 1, message: "orphan", repair: "orphan_tool_result" },
        { code: "limit_exceeded", index: -1, message: "é", repair: null },
      ],
      awaiting: [{ index: 3, toolCallId: "c1", name: "clock", arguments: '{"tz":"é"}' }],
      paused: true,
      head: "h1-g5foW_vpddqFPIhHk0erIg",
    });
    assert.deepEqual(readCheck(golden("check-ok.bin")), { ok: true, problems: [], awaiting: [], paused: false, head: "" });
  });

  test("a malformed check-report frame throws WireError only", () => {
    const good = golden("check.bin");
    const bad = [
      good.subarray(0, good.length - 1),
      Uint8Array.of(...good, 0),
      Uint8Array.of(...good.subarray(0, 5), 2, 0, 0),
      Uint8Array.of(...good.subarray(0, 5), 0, 0x7f, 0),
      golden("op.bin"),
      new Uint8Array(0),
    ];
    for (const b of bad) assert.throws(() => readCheck(b), WireError);
  });
});
