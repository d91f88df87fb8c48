// Deterministic test histories for the benchmarks. bench/gocore/history.go
// generates the very same messages in Go (keep the two in sync: same
// generator, same words, same pattern); the harness checks that both sides
// report the same total content bytes.

const WORDS = [
  "the", "runtime", "keeps", "sessions", "in", "memory", "while", "host",
  "stores", "durable", "history", "and", "seeds", "cold", "turns", "once",
  "model", "answers", "with", "tool", "calls", "café", "naïve", "résumé",
  "phone", "webview", "worker", "isolate", "quickly", "garden", "river", "über",
];

const encoder = new TextEncoder();
const WORD_BYTES = WORDS.map((w) => encoder.encode(w).length);

/** Returns a xorshift32 generator; the Go side uses the same one. */
function rng(seed) {
  let x = seed >>> 0;
  return () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x;
  };
}

function text(next, target) {
  const parts = [];
  let bytes = -1;
  while (bytes < target) {
    const i = next() % WORDS.length;
    parts.push(WORDS[i]);
    bytes += WORD_BYTES[i] + 1;
  }
  return parts.join(" ");
}

/**
 * Returns n messages in the module's shape: cycles of ten (user, assistant
 * with one tool call and null content, tool result, assistant, then three
 * user/assistant pairs), every message with a host id and text of 200-300
 * UTF-8 bytes (mostly ASCII). n must be a multiple of 10 for the history
 * to be valid (every tool call answered).
 */
export function makeHistory(n, seed = 0x9e3779b9) {
  const next = rng(seed);
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    const k = Math.floor(i / 10);
    const id = "m" + i;
    const body = () => text(next, 200 + (next() % 101));
    switch (i % 10) {
      case 1:
        out[i] = {
          role: "assistant", content: null, id,
          tool_calls: [{ id: "call_" + k, name: "lookup", arguments: '{"q":"' + text(next, 12) + '"}' }],
        };
        break;
      case 2:
        out[i] = { role: "tool", content: body(), tool_call_id: "call_" + k, id };
        break;
      case 0: case 4: case 6: case 8:
        out[i] = { role: "user", content: body(), id };
        break;
      default:
        out[i] = { role: "assistant", content: body(), id };
    }
  }
  return out;
}

/** Total UTF-8 bytes of the text fields, as the runtime counts them. */
export function historyBytes(history) {
  let n = 0;
  for (const m of history) {
    n += encoder.encode(m.content ?? "").length + encoder.encode(m.id ?? "").length +
      encoder.encode(m.tool_call_id ?? "").length;
    for (const c of m.tool_calls ?? []) {
      n += encoder.encode(c.id).length + encoder.encode(c.name).length + encoder.encode(c.arguments).length;
    }
  }
  return n;
}
