// The host's copy heals (docs/adr/0016-the-host-copy-heals.md): a run
// whose seed repaired its history gives the host seed.repaired, the
// history it passed with the repairs applied, in its own shape. The
// module says what changed, in host indexes (core.HistoryEdit, read by
// wire.js editsOf); this file only renders it, by the rules of Go's
// hostjson.AppendHealed.

import { editsOf } from "./wire.js";

/** The content of the tool result repair inserts (core.InterruptedToolResult). */
export const INTERRUPTED_TOOL_RESULT = "Tool call interrupted: no result was recorded.";

/**
 * Returns history with the edits applied: kept messages are the same
 * objects; a dropped one is left out; a marker is a new tool message
 * ({role: "tool", tool_call_id, content}, toolCallId when the calling
 * message writes its calls toolCalls, with id when the marker has one)
 * before the host message at its index, or, when the calling message is
 * a UIMessage (it has parts), a copy of that message whose tool part for
 * the call has state "output-error" and errorText the marker text.
 *
 * @param {ReadonlyArray<any>} history
 * @param {ReadonlyArray<object>} edits
 * @returns {any[]}
 */
export function healHistory(history, edits) {
  const n = history.length;
  const dropped = new Set();
  const patches = new Map();
  const inserts = new Map();
  const add = (map, k, e) => {
    const list = map.get(k);
    if (list === undefined) map.set(k, [e]);
    else list.push(e);
  };
  for (const e of edits) {
    if (e.op === "drop") {
      dropped.add(e.index);
      continue;
    }
    const calling = history[e.call];
    if (calling !== null && typeof calling === "object" && Array.isArray(calling.parts)) add(patches, e.call, e);
    else add(inserts, e.index, e);
  }
  const out = [];
  for (let i = 0; i <= n; i++) {
    for (const e of inserts.get(i) ?? []) out.push(marker(history[e.call], e));
    if (i === n || dropped.has(i)) continue;
    const ps = patches.get(i);
    out.push(ps === undefined ? history[i] : patched(history[i], ps));
  }
  return out;
}

// marker returns the tool message of insert e, in the key style of its
// calling message.
function marker(calling, e) {
  const camel = calling !== null && typeof calling === "object" && calling.tool_calls === undefined && calling.toolCalls !== undefined;
  const m = {};
  if (e.id) m.id = e.id;
  m.role = "tool";
  m[camel ? "toolCallId" : "tool_call_id"] = e.toolCallId;
  m.content = INTERRUPTED_TOOL_RESULT;
  return m;
}

// patched returns a copy of UIMessage m whose tool parts for the markers
// ps carry them as their result.
function patched(m, ps) {
  const parts = m.parts.map((p) => {
    if (p === null || typeof p !== "object" || !ps.some((e) => e.toolCallId === p.toolCallId)) return p;
    return { ...p, state: "output-error", errorText: INTERRUPTED_TOOL_RESULT };
  });
  return { ...m, parts };
}

/**
 * Sets result.seed.repaired when the run's seed repaired history (an
 * array the host passed): the healed copy the host stores in place of
 * its own. Returns result.
 */
export function withRepaired(result, history) {
  const edits = result && result.seed ? editsOf(result.seed) : undefined;
  if (edits !== undefined && Array.isArray(history)) result.seed.repaired = healHistory(history, edits);
  return result;
}
