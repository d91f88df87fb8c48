// A browser stand-in for the functions of `node:fs/promises` the glue's
// suites use on URLs of the test server (web-demo/test/server.mjs):
// readFile, stat and readdir, over fetch. run.mjs excludes a suite that
// imports any other.

function missing(url, res) {
  return Object.assign(new Error(`ENOENT: ${url}: HTTP ${res.status}`), { code: "ENOENT" });
}

/** The bytes at url as a Uint8Array, or its text when an encoding is given. */
export async function readFile(url, options) {
  const res = await fetch(url);
  if (!res.ok) throw missing(url, res);
  const encoding = typeof options === "string" ? options : options && options.encoding;
  if (encoding) return res.text();
  return new Uint8Array(await res.arrayBuffer());
}

/** Resolves when url exists; rejects with code ENOENT when it does not. */
export async function stat(url) {
  const res = await fetch(url, { method: "HEAD" });
  if (!res.ok) throw missing(url, res);
  return { size: Number(res.headers.get("content-length") || 0), isFile: () => true };
}

/** The names of the entries of the directory at url. */
export async function readdir(url) {
  const u = new URL(url);
  u.searchParams.set("readdir", "");
  const res = await fetch(u);
  if (!res.ok) throw missing(url, res);
  return res.json();
}

export default { readFile, stat, readdir };
