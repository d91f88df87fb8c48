// The chat's tools, written as AI SDK tool() objects; aiTools() from
// agentrt/ai turns them into agentrt's tools. They run in the page (the
// runtime's worker asks the page for each call).
import { jsonSchema, tool } from "ai";

const LEDGER = "agentrt-ai-sdk-react:transfers";

/**
 * ledger returns the transfers made so far, by tool call id. The ledger is
 * what makes transfer idempotent: a call id already in it is not paid
 * again (an app killed inside the tool, then approved again, resends the
 * same call: docs/glue.md, "Tool approvals").
 */
export function ledger() {
  try {
    return JSON.parse(localStorage.getItem(LEDGER) || "{}");
  } catch {
    return {};
  }
}

function record(toolCallId, entry) {
  const all = ledger();
  const seen = all[toolCallId];
  all[toolCallId] = seen ? { ...seen, repeats: (seen.repeats ?? 0) + 1 } : entry;
  localStorage.setItem(LEDGER, JSON.stringify(all));
  window.dispatchEvent(new Event("ledger"));
  return all[toolCallId];
}

/** clearLedger forgets every transfer (the page's New chat button). */
export function clearLedger() {
  localStorage.removeItem(LEDGER);
  window.dispatchEvent(new Event("ledger"));
}

const CONDITIONS = ["sunny", "cloudy", "rainy", "windy", "snowy"];

export const tools = {
  weather: tool({
    description: "The current weather in a city.",
    inputSchema: jsonSchema({
      type: "object",
      properties: { city: { type: "string", description: "The city's name" } },
      required: ["city"],
      additionalProperties: false,
    }),
    // Made up, and the same for a city every time.
    execute: async ({ city }) => {
      const n = [...city.toLowerCase()].reduce((a, c) => a + c.charCodeAt(0), 0);
      return { city, condition: CONDITIONS[n % CONDITIONS.length], celsius: 5 + (n % 20) };
    },
  }),
  transfer: tool({
    description: "Send money to someone. Asks the user first.",
    inputSchema: jsonSchema({
      type: "object",
      properties: {
        to: { type: "string", description: "Who receives the money" },
        amount: { type: "number", description: "How much, in dollars" },
      },
      required: ["to", "amount"],
      additionalProperties: false,
    }),
    needsApproval: true,
    execute: async ({ to, amount }, { toolCallId }) => {
      const entry = record(toolCallId, { to, amount, at: new Date().toISOString() });
      return { sent: true, to: entry.to, amount: entry.amount, receipt: `R-${toolCallId}` };
    },
  }),
};
