// Durable history of the agentrt web demo: IndexedDB.
//
// The page is the host: it keeps every conversation's messages here, and
// the runtime only keeps live sessions in memory.

//
// One object store, "conversations", keyed by id:
//   { id, title, createdAt, updatedAt, messages: [{ role, content, tool_call_id?, tool_calls? }] }
// A turn's messages are appended in one read-write transaction, so two tabs
// writing the same conversation never lose each other's turns.

const DB_NAME = "agentrt-demo";
const DB_VERSION = 1;
const STORE = "conversations";

let dbPromise = null;

function openDB() {
  if (!dbPromise) {
    dbPromise = new Promise((resolve, reject) => {
      const req = indexedDB.open(DB_NAME, DB_VERSION);
      req.onupgradeneeded = () => {
        const db = req.result;
        if (!db.objectStoreNames.contains(STORE)) db.createObjectStore(STORE, { keyPath: "id" });
      };
      req.onsuccess = () => {
        const db = req.result;
        // Another tab upgrading the schema: let it, and reopen on next use.
        db.onversionchange = () => { db.close(); dbPromise = null; };
        resolve(db);
      };
      req.onerror = () => reject(req.error);
      req.onblocked = () => reject(new Error("IndexedDB is blocked by another tab; close it and reload"));
    });
    dbPromise.catch(() => { dbPromise = null; });
  }
  return dbPromise;
}

// tx runs fn(store) in one transaction and resolves with fn's result once
// the transaction has committed.
async function tx(mode, fn) {
  const db = await openDB();
  return new Promise((resolve, reject) => {
    const t = db.transaction(STORE, mode);
    let out;
    t.oncomplete = () => resolve(out);
    t.onerror = () => reject(t.error);
    t.onabort = () => reject(t.error || new Error("IndexedDB transaction aborted"));
    Promise.resolve(fn(t.objectStore(STORE))).then((v) => { out = v; }, (e) => { t.abort(); reject(e); });
  });
}

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

export const storage = {
  async list() {
    const all = await tx("readonly", (s) => request(s.getAll()));
    return all.sort((a, b) => b.updatedAt - a.updatedAt);
  },
  get(id) {
    return tx("readonly", (s) => request(s.get(id)));
  },
  async create() {
    const now = Date.now();
    const conv = { id: newId(), title: "New conversation", createdAt: now, updatedAt: now, messages: [] };
    await tx("readwrite", (s) => request(s.add(conv)));
    return conv;
  },
  // append adds messages to the end of a conversation, atomically.
  append(id, messages) {
    return tx("readwrite", async (s) => {
      const conv = await request(s.get(id));
      if (!conv) throw codedError("not_found", "the conversation was deleted");
      for (const m of messages) conv.messages.push(toStored(m));
      if (conv.title === "New conversation") {
        const first = conv.messages.find((m) => m.role === "user");
        if (first) conv.title = first.content.slice(0, 60) || conv.title;
      }
      conv.updatedAt = Date.now();
      await request(s.put(conv));
      return conv;
    });
  },
  // heal stores a repaired run's healed history (result.seed.repaired,
  // docs/adr/0016-the-host-copy-heals.md) in place of the first count
  // messages, the history that run was given, then appends its messages,
  // atomically. The healed messages are kept in their own shape.
  heal(id, count, repaired, messages) {
    return tx("readwrite", async (s) => {
      const conv = await request(s.get(id));
      if (!conv) throw codedError("not_found", "the conversation was deleted");
      conv.messages = [...repaired, ...conv.messages.slice(count)];
      for (const m of messages) conv.messages.push(toStored(m));
      conv.updatedAt = Date.now();
      await request(s.put(conv));
      return conv;
    });
  },
  remove(id) {
    return tx("readwrite", (s) => request(s.delete(id)));
  },
};

// toStored keeps the fields of a session message that history needs.
export function toStored(m) {
  const out = { role: String(m.role), content: m.content == null ? "" : String(m.content) };
  const callId = m.tool_call_id ?? m.toolCallId;
  if (callId) out.tool_call_id = String(callId);
  const calls = m.tool_calls ?? m.toolCalls;
  if (Array.isArray(calls) && calls.length) {
    out.tool_calls = calls.map((c) => ({
      id: String(c.id),
      name: String(c.name ?? c.function?.name ?? ""),
      arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments ?? c.function?.arguments ?? {}),
    }));
  }
  return out;
}

export function newId() {
  const b = new Uint8Array(9);
  crypto.getRandomValues(b); // works outside secure contexts too (webviews on a LAN address)
  return "c-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

export function codedError(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}
