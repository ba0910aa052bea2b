/**
 * Signing in to a remote MCP server: OAuth 2.1 authorization code with PKCE through the user's browser
 * and a loopback redirect, as the MCP authorization spec describes. The SDK's `auth()` does the protocol
 * (protected-resource metadata, authorization-server metadata, dynamic client registration, PKCE, code
 * exchange); this module probes the server for its challenge, runs the redirect listener and stores.
 *
 * `beginLogin` is the hook for other ways of showing the link: it returns the authorization URL at once
 * and a promise that settles when the user has finished. `auth login` prints the URL and opens a browser;
 * a bridge whose MCP client supports URL-mode elicitation can send the same URL there and await the same
 * promise.
 */
import { randomBytes } from "node:crypto";
import { auth, extractWWWAuthenticateParams, type OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { OAuthMetadataSchema, OpenIdProviderDiscoveryMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { startLoopback, type Loopback } from "./loopback.ts";
import { StoredOAuthProvider, storeKey, type OAuthTarget } from "./provider.ts";
import { expiresInMs, type TokenStore } from "./token-store.ts";

export interface LoginTarget extends OAuthTarget {
  type: "http" | "sse";
  /** Headers the server itself wants (static `headers`, `headersHelper` output): sent on the probe only. */
  headers?: Record<string, string>;
}

export interface LoginOptions {
  store: TokenStore;
  version: string;
  /** How long to wait for the browser to come back (default 5 minutes). */
  timeoutMs?: number;
  fetchFn?: FetchLike;
  /**
   * Where the browser comes back: a receiver for this sign-in's `state`. Default: a loopback listener
   * on this machine; a bridge serving HTTP receives it at its own public URL (src/http/oauth-callback.ts).
   */
  redirect?: (state: string, server: string) => Loopback | Promise<Loopback>;
}

export interface LoginResult {
  /** Milliseconds until the access token expires, when the server said. */
  expiresInMs?: number;
  refreshable: boolean;
  scope?: string;
  file: string;
}

export interface PendingLogin {
  /** Where the user signs in. */
  authorizationUrl: URL;
  redirectUrl: string;
  /** Settles once the user has finished in the browser and the tokens are stored. */
  completion: Promise<LoginResult>;
  cancel(reason?: string): void;
}

export type LoginStart = { kind: "pending"; login: PendingLogin } | { kind: "not-needed"; status: number };

const DEFAULT_TIMEOUT_MS = 5 * 60_000;

export async function beginLogin(target: LoginTarget, opts: LoginOptions): Promise<LoginStart> {
  const fetchFn = opts.fetchFn ?? fetch;
  const challenge = await probe(target, fetchFn);
  if (challenge.status >= 200 && challenge.status < 300) return { kind: "not-needed", status: challenge.status };

  const configured = target.oauth ?? {};
  const stored = opts.store.read(storeKey(target));
  // Reuse the port of an earlier registration, so its redirect URI still matches; else any free port.
  const storedPort = configured.clientId
    ? undefined
    : loopbackPort((stored?.client as { redirect_uris?: string[] } | undefined)?.redirect_uris?.[0]);
  const host = configured.clientId || configured.callbackPort ? "localhost" : "127.0.0.1";
  const state = randomBytes(24).toString("base64url");
  const listen = (port: number | undefined) => startLoopback({ port, host, state, server: target.name });
  const loopback = opts.redirect
    ? await opts.redirect(state, target.name)
    : configured.callbackPort
      ? await listen(configured.callbackPort)
      : await listen(storedPort).catch(() => listen(0));

  let authorizationUrl: URL | undefined;
  const provider = new StoredOAuthProvider(
    target,
    opts.store,
    {
      kind: "login",
      redirectUrl: loopback.redirectUrl,
      state,
      onAuthorizationUrl: (u) => {
        authorizationUrl = u;
      },
      discovery: configured.authServerMetadataUrl
        ? await presetDiscovery(configured.authServerMetadataUrl, challenge.resourceMetadataUrl, fetchFn)
        : undefined,
    },
    opts.version,
  );
  const params = {
    serverUrl: target.url,
    resourceMetadataUrl: challenge.resourceMetadataUrl,
    scope: configured.scopes ?? challenge.scope,
    fetchFn,
  };
  try {
    const first = await auth(provider, params);
    if (first === "AUTHORIZED" || !authorizationUrl)
      throw new Error("the authorization server issued tokens without asking the user; nothing to do in a browser");
  } catch (err) {
    loopback.cancel(err as Error);
    throw err;
  }
  loopback.expectIssuer((provider.discoveryState()?.authorizationServerMetadata as { issuer?: string } | undefined)?.issuer);

  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timer = setTimeout(
    () => loopback.cancel(new Error(`no answer from the browser within ${Math.round(timeoutMs / 1000)}s`)),
    timeoutMs,
  );
  (timer as { unref?: () => void }).unref?.();
  const completion = loopback.code
    .then((code) => auth(provider, { ...params, authorizationCode: code }))
    .then(() => {
      const s = opts.store.read(storeKey(target)) ?? {};
      return {
        expiresInMs: expiresInMs(s),
        refreshable: !!s.tokens?.refresh_token,
        scope: s.tokens?.scope,
        file: opts.store.pathFor(storeKey(target)),
      };
    })
    .finally(() => clearTimeout(timer));
  return {
    kind: "pending",
    login: {
      authorizationUrl: authorizationUrl!,
      redirectUrl: loopback.redirectUrl,
      completion,
      cancel: (reason = "cancelled") => loopback.cancel(new Error(reason)),
    },
  };
}

interface Challenge {
  status: number;
  resourceMetadataUrl?: URL;
  scope?: string;
}

/**
 * Ask the server without credentials and read its 401 challenge: the spec has clients take the
 * protected-resource metadata URL (and scope) from WWW-Authenticate, and fall back to well-known URLs.
 */
async function probe(target: LoginTarget, fetchFn: FetchLike): Promise<Challenge> {
  const headers: Record<string, string> = { ...target.headers };
  let res: Response;
  try {
    res =
      target.type === "sse"
        ? await fetchFn(target.url, { method: "GET", headers: { ...headers, Accept: "text/event-stream" } })
        : await fetchFn(target.url, {
            method: "POST",
            headers: { ...headers, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 0,
              method: "initialize",
              params: {
                protocolVersion: LATEST_PROTOCOL_VERSION,
                capabilities: {},
                clientInfo: { name: "mcp-code-exec", version: "login-probe" },
              },
            }),
          });
  } catch (err) {
    throw new Error(`cannot reach ${target.url}: ${(err as Error).message}`);
  }
  await res.body?.cancel().catch(() => {});
  const { resourceMetadataUrl, scope } = res.status === 401 ? extractWWWAuthenticateParams(res) : {};
  return { status: res.status, resourceMetadataUrl, scope };
}

async function presetDiscovery(
  metadataUrl: string,
  resourceMetadataUrl: URL | undefined,
  fetchFn: FetchLike,
): Promise<OAuthDiscoveryState> {
  const res = await fetchFn(metadataUrl, { headers: { Accept: "application/json" } });
  if (!res.ok) throw new Error(`oauth.authServerMetadataUrl ${metadataUrl} answered HTTP ${res.status}`);
  const body = (await res.json()) as unknown;
  const parsed = OAuthMetadataSchema.safeParse(body);
  const metadata = parsed.success ? parsed.data : OpenIdProviderDiscoveryMetadataSchema.parse(body);
  return { authorizationServerUrl: metadata.issuer, authorizationServerMetadata: metadata, resourceMetadataUrl: resourceMetadataUrl?.href };
}

function loopbackPort(uri: string | undefined): number | undefined {
  if (!uri) return undefined;
  try {
    const u = new URL(uri);
    return (u.hostname === "127.0.0.1" || u.hostname === "localhost") && u.port ? Number(u.port) : undefined;
  } catch {
    return undefined;
  }
}
