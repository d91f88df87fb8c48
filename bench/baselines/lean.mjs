// The lean JS store: a Map of arrays that checks roles and content types
// and copies the messages. No tool linkage, limits, queue, events or
// rollback: the floor of what plain JavaScript can do for the same
// turns, against which agentrt and the peer are compared.

const ROLES = new Set(["user", "assistant", "tool", "system"]);

/**
 * Creates a lean store with the module's run signatures (only the ones
 * the benchmarks call). model is (request) => reply | Promise<reply>,
 * where request = { messages } and reply = { content }.
 */
export function createLean({ model = (req) => ({ content: "echo (" + req.messages.length + ")" }) } = {}) {
  const sessions = new Map();

  function seed(history) {
    const out = [];
    for (let i = 0; i < history.length; i++) {
      const h = history[i];
      if (!ROLES.has(h.role)) throw new TypeError("history[" + i + "]: unknown role");
      const calls = h.tool_calls;
      if (typeof h.content !== "string" && !(h.content == null && calls)) {
        throw new TypeError("history[" + i + "]: content must be a string");
      }
      if (h.role === "system") continue;
      const m = { role: h.role, content: h.content ?? "" };
      if (h.tool_call_id !== undefined) m.tool_call_id = h.tool_call_id;
      if (calls !== undefined) m.tool_calls = calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
      if (h.id !== undefined) m.id = h.id;
      out.push(m);
    }
    return out;
  }

  async function turn(sessionId, input, history) {
    let msgs = sessions.get(sessionId);
    if (!msgs) {
      msgs = history ? seed(history) : [];
      sessions.set(sessionId, msgs);
    }
    const user = { role: "user", content: input };
    msgs.push(user);
    const reply = await model({ messages: msgs.slice() });
    const msg = { role: "assistant", content: reply.content };
    msgs.push(msg);
    return { reply: msg, appended: [user, msg], messageCount: msgs.length };
  }

  return {
    startRun: (sessionId, input) => turn(sessionId, input),
    startRunWithHistory: (sessionId, input, history) => turn(sessionId, input, history),
    getSession: (id) => (sessions.has(id) ? { id, messageCount: sessions.get(id).length, messages: sessions.get(id) } : null),
    deleteSession: (id) => sessions.delete(id),
  };
}
