/**
 * The HTTP face of `serve --http`: `/mcp` (Streamable HTTP, both protocol eras), `/healthz`,
 * `/readyz` and the protected-resource metadata. Every `/mcp` request passes the DNS-rebinding check,
 * then sign-in, before its body is read; then it goes to the caller's protocol session (2025-11-25 and
 * earlier, legacy-sessions.ts) or, when it carries 2026-07-28's `_meta`, to the caller's stateless
 * connection (modern-connection.ts).
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log.ts";
import { guardParams } from "../server/wire.ts";
import type { HttpAuth, Principal } from "./auth.ts";
import { LegacySessions } from "./legacy-sessions.ts";
import { ModernConnection } from "./modern-connection.ts";
import { CALLBACK_PATH, type OAuthCallbacks } from "./oauth-callback.ts";
import { originProblem, type OriginPolicy } from "./origin.ts";

const META_VERSION = "io.modelcontextprotocol/protocolVersion";
/** JSON-RPC code 2026-07-28's HTTP binding uses for headers that disagree with the body. */
const HEADER_MISMATCH = -32020;

export interface EndpointDeps {
  auth: HttpAuth;
  /** Sign-ins to upstream servers in progress, waiting for the browser (GET /oauth/callback). */
  callbacks?: OAuthCallbacks;
  origins: OriginPolicy;
  /** The bridge's MCP server for one connection of a principal (bridge-server.ts). */
  makeServer: (principal: Principal, connection: string) => Server;
  /** A connection ended: its default Python session ends with it. */
  onConnectionEnd: (principal: string, connection: string) => void;
  /** Per principal: protocol sessions open at once. */
  maxConnectionsPerPrincipal: number;
  /** A protocol session (or a principal's modern connection) unused this long is closed. */
  idleMs: number;
  maxBodyBytes: number;
  version: string;
  /** Whether the bridge can start sandboxes now (engine and image), for /readyz. */
  ready: () => Promise<{ ok: boolean; problem?: string }>;
  /** Called with the principal of each request that passed sign-in (quotas, tracing). */
  admitted?: (principal: Principal, req: Request) => Response | undefined;
  log: Logger;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

const rpcError = (status: number, code: number, message: string, id: RequestId | null = null, headers?: Record<string, string>) =>
  Response.json({ jsonrpc: "2.0", id, error: { code, message } }, { status, headers });

export class HttpEndpoint {
  readonly #d: EndpointDeps;
  readonly #legacy: LegacySessions;
  /** principal id -> the principal's 2026-07-28 connection. */
  readonly #modern = new Map<string, ModernConnection>();
  #sweeper: ReturnType<typeof setInterval>;

  constructor(deps: EndpointDeps) {
    this.#d = deps;
    this.#legacy = new LegacySessions({
      makeServer: (principal, connection) => deps.makeServer(this.#principals.get(principal)!, connection),
      onEnd: deps.onConnectionEnd,
      maxPerPrincipal: deps.maxConnectionsPerPrincipal,
      idleMs: deps.idleMs,
      log: deps.log,
    });
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(60_000, Math.max(1_000, deps.idleMs / 4)));
    (this.#sweeper as { unref?: () => void }).unref?.();
  }

  /** The latest principal record per id (its scopes), for servers made later in its sessions. */
  readonly #principals = new Map<string, Principal>();

  /** Protocol sessions and modern connections open now. */
  get connections(): number {
    return this.#legacy.size + this.#modern.size;
  }

