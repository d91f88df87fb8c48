import { useChat } from "@ai-sdk/react";
import { lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { loadRuntime } from "agentrt";
import { AgentrtChatTransport, aiTools, languageModel } from "agentrt/ai";
import { useEffect, useRef, useState } from "react";
import { chooseModel } from "./model.js";
import { deleteChat, loadChat, saveChat } from "./store.js";
import { clearLedger, ledger, tools } from "./tools.js";

const SYSTEM = "You are a helpful assistant. Use the tools when they help. The transfer tool moves real money: the user approves each call.";
const CHAT_KEY = "agentrt-ai-sdk-react:chat";

// The runtime: one per page, in a Web Worker (docs/glue.md, "Worker
// mode"), so the module's compile and the seeds stay off the main thread.
// The model and the tools stay here on the page.
let started;
function startRuntime() {
  started ??= (async () => {
    const { model, label } = await chooseModel();
    const runtime = await loadRuntime({
      worker: true,
      systemPrompt: SYSTEM,
      model: languageModel(model),
      tools: aiTools(tools),
    });
    return { transport: new AgentrtChatTransport({ runtime }), label };
  })();
  return started;
}

// newChatId names a chat. crypto.randomUUID exists in secure contexts only
// (https, localhost): a page opened over plain http on a LAN address has
// none.
function newChatId() {
  const random = crypto.randomUUID?.() ?? `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  return `chat-${random}`;
}

function currentChatId() {
  let id = localStorage.getItem(CHAT_KEY);
  if (!id) {
    id = newChatId();
    localStorage.setItem(CHAT_KEY, id);
  }
  return id;
}

export function App() {
  const [chatId, setChatId] = useState(currentChatId);
  const [boot, setBoot] = useState(null);
  const [failure, setFailure] = useState(null);

  useEffect(() => {
    let live = true;
    setBoot(null);
    Promise.all([startRuntime(), loadChat(chatId)]).then(
      ([rt, messages]) => { if (live) setBoot({ ...rt, chatId, messages }); },
      (e) => { if (live) setFailure(e); },
    );
    return () => { live = false; };
  }, [chatId]);

  useEffect(() => {
    document.body.dataset.runtime = failure ? "failed" : boot ? "ready" : "loading";
  }, [boot, failure]);

  const newChat = async () => {
    await deleteChat(chatId);
    clearLedger();
    const id = newChatId();
    localStorage.setItem(CHAT_KEY, id);
    setChatId(id);
  };

  return (
    <main>
      <header>
        <h1>agentrt + AI SDK</h1>
        <p className="sub">
          <code>useChat</code> with <code>AgentrtChatTransport</code>: the agent loop runs in this page's worker.{" "}
          Model: <span data-testid="model-label">{boot ? boot.label : "…"}</span>
        </p>
        <button type="button" data-testid="new-chat" onClick={newChat}>New chat</button>
      </header>
      {failure && <p className="error" data-testid="error">Could not start the runtime: {String(failure.message || failure)}</p>}
      {!failure && !boot && <p className="loading">Loading the runtime…</p>}
      {boot && <Chat key={boot.chatId} chatId={boot.chatId} initial={boot.messages} transport={boot.transport} />}
    </main>
  );
}

// awaitingApproval is true when the last message has a tool call waiting
// for the user's decision.
function awaitingApproval(messages) {
  const last = messages[messages.length - 1];
  return last?.role === "assistant" && last.parts.some((p) => p.state === "approval-requested");
}

function Chat({ chatId, initial, transport }) {
  const { messages, sendMessage, status, error, addToolApprovalResponse, regenerate, stop, clearError } = useChat({
    id: chatId,
    messages: initial,
    transport,
    // After the last Approve / Deny, send the decisions: the transport
    // resumes the paused run.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [input, setInput] = useState("");
  const saves = useRef(0);

  // Store the conversation whenever a response has ended (and after each
  // Approve / Deny): what a reload reads back.
  useEffect(() => {
    if (status === "submitted" || status === "streaming") return;
    const n = messages.length;
    saveChat(chatId, messages).then(() => {
      saves.current++;
      document.body.dataset.saved = String(n);
      document.body.dataset.saves = String(saves.current);
    }, (e) => console.error("saving the chat failed", e));
  }, [chatId, messages, status]);

  useEffect(() => { document.body.dataset.status = status; }, [status]);
  useEffect(() => { document.body.dataset.chat = chatId; }, [chatId]);

  // A page reloaded after the user decided, but before the decisions were
  // sent, sends them now, once, for the messages read from storage. It is
  // sent from a timer the cleanup clears: React's development mode runs
  // effects twice, and useChat's cleanup stops the chat's request.
  useEffect(() => {
    if (!lastAssistantMessageIsCompleteWithApprovalResponses({ messages: initial })) return;
    const t = setTimeout(() => sendMessage());
    return () => clearTimeout(t);
  }, [initial, sendMessage]);

  const busy = status === "submitted" || status === "streaming";
  const waiting = awaitingApproval(messages);
  const last = messages[messages.length - 1];

  const submit = (e) => {
    e.preventDefault();
    const text = input.trim();
    if (!text || busy || waiting) return;
    setInput("");
    sendMessage({ text });
  };

  return (
    <>
      <section className="messages" aria-live="polite">
        {messages.length === 0 && (
          <p className="hint">Try “hello”, “weather in Lisbon” or “pay Alice 25” (the transfer asks you first).</p>
        )}
        {messages.map((m) => (
          <article key={m.id} className={`message ${m.role}`} data-testid="message" data-role={m.role} data-id={m.id}>
            {m.parts.map((part, i) => (
              <Part key={i} part={part} onDecide={(id, approved) => addToolApprovalResponse({ id, approved })} />
            ))}
          </article>
        ))}
        {error && (
          <p className="error" data-testid="error">
            {error.message}{" "}
            <button type="button" onClick={clearError}>Dismiss</button>
          </p>
        )}
      </section>
      <form onSubmit={submit} className="composer">
        <input
          data-testid="input"
          value={input}
          onChange={(e) => setInput(e.target.value)}
          placeholder={waiting ? "Approve or deny the tool call first" : "Message"}
          disabled={waiting}
          autoFocus
        />
        {busy ? (
          <button type="button" data-testid="stop" onClick={() => stop()}>Stop</button>
        ) : (
          <button type="submit" data-testid="send" disabled={waiting}>Send</button>
        )}
        <button
          type="button"
          data-testid="regenerate"
          disabled={busy || waiting || last?.role !== "assistant"}
          onClick={() => regenerate()}
        >
          Regenerate
        </button>
      </form>
      <Ledger />
    </>
  );
}

function toolName(part) {
  return part.type === "dynamic-tool" ? part.toolName : part.type.slice("tool-".length);
}

function Part({ part, onDecide }) {
  if (part.type === "text") return <p data-testid="text">{part.text}</p>;
  if (part.type === "step-start") return null;
  if (part.type !== "dynamic-tool" && !part.type.startsWith("tool-")) return null;
  const name = toolName(part);
  return (
    <div className={`tool ${part.state}`} data-testid="tool" data-tool={name} data-state={part.state} data-call={part.toolCallId}>
      <div className="tool-head">
        <code>{name}</code> <code className="args">{JSON.stringify(part.input ?? {})}</code> <span className="state">{part.state}</span>
      </div>
      {part.state === "approval-requested" && (
        <div className="decide">
          <button type="button" data-testid="approve" onClick={() => onDecide(part.approval.id, true)}>Approve</button>
          <button type="button" data-testid="deny" onClick={() => onDecide(part.approval.id, false)}>Deny</button>
        </div>
      )}
      {part.state === "output-available" && <pre data-testid="tool-output">{JSON.stringify(part.output)}</pre>}
      {part.state === "output-error" && <pre className="error">{part.errorText}</pre>}
      {part.state === "output-denied" && <p className="denied">Denied{part.approval?.reason ? `: ${part.approval.reason}` : ""}</p>}
    </div>
  );
}

// Ledger lists the transfers the transfer tool made (one per call id).
function Ledger() {
  const [entries, setEntries] = useState(ledger);
  useEffect(() => {
    const update = () => setEntries(ledger());
    window.addEventListener("ledger", update);
    window.addEventListener("storage", update);
    return () => {
      window.removeEventListener("ledger", update);
      window.removeEventListener("storage", update);
    };
  }, []);
  const list = Object.entries(entries);
  return (
    <aside className="ledger" data-testid="ledger" data-count={list.length}>
      <h2>Transfers made</h2>
      {list.length === 0 ? <p>None yet.</p> : (
        <ul>
          {list.map(([id, e]) => (
            <li key={id} data-testid="transfer" data-call={id} data-repeats={e.repeats ?? 0}>
              ${e.amount} to {e.to}{e.repeats ? ` (asked ${e.repeats + 1} times, paid once)` : ""}
            </li>
          ))}
        </ul>
      )}
    </aside>
  );
}
