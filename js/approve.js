// agentrt glue: tool approvals (docs/adr/0019-tool-approvals.md). A tool
// declares `needsApproval: true | (args, ctx) => boolean | Promise<boolean>`;
// the module asks the glue about each call of such a tool (the wire's
// approval action) and pauses the run before the calls that need
// approval; a later run with `approvals` (or a UIMessage history whose
// last message carries the decisions) resumes it. The rules stay in the
// module: this file only carries the answers.

import { argError, historyError, isObject, text } from "./errors.js";
import { adopt } from "./request.js";

/** Whether an event of this type ends a run with its Result (run.completed or run.awaiting_approval). */
export const endsRun = (type) => type === "run.completed" || type === "run.awaiting_approval";

/** The type of the event that ends a run with res. */
export const endType = (res) => res.status === "awaiting_approval" ? "run.awaiting_approval" : "run.completed";

/** Checks a tool option's needsApproval (options.tools[i]). */
export function checkNeedsApproval(n, i) {
  if (n !== undefined && n !== null && typeof n !== "boolean" && typeof n !== "function") {
    throw argError(`options.tools[${i}].needsApproval`, "must be a boolean or a function");
  }
}

/**
 * The fields of an entry of request.approvals: any other is refused, as at
 * every edge. The refusals' texts after the list's name are
 * core/hostmsg's (ReadApprovals), which the edge table
 * (testdata/edges/approvals.json) holds both to.
 */
const APPROVAL_KEYS = ["toolCallId", "approved", "reason"];

/**
 * Sets a run request's approvals (r.approvals and r.input): the request's,
 * checked and copied, or, with neither approvals nor an input, the
 * decisions the last message of a UIMessage history carries. A run with
 * approvals takes no input.
 */
export function readResume(r) {
  let list = r.approvals;
  if (list === undefined) {
    if (r.input !== undefined || (list = historyApprovals(r.history)) === undefined) return;
  } else {
    if (!Array.isArray(list) || list.length === 0) throw argError("request.approvals", "must be a non-empty array");
    // Array.from, not map: a hole is read as undefined (refused), not skipped.
    list = Array.from(list, (a, i) => {
      const at = `request.approvals[${i}]`;
      if (!isObject(a)) throw argError(at, "must be an object");
      const extra = Object.keys(a).find((k) => !APPROVAL_KEYS.includes(k));
      if (extra !== undefined) throw argError(at, `has an unknown field ${JSON.stringify(extra)}`);
      if (typeof a.toolCallId !== "string" || a.toolCallId === "") throw argError(`${at}.toolCallId`, "must be a non-empty string");
      if (typeof a.approved !== "boolean") throw argError(`${at}.approved`, "must be a boolean");
      if (a.reason !== undefined && a.reason !== null && typeof a.reason !== "string") throw argError(`${at}.reason`, "must be a string");
      return { toolCallId: a.toolCallId, approved: a.approved, reason: a.reason ?? "" };
    });
    if (r.input !== undefined && r.input !== "") throw argError("request.input", "must be omitted with approvals: the run resumes the pending tool calls");
  }
  r.approvals = list;
  r.input = "";
}

// historyApprovals returns the decisions of the tool parts in state
// approval-responded of a UIMessage history's last message, when it is an
// assistant's (as core/hostmsg.Approvals reads them), or undefined.
function historyApprovals(history) {
  const i = Array.isArray(history) ? history.length - 1 : -1;
  const m = i >= 0 ? history[i] : undefined;
  if (!isObject(m) || m.role !== "assistant" || !Array.isArray(m.parts)) return undefined;
  const out = [];
  // The texts are core/hostmsg's (decisions), which the edge table
  // (testdata/edges/approvals.json) holds both to.
  m.parts.forEach((p, k) => {
    if (!isObject(p) || p.state !== "approval-responded") return;
    const at = `parts[${k}]`;
    if (typeof p.toolCallId !== "string" || p.toolCallId === "") throw historyError(i, `${at}.toolCallId must be a non-empty string`);
    const a = p.approval;
    if (!isObject(a)) throw historyError(i, `${at}.approval must be an object`);
    if (typeof a.approved !== "boolean") throw historyError(i, `${at}.approval.approved must be a boolean`);
    if (a.reason !== undefined && a.reason !== null && typeof a.reason !== "string") throw historyError(i, `${at}.approval.reason must be a string`);
    out.push({ toolCallId: p.toolCallId, approved: a.approved, reason: a.reason ?? "" });
  });
  return out.length > 0 ? out : undefined;
}

/**
 * Asks a tool whether a call needs approval: `{ need }`, `{ failure }`
 * (the text the run fails tool_error with), or null when the turn was
 * interrupted (cancelled, timed out) while a thenable was pending; settle
 * waits as the driver does. Nothing here throws.
 */
export async function askApproval(tool, turn, call, settle) {
  const n = tool === undefined ? undefined : tool.needsApproval;
  if (typeof n !== "function") return { need: n === true };
  let args, v;
  try {
    args = call.arguments === "" ? {} : JSON.parse(call.arguments);
  } catch (e) {
    // As a tool's call fails on them (tools.js): the predicate never ran.
    return { failure: "arguments are not valid JSON: " + text(e) };
  }
  try {
    v = n.call(tool, args, { runId: turn.runId, sessionId: turn.sessionId, toolCallId: call.id });
  } catch (e) {
    return { failure: "needsApproval threw: " + text(e) };
  }
  let s = adopt(v);
  if (s instanceof Promise && (s = await settle(turn, s)) === null) return null;
  if (turn.interrupted) return null;
  if (!s.ok) return { failure: "needsApproval rejected: " + text(s.reason) };
  if (typeof s.value !== "boolean") return { failure: "needsApproval must answer a boolean" };
  return { need: s.value };
}
