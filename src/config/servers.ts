/**
 * Discovery of the user's MCP servers from every client's files, each read the way that client reads
 * it (./clients/), in our order between clients (./clients/index.ts). Pure: node:fs / node:path /
 * node:crypto and pure-JS parsers only, so it runs under Bun, Node and Deno alike.
 *
 * Then, for every server: Claude Code's admin lists, the self-reference check, and trust (./trust.ts).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import process from "node:process";
import { loginCommand } from "../auth/auth-required.ts";
import { settingsPath } from "../policy.ts";
import { readConfigObject, type FileFormat } from "./config-file.ts";
import { adminRefusal, readClaudeCodeSettings, type ClaudeCodeSettings } from "./clients/claude-code-settings.ts";
import { readManaged } from "./clients/claude-code.ts";
import { continueSecrets } from "./clients/continue.ts";
import { CLIENT_READERS } from "./clients/index.ts";
import type { Candidate, ReadContext } from "./clients/types.ts";
import { clientLabel } from "./client-names.ts";
import { buildTransport, type Need } from "./definition.ts";
import type { LookedAt, Scope } from "./looked.ts";
import { assignAliases } from "./server-alias.ts";
import { hashTransport, selfReference, type ServerTransport } from "./server-entry.ts";
import { formatJsonPath, type PathSegment } from "./server-schemas.ts";
import { envValue, upToRepoRoot } from "./server-sources.ts";
import { decideTrust, needsApproval, type TrustInfo } from "./trust.ts";
import { definitionDigest } from "./trust-digest.ts";
import { readTrustStore } from "./trust-store.ts";

export type { OAuthSettings, ServerTransport } from "./server-entry.ts";
export { toPythonAlias } from "./server-alias.ts";
export type { LookedAt, Scope } from "./looked.ts";
export type { TrustInfo } from "./trust.ts";
export type { Need } from "./definition.ts";

export interface ServerEntry {
  name: string;
  /** `name` as a unique valid Python identifier. */
  alias: string;
  transport: ServerTransport;
  /** Absolute path of the file whose definition won. */
  source: string;
  /** Files that also defined this name, later in precedence order. */
  shadowed: string[];
  /** sha256 hex of the canonical JSON of `transport` (stable key order). */
  configHash: string;
  /** Client whose file defined it ("bridge" for our own folders). */
  client: string;
  scope: Scope;
  /** JSON path of the definition inside `source`. */
  at: string;
  /** Digest of what would run, as written: what `servers trust` records. */
  digest: string;
  /** May it start? Untrusted servers never start, whoever asks. */
  trust: TrustInfo;
  /** Values only the client can supply; until they are supplied the server does not start. */
  needs: Need[];
  /** Things worth knowing (unset variables kept as written, OAuth held by the client...). */
  notes: string[];
}
/** Whether the server may start without asking anyone: trusted, and needing nothing only its client can supply. */
export function startsUnasked(entry: ServerEntry): boolean {
  return entry.trust.state === "trusted" && entry.needs.length === 0;
}

export interface ConfigProblem {
  file: string;
  /** Path inside the file, "" for the whole file. */
  path: string;
  message: string;
}
export interface SkippedEntry {
  name: string;
  source: string;
  reason: string;
  client?: string;
  scope?: Scope;
}
export interface Discovery {
  servers: ServerEntry[];
  problems: ConfigProblem[];
  skipped: SkippedEntry[];
  /** Every file and folder looked at, in order, and what was found there. */
  looked: LookedAt[];
  /** Our config file, where `servers trust` keeps approvals. */
  trustFile: string;
}
export interface DiscoverOptions {
  env: Record<string, string | undefined>;
  home: string;
  cwd: string;
  platform?: NodeJS.Platform;
  /** Paths of the running bridge binary/script; entries launching them are skipped. */
  selfPaths?: string[];
  /** Folder of Claude Code's managed-mcp.json / managed-settings.json (default: the OS's). */
  managedDir?: string;
  /** Our config file holding approvals (default: MCP_BRIDGE_SETTINGS or ~/.config/mcp-code-exec/config.json). */
  trustFile?: string;
}

export function formatProblem(p: ConfigProblem): string {
  return p.path ? `${p.file}: ${p.path}: ${p.message}` : `${p.file}: ${p.message}`;
}

