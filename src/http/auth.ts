/**
 * Who is calling, for `serve --http`: an OAuth 2.1 resource server (RFC 9728 metadata, JWTs checked
 * against the issuer's JWKS for issuer, audience = this server's resource URL per RFC 8707, expiry and
 * scope) and, for small setups, a static list of named tokens. Each name or subject is a principal:
 * sessions, upstream servers, quotas and the audit log are theirs.
 *
 * The caller's token stays here: it is never passed to an upstream server, a sandbox or a log line.
 */
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from "jose";
import { readFileSync } from "node:fs";
import { sha256Hex } from "../host/hash.ts";
import type { Logger } from "../log.ts";

export interface Principal {
  /** Stable id: `token:<name>` for a static token, `oidc:<subject>` for a signed-in user, `local` without auth. */
  id: string;
  scopes: string[];
}

export interface HttpAuthSettings {
  /** token sha256 -> name (MCP_BRIDGE_HTTP_TOKENS). */
  tokens: Map<string, string>;
  /** The authorization server whose tokens are accepted (MCP_BRIDGE_HTTP_ISSUER). */
  issuer?: string;
  /** Its JWKS, when not found from its metadata (MCP_BRIDGE_HTTP_JWKS_URL). */
  jwksUrl?: string;
  /** This server's resource URL (the audience tokens must name). */
  resource: string;
  /** Scopes every request's token must carry. */
  scopes: string[];
  /** The claim naming the principal. */
  principalClaim: string;
}

export type AuthResult = { ok: true; principal: Principal } | { ok: false; response: Response };

/** Clock difference allowed between the issuer and this server, in seconds. */
export const CLOCK_SKEW_S = 5;

/** No token can be guessed in time: shorter ones are refused when the list is read. */
const MIN_TOKEN_CHARS = 16;

/** `name=token` pairs (comma-separated), or the path of a file of such lines (`#` comments). */
export function parseTokens(raw: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!raw?.trim()) return out;
  let text = raw.trim();
  if (!text.includes("=") && text.startsWith("/")) text = readFileSync(text, "utf8");
  const pairs = text
    .split(/[,\n]/)
    .map((l) => l.replace(/#.*$/, "").trim())
    .filter(Boolean);
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    const name = pair.slice(0, eq).trim();
    const token = pair.slice(eq + 1).trim();
    if (eq <= 0 || !/^[\w.@-]{1,64}$/.test(name))
      throw new Error(`MCP_BRIDGE_HTTP_TOKENS: expected name=token pairs; got ${JSON.stringify(pair.slice(0, 20))}…`);
    if (token.length < MIN_TOKEN_CHARS)
      throw new Error(`MCP_BRIDGE_HTTP_TOKENS: the token of ${name} is shorter than ${MIN_TOKEN_CHARS} characters`);
    out.set(sha256Hex(token), name);
  }
  return out;
}

export class HttpAuth {
  readonly #s: HttpAuthSettings;
  readonly #log: Logger;
  #jwks: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;

  constructor(settings: HttpAuthSettings, log: Logger) {
    this.#s = settings;
    this.#log = log;
  }

  /** Whether anyone must sign in at all (no tokens and no issuer: the loopback user alone). */
  get required(): boolean {
    return this.#s.tokens.size > 0 || this.#s.issuer !== undefined;
  }

