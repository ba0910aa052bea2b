/**
 * Protocol revision 2026-07-28 over HTTP: no protocol session, every POST one request. A principal's
 * requests share one virtual connection (the same ModernEra and SDK server stdio uses, so run_python
 * has one code path): a request's `requestState` is known only to the connection of the principal it
 * was given to, so another principal's retry finds nothing.
 *
 * JSON-RPC ids are the client's per request, and two POSTs may carry the same id: each request gets an
 * id of ours on the way in (and its progress token one too) and its own back on the way out. What the
 * server says about a request while it runs (progress, logs) goes on that POST's SSE stream when the
 * client accepts one; otherwise only the answer is sent, as JSON. A client that hangs up has its
 * request cancelled.
 */
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { ModernEra } from "../server/modern-era.ts";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

interface InFlight {
  clientId: RequestId;
  clientToken?: string | number;
  answer: (m: JSONRPCMessage) => void;
  /** Set while an SSE response is open for it. */
  stream?: (m: JSONRPCMessage) => void;
}

/** The server side of the virtual connection: ModernEra's inner transport. */
class Wire implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly inFlight = new Map<string, InFlight>();
  /** Our progress token -> our request id. */
  readonly byToken = new Map<string, string>();

  async start(): Promise<void> {}
  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (!("method" in message)) {
      const r = typeof message.id === "string" ? this.inFlight.get(message.id) : undefined;
      r?.answer(message);
      return;
    }
    if ("id" in message && message.id !== undefined) return; // ModernEra answers the server's own requests itself
    const params = isObj(message.params) ? message.params : undefined;
    const token = params?.progressToken;
    const ours =
      typeof token === "string"
        ? this.byToken.get(token)
        : typeof options?.relatedRequestId === "string"
          ? options.relatedRequestId
          : undefined;
    const r = ours ? this.inFlight.get(ours) : undefined;
    if (!r?.stream) return;
    const back =
      token !== undefined && r.clientToken !== undefined ? { ...message, params: { ...params, progressToken: r.clientToken } } : message;
    r.stream(back as JSONRPCMessage);
  }
}

export interface ModernReply {
  /** The answer as JSON (no SSE stream was opened). */
  json?: JSONRPCMessage;
  /** An SSE stream of the request's notifications, then its answer. */
  stream?: ReadableStream<Uint8Array>;
}

export class ModernConnection {
  readonly #wire = new Wire();
  readonly #era: ModernEra;
  #seq = 0;
  /** The client's id of a request in flight -> ours (for a cancellation that names it). */
  readonly #byClientId = new Map<RequestId, string>();
  lastUsed = performance.now();

  /** `connect` attaches the SDK server to the connection (the same server stdio uses). */
  constructor(connect: (transport: Transport) => Promise<void>) {
    this.#era = new ModernEra(this.#wire);
    void connect(this.#era);
  }

  /** A notification from the client (a cancellation): passed on with our id for the request it names. */
  notify(message: JSONRPCMessage): void {
    this.lastUsed = performance.now();
    if (!("method" in message)) return;
    const params = isObj(message.params) ? message.params : {};
    if (message.method === "notifications/cancelled") {
      const ours = this.#byClientId.get(params.requestId as RequestId);
      if (!ours) return;
      this.#wire.onmessage?.({ ...message, params: { ...params, requestId: ours } } as JSONRPCMessage);
      return;
    }
    this.#wire.onmessage?.(message);
  }

  /** One request; `sse` when the client accepts a stream. Resolves when the answer (or the stream) is ready. */
  request(message: { id: RequestId; method: string; params?: unknown }, opts: { sse: boolean; signal: AbortSignal }): Promise<ModernReply> {
    this.lastUsed = performance.now();
    const ours = `h${++this.#seq}`;
    const params = isObj(message.params) ? message.params : {};
    const meta = isObj(params._meta) ? params._meta : undefined;
    const clientToken = meta?.progressToken as string | number | undefined;
    const rewritten: Obj = { jsonrpc: "2.0", ...message, id: ours };
    if (clientToken !== undefined) {
      rewritten.params = { ...params, _meta: { ...meta, progressToken: ours } };
      this.#wire.byToken.set(ours, ours);
    }
    const done = () => {
      this.#wire.inFlight.delete(ours);
      this.#wire.byToken.delete(ours);
      if (this.#byClientId.get(message.id) === ours) this.#byClientId.delete(message.id);
    };
    const restore = (m: JSONRPCMessage) => ({ ...m, id: message.id }) as JSONRPCMessage;
    const onAbort = () => {
      if (!this.#wire.inFlight.has(ours)) return;
      this.#wire.onmessage?.({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: ours, reason: "the client closed the HTTP request" },
      } as JSONRPCMessage);
      done();
    };
    this.#byClientId.set(message.id, ours);
    if (!opts.sse || clientToken === undefined) {
      // Nothing to stream: the answer alone, as JSON.
      return new Promise<ModernReply>((resolve) => {
        this.#wire.inFlight.set(ours, {
          clientId: message.id,
          clientToken,
          answer: (m) => {
            done();
            opts.signal.removeEventListener("abort", onAbort);
            resolve({ json: restore(m) });
          },
        });
        opts.signal.addEventListener("abort", onAbort, { once: true });
        this.#wire.onmessage?.(rewritten as JSONRPCMessage);
      });
    }
    const encoder = new TextEncoder();
    const event = (m: JSONRPCMessage) => encoder.encode(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const stream = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
      },
      cancel: onAbort,
    });
    this.#wire.inFlight.set(ours, {
      clientId: message.id,
      clientToken,
      stream: (m) => {
        try {
          controller.enqueue(event(m));
        } catch {
          // the client went away: the abort handler cancels the request
        }
      },
      answer: (m) => {
        done();
        opts.signal.removeEventListener("abort", onAbort);
        try {
          controller.enqueue(event(restore(m)));
          controller.close();
        } catch {
          // already gone
        }
      },
    });
    opts.signal.addEventListener("abort", onAbort, { once: true });
    this.#wire.onmessage?.(rewritten as JSONRPCMessage);
    return Promise.resolve({ stream });
  }

  close(): Promise<void> {
    return this.#era.close();
  }
}
