// The approval tests' shared world (approve.test.mjs, hostile.test.mjs):
// a runtime whose model asks for a "pay" call that may need approval and
// a "look" call that never does, the JavaScript twin of Go's
// mock.PayAndLook, with the checks both suites make of it.
import assert from "node:assert/strict";
import { rejectsWith, modeConfig } from "./helpers.mjs";

// world opens a runtime with load in mode whose model asks, for each
// user message, for a "pay" call (needsApproval as given) and a "look"
// call (never), and answers tool results with their contents; runs
// counts each tool's runs. hooks.pay and hooks.model, when a test sets
// them, run inside the pay tool and the model (on a request that ends
// with tool results) and make them answer with a Promise; unset, the
// model and the tools answer at once.
export async function world(load, mode, needsApproval = () => true, extra = {}) {
  const runs = { pay: 0, look: 0 };
  const hooks = {};
  const answer = (req) => {
    const seen = [];
    for (let i = req.messages.length - 1; i >= 0 && req.messages[i].role === "tool"; i--) seen.unshift(req.messages[i].content);
    return { content: "done: " + seen.join(" | ") };
  };
  const model = (req) => {
    const last = req.messages[req.messages.length - 1];
    if (last.role === "user") {
      return { content: "", toolCalls: [
        { id: `pay-${last.content}`, name: "pay", arguments: '{"amount":5}' },
        { id: `look-${last.content}`, name: "look", arguments: "{}" },
      ] };
    }
    return hooks.model ? Promise.resolve(hooks.model()).then(() => answer(req)) : answer(req);
  };
  const pay = () => {
    runs.pay++;
    return hooks.pay ? Promise.resolve(hooks.pay()).then(() => "paid") : "paid";
  };
  const rt = await load(modeConfig(mode, {
    model, ...extra,
    tools: [
      { name: "pay", needsApproval, call: pay },
      { name: "look", call: () => { runs.look++; return "looked"; } },
    ],
  }));
  return { rt, runs, hooks };
}

/** The messages as "role:content" lines. */
export const contents = (msgs) => msgs.map((m) => `${m.role}:${m.content}`);

/** The messages of session id, or null when there is none. */
export const messagesOf = async (rt, id) => (await rt.session(id))?.messages ?? null;

// refused checks that w.rt.run(request) is refused with code and changes
// neither the sessions named (by default the request's) nor the tool
// runs.
export async function refused(w, request, code, sessions = [request.sessionId]) {
  const before = await Promise.all(sessions.map(async (s) => JSON.stringify(await messagesOf(w.rt, s))));
  const runs = { ...w.runs };
  await rejectsWith(assert, w.rt.run(request), code);
  for (let i = 0; i < sessions.length; i++) {
    assert.equal(JSON.stringify(await messagesOf(w.rt, sessions[i])), before[i], `session ${sessions[i]} changed`);
  }
  assert.deepEqual(w.runs, runs);
}
