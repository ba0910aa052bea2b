/**
 * How the bridge authenticates to one remote server when it connects: the server's own headers (static
 * `headers`, then `headersHelper` output on top), and, unless those carry an Authorization header
 * already, the stored OAuth sign-in (refreshed by the SDK when the server answers 401). Tokens stay in
 * this process and the token store: nothing here is visible to sandbox code. The pool calls it only for
 * servers the user trusts; a headersHelper checks that again before it runs.
 */
import { OAuthError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ServerEntry } from "../config/servers.ts";
import { AuthRequiredError, loginCommand } from "./auth-required.ts";
import { transportFetch } from "./fetch.ts";
import { HeadersHelperError, helperHeaders } from "./headers-helper.ts";
import { StoredOAuthProvider } from "./provider.ts";
import type { TokenStore } from "./token-store.ts";

export interface RemoteConnection {
  /** Given to the SDK transport as `fetch`: adds the server's headers on requests to its origin. */
  fetch: FetchLike;
  authProvider?: OAuthClientProvider;
}

export interface UpstreamAuth {
  /**
   * Prepare a connection to a remote server; runs its headersHelper (throws HeadersHelperError).
   * `sent` sees the headers of every request to the server's origin (its credentials are then scrubbed
   * from what the server answers).
   */
  connect(entry: ServerEntry, sent?: (headers: Headers) => void): Promise<RemoteConnection>;
}

export interface UpstreamAuthOptions {
  store: TokenStore;
  version: string;
  env: Record<string, string | undefined>;
  cwd: string;
}

export function createUpstreamAuth(opts: UpstreamAuthOptions): UpstreamAuth {
  return {
    async connect(entry, sent) {
      const t = entry.transport;
      if (t.type === "stdio") throw new Error(`server ${entry.name} is not a remote server`);
      const headers = { ...t.headers, ...(await helperHeaders(entry, { env: opts.env, cwd: opts.cwd })) };
      const ownAuthorization = Object.keys(headers).some((k) => k.toLowerCase() === "authorization");
      const authProvider = ownAuthorization
        ? undefined
        : new StoredOAuthProvider({ name: entry.name, url: t.url, oauth: t.oauth }, opts.store, { kind: "background" }, opts.version);
      return {
        fetch: transportFetch(t.url, { headers: () => headers, accessToken: authProvider && (() => authProvider.accessToken()), sent }),
        authProvider,
      };
    },
  };
}

/**
 * What an authentication failure means for the user, or undefined when `err` is not one. `kind` is
 * "auth_required" when signing in fixes it, "start_failed" for a headersHelper that failed.
 */
export function describeAuthFailure(
  err: unknown,
  entry: ServerEntry,
): { kind: "auth_required" | "start_failed"; message: string } | undefined {
  if (err instanceof AuthRequiredError) return { kind: "auth_required", message: err.message };
  if (err instanceof HeadersHelperError) return { kind: "start_failed", message: `${err.message} (defined in ${entry.source})` };
  if (err instanceof UnauthorizedError || err instanceof OAuthError) {
    const what =
      err instanceof OAuthError
        ? `the authorization server answered ${err.errorCode}${err.message ? ` (${err.message})` : ""}`
        : err.message;
    return {
      kind: "auth_required",
      message: `server ${entry.name} refused the stored sign-in: ${what}; run \`${loginCommand(entry.name)}\`, then call again`,
    };
  }
  const status = (err as { code?: unknown }).code;
  const message = (err as Error)?.message ?? "";
  if ((status === 401 || status === 403) && /HTTP|POST|SSE|authenticat/i.test(message)) {
    const t = entry.transport;
    const own = t.type !== "stdio" && (Object.keys(t.headers).some((k) => k.toLowerCase() === "authorization") || t.headersHelper);
    return {
      kind: "auth_required",
      message: own
        ? `server ${entry.name} refused the Authorization header from your config (HTTP ${status}): check the token in ${entry.source}`
        : `server ${entry.name} refused the request (HTTP ${status}); run \`${loginCommand(entry.name)}\`, then call again`,
    };
  }
  return undefined;
}
