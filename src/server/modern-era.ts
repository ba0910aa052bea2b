/**
 * Protocol revision 2026-07-28 ("modern": no handshake, every request says its version, client and
 * capabilities in `_meta`; `server/discover`; questions to the user as multi round-trip results) in
 * front of the SDK server, which speaks the handshake-based revisions. A request carrying
 * `io.modelcontextprotocol/protocolVersion` is served the modern way; anything else passes through
 * untouched, so a legacy client sees the same bridge as before (a dual-era server, as the revision's
 * versioning page describes).
 *
 * How a modern request reaches the SDK server: the first one is preceded by an `initialize` made from
 * its `_meta` (its answer kept for `server/discover` and each result's server identity, never sent).
 * Each modern request gets an id of ours on the way in (the client may reuse its id once answered) and
 * its own back on the way out, with `resultType: "complete"` and, for lists and reads, a cache hint.
 *
 * Multi round-trip requests: when the SDK server asks the client something during a modern tools/call
 * (an approval, an upstream server's question, sampling), the question is held and the call is
 * answered with `resultType: "input_required"`: the questions, and a `requestState` (a random handle
 * to the held call, never a copy of anything). The client asks the user and sends the call again with
 * `inputResponses` and that `requestState`; the answers go to the held questions, the call goes on,
 * and its result (or the next questions) answer the retry. Questions asked within a few milliseconds
 * of each other go out together. A handle is used once; an unknown or spent one is an error, and a
 * held call nobody comes back for ends by itself (the bridge's question times out, as in the legacy
 * protocol) and is forgotten after ten minutes.
 */
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";

export const MODERN_VERSIONS = ["2026-07-28"] as const;
const META_VERSION = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT = "io.modelcontextprotocol/clientInfo";
const META_CAPS = "io.modelcontextprotocol/clientCapabilities";
const META_LOG = "io.modelcontextprotocol/logLevel";
const META_SERVER = "io.modelcontextprotocol/serverInfo";
const UNSUPPORTED_VERSION = -32022;
const INVALID_PARAMS = -32602;
/** The handshake revision the SDK server is opened with for a modern client. */
const INNER_VERSION = "2025-11-25";
/** What server/discover and -32022 name: the modern revisions, then the newest handshake one. */
const SUPPORTED = [...MODERN_VERSIONS, INNER_VERSION];
/** Questions asked this close together are sent in one input_required result. */
const GATHER_MS = 15;
/** A held call nobody came back for is forgotten after this. */
const FORGET_MS = 10 * 60_000;
/** Results a client may cache, and for how long (the tool list changes only with a new bridge). */
const CACHEABLE: Record<string, number> = {
  "tools/list": 3_600_000,
  "resources/list": 0,
  "resources/templates/list": 0,
  "resources/read": 0,
};
/** Requests that may be answered with input_required (the revision's list). */
const MULTI_ROUND = new Set(["tools/call", "resources/read", "prompts/get"]);

type Obj = Record<string, unknown>;
type Req = { jsonrpc: "2.0"; id: RequestId; method: string; params?: Obj };

/** A modern request in flight inside the SDK server, under our id. */
interface Call {
  method: string;
  /** The client's id for it now: the original request's, then each retry's; undefined while waiting for a retry. */
  clientId: RequestId | undefined;
  progressToken?: RequestId;
  logs: boolean;
  /** Questions the SDK server asked for this call, held by key, with their own request ids. */
  held: Map<string, { id: RequestId; method: string; params?: unknown; sent: boolean }>;
  /** The handle the client must send back; set while waiting for a retry. */
  state?: string;
  /** The call's answer, when it came while no client request was waiting for it. */
  final?: JSONRPCMessage;
  gather?: ReturnType<typeof setTimeout>;
  forget?: ReturnType<typeof setTimeout>;
  /** Nobody came back for it: its answer, when it comes, is dropped. */
  abandoned?: boolean;
}

