// agentrt glue: the host's tools, as the driver calls them: the specs a
// model request lists, and a tool call's answer (its output as a string,
// or the failure the module is told of).

import { isObject, text } from "./errors.js";
import { adopt, toolSpec } from "./request.js";

const NO_TOOLS = Object.freeze([]);

/**
 * Tools holds the tools a runtime was configured with, by name, and their
 * specs in the order given.
 */
export class Tools {
  #byName = new Map();
  #specs = [];

  /** @param {Iterable<object> | undefined} list the configuration's tools */
  constructor(list) {
    for (const t of list ?? []) {
      this.#byName.set(t.name, t);
      this.#specs.push(toolSpec(t));
    }
  }

  /** The tool named name, or undefined. */
  get(name) {
    return this.#byName.get(name);
  }

  /**
   * Returns the specs of the tools allowed (every tool for undefined), as
   * a new array (the shared empty one when there are none).
   *
   * A copy of core's rule (Policy.toolAllowed: every tool whose name the
   * list holds, in the configuration's order), kept here because the
   * module's model action carries no list of tools, so that a turn copies
   * none; js/test/rulecopies.test.mjs holds it to the module's answer.
   *
   * @param {ReadonlyArray<string> | undefined} allowed
   */
  specs(allowed) {
    const specs = allowed === undefined ? this.#specs : this.#specs.filter((t) => allowed.includes(t.name));
    return specs.length === 0 ? NO_TOOLS : specs.slice();
  }

  /**
   * Calls the tool a tool action names and returns its answer: `{ out }`,
   * the output as a string, or `{ failure }`, the text the module records
   * as the tool's error; or null when the turn was interrupted while the
   * tool worked. settle waits for a thenable's answer as the driver does
   * (TurnDriver.settle). A throw, a rejection, a thenable that throws and
   * output that is no JSON are failures: nothing here throws.
   *
   * @param {object} turn the driver's turn
   * @param {{id: string, name: string, arguments: string}} call
   * @param {(turn: object, p: Promise<object>) => Promise<object | null>} settle
   */
  async call(turn, call, settle) {
    const tool = this.#byName.get(call.name);
    let args;
    if (call.arguments === "") args = {};
    else {
      try {
        args = JSON.parse(call.arguments);
      } catch (e) {
        return { failure: "arguments are not valid JSON: " + text(e) };
      }
    }
    let v;
    let failure;
    try {
      v = tool.call(args, { runId: turn.runId, sessionId: turn.sessionId, toolCallId: call.id });
    } catch (e) {
      failure = "threw: " + text(e);
    }
    if (failure === undefined && isObject(v)) {
      let s = adopt(v);
      if (s instanceof Promise) {
        s = await settle(turn, s);
        if (s === null) return null;
      }
      if (s.ok) v = s.value;
      else failure = "rejected: " + text(s.reason);
    }
    if (turn.interrupted) return null;
    if (failure !== undefined) return { failure };
    if (typeof v === "string") return { out: v };
    if (v === undefined) return { out: "" };
    let out;
    try {
      out = JSON.stringify(v);
    } catch {
      out = undefined;
    }
    if (typeof out !== "string") return { failure: "the result cannot be converted to JSON" };
    return { out };
  }
}
