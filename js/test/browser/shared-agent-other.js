// A second agent module: a page naming it for a shared worker that runs
// shared-agent.js is refused (shared.mjs).
export async function model() {
  return { content: "other" };
}
