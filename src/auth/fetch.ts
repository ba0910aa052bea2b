/**
 * The fetch a remote server's transport uses:
 * - the server's own headers (static `headers`, `headersHelper` output) go only to the server's origin,
 *   never to its authorization server (the SDK's requestInit would send them to both);
 * - concurrent refreshes of one refresh token become one request. Authorization servers rotate refresh
 *   tokens and treat a second use of a rotated one as theft (revoking the whole grant), and parallel
 *   proxied calls that all meet an expired access token would otherwise each refresh it.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

/** How long the answer to one refresh token is kept for late askers (the token itself is single-use). */
const REFRESH_MEMORY_MS = 60_000;

export function transportFetch(serverUrl: string, headers: () => Record<string, string>, base: FetchLike = fetch): FetchLike {
  const origin = new URL(serverUrl).origin;
  const refreshes = new Map<string, Promise<Response>>();
  return (url, init) => {
    const target = new URL(typeof url === "string" ? url : url.href);
    if (target.origin === origin) {
      const extra = headers();
      if (Object.keys(extra).length) {
        const merged = new Headers(init?.headers);
        for (const [k, v] of Object.entries(extra)) merged.set(k, v);
        return base(url, { ...init, headers: merged });
      }
      return base(url, init);
    }
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