  async fetch(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const path = url.pathname.replace(/\/+$/, "") || "/";
    if (path === "/healthz") return Response.json({ ok: true, version: this.#d.version });
    if (path === "/readyz") {
      const r = await this.#d.ready();
      return Response.json(r, { status: r.ok ? 200 : 503 });
    }
    if (path.startsWith("/.well-known/oauth-protected-resource"))
      return Response.json(this.#d.auth.metadata(), { headers: { "access-control-allow-origin": "*", "cache-control": "max-age=3600" } });
    if (path === CALLBACK_PATH && req.method === "GET" && this.#d.callbacks) return this.#d.callbacks.handle(req);
    if (path !== "/mcp") return Response.json({ error: "not found: the MCP endpoint is /mcp" }, { status: 404 });
    const refused = originProblem(req, this.#d.origins);
    if (refused) return rpcError(403, -32000, refused);
    const signed = await this.#d.auth.authenticate(req);
    if (!signed.ok) return signed.response;
    const principal = signed.principal;
    this.#principals.set(principal.id, principal);
    const held = this.#d.admitted?.(principal, req);
    if (held) return held;
    if (req.method === "GET" || req.method === "DELETE") {
      this.#seen(req, principal, "session");
      return this.#legacy.handle(req, principal.id, undefined);
    }
    if (req.method !== "POST")
      return rpcError(405, -32000, "the MCP endpoint takes POST, GET and DELETE", null, { allow: "POST, GET, DELETE" });
    if (!/^application\/json\b/i.test(req.headers.get("content-type") ?? ""))
      return rpcError(415, -32700, "the body must be JSON (Content-Type: application/json)");
    let body: unknown;
    try {
      const text = await req.text();
      if (text.length > this.#d.maxBodyBytes)
        return rpcError(413, -32600, `the request is over ${this.#d.maxBodyBytes} bytes (MCP_BRIDGE_MAX_MESSAGE)`);
      body = JSON.parse(text);
    } catch {
      return rpcError(400, -32700, "the body is not JSON");
    }
    if (isModern(body) && req.headers.get("mcp-session-id") === null) {
      this.#seen(req, principal, "stateless", body);
      return this.#modernRequest(req, principal, body);
    }
    this.#seen(req, principal, "session", body);
    return this.#legacy.handle(req, principal.id, body);
  }

  /**
   * At a user's Python-session limit: end their least recently used protocol session that nothing uses
   * now and whose default session `canEnd` lets go with it (sessions.ts); true when one was ended.
   */
  reclaim(principal: string, canEnd: (connection: string) => boolean): boolean {
    return this.#legacy.reclaim(principal, canEnd, "to make room for a new Python session (MCP_BRIDGE_MAX_SESSIONS_PER_USER)");
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    await this.#legacy.close();
    await Promise.all([...this.#modern.values()].map((c) => c.close().catch(() => {})));
    this.#modern.clear();
  }

  async #modernRequest(req: Request, principal: Principal, body: Obj): Promise<Response> {
    const method = body.method as string;
    const params = isObj(body.params) ? body.params : {};
    const meta = isObj(params._meta) ? params._meta : {};
    // 2026-07-28's standard headers, when sent, must say what the body says.
    const versionHeader = req.headers.get("mcp-protocol-version");
    if (versionHeader !== null && typeof meta[META_VERSION] === "string" && versionHeader !== meta[META_VERSION])
      return rpcError(
        400,
        HEADER_MISMATCH,
        `the MCP-Protocol-Version header (${versionHeader}) disagrees with the request's _meta (${String(meta[META_VERSION])})`,
        idOf(body),
      );
    const methodHeader = req.headers.get("mcp-method");
    if (methodHeader !== null && methodHeader !== method)
      return rpcError(
        400,
        HEADER_MISMATCH,
        `the Mcp-Method header (${methodHeader}) disagrees with the request's method (${method})`,
        idOf(body),
      );
    let conn = this.#modern.get(principal.id);
    if (!conn) {
      conn = new ModernConnection((transport) => this.#d.makeServer(principal, `modern:${principal.id}`).connect(guardParams(transport)));
      this.#modern.set(principal.id, conn);
    }
    if (!("id" in body) || body.id === undefined || body.id === null) {
      conn.notify(body as unknown as JSONRPCMessage);
      return new Response(null, { status: 202 });
    }
    const sse = /\btext\/event-stream\b/i.test(req.headers.get("accept") ?? "");
    const reply = await conn.request({ id: body.id as RequestId, method, params: body.params }, { sse, signal: req.signal });
    if (reply.stream)
      return new Response(reply.stream, {
        headers: { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" },
      });
    return Response.json(reply.json);
  }

  /**
   * One line per request at DEBUG: which revision each team member's client speaks (a handshake-era
   * protocol session, or 2026-07-28's stateless requests), for the operator and the client tests.
   */
  #seen(req: Request, principal: Principal, era: "session" | "stateless", body?: unknown): void {
    const params = isObj(body) && isObj(body.params) ? body.params : undefined;
    const meta = isObj(params?._meta) ? params._meta : undefined;
    this.#d.log.debug("mcp request", {
      principal: principal.id,
      era,
      http: req.method,
      method: isObj(body) && typeof body.method === "string" ? body.method : undefined,
      protocol:
        (typeof meta?.[META_VERSION] === "string" ? meta[META_VERSION] : undefined) ??
        req.headers.get("mcp-protocol-version") ??
        (typeof params?.protocolVersion === "string" ? params.protocolVersion : undefined),
      client: req.headers.get("user-agent") ?? undefined,
    });
  }

  #sweep(): void {
    const now = performance.now();
    for (const [id, c] of this.#modern)
      if (now - c.lastUsed > this.#d.idleMs) {
        this.#modern.delete(id);
        void c.close().catch(() => {});
      }
  }
}

/** A 2026-07-28 message: it names its revision in `_meta`, or asks server/discover. */
function isModern(body: unknown): body is Obj {
  if (!isObj(body) || typeof body.method !== "string") return false;
  if (body.method === "server/discover") return true;
  const params = isObj(body.params) ? body.params : undefined;
  const meta = isObj(params?._meta) ? params._meta : undefined;
  return typeof meta?.[META_VERSION] === "string";
}

function idOf(body: Obj): RequestId | null {
  return typeof body.id === "string" || typeof body.id === "number" ? body.id : null;
}
