// The harness's ifhead section (bench/run.mjs, BENCH_ONLY=ifhead): what a
// run's precondition on the conversation's head (ifHead,
// docs/adr/0025-conversation-heads.md) costs a warm turn through the glue.
// Two contenders share one glue runtime and one JavaScript model that
// reads its messages (the jsmodel section's): the same warm turn without
// ifHead, and with ifHead set to the previous result's head, which a run
// with ifHead returns as result.head. They alternate batch by batch in a
// rotating order (run.mjs's warmTurnsOn); the measured batches are cut
// into blocks, and each block gives one ratio of the two contenders'
// medians. The bar (issue 45): the median of those ratios at most 1.05x.
// Nothing here asserts a timing; bench/ifhead.test.mjs tests the
// contenders and the printing.

/** The bar: a warm turn with ifHead at most 1.05x the same turn without. */
export const IFHEAD_BAR = 1.05;

/** The sizes of the sessions measured, in messages after the seed's turn. */
export const IFHEAD_SIZES = [100, 5000];

/** The contenders' names, as the table and the JSON figures give them. */
export const PLAIN = "glue.js, without ifHead";
export const WITH_HEAD = "glue.js, ifHead the previous head";

/**
 * ifHeadContenders returns the two contenders of run.mjs's warmTurnsOn on
 * the glue runtime rt: without ifHead, and with it. Both await their run
 * and read its result (an async wrapper each), so that the ratio is what
 * ifHead costs, not the wrapper's promise. The second seeds with
 * ifHead set to historyHead (the head of the history it seeds,
 * rt.checkHistory(history).head) so that its seed's result has the head
 * of the first turn, and runs every turn with the head of the result
 * before it. A result without a head, or a turn refused, throws: the
 * figures would not be of a turn that checked its head.
 */
export function ifHeadContenders(rt, historyHead) {
  let head = "";
  const keep = (res) => {
    if (typeof res.head !== "string" || !res.head.startsWith("h1-")) {
      throw new Error(`bench: a run with ifHead gave head ${JSON.stringify(res.head)}`);
    }
    head = res.head;
    return res;
  };
  let last;
  const plainKeep = (res) => {
    if (typeof res.head === "string") throw new Error(`bench: a run without ifHead gave head ${JSON.stringify(res.head)}`);
    last = res;
    return res;
  };
  return [
    {
      name: PLAIN,
      seed: async (id, input, history) => plainKeep(await rt.run({ sessionId: id, input, history })),
      turn: async (id, input) => plainKeep(await rt.run({ sessionId: id, input })),
      drop: (id) => rt.deleteSession(id),
    },
    {
      name: WITH_HEAD,
      seed: async (id, input, history) => keep(await rt.run({ sessionId: id, input, history, ifHead: historyHead })),
      turn: async (id, input) => keep(await rt.run({ sessionId: id, input, ifHead: head })),
      drop: (id) => { head = ""; return rt.deleteSession(id); },
    },
  ];
}

function median(values) {
  const s = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * blockRatios cuts the two contenders' samples, in the order they were
 * taken, into blocks of perBlock samples each (a last partial block is
 * left out) and returns each block's ratio: the median with ifHead over
 * the median without.
 */
export function blockRatios(plain, withHead, perBlock) {
  if (!Number.isInteger(perBlock) || perBlock < 1) throw new Error(`bench: a block of ${perBlock} samples`);
  const out = [];
  const n = Math.min(plain.length, withHead.length);
  for (let i = 0; i + perBlock <= n; i += perBlock) {
    out.push(median(withHead.slice(i, i + perBlock)) / median(plain.slice(i, i + perBlock)));
  }
  return out;
}

/**
 * ifHeadFigure sums up one session size: each contender's median time
 * (ms), the blocks' ratios' median and spread, and whether the median
 * is within the bar (undefined when no block was measured).
 */
export function ifHeadFigure(size, plain, withHead, perBlock) {
  const ratios = blockRatios(plain, withHead, perBlock);
  const r = median(ratios);
  return {
    size,
    plainMs: median(plain),
    ifHeadMs: median(withHead),
    turnsPerBlock: perBlock,
    blocks: ratios.length,
    ratio: r,
    min: ratios.length ? Math.min(...ratios) : NaN,
    max: ratios.length ? Math.max(...ratios) : NaN,
    within: Number.isFinite(r) ? r <= IFHEAD_BAR : undefined,
  };
}

const us = (v) => (Number.isFinite(v) ? (v * 1000).toFixed(1) + " µs" : "-");
const fx = (v) => (Number.isFinite(v) ? v.toFixed(2) + "x" : "-");
const verdict = (ok) => (ok === undefined ? "-" : ok ? "yes" : "no");

/** ifHeadTarget is the Targets line's text for a figure of size messages. */
export function ifHeadTarget(size) {
  return `ifHead: warm turn, ${size.toLocaleString("en")} messages <= ${IFHEAD_BAR}x without`;
}

/**
 * ifHeadRatios is the ratio column of the harness's table for the row
 * with ifHead: the blocks' median ratio, their spread, and the verdict.
 */
export function ifHeadRatios(f) {
  if (!f.blocks) return `- without (no block of ${f.turnsPerBlock} turns measured)`;
  return `${fx(f.ratio)} without (blocks ${fx(f.min)}-${fx(f.max)}, ${f.blocks} of ${f.turnsPerBlock} turns), ` +
    `within ${IFHEAD_BAR}x: ${verdict(f.within)}`;
}

/**
 * ifHeadTable prints the figures as a Markdown table: per session size,
 * both medians, the ratio of the blocks (median and min-max) and whether
 * it is within the bar.
 */
export function ifHeadTable(figures) {
  const out = [
    `| warm turn, JS model that reads the messages | without ifHead | ifHead the previous head | ratio, median of blocks (min-max) | blocks × turns | ≤ ${IFHEAD_BAR}x |`,
    "| --- | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const f of [...figures].sort((a, b) => a.size - b.size)) {
    out.push(`| ${f.size.toLocaleString("en")} messages | ${us(f.plainMs)} | ${us(f.ifHeadMs)} | ` +
      `${fx(f.ratio)} (${fx(f.min)}-${fx(f.max)}) | ${f.blocks} × ${f.turnsPerBlock} | ${verdict(f.within)} |`);
  }
  return out.join("\n");
}
