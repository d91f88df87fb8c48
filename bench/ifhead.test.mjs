// The harness's ifhead section (bench/ifhead.mjs): its contenders run
// the turns they claim to on the built module (every turn with ifHead
// carries the head of the result before it), and its figures are printed
// with both medians, the blocks' ratio and spread, and the verdict
// against the 1.05x bar. No timing is measured here.
import test from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { makeHistory } from "./history.mjs";
import {
  IFHEAD_BAR, PLAIN, WITH_HEAD, blockRatios, ifHeadContenders, ifHeadFigure, ifHeadRatios, ifHeadTable, ifHeadTarget,
} from "./ifhead.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const dist = resolve(process.env.AGENTRT_DIST || join(root, "dist"));

test("ifhead: each block's ratio is its median with ifHead over its median without; a partial block is left out", () => {
  const plain = [1, 2, 3, 10, 10, 10, 5];
  const withHead = [2, 2, 4, 10, 12, 11, 50];
  assert.deepEqual(blockRatios(plain, withHead, 3), [1, 1.1]);
  assert.deepEqual(blockRatios(plain, withHead, 8), []);
  assert.throws(() => blockRatios(plain, withHead, 0), /a block of 0 samples/);
  assert.throws(() => blockRatios(plain, withHead, 1.5), /a block of 1.5 samples/);
});

test("ifhead: the figure has both medians, the blocks' median ratio, its spread and the verdict", () => {
  const plain = [0.004, 0.004, 0.004, 0.004, 0.005, 0.005];
  const withHead = [0.004, 0.004, 0.0042, 0.0042, 0.0055, 0.0055];
  const f = ifHeadFigure(100, plain, withHead, 2);
  assert.equal(f.size, 100);
  assert.equal(f.blocks, 3);
  assert.equal(f.turnsPerBlock, 2);
  assert.equal(f.plainMs, 0.004);
  assert.equal(f.ifHeadMs, 0.0042);
  assert.deepEqual([f.min, f.ratio, f.max].map((v) => v.toFixed(3)), ["1.000", "1.050", "1.100"]);
  assert.equal(f.within, true, "1.05x is within the bar");
  assert.equal(ifHeadFigure(100, plain, withHead.map((v) => v * 1.01), 2).within, false);
  assert.equal(ifHeadFigure(100, [], [], 2).within, undefined, "no block: no verdict");
  assert.equal(IFHEAD_BAR, 1.05);
});

test("ifhead: the table's rows, the harness's ratio column and the target", () => {
  const small = ifHeadFigure(100, [0.0062, 0.0062, 0.0062, 0.0062], [0.0064, 0.0064, 0.0063, 0.0063], 2);
  const large = ifHeadFigure(5000, [0.008, 0.008, 0.008, 0.008], [0.0096, 0.0096, 0.0088, 0.0088], 2);
  const lines = ifHeadTable([large, small]).split("\n");
  assert.equal(lines.length, 4);
  assert.match(lines[0], /^\| warm turn, JS model that reads the messages \| without ifHead \| ifHead the previous head \| ratio, median of blocks \(min-max\) \| blocks × turns \| ≤ 1\.05x \|$/);
  // In the order of the sizes, whatever the figures' order.
  assert.equal(lines[2], "| 100 messages | 6.2 µs | 6.3 µs | 1.02x (1.02x-1.03x) | 2 × 2 | yes |");
  assert.equal(lines[3], "| 5,000 messages | 8.0 µs | 9.2 µs | 1.15x (1.10x-1.20x) | 2 × 2 | no |");
  assert.equal(ifHeadRatios(small), "1.02x without (blocks 1.02x-1.03x, 2 of 2 turns), within 1.05x: yes");
  assert.equal(ifHeadRatios(large), "1.15x without (blocks 1.10x-1.20x, 2 of 2 turns), within 1.05x: no");
  assert.equal(ifHeadRatios(ifHeadFigure(100, [], [], 2)), "- without (no block of 2 turns measured)");
  assert.equal(ifHeadTarget(5000), "ifHead: warm turn, 5,000 messages <= 1.05x without");
});

test("ifhead: on the built module, every turn with ifHead runs on the previous result's head, the other without one", async () => {
  const gluePath = join(dist, "glue.js");
  assert.ok(existsSync(gluePath), `${gluePath} is missing: run \`make build\` or set AGENTRT_DIST`);
  const glue = await import(pathToFileURL(gluePath).href);
  const seen = [];
  const model = (req) => {
    seen.push(req.messages.length);
    return { content: "ok" };
  };
  const rt = await glue.loadRuntime({ wasm: readFileSync(join(dist, "agentrt.wasm")), wasmExec: join(dist, "wasm_exec.js"), model });
  try {
    const prior = makeHistory(20).slice(0, 18);
    const check = await rt.checkHistory(prior);
    assert.equal(check.ok, true);
    const [plain, withHead] = ifHeadContenders(rt, check.head);
    assert.deepEqual([plain.name, withHead.name], [PLAIN, WITH_HEAD]);

    const r0 = await withHead.seed("w", "warm up", prior);
    assert.equal(r0.messageCount, 20);
    assert.equal(r0.head, (await rt.session("w")).head, "the seed's result has the session's head");
    for (let i = 0; i < 3; i++) {
      const r = await withHead.turn("w", "next");
      assert.equal(r.messageCount, 22 + 2 * i);
      assert.equal(r.head, (await rt.session("w")).head, `turn ${i}: its result has the session's head`);
    }
    // The contender runs with the head it kept: a turn of another client
    // in between makes it stale, and the contender's turn is refused.
    await rt.run({ sessionId: "w", input: "another client" });
    await assert.rejects(withHead.turn("w", "next"), (e) => e.code === "history_diverged");
    withHead.drop("w");
    assert.equal(await rt.session("w"), null);

    const p0 = await plain.seed("p", "warm up", prior);
    assert.equal(p0.head, undefined, "a run without ifHead asks for no head");
    const p1 = await plain.turn("p", "next");
    assert.equal(p1.messageCount, 22);
    assert.equal(p1.head, undefined);
    assert.deepEqual(seen, [19, 21, 23, 25, 27, 19, 21], "the model is handed every message of each turn");
  } finally {
    rt.close();
  }
});

test("ifhead: a result without a head stops the section", async () => {
  const fake = { run: async () => ({ status: "completed", messageCount: 2 }), deleteSession: () => true };
  const [, withHead] = ifHeadContenders(fake, "h1-AAAAAAAAAAAAAAAAAAAAAA");
  await assert.rejects(withHead.seed("s", "x", []), /a run with ifHead gave head undefined/);
});
