// agentrt/ai's chunks: a run's events as the AI SDK's UIMessageChunks
// (docs/ai-sdk.md, "Events and chunks"), for the transport of ai.js,
// which bundles this file.

import { isObject, uiValue } from "./uimessages.js";

/** JSON text of a value, or undefined when it has none. */
export function jsonOf(v) {
  try {
    return JSON.stringify(v);
  } catch {
    return undefined;
  }
}

/** The text of an error, thrown or carried by a stream part. */
export function messageOf(e) {
  if (e instanceof Error) return e.message;
  if (typeof e === "string") return e;
  if (isObject(e) && typeof e.message === "string") return e.message;
  const j = jsonOf(e);
  return j === undefined ? String(e) : j;
}

/** What the error chunk of a failed run says: its code, then its message. */
export function errorText(e) {
  const code = isObject(e) && typeof e.code === "string" ? e.code : "internal";
  return `${code}: ${messageOf(e)}`;
}

/**
 * Turns a run's events into UIMessageChunks (docs/ai-sdk.md, "Events and
 * chunks"). `emit` receives each chunk; `denied` holds the ids of the
 * calls the run's approvals deny.
 */
export class ChunkMapper {
  constructor(messageId, denied, sink) {
    this.messageId = messageId;
    this.denied = denied;
    this.sink = sink;
    // The deltas of the open text part not sent yet: the deltas a model
    // gives in one go (before the run's next await) are one text-delta
    // chunk, sent before the next chunk or at the end of the current
    // job, whichever comes first. A model that streams from the network
    // gets a chunk per delta, as before.
    this.pending = "";
    this.flushQueued = false;
    this.flusher = () => {
      this.flushQueued = false;
      this.flush();
    };
    this.step = 0; // the model step whose chunks are open, 0: none
    this.stepOpen = false;
    this.textId = null; // the open text part's id
    this.text = ""; // what its deltas said
    // Steps whose assistant message arrived (a few a turn: an array), and
    // calls whose error became their result (made when one does).
    this.doneSteps = [];
    this.reported = null;
    this.parts = 0;
  }

  /** Sends chunk, after the deltas not sent yet. */
  emit(chunk) {
    if (this.pending !== "") this.flush();
    this.sink(chunk);
  }

  /** Sends the deltas not sent yet as one text-delta chunk. */
  flush() {
    if (this.pending === "") return;
    const delta = this.pending;
    this.pending = "";
    this.sink({ type: "text-delta", id: this.textId, delta });
  }

  openStep() {
    if (!this.stepOpen) {
      this.emit({ type: "start-step" });
      this.stepOpen = true;
    }
  }

  closeText() {
    if (this.textId !== null) {
      this.emit({ type: "text-end", id: this.textId });
      this.textId = null;
    }
  }

  closeStep() {
    this.closeText();
    if (this.stepOpen) {
      this.emit({ type: "finish-step" });
      this.stepOpen = false;
    }
  }

  delta(ev) {
    const step = typeof ev.step === "number" ? ev.step : this.step || 1;
    if (this.doneSteps.includes(step) || typeof ev.delta !== "string" || ev.delta === "") return; // late or empty
    if (step !== this.step) {
      this.closeStep();
      this.step = step;
    }
    this.openStep();
    if (this.textId === null) {
      this.textId = `t${++this.parts}`;
      this.text = "";
      this.emit({ type: "text-start", id: this.textId });
    }
    this.text += ev.delta;
    this.pending += ev.delta;
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flusher);
    }
  }

  assistant(m) {
    if (this.step === 0 || this.doneSteps.includes(this.step)) {
      // No delta of this step came: a new step.
      this.closeStep();
      this.step++;
    }
    if (!this.doneSteps.includes(this.step)) this.doneSteps.push(this.step);
    this.openStep();
    const content = typeof m.content === "string" ? m.content : "";
    if (this.textId !== null) {
      // The deltas said a prefix of the message: the rest, then the end.
      if (content.length > this.text.length && content.startsWith(this.text)) {
        this.emit({ type: "text-delta", id: this.textId, delta: content.slice(this.text.length) });
      }
      this.closeText();
    } else if (content !== "") {
      const id = `t${++this.parts}`;
      this.emit({ type: "text-start", id });
      this.emit({ type: "text-delta", id, delta: content });
      this.emit({ type: "text-end", id });
    }
    const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
    for (const c of calls) {
      this.emit({ type: "tool-input-available", toolCallId: c.id, toolName: c.name, input: uiValue(c.arguments) });
    }
    if (calls.length === 0) this.closeStep();
  }

  toolMessage(m) {
    const id = m.tool_call_id; // a resume's first results come before any step
    if (this.denied.has(id)) this.emit({ type: "tool-output-denied", toolCallId: id });
    else if (this.reported !== null && this.reported.has(id)) this.emit({ type: "tool-output-error", toolCallId: id, errorText: m.content });
    else this.emit({ type: "tool-output-available", toolCallId: id, output: uiValue(m.content) });
  }

  /** Maps one event; returns true when the run ended with it. */
  event(ev) {
    switch (ev.type) {
      case "run.started":
        this.emit({ type: "start", messageId: this.messageId });
        return false;
      case "model.delta":
        this.delta(ev);
        return false;
      case "message.appended": {
        const m = ev.message;
        if (m.role === "assistant") this.assistant(m);
        else if (m.role === "tool") this.toolMessage(m);
        return false;
      }
      case "tool.finished":
        if (ev.error) {
          if (ev.message) (this.reported ??= new Set()).add(ev.toolCall.id);
          else this.emit({ type: "tool-output-error", toolCallId: ev.toolCall.id, errorText: errorText(ev.error) });
        }
        return false;
      case "run.awaiting_approval":
        this.closeText();
        for (const p of ev.result.pendingApprovals ?? []) {
          this.emit({ type: "tool-approval-request", approvalId: p.toolCallId, toolCallId: p.toolCallId });
        }
        this.closeStep();
        this.emit({ type: "finish", finishReason: "tool-calls" });
        return true;
      case "run.completed":
        this.closeStep();
        this.emit({ type: "finish", finishReason: "stop" });
        return true;
      default:
        return false;
    }
  }

  /** The chunks of a run that failed (error) or was cancelled (abort). */
  failed(err) {
    this.closeText();
    if (isObject(err) && (err.code === "cancelled" || err.name === "AbortError")) {
      this.emit({ type: "abort", reason: messageOf(err) });
    } else {
      this.emit({ type: "error", errorText: errorText(err) });
    }
  }
}