interface Claim {
  source: string;
  /** undefined = a disabled, rejected or refused entry claimed the name. */
  server?: Omit<ServerEntry, "alias">;
}

export function discoverServers(opts: DiscoverOptions): Discovery {
  const platform = opts.platform ?? process.platform;
  const home = path.resolve(opts.home);
  const cwd = path.resolve(opts.cwd);
  const env = opts.env;
  const allowSelf = /^(1|true|yes)$/i.test(envValue(env, "MCP_BRIDGE_ALLOW_SELF_SERVER", platform) ?? "");
  const problems: ConfigProblem[] = [];
  const skipped: SkippedEntry[] = [];
  const looked: LookedAt[] = [];
  const claims = new Map<string, Claim>();
  const order: string[] = [];
  const trustFile = opts.trustFile ?? settingsPath(env, home);
  const store = readTrustStore(trustFile);
  if (store.problem) problems.push({ file: trustFile, path: "trust", message: `${store.problem}; no server is approved by it` });
  const claude: ClaudeCodeSettings = readClaudeCodeSettings({
    env,
    home,
    cwd,
    platform,
    managedDir: opts.managedDir,
    look: (l) => looked.push(l),
  });

  let client = "bridge";
  const readFiles = new Map<string, string>();
  const problem = (file: string, at: PathSegment[] | string, message: string) =>
    problems.push({ file, path: typeof at === "string" ? at : formatJsonPath(at), message });
  const ctx: ReadContext = {
    env,
    home,
    cwd,
    platform,
    claude,
    read(file, format, scope, note, opts) {
      const key = realpath(file);
      const already = readFiles.get(key);
      if (already) {
        if (fs.existsSync(file)) looked.push({ path: file, client, scope, status: "ignored", note: `already read as ${already}` });
        return undefined;
      }
      const r = opts?.read ?? readConfigObject(file, format);
      if (r.status === "missing") {
        looked.push({ path: file, client, scope, status: "absent" });
        return undefined;
      }
      readFiles.set(key, `${clientLabel(client)} ${scope} scope`);
      if (r.status === "error") {
        looked.push({ path: file, client, scope, status: "unreadable", note: r.message });
        problem(file, "", r.message);
        return undefined;
      }
      looked.push({ path: file, client, scope, status: "found", ...(note ? { note } : {}) });
      return r.data;
    },
    list(dir, scope) {
      try {
        const names = fs.readdirSync(dir);
        looked.push({ path: dir, client, scope, status: "found", note: "folder" });
        return names;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        const absent = code === "ENOENT" || code === "ENOTDIR";
        looked.push({
          path: dir,
          client,
          scope,
          status: absent ? "absent" : "unreadable",
          ...(absent ? {} : { note: (e as Error).message }),
        });
        if (!absent) problem(dir, "", `cannot read folder: ${(e as Error).message}`);
        return [];
      }
    },
    ignore(file, scope, why) {
      looked.push({ path: file, client, scope, status: "ignored", note: why });
    },
    problem,
    parents() {
      const out: string[] = [];
      for (let d = cwd; ; d = path.dirname(d)) {
        out.push(d);
        if (path.dirname(d) === d) return out;
      }
    },
    appConfigDir() {
      if (platform === "darwin") return path.join(home, "Library", "Application Support");
      if (platform === "win32") return envValue(env, "APPDATA", platform) || path.join(home, "AppData", "Roaming");
      const xdg = envValue(env, "XDG_CONFIG_HOME", platform)?.trim();
      return xdg && path.isAbsolute(xdg) ? xdg : path.join(home, ".config");
    },
    peek(file, format: FileFormat = "json") {
      const r = readConfigObject(file, format);
      return r.status === "ok" ? r.data : undefined;
    },
    exists: (p) => fs.existsSync(p),
    isDir: (p) => {
      try {
        return fs.statSync(p).isDirectory();
      } catch {
        return false;
      }
    },
  };

  const secrets = continueSecrets({ env, home, platform });
  const add = (c: Candidate) => {
    const prior = claims.get(c.name);
    const where = { client, scope: c.scope };
    if (prior) {
      if (prior.server) prior.server.shadowed.push(c.file);
      else skipped.push({ name: c.name, source: c.file, reason: `turned off by ${prior.source}`, ...where });
      return;
    }
    const off = (reason: string) => {
      claims.set(c.name, { source: c.file });
      skipped.push({ name: c.name, source: c.file, reason, ...where });
    };
    if (c.off) return off(c.off);
    if (!c.def) return;
    const built = buildTransport(c.def, c.syntax, c.at, {
      env,
      home,
      cwd,
      platform,
      fileDir: path.dirname(c.file),
      inputs: store.inputs,
      settingsFile: trustFile,
      continueSecrets: secrets,
    });
    if (built.problems.length) {
      for (const p of built.problems) problem(c.file, p.path, p.message);
      return;
    }
    const t = built.transport;
    if (t.type === "stdio" && !allowSelf) {
      const hit = selfReference(t, opts.selfPaths ?? [], cwd, envValue(env, "PATH", platform) ?? "");
      if (hit !== undefined) {
        skipped.push({
          name: c.name,
          source: c.file,
          reason: `launches this bridge (mcp-code-exec) again via ${JSON.stringify(hit)}; set MCP_BRIDGE_ALLOW_SELF_SERVER=1 to allow`,
          ...where,
        });
        return;
      }
    }
    const refused = adminRefusal(
      claude,
      t.type === "stdio" ? { name: c.name, command: [t.command, ...t.args] } : { name: c.name, url: t.url },
    );
    if (refused) return off(refused);
    // Only a definition that waits for approval has its files read (the digest binds the approval).
    const digest = definitionDigest(
      needsApproval(c.scope)
        ? { raw: c.raw, transport: t, filesRead: built.filesRead, roots: repositoryRoots(cwd, c.file) }
        : { raw: c.raw },
    );
    const trust = decideTrust({ name: c.name, client, scope: c.scope, source: c.file, digest }, { claude, store }, c.approval);
    const notes = [...built.warnings, ...(c.def.notes ?? [])];
    if (c.def.oauth)
      notes.push(
        `${clientLabel(client)} signs in to it with OAuth and keeps that token to itself; the bridge signs in on its own: if the server asks for a sign-in, run \`${loginCommand(c.name)}\``,
      );
    if (c.mergedFrom?.length) notes.push(`merged with its definition in ${c.mergedFrom.join(", ")} (as ${clientLabel(client)} does)`);
    claims.set(c.name, {
      source: c.file,
      server: {
        name: c.name,
        transport: t,
        source: c.file,
        shadowed: [],
        configHash: hashTransport(t),
        client,
        scope: c.scope,
        at: formatJsonPath(c.at),
        digest,
        trust,
        needs: built.needs,
        notes,
      },
    });
    order.push(c.name);
  };

  if (claude.managedMcp) {
    // managed-mcp.json has exclusive control: only its servers load. The rest is read to be listed.
    client = "claude-code";
    for (const c of readManaged(ctx, claude.managedMcp)) add(c);
  }
  for (const reader of CLIENT_READERS) {
    client = reader.id;
    let candidates: Candidate[];
    try {
      candidates = reader.read(ctx);
    } catch (err) {
      // A reader that meets a shape it did not expect loses its own client's servers, not the bridge's start.
      const last = looked.findLast((l) => l.client === client && l.status === "found");
      problem(
        last?.path ?? clientLabel(client),
        "",
        `${clientLabel(client)}'s configuration could not be read (${(err as Error).message}), so its servers are left out; this is a bug in mcp-code-exec: please report it with the shape of this file`,
      );
      continue;
    }
    for (const c of candidates) {
      if (claude.managedMcp) {
        skipped.push({
          name: c.name,
          source: c.file,
          reason: `not loaded: ${claude.managedMcp} has exclusive control over MCP servers`,
          client,
          scope: c.scope,
        });
      } else add(c);
    }
  }

  const servers = assignAliases(order.map((n) => claims.get(n)!.server!));
  return { servers, problems, skipped, looked, trustFile };
}

function realpath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** The folders a repository controls for a definition in `file` used from `cwd`: both, and their repository roots. */
function repositoryRoots(cwd: string, file: string): string[] {
  const exists = (p: string) => fs.existsSync(p);
  const upward = (dir: string) => {
    const out: string[] = [];
    for (let d = dir; ; d = path.dirname(d)) {
      out.push(d);
      if (path.dirname(d) === d) return out;
    }
  };
  const roots = new Set<string>([cwd]);
  for (const start of [cwd, path.dirname(file)]) {
    const { root } = upToRepoRoot(upward(start), exists);
    roots.add(root ?? start);
  }
  return [...roots];
}
