/**
 * OAuth state of remote MCP servers, one JSON file per server URL in `<state dir>/auth/` (folder 0700,
 * files 0600, replaced atomically). Keyed by the URL, not the name: a token is only ever sent to the
 * server it was issued for, even when a config file later points the same name somewhere else.
 *
 * Why files and not the OS keychain: the bridge is one static binary on macOS, Linux and Windows, often
 * on headless machines; a keychain is reached there only by shelling out (`security`, `secret-tool`),
 * which is absent on many Linux hosts and can prompt the user in the middle of a proxied call. A 0600
 * file in the user's state dir is what `gh`, the AWS CLI and Claude Code on Linux do. A keychain store
 * can come later behind this same interface.
 */
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import * as z from "zod";

/** What is kept for one server URL. Objects from the SDK are stored unchanged (it asks for that). */
export const AuthRecordSchema = z
  .looseObject({
    version: z.literal(1).describe("File format version"),
    url: z.string().describe("The MCP server URL the record belongs to"),
    clientId: z.string().optional().describe("The client id the config names for it (records of other client ids are separate)"),
    server: z.string().describe("Name of the server at the last login (for display)"),
    client: z.looseObject({ client_id: z.string() }).optional().describe("Client registration (dynamic or configured)"),
    tokens: z.looseObject({ access_token: z.string(), token_type: z.string() }).optional().describe("Access and refresh token"),
    tokensSavedAt: z.number().optional().describe("When the tokens were saved (ms since the epoch); expiry is counted from here"),
    codeVerifier: z.string().optional().describe("PKCE verifier of a login in progress"),
    discovery: z.looseObject({ authorizationServerUrl: z.string() }).optional().describe("Discovered metadata, reused for refreshes"),
    needsLogin: z.object({ at: z.string(), reason: z.string() }).optional().describe("Set when a call found no usable token"),
    updatedAt: z.string().describe("Last write, ISO time"),
  })
  .describe("OAuth state of one remote MCP server");

export type AuthRecord = z.infer<typeof AuthRecordSchema>;

/** The parts callers read and write, typed as the SDK types them. */
export interface AuthState {
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  tokensSavedAt?: number;
  codeVerifier?: string;
  discovery?: OAuthDiscoveryState;
  needsLogin?: { at: string; reason: string };
}

/**
 * Which record: a server URL, and the client id its config names if any. Two entries for one URL with
 * different configured clients never share (or clear) each other's tokens.
 */
export type StoreKey = string | { url: string; clientId?: string };

export interface TokenStore {
  /** Folder holding the files (for messages). */
  readonly dir: string;
  /** Path of the file for one record (for messages). */
  pathFor(key: StoreKey): string;
  read(key: StoreKey): AuthState | undefined;
  /** Read, change and write back one record; `server` names it for display. Returns the new state. */
  update(key: StoreKey, server: string, change: (state: AuthState) => AuthState): AuthState;
  remove(key: StoreKey): boolean;
  /** Every record on disk (the bad ones skipped). */
  list(): Array<AuthState & { url: string; clientId?: string; server: string; file: string }>;
}

/** Milliseconds until the access token expires; undefined when the server did not say. */
export function expiresInMs(state: AuthState, now = Date.now()): number | undefined {
  const seconds = state.tokens?.expires_in;
  if (seconds === undefined || state.tokensSavedAt === undefined) return undefined;
  return state.tokensSavedAt + seconds * 1000 - now;
}

export function createTokenStore(stateDir: string): TokenStore {
  const dir = join(stateDir, "auth");
  const norm = (key: StoreKey) =>
    typeof key === "string" ? { url: normalizeUrl(key) } : { url: normalizeUrl(key.url), clientId: key.clientId };
  const pathFor = (key: StoreKey) => {
    const k = norm(key);
    return join(
      dir,
      `${createHash("sha256")
        .update(k.clientId === undefined ? k.url : `${k.url}\n${k.clientId}`)
        .digest("hex")
        .slice(0, 32)}.json`,
    );
  };
  const matches = (r: AuthRecord | undefined, key: StoreKey): r is AuthRecord => {
    const k = norm(key);
    return r !== undefined && r.url === k.url && r.clientId === k.clientId;
  };

  const readFile = (file: string): AuthRecord | undefined => {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      return undefined;
    }
    try {
      const parsed = AuthRecordSchema.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  };

  const toState = (r: AuthRecord): AuthState => {
    const { version: _v, url: _u, clientId: _c, server: _s, updatedAt: _t, ...state } = r;
    return state as AuthState;
  };

  return {
    dir,
    pathFor,
    read(key) {
      const r = readFile(pathFor(key));
      return matches(r, key) ? toState(r) : undefined;
    },
    update(key, server, change) {
      const file = pathFor(key);
      const before = readFile(file);
      const state = change(matches(before, key) ? toState(before) : {});
      if (Object.keys(dropUndefined(state)).length === 0) {
        // Nothing left to keep: no file (and none created for a server that never had one).
        if (matches(before, key)) rmSync(file, { force: true });
        return state;
      }
      const record = { version: 1, ...dropUndefined(norm(key)), server, ...dropUndefined(state), updatedAt: new Date().toISOString() };
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      chmodSync(dir, 0o700);
      const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
      renameSync(tmp, file);
      return state;
    },
    remove(key) {
      const file = pathFor(key);
      const existed = matches(readFile(file), key);
      rmSync(file, { force: true });
      return existed;
    },
    list() {
      let names: string[];
      try {
        names = readdirSync(dir).filter((n) => n.endsWith(".json"));
      } catch {
        return [];
      }
      return names.flatMap((n) => {
        const r = readFile(join(dir, n));
        return r ? [{ ...toState(r), url: r.url, clientId: r.clientId, server: r.server, file: join(dir, n) }] : [];
      });
    },
  };
}

/** One spelling per URL, so `https://x.dev/mcp` and `https://X.dev:443/mcp` share a record. */
export function normalizeUrl(url: string): string {
  try {
    const u = new URL(url);
    u.hash = "";
    return u.href;
  } catch {
    return url;
  }
}

function dropUndefined<T extends object>(o: T): T {
  const out = { ...o } as Record<string, unknown>;
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out as T;
}
