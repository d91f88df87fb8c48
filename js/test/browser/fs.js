// A browser stand-in for the two functions of `node:fs/promises` the glue's
// suites use on the module's URL: readFile and stat, over fetch.

/** The bytes at url (an http(s) URL here), as a Uint8Array. */
export async function readFile(url) {
  const res = await fetch(url);
  if (!res.ok) throw Object.assign(new Error(`ENOENT: ${url}: HTTP ${res.status}`), { code: "ENOENT" });
  return new Uint8Array(await res.arrayBuffer());
}

/** Resolves when url exists; rejects with code ENOENT when it does not. */
export async function stat(url) {
  const res = await fetch(url, { method: "HEAD" });
  if (!res.ok) throw Object.assign(new Error(`ENOENT: ${url}: HTTP ${res.status}`), { code: "ENOENT" });
  return { size: Number(res.headers.get("content-length") || 0), isFile: () => true };
}

export default { readFile, stat };
