/**
 * Best-effort token revocation (RFC 7009) on sign-out, when the authorization server offers it. The SDK
 * has no client-side helper for this; it is one form POST. Revoking the refresh token ends the grant on
 * most servers (and with it the access tokens).
 */
import type { OAuthSettings } from "../config/servers.ts";
import type { AuthState } from "./token-store.ts";

const REVOKE_TIMEOUT_MS = 10_000;

/** What happened, as a phrase for the sign-out message. */
export async function revokeStored(state: AuthState, oauth: OAuthSettings | undefined, fetchFn: typeof fetch = fetch): Promise<string> {
  const endpoint = (state.discovery?.authorizationServerMetadata as { revocation_endpoint?: string } | undefined)?.revocation_endpoint;
  const token = state.tokens?.refresh_token ?? state.tokens?.access_token;
  if (!token) return "there was no token to revoke";
  if (!endpoint) return "the authorization server offers no revocation endpoint, so the token stays valid there until it expires";
  const clientId = oauth?.clientId ?? state.client?.client_id;
  const secret = oauth?.clientSecret ?? (state.client as { client_secret?: string } | undefined)?.client_secret;
  const body = new URLSearchParams({ token, token_type_hint: state.tokens?.refresh_token ? "refresh_token" : "access_token" });
  const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded" };
  if (secret && clientId) headers.Authorization = `Basic ${btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`)}`;
  else if (clientId) body.set("client_id", clientId);
  try {
    const res = await fetchFn(endpoint, { method: "POST", headers, body, signal: AbortSignal.timeout(REVOKE_TIMEOUT_MS) });
    await res.body?.cancel().catch(() => {});
    return res.ok
      ? "the authorization server revoked the token"
      : `the authorization server refused to revoke the token (HTTP ${res.status}); it stays valid there until it expires`;
  } catch (e) {
    return `revocation failed (${(e as Error).message}); the token stays valid there until it expires`;
  }
}
