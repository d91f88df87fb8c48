// Rendering of the agentrt web demo: the page state, the chat, the
// inspector, errors and the drawers. It reads the state and the DOM and
// writes the DOM; it loads nothing and runs nothing (see app.js).

export const state = {
  current: null, // the open conversation's id
  stored: [], // its stored messages (from IndexedDB)
  queue: [], // jobs waiting to run: { convId, text, status, error? }
  running: null, // the job running now
  failed: [], // jobs that failed, shown with Retry
  turns: new Map(), // convId -> inspector entries of this page's lifetime
  seedMode: "if-empty",
  ready: false, // whether a runtime is loaded
  check: null, // checkHistory's answer for the open conversation's stored history, or null
  repair: new Set(), // conversations whose turns send policy.repair
};

export const $ = (id) => document.getElementById(id);
export const els = {};

export function setRuntimeStatus(kind, text) {
  document.body.dataset.runtime = kind;
  els.status.textContent = text;
  renderQueueNote();
}

// ---------------------------------------------------------------------------
// The inspector.

export function renderInspector() {
  const list = state.turns.get(state.current) || [];
  const last = [...list].reverse().find((t) => !t.marker);
  els.seedMode.textContent = last ? last.seed.mode : "–";
  els.seedCount.textContent = last ? String(last.seed.seeded) : "–";
  // The last model call: the one whose answer is the reply (on a tool turn, the first only asked for the tool).
  els.modelMessages.textContent = last && last.calls.length ? String(last.calls[last.calls.length - 1].messageCount) : "–";

  els.turns.replaceChildren();
  for (const t of [...list].reverse()) {
    const li = document.createElement("li");
    if (t.marker) {
      li.className = "marker";
      li.textContent = t.marker;
      els.turns.append(li);
      continue;
    }
    li.className = "turn";
    li.dataset.deltas = String(t.deltas);
    const h = document.createElement("h3");
    h.textContent = `Turn ${t.n}`;
    const seed = document.createElement("p");
    seed.className = `seed seed-${t.seed.mode}`;
    seed.textContent =
      `sent ${t.historyLength} history message${t.historyLength === 1 ? "" : "s"}; ` +
      `seed: ${t.seed.mode}, ${t.seed.seeded} seeded` +
      (t.seed.skippedSystem ? `, ${t.seed.skippedSystem} system skipped` : "") +
      (t.seed.repairs ? `, repaired ${t.seed.repairs.map((r) => `${r.kind} at ${r.index}${r.toolCallId ? ` (${r.toolCallId})` : ""}`).join(", ")}` : "") +
      `; session now holds ${t.sessionCount ?? "?"}; reply streamed in ${t.deltas} delta${t.deltas === 1 ? "" : "s"}`;
    li.append(h, seed);
    for (const c of t.calls) {
      const d = document.createElement("details");
      if (c === t.calls[0]) d.open = list.indexOf(t) === list.length - 1;
      const s = document.createElement("summary");
      s.textContent = `Model call ${c.step}: received ${c.messageCount} message${c.messageCount === 1 ? "" : "s"}`;
      const ol = document.createElement("ol");
      ol.className = "inspect-messages";
      // On the first call, the seeded messages sit just before the input.
      const seededFrom = c === t.calls[0] && t.seed.seeded ? c.messages.length - 1 - t.seed.seeded : -1;
      c.messages.forEach((m, i) => {
        const item = document.createElement("li");
        item.className = `inspect-msg role-${m.role}`;
        if (seededFrom >= 0 && i >= seededFrom && i < c.messages.length - 1) item.classList.add("seeded");
        item.textContent = `${m.role}: ${describe(m)}`;
        ol.append(item);
      });
      d.append(s, ol);
      li.append(d);
    }
    els.turns.append(li);
  }
}

// renderProblems shows the stored history's problems (state.check) in the
// inspector, and "Repair and continue" when policy.repair fixes them all
// and is not on yet for the conversation.
export function renderProblems() {
  const c = state.check;
  // A call awaiting approval is the approval card's, not a defect
  // (docs/adr/0019-tool-approvals.md, point 7).
  const awaiting = new Set((c?.awaiting ?? []).map((a) => a.index));
  const problems = c ? c.problems.filter((p) => !(p.repair === "missing_tool_result" && awaiting.has(p.index))) : [];
  els.problems.hidden = problems.length === 0;
  if (problems.length === 0) return;
  els.problemList.replaceChildren(...problems.map((p) => {
    const li = document.createElement("li");
    li.className = "problem";
    li.dataset.repair = p.repair ?? "";
    li.textContent = `message ${p.index}: ${p.message} ` +
      (p.repair ? `(repair: ${p.repair})` : "(no repair applies: fix the stored history)");
    return li;
  }));
  const fixable = problems.every((p) => p.repair);
  const on = state.repair.has(state.current);
  els.repairHistory.hidden = !fixable || on;
  els.problemNote.hidden = !fixable || !on;
  els.problemNote.textContent = on ?
    "policy.repair is on for this conversation: each turn repairs the stored history the same way, and the session holds the repaired one." : "";
}

export function describe(m) {
  const calls = m.tool_calls ?? m.toolCalls;
  if (Array.isArray(calls) && calls.length) {
    const names = calls.map((c) => `${c.name}(${typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments)})`);
    return (m.content ? m.content + " " : "") + "→ calls " + names.join(", ");
  }
  if (m.role === "tool") return `[${m.tool_call_id ?? m.toolCallId}] ${m.content}`;
  return m.content ?? "";
}

