// The agent module of the shared-mode e2e (shared.mjs): the shared worker
// imports it once and runs its model. Input "slow" streams twelve deltas
// 120 ms apart (a turn long enough to watch, and to reload a page in);
// any other input is answered at once with "echo: <input>".
export const systemPrompt = "shared e2e";

export async function model(req) {
  const last = req.messages[req.messages.length - 1];
  const input = last && typeof last.content === "string" ? last.content : "";
  if (input !== "slow") return { content: `echo: ${input}` };
  let text = "";
  let stop = null;
  req.signal?.addEventListener("abort", () => stop && stop(req.signal.reason), { once: true });
  for (let i = 0; i < 12; i++) {
    await new Promise((resolve, reject) => {
      const t = setTimeout(resolve, 120);
      stop = (why) => { clearTimeout(t); reject(why); };
    });
    const d = `d${i} `;
    text += d;
    req.delta(d);
  }
  return { content: text.trim() };
}
