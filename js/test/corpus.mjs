// The host-message corpus (testdata/contract/) for the JavaScript suites
// that run it: its cases, and messages in its canonical shape.
import { readFile, readdir } from "node:fs/promises";
import { root } from "./env.mjs";

const corpusDir = new URL("testdata/contract/", root);

// loadCorpus returns every case of every corpus file, in file order,
// each named "file/case".
export async function loadCorpus() {
  const files = (await readdir(corpusDir)).filter((f) => f.endsWith(".json")).sort();
  const cases = [];
  for (const f of files) {
    const list = JSON.parse(await readFile(new URL(f, corpusDir), "utf8"));
    for (const c of list) cases.push({ ...c, name: `${f.slice(0, -5)}/${c.name}` });
  }
  return cases;
}

// canonical is internal/contract's Canonical: role and content; id and
// tool_call_id when not empty; tool_calls when there are any.
export function canonical(m) {
  const out = { role: String(m.role), content: typeof m.content === "string" ? m.content : "" };
  if (m.id) out.id = m.id;
  const callId = m.tool_call_id || m.toolCallId;
  if (callId) out.tool_call_id = callId;
  const calls = m.tool_calls ?? m.toolCalls;
  if (Array.isArray(calls) && calls.length > 0) {
    out.tool_calls = calls.map((c) => ({ id: c.id ?? "", name: c.name ?? "", arguments: c.arguments ?? "" }));
  }
  return out;
}
