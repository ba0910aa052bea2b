/**
 * The fetch a remote server's transport uses:
 * - the server's own headers (static `headers`, `headersHelper` output) go only to the server's origin,
 *   never to its authorization server (the SDK's requestInit would send them to both);
 * - concurrent refreshes of one refresh token become one request. Authorization servers rotate refresh
 *   tokens and treat a second use of a rotated one as theft (revoking the whole grant), and parallel
 *   proxied calls that all meet an expired access token would otherwise each refresh it;
 * - a request refused (401) for an access token that a parallel request has since replaced is sent again,
 *   once, with the current one. The SDK's transport would instead see "401 after a successful sign-in"
 *   (its guard against loops is one flag for the whole connection) and fail that call with a login hint,
 *   though the sign-in is fine: parallel calls in flight when the token expires met this.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

/** How long the answer to one refresh token is kept for late askers (the token itself is single-use). */
const REFRESH_MEMORY_MS = 60_000;

export interface TransportFetchOptions {
  /** The server's own headers (static and headersHelper), for requests to its origin. */
  headers: () => Record<string, string>;
  /** The access token a request would carry now (the stored sign-in's), if any. */
  accessToken?: () => string | undefined;
  /** Sees the headers of each request to the server's origin, before it is sent. */
  sent?: (headers: Headers) => void;
  base?: FetchLike;
}

export function transportFetch(serverUrl: string, opts: TransportFetchOptions): FetchLike {
  const { headers, accessToken, sent: onSent, base = fetch } = opts;
  const origin = new URL(serverUrl).origin;
  const refreshes = new Map<string, Promise<Response>>();
  const toServer = async (url: string | URL, init: RequestInit | undefined) => {
    const extra = headers();
    let sent = init;
    if (Object.keys(extra).length) {
      const merged = new Headers(init?.headers);
      for (const [k, v] of Object.entries(extra)) merged.set(k, v);
      sent = { ...init, headers: merged };
    }
    onSent?.(new Headers(sent?.headers));
    const response = await base(url, sent);
    if (response.status !== 401 || !accessToken) return response;
    const again = new Headers(sent?.headers);
    const carried = /^Bearer\s+(\S+)$/i.exec(again.get("authorization") ?? "")?.[1];
    const current = accessToken();
    if (!carried || !current || carried === current) return response;
    await response.body?.cancel().catch(() => {});
    again.set("authorization", `Bearer ${current}`);
    onSent?.(again);
    return base(url, { ...sent, headers: again });
  };
  return (url, init) => {
    const target = new URL(typeof url === "string" ? url : url.href);
    if (target.origin === origin) return toServer(url, init);
    const body = init?.body;
    if (init?.method === "POST" && body instanceof URLSearchParams && body.get("grant_type") === "refresh_token") {
      const key = `${target.href}\n${body.get("refresh_token")}`;
      let pending = refreshes.get(key);
      if (!pending) {
        pending = base(url, init);
        refreshes.set(key, pending);
        const forget = setTimeout(() => refreshes.delete(key), REFRESH_MEMORY_MS);
        (forget as { unref?: () => void }).unref?.();
        pending.catch(() => refreshes.delete(key));
      }
      return pending.then((r) => r.clone() as Response);
    }
    return base(url, init);
  };
}
