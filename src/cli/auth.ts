/** `mcp-code-exec auth login|status|logout`: OAuth sign-ins to remote MCP servers. */
import { createApp, VERSION, type App } from "../app.ts";
import { loginCommand } from "../auth/auth-required.ts";
import { openBrowser } from "../auth/browser.ts";
import { helperHeaders } from "../auth/headers-helper.ts";
import { beginLogin } from "../auth/login.ts";
import { revokeStored } from "../auth/revoke.ts";
import { duration, statusRow, type RemoteEntry } from "../auth/status.ts";
import { storeKey } from "../auth/provider.ts";
import { createTokenStore, normalizeUrl, type TokenStore } from "../auth/token-store.ts";
import { BridgeError } from "../errors.ts";

export interface AuthOptions {
  json?: boolean;
  browser?: boolean;
  timeout?: number;
}

type Remote = RemoteEntry;

const out = (s: string) => process.stdout.write(`${s}\n`);
const err = (s: string) => process.stderr.write(`${s}\n`);

export async function auth(action: string, name: string | undefined, opts: AuthOptions): Promise<number> {
  const app = createApp({ ...process.env, MCP_BRIDGE_LOG_LEVEL: process.env.MCP_BRIDGE_LOG_LEVEL ?? "ERROR" });
  const store = createTokenStore(app.config.stateDir);
  try {
    if (action === "login") return await login(app, store, need(app, name, "login"), opts);
    if (action === "status") return status(app, store, name === undefined ? undefined : need(app, name, "status"), opts);
    if (action === "logout") return await logout(app, store, name, opts);
    throw new BridgeError("INVALID_INPUT", `unknown auth action "${action}"`, {
      hint: "use `auth login NAME`, `auth status [NAME]` or `auth logout NAME`",
    });
  } finally {
    await app.close();
  }
}

function remotes(app: App): Remote[] {
  return app
    .pool()
    .entries()
    .filter((e): e is Remote => e.transport.type !== "stdio");
}

/** A remote server the bridge may use: not a stdio one, and (for a sign-in) trusted. */
function need(app: App, name: string | undefined, action: string): Remote {
  const all = app.pool().entries();
  const list =
    remotes(app)
      .map((e) => e.name)
      .join(", ") || "(none)";
  if (!name) throw new BridgeError("INVALID_INPUT", `auth ${action} needs a server name`, { hint: `remote servers: ${list}` });
  const entry = all.find((e) => e.name === name);
  if (!entry)
    throw new BridgeError("INVALID_INPUT", `no MCP server named ${JSON.stringify(name)} is configured`, {
      hint: `remote servers: ${list} (\`mcp-code-exec servers\` lists them all)`,
    });
  if (entry.transport.type === "stdio")
    throw new BridgeError("INVALID_INPUT", `server ${name} is a local (stdio) server; OAuth sign-in is for remote http/sse servers`, {
      hint: `remote servers: ${list}`,
    });
  return entry as Remote;
}