// ---------------------------------------------------------------------------
// Rendering the chat.

export function bubble(role, text, extra) {
  const li = document.createElement("li");
  li.className = `bubble role-${role}` + (extra ? " " + extra : "");
  li.dataset.testid = "message";
  li.dataset.role = role;
  const who = document.createElement("span");
  who.className = "who";
  who.textContent = role === "user" ? "You" : role === "assistant" ? "Assistant" : role === "tool" ? "Tool" : role;
  const body = document.createElement("span");
  body.className = "text";
  body.textContent = text;
  li.append(who, body);
  return li;
}

export function renderMessages() {
  const frag = document.createDocumentFragment();
  for (const m of state.stored) {
    frag.append(bubble(m.role, describe(m)));
  }
  const pending = [...state.failed, ...state.queue].filter((j) => j.convId === state.current && j.status !== "done");
  for (const job of pending) {
    const extra = job.status === "failed" ? "failed" : "pending";
    const b = bubble("user", job.text, extra);
    const note = document.createElement("span");
    note.className = "note";
    note.textContent =
      job.status === "failed" ? "not sent" :
      job.status === "running" ? "" :
      state.ready ? "queued" : "waiting for the runtime…";
    if (note.textContent) b.append(note);
    frag.append(b);
    if (job.status === "running") {
      for (const t of job.tools) frag.append(bubble("tool", t, "live"));
      const r = bubble("assistant", job.reply, "live");
      r.setAttribute("aria-busy", "true");
      r.hidden = !job.reply;
      job.replyEl = r;
      frag.append(r);
    }
  }
  const awaiting = state.check?.awaiting ?? [];
  if (awaiting.length > 0 && pending.length === 0) frag.append(approvalCard(awaiting));
  els.messages.replaceChildren(frag);
  scrollToEnd();
}

// approvalCard asks the person about the calls the stored history awaits
// approval for; its buttons carry data-decision (app.js answers them).
function approvalCard(awaiting) {
  const li = document.createElement("li");
  li.className = "approval";
  li.dataset.testid = "approval-card";
  const p = document.createElement("p");
  const calls = new Map();
  for (const m of state.stored) for (const c of m.tool_calls ?? m.toolCalls ?? []) calls.set(c.id, c);
  p.textContent = "Needs your approval: " + awaiting.map((a) => {
    const c = calls.get(a.toolCallId);
    return `${a.name}(${c ? (typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments)) : ""})`;
  }).join(", ");
  li.append(p);
  for (const [decision, label] of [["approve", "Approve"], ["deny", "Deny"]]) {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.decision = decision;
    b.dataset.testid = decision;
    b.textContent = label;
    li.append(b);
  }
  return li;
}

export function scrollToEnd() {
  els.messages.scrollTop = els.messages.scrollHeight;
}

export function renderQueueNote() {
  const waiting = state.queue.filter((j) => j.status === "queued").length;
  if (waiting && !state.ready) {
    els.queueNote.hidden = false;
    els.queueNote.textContent = `${waiting} message${waiting === 1 ? "" : "s"} waiting for the runtime to load.`;
  } else {
    els.queueNote.hidden = true;
    els.queueNote.textContent = "";
  }
}

// renderConversations lists the conversations; choosing one calls open(id).
export function renderConversations(list, open) {
  els.conversations.replaceChildren(
    ...list.map((c) => {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "conv";
      b.textContent = c.title;
      b.title = `${c.messages.length} stored messages`;
      if (c.id === state.current) b.setAttribute("aria-current", "true");
      b.addEventListener("click", () => { open(c.id); closeDrawers(); });
      const count = document.createElement("span");
      count.className = "count";
      count.textContent = String(c.messages.length);
      b.append(count);
      li.append(b);
      return li;
    }),
  );
}

// ---------------------------------------------------------------------------
// Errors: always on the page, never only in the console.

export function showError(e, { title, action, job } = {}) {
  const div = document.createElement("div");
  div.className = "error";
  div.dataset.testid = "error";
  if (e && e.code) div.dataset.code = e.code;
  const h = document.createElement("strong");
  h.textContent = title || "Error";
  const p = document.createElement("p");
  const code = e && e.code ? `[${e.code}] ` : "";
  const index = e && e.index != null ? ` (history index ${e.index})` : "";
  p.textContent = code + (e && e.message ? e.message : String(e)) + index;
  div.append(h, p);
  const remove = () => div.remove();
  if (action) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = action.label;
    b.addEventListener("click", () => { remove(); action.run(); });
    div.append(b);
  }
  const x = document.createElement("button");
  x.type = "button";
  x.textContent = "Dismiss";
  x.addEventListener("click", () => {
    remove();
    if (job) { state.failed = state.failed.filter((j) => j !== job); renderMessages(); }
  });
  div.append(x);
  els.errors.append(div);
}


// ---------------------------------------------------------------------------
// Drawers (narrow screens).

export function closeDrawers() {
  for (const [btn, panel] of [[els.toggleSide, els.side], [els.toggleInspector, els.inspector]]) {
    panel.classList.remove("open");
    btn.setAttribute("aria-expanded", "false");
  }
}

export function toggle(btn, panel) {
  const open = !panel.classList.contains("open");
  closeDrawers();
  panel.classList.toggle("open", open);
  btn.setAttribute("aria-expanded", String(open));
  if (open) panel.querySelector("button, select, input, a, summary")?.focus();
}
