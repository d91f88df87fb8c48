// A request/response channel over a MessagePort, standing in for a
// webview's native bridge (WKScriptMessageHandlerWithReply, Android's
// WebMessagePort or addJavascriptInterface, Capacitor's plugin calls): every
// call is asynchronous and every value crosses by structured clone, or as a
// transferred ArrayBuffer.
//
//   const bridge = new Bridge(port, { ping: async (params) => "pong" });
//   await bridge.call("ping", {});

/** Bridge answers the calls of the other side with handlers, and makes its own. */
export class Bridge {
  #port;
  #handlers;
  #next = 0;
  #pending = new Map();

  /**
   * @param {MessagePort} port one end of a MessageChannel
   * @param {Record<string, (params: any) => any>} handlers what this side answers
   */
  constructor(port, handlers) {
    this.#port = port;
    this.#handlers = handlers;
    port.onmessage = (e) => this.#receive(e.data);
    port.start();
  }

  /**
   * Calls method on the other side. Resolves with its result, or rejects
   * with an Error carrying its code. transfer lists ArrayBuffers to move.
   */
  call(method, params, transfer = []) {
    const id = ++this.#next;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#port.postMessage({ id, method, params }, transfer);
    });
  }

  /** Stops answering; pending calls never settle (as after a killed process). */
  close() {
    this.#port.close();
  }

  async #receive(msg) {
    if (msg && typeof msg.method === "string") {
      const h = this.#handlers[msg.method];
      try {
        if (!h) throw Object.assign(new Error(`no method ${msg.method}`), { code: "no_method" });
        const out = await h(msg.params);
        // A handler may return { result, transfer } to move buffers.
        if (out && out.transfer) this.#port.postMessage({ id: msg.id, result: out.result }, out.transfer);
        else this.#port.postMessage({ id: msg.id, result: out });
      } catch (e) {
        this.#port.postMessage({ id: msg.id, error: { code: e.code || "internal", message: String(e.message || e) } });
      }
      return;
    }
    const p = msg && this.#pending.get(msg.id);
    if (!p) return;
    this.#pending.delete(msg.id);
    if (msg.error) p.reject(Object.assign(new Error(msg.error.message), { code: msg.error.code }));
    else p.resolve(msg.result);
  }
}
