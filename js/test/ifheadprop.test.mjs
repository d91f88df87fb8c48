// Three clients keep their own copy of one conversation on one runtime
// and write 1,000 turns to it. With ifHead and glue.md's merge-and-retry
// loop (docs/glue.md, "Conditional runs") every accepted turn is in the
// conversation once and each client's turns in its order, and every copy
// is a state of it; without ifHead the copies lose the other clients'
// turns.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runtimes } from "./helpers.mjs";

const { load } = runtimes();
const CLIENTS = 3;
const TURNS = 1000;

// send is glue.md's loop.
async function send(rt, copy, input, stats) {
  for (;;) {
    try {
      const res = await rt.run({ sessionId: copy.id, input, ifHead: copy.head });
      copy.messages.push(...res.appended);
      copy.head = res.head;
      return res;
    } catch (e) {
      if (e.code !== "history_diverged" || e.missing === undefined) throw e;
      copy.messages.push(...e.missing);
      copy.head = e.head;
      stats.merged++;
    }
  }
}

async function clients(rt, conditional) {
  const copies = [];
  const stats = { merged: 0 };
  for (let c = 0; c < CLIENTS; c++) copies.push({ id: "conv", messages: [], head: rt.checkHistory([]).head });
  let next = 0;
  await Promise.all(copies.map(async (copy, c) => {
    for (let k = 0; next < TURNS; k++) {
      next++;
      const input = `c${c}-${k}`;
      if (conditional) await send(rt, copy, input, stats);
      else copy.messages.push(...(await rt.run({ sessionId: "conv", input })).appended);
      // Let the other clients go between turns, as tabs would.
      await Promise.resolve();
    }
  }));
  return { copies, stats };
}

test("with ifHead and merge-and-retry, three clients lose no turn", async () => {
  const rt = await load({ model: "echo" });
  const t0 = performance.now();
  const { copies, stats } = await clients(rt, true);
  const store = rt.session("conv");
  const inputs = store.messages.filter((m) => m.role === "user").map((m) => m.content);
  assert.equal(inputs.length, TURNS, "every accepted turn is stored");
  assert.equal(new Set(inputs).size, TURNS, "each turn once");
  for (let c = 0; c < CLIENTS; c++) {
    const own = inputs.filter((s) => s.startsWith(`c${c}-`)).map((s) => Number(s.split("-")[1]));
    assert.deepEqual(own, own.map((_, i) => i), `client ${c}'s turns in its order`);
  }
  for (const [c, copy] of copies.entries()) {
    assert.deepEqual(copy.messages, store.messages.slice(0, copy.messages.length), `client ${c}'s copy is a prefix of the store`);
    assert.equal(copy.head, rt.checkHistory(copy.messages).head, `client ${c}'s head names its copy`);
  }
  // The client that wrote last holds the whole conversation.
  assert.ok(copies.some((copy) => copy.messages.length === store.messages.length && copy.head === store.head));
  assert.ok(stats.merged > 0, "the clients did conflict");
  console.log(`# ${TURNS} turns, ${stats.merged} refusals merged, ${(performance.now() - t0).toFixed(0)} ms`);
});

test("without ifHead, the copies lose the other clients' turns", async () => {
  const rt = await load({ model: "echo" });
  const { copies } = await clients(rt, false);
  const store = rt.session("conv");
  for (const [c, copy] of copies.entries()) {
    assert.notDeepEqual(copy.messages, store.messages.slice(0, copy.messages.length), `client ${c}'s copy is not a state of the store`);
    assert.ok(copy.messages.every((m) => m.role !== "user" || m.content.startsWith(`c${c}-`)), `client ${c} saw only its own turns`);
  }
});