  /** Where the protected-resource metadata is served (RFC 9728), for this server's resource URL. */
  get metadataUrl(): string {
    const u = new URL(this.#s.resource);
    return `${u.origin}/.well-known/oauth-protected-resource${u.pathname === "/" ? "" : u.pathname}`;
  }

  /** RFC 9728 protected-resource metadata. */
  metadata(): Record<string, unknown> {
    return {
      resource: this.#s.resource,
      ...(this.#s.issuer ? { authorization_servers: [this.#s.issuer] } : {}),
      bearer_methods_supported: ["header"],
      ...(this.#s.scopes.length ? { scopes_supported: this.#s.scopes } : {}),
      resource_name: "mcp-code-exec",
    };
  }

  async authenticate(req: Request): Promise<AuthResult> {
    if (!this.required) return { ok: true, principal: { id: "local", scopes: [] } };
    const header = req.headers.get("authorization") ?? "";
    const m = /^Bearer\s+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(header);
    if (!m)
      return {
        ok: false,
        response: this.#challenge(
          401,
          header ? "invalid_request" : undefined,
          header ? "the Authorization header is not a Bearer token" : undefined,
        ),
      };
    const token = m[1]!;
    const named = this.#s.tokens.get(sha256Hex(token));
    if (named) return this.#scoped({ id: `token:${named}`, scopes: this.#s.scopes });
    if (!this.#s.issuer || token.split(".").length !== 3)
      return { ok: false, response: this.#challenge(401, "invalid_token", "the token is not one this server accepts") };
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await this.#keys(), {
        issuer: this.#s.issuer,
        audience: this.#s.resource,
        clockTolerance: CLOCK_SKEW_S,
        requiredClaims: ["exp"],
      }));
    } catch (err) {
      if (err instanceof JwksUnavailable) return { ok: false, response: unavailable(err.message) };
      return { ok: false, response: this.#challenge(401, "invalid_token", tokenProblem(err)) };
    }
    const subject = payload[this.#s.principalClaim];
    if (typeof subject !== "string" || !subject)
      return { ok: false, response: this.#challenge(401, "invalid_token", `the token has no ${this.#s.principalClaim} claim`) };
    const scopes =
      typeof payload.scope === "string"
        ? payload.scope.split(" ").filter(Boolean)
        : Array.isArray(payload.scp)
          ? payload.scp.map(String)
          : [];
    return this.#scoped({ id: `oidc:${subject}`, scopes });
  }

  #scoped(p: Principal): AuthResult {
    const missing = this.#s.scopes.filter((s) => !p.scopes.includes(s));
    if (missing.length)
      return { ok: false, response: this.#challenge(403, "insufficient_scope", `the token lacks the scope ${missing.join(" ")}`) };
    return { ok: true, principal: p };
  }

  #challenge(status: 401 | 403, error: string | undefined, description: string | undefined): Response {
    const params = [
      `resource_metadata="${this.metadataUrl}"`,
      ...(error ? [`error="${error}"`] : []),
      ...(description ? [`error_description="${description.replace(/["\\]/g, "'")}"`] : []),
      ...(this.#s.scopes.length ? [`scope="${this.#s.scopes.join(" ")}"`] : []),
    ];
    const body = {
      error: error ?? "unauthorized",
      error_description: description ?? "sign in: this server needs a Bearer token (see resource_metadata)",
    };
    return Response.json(body, { status, headers: { "www-authenticate": `Bearer ${params.join(", ")}` } });
  }

  /** The issuer's keys, found from its metadata once (jose refreshes them when a new key id appears). */
  #keys(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    this.#jwks ??= this.#discoverJwks().catch((err) => {
      this.#jwks = undefined; // asked again on the next request
      throw err;
    });
    return this.#jwks;
  }

  async #discoverJwks(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.#s.jwksUrl) return createRemoteJWKSet(new URL(this.#s.jwksUrl));
    const issuer = new URL(this.#s.issuer!);
    const path = issuer.pathname === "/" ? "" : issuer.pathname;
    const candidates = [
      `${issuer.origin}/.well-known/oauth-authorization-server${path}`,
      `${issuer.origin}/.well-known/openid-configuration${path}`,
      `${issuer.origin}${path}/.well-known/openid-configuration`,
    ];
    for (const url of candidates) {
      try {
        const r = await fetch(url, { signal: AbortSignal.timeout(10_000) });
        if (!r.ok) continue;
        const meta = (await r.json()) as { issuer?: string; jwks_uri?: string };
        if (meta.issuer !== this.#s.issuer || typeof meta.jwks_uri !== "string") continue;
        this.#log.info("the authorization server's keys", { issuer: meta.issuer, jwks_uri: meta.jwks_uri });
        return createRemoteJWKSet(new URL(meta.jwks_uri));
      } catch {
        // the next place
      }
    }
    throw new JwksUnavailable(
      `the authorization server ${this.#s.issuer} did not give its keys (no metadata with a jwks_uri at ${candidates.join(", ")}); set MCP_BRIDGE_HTTP_JWKS_URL, or check that it is reachable`,
    );
  }
}

class JwksUnavailable extends Error {}

function unavailable(why: string): Response {
  return Response.json({ error: "temporarily_unavailable", error_description: why }, { status: 503, headers: { "retry-after": "10" } });
}

function tokenProblem(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return "the token has expired";
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === "aud") return "the token is for another resource (its audience is not this server)";
    if (err.claim === "iss") return "the token is from another issuer";
    return `the token's ${err.claim} claim is not valid`;
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed || err instanceof joseErrors.JWKSNoMatchingKey)
    return "the token's signature does not verify";
  return "the token is not valid";
}
