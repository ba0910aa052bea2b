/**
 * The first messages of a connection, answered while the rest of the bridge loads. Loading the MCP SDK's
 * server and our session code takes ~50 ms of a ~85 ms start, and a client's first two requests,
 * `initialize` and `tools/list`, only need what the bridge says about itself (handshake.ts). So they are
 * answered here, from the same data the SDK server is given, and the SDK server attached afterwards
 * gets every message in order: it sees `initialize` (and learns the client's capabilities and version
 * from it) and `tools/list` as if first, and its own answers to those two are dropped.
 *
 * Only the opening is answered here: `initialize` first, then `tools/list` without a cursor. Anything
 * else (a ping, a call, a second initialize, a request whose params look wrong) ends early answers, so
 * nothing answered here overtakes a request that waits; the SDK server answers it, and judges malformed
 * requests as it always does. Notifications wait for the server.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { type Handshake, initializeResult } from "./handshake.ts";
import { instructionsFor } from "./instructions.ts";

export interface FrontTimings {
  /** How long to wait for `initialize` before loading the rest anyway. */
  initializeMs: number;
  /** After answering `initialize`, how long to wait for the client's next request. */
  nextMs: number;
}

type Request = { jsonrpc: "2.0"; id: RequestId; method: string; params?: Record<string, unknown> };

export class HandshakeFront {
  /** Told when the connection closes or fails before the server is attached. */
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** Told when the server answers a request answered here with an error (it judged the params otherwise). */
  ondisagree?: (answer: JSONRPCMessage) => void;
  /**
   * Told of each request that arrives before the server is attached, after the front has answered it if
   * it does: serve.ts starts what the first call will need while the rest of the bridge loads.
   */
  onrequest?: (request: { method: string; params?: unknown }) => void;
  readonly #inner: Transport;
  readonly #queue: JSONRPCMessage[] = [];
  /** Requests answered here: the attached server's answers to them are dropped. */
  readonly #answered = new Set<RequestId>();
  /** The client's `initialize`, whoever answers it: the instructions depend on who the client is. */
  #opening: { id: RequestId; client?: string; answered?: boolean } | undefined;
  #handshake: Handshake | undefined;
  #initialized = false;
  #listed = false;
  /** Something came that only the server may answer: nothing more is answered here. */
  #over = false;
  #attached: Transport | undefined;
  #wake: (() => void) | undefined;
  #count = 0;

  constructor(inner: Transport) {
    this.#inner = inner;
    inner.onmessage = (m) => this.#receive(m);
    inner.onclose = () => (this.#attached ? this.#attached.onclose : this.onclose)?.();
    inner.onerror = (e) => (this.#attached ? this.#attached.onerror : this.onerror)?.(e);
  }

  /** Answer the opening from this handshake (without it, every message waits for the server). */
  answerWith(h: Handshake): void {
    this.#handshake = h;
  }

  /**
   * Resolves once the opening is over: `tools/list` answered, a message only the server may answer
   * arrived, or the client kept quiet for the given time. The caller loads the rest then.
   */
  async opening(t: FrontTimings): Promise<void> {
    const started = Date.now();
    while (!this.#done()) {
      const left = this.#initialized ? t.nextMs : t.initializeMs - (Date.now() - started);
      if (left <= 0) return;
      const arrived = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      this.#wake = undefined;
      if (!arrived) return;
    }
  }

  /** Whether the client's `initialize` has arrived. */
  get initializeSeen(): boolean {
    return this.#opening !== undefined;
  }

  /** How many requests were answered here (for the log). */
  get answered(): number {
    return this.#count;
  }

  /**
   * The transport for the SDK server. Its start() hands over every message received so far, in order;
   * from then on messages go straight to it.
   */
  attach(): Transport {
    const front = this;
    const inner = this.#inner;
    const t: Transport = {
      async start() {
        front.#attached = t;
        front.#over = true;
        for (const m of front.#queue.splice(0)) t.onmessage?.(m);
      },
      send(message, options) {
        if (("result" in message || "error" in message) && front.#answered.delete(message.id as RequestId)) {
          if ("error" in message) front.ondisagree?.(message);
          return Promise.resolve();
        }
        return inner.send(front.#forClient(message), options);
      },
      close: () => inner.close(),
      setProtocolVersion: (v) => inner.setProtocolVersion?.(v),
      // What the front was told to do on close and error carries over (the server adds its own).
      onclose: this.onclose,
      onerror: this.onerror,
    };
    return t;
  }

  #done(): boolean {
    return this.#over || this.#listed || !this.#handshake;
  }

  #receive(m: JSONRPCMessage): void {
    if (!this.#opening && "method" in m && m.method === "initialize" && "id" in m) {
      const info = isObject(m.params) && isObject(m.params.clientInfo) ? m.params.clientInfo : {};
      this.#opening = { id: m.id, client: isText(info.name) ? info.name : undefined };
    }
    if (this.#attached) {
      this.#attached.onmessage?.(m);
      return;
    }
    this.#queue.push(m);
    if (!this.#over && this.#handshake && "method" in m) this.#early(m as Request | { method: string; id?: undefined });
    if ("method" in m && "id" in m) this.onrequest?.(m);
    this.#wake?.();
  }

  #early(m: Request | { method: string; id?: undefined }): void {
    const h = this.#handshake!;
    if (m.id === undefined) return; // a notification: it waits for the server, and ends nothing
    const params = (m as Request).params;
    if (m.method === "initialize" && !this.#initialized && plainInitialize(params)) {
      this.#initialized = true;
      this.#reply(m.id, initializeResult(h, params.protocolVersion, this.#opening?.client));
      return;
    }
    if (m.method === "tools/list" && this.#initialized && !this.#listed && (params === undefined || onlyMeta(params))) {
      this.#listed = true;
      this.#reply(m.id, { tools: [h.tool] });
      return;
    }
    this.#over = true;
  }

  /** The server's answer to `initialize`, with the instructions for this client (answered here, it has them). */
  #forClient(message: JSONRPCMessage): JSONRPCMessage {
    const opening = this.#opening;
    if (!opening || opening.answered || !("result" in message) || message.id !== opening.id) return message;
    opening.answered = true;
    const instructions = message.result.instructions;
    if (!isText(instructions)) return message;
    return { ...message, result: { ...message.result, instructions: instructionsFor(instructions, opening.client) } };
  }

  #reply(id: RequestId, result: Record<string, unknown>): void {
    this.#answered.add(id);
    this.#count++;
    this.#inner.send({ jsonrpc: "2.0", id, result }).catch((err) => this.onerror?.(err as Error));
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isText = (v: unknown): v is string => typeof v === "string";

/** An `initialize` whose params the SDK server accepts for sure; anything unusual is left to it. */
function plainInitialize(params: unknown): params is { protocolVersion: string } {
  if (!isObject(params) || !isText(params.protocolVersion) || !isObject(params.capabilities)) return false;
  const info = params.clientInfo;
  if (!isObject(info) || !isText(info.name) || !isText(info.version)) return false;
  return Object.keys(info).every((k) => k === "name" || k === "version" || (k === "title" && isText(info.title)));
}

function onlyMeta(params: unknown): boolean {
  return isObject(params) && Object.keys(params).every((k) => k === "_meta" && isObject(params._meta));
}