/** 192 random bits, URL-safe (Web Crypto: node:crypto costs start-up time to import). */
function newHandle(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** A question as 2026-07-28 writes it: a URL-mode elicitation has no elicitationId (the retry says it is done). */
function modernParams(method: string, params: unknown): unknown {
  if (method !== "elicitation/create" || !isObj(params) || params.mode !== "url") return params;
  const { elicitationId: _id, ...rest } = params;
  return rest;
}

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export class ModernEra implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Told once, when the first modern request arrives (for the log). */
  onmodern?: (client: { name: string; version: string }, version: string) => void;
  readonly #inner: Transport;
  /** The SDK server's answer to the initialize made for modern clients (a promise until it comes). */
  #init: Obj | undefined;
  #initWaiters: Array<(r: Obj) => void> | undefined;
  #seq = 0;
  /** Our id -> the modern call. */
  readonly #calls = new Map<string, Call>();
  /** requestState -> our id. */
  readonly #states = new Map<string, string>();
  /** The client's id of a request in flight -> our id (for its cancellation). */
  readonly #byClientId = new Map<RequestId, string>();
  /** A held question's request id -> the call that holds it. */
  readonly #questions = new Map<RequestId, string>();
  /** Our ids of requests the client cancelled: an answer that comes anyway is dropped (the last 1,000). */
  readonly #dropped = new Set<string>();
  /** A legacy client opened with initialize: notifications not tied to a request go to it. */
  #legacy = false;

  constructor(inner: Transport) {
    this.#inner = inner;
    inner.onmessage = (m) => this.#receive(m);
    inner.onclose = () => this.onclose?.();
    inner.onerror = (e) => this.onerror?.(e);
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  close(): Promise<void> {
    for (const c of this.#calls.values()) {
      clearTimeout(c.gather);
      clearTimeout(c.forget);
    }
    return this.#inner.close();
  }

  setProtocolVersion(v: string): void {
    this.#inner.setProtocolVersion?.(v);
  }

  // --- client -> server

  #receive(m: JSONRPCMessage): void {
    if (!("method" in m)) {
      // A response to one of the server's requests. A held question is answered only by the retry that
      // carries its call's requestState; and a modern client was never sent a request to answer.
      if (this.#questions.has(m.id as RequestId) || (this.#modern() && !this.#legacy)) return;
      return this.onmessage?.(m);
    }
    const params = isObj(m.params) ? m.params : undefined;
    const meta = isObj(params?._meta) ? params._meta : undefined;
    const version = meta?.[META_VERSION];
    if (!("id" in m) || m.id === undefined) {
      if (m.method === "notifications/cancelled" && params && this.#byClientId.has(params.requestId as RequestId)) {
        const ours = this.#byClientId.get(params.requestId as RequestId)!;
        // A cancelled request is not answered: the call is forgotten here, and an answer that comes anyway is dropped.
        const call = this.#calls.get(ours);
        if (call) {
          this.#drop(ours, call);
          this.#dropped.add(ours);
          if (this.#dropped.size > 1000) this.#dropped.delete(this.#dropped.values().next().value!);
        }
        return this.onmessage?.({ ...m, params: { ...params, requestId: ours } } as JSONRPCMessage);
      }
      return this.onmessage?.(m);
    }
    const req = m as Req;
    if (req.method === "server/discover") return void this.#discover(req, meta);
    if (typeof version !== "string") {
      if (req.method === "initialize") this.#legacy = true;
      return this.onmessage?.(m);
    }
    if (!(MODERN_VERSIONS as readonly string[]).includes(version)) return this.#unsupported(req.id, version);
    this.#ensureInit(meta!);
    if (typeof params?.requestState === "string" || params?.inputResponses !== undefined) return this.#retry(req, params!);
    this.#forward(req, meta!);
  }

  #forward(req: Req, meta: Obj): void {
    const ours = `mcx-${++this.#seq}`;
    const progressToken = meta.progressToken as RequestId | undefined;
    this.#calls.set(ours, {
      method: req.method,
      clientId: req.id,
      progressToken,
      logs: typeof meta[META_LOG] === "string",
      held: new Map(),
    });
    this.#byClientId.set(req.id, ours);
    this.onmessage?.({ ...req, id: ours } as JSONRPCMessage);
  }

  /** A call sent again with the answers to its questions. */
  #retry(req: Req, params: Obj): void {
    const ours = typeof params.requestState === "string" ? this.#states.get(params.requestState) : undefined;
    const call = ours ? this.#calls.get(ours) : undefined;
    if (!ours || !call || call.method !== req.method) {
      return this.#error(
        req.id,
        INVALID_PARAMS,
        "requestState is unknown, already used or expired (a call waiting for answers is kept 10 minutes): send the request again without requestState and inputResponses",
      );
    }
    this.#states.delete(params.requestState as string);
    call.state = undefined;
    clearTimeout(call.forget);
    call.clientId = req.id;
    const meta = isObj(params._meta) ? params._meta : {};
    call.progressToken = meta.progressToken as RequestId | undefined;
    call.logs = typeof meta[META_LOG] === "string";
    this.#byClientId.set(req.id, ours);
    const answers = isObj(params.inputResponses) ? params.inputResponses : {};
    for (const [key, q] of call.held) {
      if (!q.sent || !(key in answers)) continue;
      call.held.delete(key);
      this.#questions.delete(q.id);
      this.onmessage?.({ jsonrpc: "2.0", id: q.id, result: answers[key] } as JSONRPCMessage);
    }
    if (call.final) return void this.#finish(ours, call, call.final);
    // Questions not answered, or asked since: ask again.
    if (call.held.size > 0) this.#askSoon(ours, call);
  }

  #ensureInit(meta: Obj): void {
    if (this.#init || this.#initWaiters) return;
    this.#initWaiters = [];
    const info = isObj(meta[META_CLIENT]) ? meta[META_CLIENT] : {};
    const clientInfo = {
      name: typeof info.name === "string" ? info.name : "mcp-client",
      version: typeof info.version === "string" ? info.version : "0",
    };
    const capabilities = isObj(meta[META_CAPS]) ? meta[META_CAPS] : {};
    this.onmodern?.(clientInfo, typeof meta[META_VERSION] === "string" ? meta[META_VERSION] : MODERN_VERSIONS[0]);
    this.onmessage?.({
      jsonrpc: "2.0",
      id: "mcx-initialize",
      method: "initialize",
      params: { protocolVersion: INNER_VERSION, capabilities, clientInfo },
    } as JSONRPCMessage);
    this.onmessage?.({ jsonrpc: "2.0", method: "notifications/initialized" } as JSONRPCMessage);
  }

  async #discover(req: Req, meta: Obj | undefined): Promise<void> {
    this.#ensureInit(meta ?? {});
    const init = this.#init ?? (await new Promise<Obj>((resolve) => this.#initWaiters!.push(resolve)));
    // The server's identity goes in _meta (#complete), as in every modern result.
    const result: Obj = { capabilities: isObj(init.capabilities) ? init.capabilities : {} };
    if (typeof init.instructions === "string") result.instructions = init.instructions;
    void this.#send({
      jsonrpc: "2.0",
      id: req.id,
      result: { ...this.#complete(result), supportedVersions: SUPPORTED, ttlMs: 60_000, cacheScope: "private" },
    } as JSONRPCMessage);
  }

  // --- server -> client

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#initWaiters && "id" in message && message.id === "mcx-initialize" && !("method" in message)) {
      const result = "result" in message && isObj(message.result) ? message.result : {};
      this.#init = result;
      for (const w of this.#initWaiters ?? []) w(result);
      this.#initWaiters = undefined;
      return Promise.resolve();
    }
    if (!("method" in message)) {
      if (typeof message.id === "string" && this.#dropped.delete(message.id)) return Promise.resolve();
      const ours = typeof message.id === "string" ? this.#calls.get(message.id) : undefined;
      if (!ours) return this.#send(message, options);
      const id = message.id as string;
      if (ours.clientId === undefined) {
        if (ours.abandoned) this.#calls.delete(id);
        else ours.final = message; // kept for the retry
        return Promise.resolve();
      }
      return this.#finish(id, ours, message);
    }
    const related = options?.relatedRequestId;
    const call = typeof related === "string" ? this.#calls.get(related) : undefined;
    if ("id" in message && message.id !== undefined) {
      // A question to the client: held, and asked through the call's result.
      if (!call || !MULTI_ROUND.has(call.method)) {
        if (this.#modern() && !this.#legacy) {
          // Nothing a modern client can be asked through: answer the server's question with an error.
          queueMicrotask(() =>
            this.onmessage?.({
              jsonrpc: "2.0",
              id: message.id,
              error: {
                code: -32601,
                message: "the client speaks protocol revision 2026-07-28, which has no requests from server to client outside a call",
              },
            } as JSONRPCMessage),
          );
          return Promise.resolve();
        }
        return this.#send(message, options);
      }
      const key = `${message.method.replace(/\W+/g, "_")}_${message.id}`;
      call.held.set(key, { id: message.id, method: message.method, params: message.params, sent: false });
      this.#questions.set(message.id, related as string);
      if (call.clientId !== undefined) this.#askSoon(related as string, call);
      return Promise.resolve();
    }
    // Notifications.
    if (message.method === "notifications/cancelled") {
      const held = (message.params as Obj | undefined)?.requestId as RequestId | undefined;
      if (held !== undefined && this.#questions.has(held)) {
        // The server gave up on a held question (its time ran out, the run ended).
        const c = this.#calls.get(this.#questions.get(held)!);
        for (const [k, q] of c?.held ?? []) if (q.id === held) c!.held.delete(k);
        this.#questions.delete(held);
        return Promise.resolve();
      }
      // A modern client was never sent a request to cancel (the SDK also cancels questions already answered).
      if (call || (this.#modern() && !this.#legacy)) return Promise.resolve();
    }
    if (call) {
      if (call.clientId === undefined) return Promise.resolve(); // no request waits: nobody to tell
      if (message.method === "notifications/message" && !call.logs) return Promise.resolve();
      if (message.method === "notifications/elicitation/complete") return Promise.resolve();
      // Tied to the client's request it is about (an HTTP wire sends it on that request's stream).
      const about = { ...options, relatedRequestId: call.clientId };
      if (message.method === "notifications/progress") {
        if (call.progressToken === undefined) return Promise.resolve();
        return this.#send(
          { ...message, params: { ...(message.params as Obj), progressToken: call.progressToken } } as JSONRPCMessage,
          about,
        );
      }
      return this.#send(message, about);
    }
    // Not tied to a request: only a legacy client listens for those.
    return !this.#modern() || this.#legacy ? this.#send(message, options) : Promise.resolve();
  }

  /** A modern client has spoken on this connection. */
  #modern(): boolean {
    return this.#init !== undefined || this.#initWaiters !== undefined;
  }

  /** Answer the client's current request for a call with the call's own answer. */
  #finish(ours: string, call: Call, message: JSONRPCMessage): Promise<void> {
    const clientId = call.clientId!;
    this.#drop(ours, call);
    if ("result" in message) {
      const result = this.#complete(isObj(message.result) ? message.result : {});
      const ttl = CACHEABLE[call.method];
      if (ttl !== undefined) Object.assign(result, { ttlMs: ttl, cacheScope: "private" });
      return this.#send({ jsonrpc: "2.0", id: clientId, result } as JSONRPCMessage);
    }
    // 2026-07-28 says "not found" with -32602, where earlier revisions used -32002.
    const error = "error" in message ? (message.error as { code: number }) : undefined;
    const renumbered = error?.code === -32002 ? { error: { ...error, code: INVALID_PARAMS } } : {};
    return this.#send({ ...message, ...renumbered, id: clientId } as JSONRPCMessage);
  }

  #askSoon(ours: string, call: Call): void {
    if (call.gather) return;
    call.gather = setTimeout(() => {
      call.gather = undefined;
      if (call.clientId === undefined || !this.#calls.has(ours) || call.held.size === 0) return;
      const inputRequests: Obj = {};
      for (const [key, q] of call.held) {
        q.sent = true;
        inputRequests[key] = { method: q.method, ...(q.params === undefined ? {} : { params: modernParams(q.method, q.params) }) };
      }
      const state = newHandle();
      call.state = state;
      this.#states.set(state, ours);
      const clientId = call.clientId;
      this.#byClientId.delete(clientId);
      call.clientId = undefined;
      call.forget = setTimeout(() => this.#forget(ours), FORGET_MS);
      (call.forget as { unref?: () => void }).unref?.();
      void this.#send({
        jsonrpc: "2.0",
        id: clientId,
        result: { resultType: "input_required", inputRequests, requestState: state, _meta: this.#serverMeta() },
      } as JSONRPCMessage);
    }, GATHER_MS);
  }

  /** The call is over for the client: nothing about it is kept (its timers, handle, questions, ids). */
  #drop(ours: string, call: Call): void {
    this.#calls.delete(ours);
    clearTimeout(call.gather);
    clearTimeout(call.forget);
    if (call.state) this.#states.delete(call.state);
    for (const q of call.held.values()) this.#questions.delete(q.id);
    if (call.clientId !== undefined) this.#byClientId.delete(call.clientId);
  }

  /** Nobody came back: the held questions are refused, so the call ends and its sandbox work is not left waiting. */
  #forget(ours: string): void {
    const call = this.#calls.get(ours);
    if (!call) return;
    if (call.state) this.#states.delete(call.state);
    call.state = undefined;
    if (call.final) this.#calls.delete(ours);
    else call.abandoned = true;
    for (const q of call.held.values()) {
      this.#questions.delete(q.id);
      this.onmessage?.({
        jsonrpc: "2.0",
        id: q.id,
        error: { code: -32001, message: "the client did not come back with an answer" },
      } as JSONRPCMessage);
    }
    call.held.clear();
  }

  #complete(result: Obj): Obj {
    const meta = isObj(result._meta) ? result._meta : {};
    return { ...result, resultType: "complete", _meta: { ...meta, ...this.#serverMeta() } };
  }

  #serverMeta(): Obj {
    return isObj(this.#init?.serverInfo) ? { [META_SERVER]: this.#init.serverInfo } : {};
  }

  #unsupported(id: RequestId, requested: string): void {
    void this.#send({
      jsonrpc: "2.0",
      id,
      error: { code: UNSUPPORTED_VERSION, message: "Unsupported protocol version", data: { supported: SUPPORTED, requested } },
    } as JSONRPCMessage);
  }

  #error(id: RequestId, code: number, message: string): void {
    void this.#send({ jsonrpc: "2.0", id, error: { code, message } } as JSONRPCMessage);
  }

  #send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.#inner.send(message, options);
  }
}
