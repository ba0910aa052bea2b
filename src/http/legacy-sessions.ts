/**
 * The handshake-based revisions over Streamable HTTP (2025-11-25 and earlier): a protocol session per
 * `initialize`, named by the `Mcp-Session-Id` the SDK's transport mints, SSE for progress, questions
 * and logs, DELETE to end it. Each session is bound to the principal that opened it: another
 * principal's requests with its id are answered as if it did not exist. Its default Python session
 * (the one calls without `session` use) ends with it.
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
      return open.transport.handleRequest(req, body === undefined ? undefined : { parsedBody: body });
    }
    if (req.method !== "POST") return notFound("no Mcp-Session-Id: initialize a session first (POST)", 400);
    const mine = [...this.#open.values()].filter((o) => o.principal === principal);
    if (mine.length >= this.#opts.maxPerPrincipal) {
      return Response.json(
        {
          jsonrpc: "2.0",
          id: null,
          error: {
            code: -32000,
            message: `you have ${mine.length} MCP sessions open, the most one user may (MCP_BRIDGE_HTTP_MAX_CONNECTIONS); end one (DELETE) or wait for one to go idle`,
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
    opened = { transport, server, principal, connection, lastUsed: performance.now() };
    await server.connect(transport);
    const response = await transport.handleRequest(req, { parsedBody: body });
    // Not an initialize the transport accepted: nothing stays open.
    if (!transport.sessionId) await server.close().catch(() => {});
    return response;
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