async function login(app: App, store: TokenStore, entry: Remote, opts: AuthOptions): Promise<number> {
  const t = entry.transport;
  // A server from a repository's file is not contacted (nor its headersHelper run) before the user approves it.
  const blocked = app.pool().blocked(entry.name);
  if (blocked) throw new BridgeError("INVALID_INPUT", `not signing in: ${blocked.message}`);
  if (Object.keys(t.headers).some((k) => k.toLowerCase() === "authorization")) {
    err(
      `[mcp-code-exec] note: server ${entry.name} sends its own Authorization header (from ${entry.source}); a sign-in is only used when that header is removed`,
    );
  }
  let headers = t.headers;
  if (t.headersHelper) {
    try {
      headers = { ...headers, ...(await helperHeaders(entry, { env: process.env, cwd: process.cwd() })) };
    } catch (e) {
      err(`[mcp-code-exec] note: ${(e as Error).message}; signing in without its headers`);
    }
  }
  const start = await beginLogin(
    { name: entry.name, url: t.url, type: t.type, oauth: t.oauth, headers },
    { store, version: VERSION, timeoutMs: opts.timeout === undefined ? undefined : opts.timeout * 1000 },
  );
  if (start.kind === "not-needed") {
    out(`Server ${entry.name} answered without asking for credentials (HTTP ${start.status}): it needs no sign-in.`);
    return 0;
  }
  const { login: pending } = start;
  err(
    `Sign in to ${entry.name} (${t.url}) in your browser${opts.browser === false ? "" : " (opening it now)"}. If it does not open, visit:\n\n  ${pending.authorizationUrl.href}\n\nWaiting for the redirect to ${pending.redirectUrl} ...`,
  );
  if (opts.browser !== false)
    openBrowser(pending.authorizationUrl.href, app.config.browser, process.env, (problem) =>
      err(`[mcp-code-exec] could not open a browser (${problem}); open the link above yourself`),
    );
  const onSigint = () => pending.cancel("interrupted");
  process.once("SIGINT", onSigint);
  let result;
  try {
    result = await pending.completion;
  } catch (e) {
    throw new BridgeError("CONFIG", `sign-in to ${entry.name} failed: ${(e as Error).message}`, {
      hint: `run \`${loginCommand(entry.name)}\` to try again`,
    });
  } finally {
    process.off("SIGINT", onSigint);
  }
  const expiry = result.expiresInMs === undefined ? "" : `; the access token expires in ${duration(result.expiresInMs)}`;
  out(
    `Signed in to ${entry.name}${expiry}${result.refreshable ? " and is refreshed automatically" : " and cannot be refreshed (sign in again then)"}.`,
  );
  out(`Stored in ${result.file} (readable by you only).`);
  // Check the way a bridge will use it: a fresh connection with the stored sign-in.
  try {
    const tools = await app.pool().server(entry.name)!.listTools();
    out(`${entry.name} answers: ${tools.length} tool(s).`);
    return 0;
  } catch (e) {
    err(`[mcp-code-exec] signed in, but ${entry.name} still refuses: ${(e as Error).message}`);
    return 1;
  }
}

function status(app: App, store: TokenStore, only: Remote | undefined, opts: AuthOptions): number {
  const rows = (only ? [only] : remotes(app)).map((e) => statusRow(e, store));
  const known = new Set(remotes(app).map((e) => store.pathFor(storeKey(e.transport))));
  const orphans = only ? [] : store.list().filter((r) => !known.has(r.file));
  if (opts.json) {
    out(
      JSON.stringify(
        { servers: rows, unconfigured: orphans.map((o) => ({ server: o.server, url: o.url, file: o.file })), dir: store.dir },
        null,
        2,
      ),
    );
    return 0;
  }
  if (rows.length === 0) out("No remote (http/sse) MCP servers configured.");
  for (const r of rows) out(`  ${r.name} (${r.url}): ${r.detail}`);
  if (orphans.length) {
    out("Stored sign-ins of servers no longer configured:");
    for (const o of orphans) out(`  ${o.server} (${o.url}): ${o.file}; \`mcp-code-exec auth logout ${o.url}\` deletes it`);
  }
  return 0;
}

async function logout(app: App, store: TokenStore, nameOrUrl: string | undefined, opts: AuthOptions): Promise<number> {
  const byUrl = nameOrUrl && /^https?:\/\//.test(nameOrUrl) ? store.list().find((r) => r.url === normalizeUrl(nameOrUrl)) : undefined;
  const entry = byUrl ? undefined : need(app, nameOrUrl, "logout");
  const key = byUrl ? { url: byUrl.url, clientId: byUrl.clientId } : storeKey(entry!.transport);
  const label = byUrl?.server ?? entry!.name;
  const s = store.read(key);
  if (!s) {
    out(opts.json ? JSON.stringify({ server: label, signedIn: false }) : `Not signed in to ${label}: nothing stored.`);
    return 0;
  }
  const revoked = await revokeStored(s, entry?.transport.oauth ?? (byUrl?.clientId ? { clientId: byUrl.clientId } : undefined));
  store.remove(key);
  const file = store.pathFor(key);
  out(
    opts.json
      ? JSON.stringify({ server: label, signedIn: true, deleted: file, revocation: revoked })
      : `Signed out of ${label}: deleted ${file}; ${revoked}.`,
  );
  return 0;
}
