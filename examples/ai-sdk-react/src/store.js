// The conversation's durable copy: useChat's UIMessages in IndexedDB, one
// record per chat id. agentrt keeps its sessions in memory only; after a
// reload the transport seeds a fresh session from these messages (the
// history is the UIMessages as they are, no conversion).

const DB = "agentrt-ai-sdk-react";
const STORE = "chats";

let opened;

function open() {
  opened ??= new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE, { keyPath: "id" });
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  return opened;
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

/** loadChat resolves with the stored messages of chat id, or [] when there are none. */
export async function loadChat(id) {
  const db = await open();
  const req = db.transaction(STORE).objectStore(STORE).get(id);
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result?.messages ?? []);
    req.onerror = () => reject(req.error);
  });
}

/**
 * saveChat stores messages as chat id's conversation. UIMessages are plain
 * data; a JSON round trip drops anything that is not (a stray undefined
 * field, a class instance a provider put in metadata).
 */
export async function saveChat(id, messages) {
  const db = await open();
  const tx = db.transaction(STORE, "readwrite");
  tx.objectStore(STORE).put({ id, messages: JSON.parse(JSON.stringify(messages)), updatedAt: Date.now() });
  await done(tx);
}

/** deleteChat removes chat id's stored conversation. */
export async function deleteChat(id) {
  const db = await open();
  const tx = db.transaction(STORE, "readwrite");
  tx.objectStore(STORE).delete(id);
  await done(tx);
}
