/**
 * The handshake-based revisions over Streamable HTTP (2025-11-25 and earlier): a protocol session per
 * `initialize`, named by the `Mcp-Session-Id` the SDK's transport mints, SSE for progress, questions
 * and logs, DELETE to end it. Each session is bound to the principal that opened it: another
 * principal's requests with its id are answered as if it did not exist. Its default Python session
 * (the one calls without `session` use) ends with it.
 *
 * Many one-shot clients (the MCP Inspector's CLI, mcporter, Gemini CLI, the conformance suite) leave
 * without ending their session (DELETE). At a user's limit the least recently used of their sessions
 * that nothing uses now (no response stream open: no standalone SSE stream, no request in flight) is
 * ended to make room, rather than refusing the user until it idles out. A session whose client still
 * holds a stream is never taken.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Logger } from "../log.ts";

interface Open {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  principal: string;
  connection: string;
  lastUsed: number;
  /** Response streams open now (the standalone GET stream, POST answers being sent). */
  streams: number;
}

export interface LegacyOptions {
  /** The bridge's MCP server for one connection of `principal`. */
  makeServer: (principal: string, connection: string) => Server;
  /** The connection is gone (DELETE, idle, shutdown): its default Python session ends. */
  onEnd: (principal: string, connection: string) => void;
  /** Protocol sessions one principal may hold open. */
  maxPerPrincipal: number;
  /** A protocol session without a request this long is closed. */
  idleMs: number;
  log: Logger;
}

const notFound = (message: string, status = 404) =>
  Response.json({ jsonrpc: "2.0", id: null, error: { code: -32001, message } }, { status });

export class LegacySessions {
  readonly #opts: LegacyOptions;
  readonly #open = new Map<string, Open>();
  #seq = 0;
  #sweeper: ReturnType<typeof setInterval>;

  constructor(opts: LegacyOptions) {
    this.#opts = opts;
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(60_000, Math.max(1_000, opts.idleMs / 4)));
    (this.#sweeper as { unref?: () => void }).unref?.();
  }

  get size(): number {
    return this.#open.size;
  }

  /** A request for an open session (by its id) or one that opens a session (`initialize`). */
  async handle(req: Request, principal: string, body: unknown): Promise<Response> {
    const id = req.headers.get("mcp-session-id");
    if (id !== null) {
      const open = this.#open.get(id);
      // Another principal's session is answered as an unknown one.
      if (!open || open.principal !== principal)
        return notFound("session not found: it ended, or the server restarted; initialize a new one");
      open.lastUsed = performance.now();
      return tracked(open, () => open.transport.handleRequest(req, body === undefined ? undefined : { parsedBody: body }));
    }
    if (req.method !== "POST") return notFound("no Mcp-Session-Id: initialize a session first (POST)", 400);
    const count = () => [...this.#open.values()].filter((o) => o.principal === principal).length;
    if (count() >= this.#opts.maxPerPrincipal)
      this.reclaim(principal, () => true, "to make room for a new one (MCP_BRIDGE_HTTP_MAX_CONNECTIONS)");
    const mine = count();
    if (mine >= this.#opts.maxPerPrincipal) {
      return Response.json(
        {
          jsonrpc: "2.0",
          id: null,
          error: {
            code: -32000,
            message: `you have ${mine} MCP sessions open and in use (each holds a stream), the most one user may (MCP_BRIDGE_HTTP_MAX_CONNECTIONS); end one (DELETE) or close its stream`,
          },
        },
        { status: 429, headers: { "retry-after": "60" } },
      );
    }
    const connection = `http-${++this.#seq}`;
    let opened: Open | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => newSessionId(),
      onsessioninitialized: (sid) => {
        if (opened) this.#open.set(sid, opened);
      },
      onsessionclosed: (sid) => void this.#end(sid, "closed by the client"),
    });
    const server = this.#opts.makeServer(principal, connection);
    opened = { transport, server, principal, connection, lastUsed: performance.now(), streams: 0 };
    await server.connect(transport);
    const response = await tracked(opened, () => transport.handleRequest(req, { parsedBody: body }));
    // Not an initialize the transport accepted: nothing stays open.
    if (!transport.sessionId) await server.close().catch(() => {});
    return response;
  }

  /**
   * End the least recently used protocol session of `principal` that nothing uses now (no stream open)
   * and that `canEnd` accepts (by its connection); true when one was ended.
   */
  reclaim(principal: string, canEnd: (connection: string) => boolean, why: string): boolean {
    let lru: [string, Open] | undefined;
    for (const [id, o] of this.#open)
      if (o.principal === principal && o.streams === 0 && canEnd(o.connection) && (!lru || o.lastUsed < lru[1].lastUsed)) lru = [id, o];
    if (!lru) return false;
    void this.#end(lru[0], `unused, with no stream open; ended ${why}`);
    return true;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    await Promise.all([...this.#open.keys()].map((id) => this.#end(id, "the server is shutting down")));
  }

  #sweep(): void {
    const now = performance.now();
    for (const [id, o] of this.#open) if (now - o.lastUsed > this.#opts.idleMs) void this.#end(id, "idle");
  }

  async #end(id: string, why: string): Promise<void> {
    const o = this.#open.get(id);
    if (!o) return;
    this.#open.delete(id);
    this.#opts.log.info("MCP session ended", { principal: o.principal, why });
    this.#opts.onEnd(o.principal, o.connection);
    await o.server.close().catch(() => {});
  }
}

/** 128 random bits, URL-safe: what names a protocol session is not guessable. */
function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/**
 * The transport's response to one request, counted in `o.streams` from before the transport sees the
 * request (its handler may run, and reclaim, before the response is returned) until the response's
 * body ends or the client goes.
 */
async function tracked(o: Open, handle: () => Promise<Response>): Promise<Response> {
  o.streams++;
  let res: Response;
  try {
    res = await handle();
  } catch (err) {
    o.streams--;
    throw err;
  }
  if (res.body) return track(o, res, res.body);
  o.streams--;
  return res;
}

/** The response, its body counted in `o.streams` (already taken) until it ends or the client goes. */
function track(o: Open, res: Response, source: ReadableStream<Uint8Array>): Response {
  let open = true;
  const finish = () => {
    if (!open) return;
    open = false;
    o.streams--;
    o.lastUsed = performance.now();
  };
  const reader = source.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(c) {
      try {
        const r = await reader.read();
        if (r.done) {
          finish();
          c.close();
        } else c.enqueue(r.value);
      } catch (err) {
        finish();
        c.error(err);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}
