/** What is known offline about a remote server's authentication: for `auth status` and `servers`. */
import type { ServerEntry } from "../config/servers.ts";
import { loginCommand } from "./auth-required.ts";
import { storeKey } from "./provider.ts";
import { expiresInMs, type AuthState, type TokenStore } from "./token-store.ts";

export type RemoteEntry = ServerEntry & { transport: Extract<ServerEntry["transport"], { type: "http" | "sse" }> };

export interface StatusRow {
  name: string;
  url: string;
  state: "signed-in" | "expired" | "needs-login" | "own-header" | "headers-helper" | "none";
  detail: string;
  expiresInSec?: number;
  refreshable?: boolean;
  scope?: string;
  file?: string;
}

export function statusRow(e: RemoteEntry, store: TokenStore): StatusRow {
  const t = e.transport;
  const base = { name: e.name, url: t.url };
  if (Object.keys(t.headers).some((k) => k.toLowerCase() === "authorization"))
    return { ...base, state: "own-header", detail: `uses the Authorization header from ${e.source}` };
  const s: AuthState = store.read(storeKey(t)) ?? {};
  const file = store.pathFor(storeKey(t));
  if (s.tokens) {
    const left = expiresInMs(s);
    const refreshable = !!s.tokens.refresh_token;
    const common = {
      ...base,
      file,
      refreshable,
      scope: s.tokens.scope,
      expiresInSec: left === undefined ? undefined : Math.round(left / 1000),
    };
    if (s.needsLogin)
      return {
        ...common,
        state: "needs-login",
        detail: `needs sign-in (${s.needsLogin.reason}, ${s.needsLogin.at}): run \`${loginCommand(e.name)}\``,
      };
    if (left !== undefined && left <= 0) {
      return refreshable
        ? { ...common, state: "expired", detail: "signed in; the access token expired and is refreshed at the next call" }
        : { ...common, state: "needs-login", detail: `the access token expired and cannot be refreshed: run \`${loginCommand(e.name)}\`` };
    }
    return {
      ...common,
      state: "signed-in",
      detail: `signed in${left === undefined ? "" : `; access token expires in ${duration(left)}`}${refreshable ? ", refreshed automatically" : ""}`,
    };
  }
  if (s.needsLogin)
    return { ...base, file, state: "needs-login", detail: `needs sign-in (${s.needsLogin.reason}): run \`${loginCommand(e.name)}\`` };
  if (t.headersHelper) return { ...base, state: "headers-helper", detail: "headers from headersHelper; no sign-in stored" };
  return { ...base, state: "none", detail: `no sign-in stored (if the server asks for one: \`${loginCommand(e.name)}\`)` };
}

/** 90s, 12m, 5h, 3d. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}
