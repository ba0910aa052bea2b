/**
 * Discovery of the user's MCP server definitions from every place MCP clients
 * keep them. Pure: node:fs / node:path / node:os / node:crypto only, so it runs
 * under Bun, Node and Deno alike.
 *
 * Source order and file locations: ./server-sources.ts. Earlier sources win for
 * a server name; later definitions are recorded in `shadowed`.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import process from "node:process";
import {
  buildRemote,
  buildStdio,
  hashTransport,
  selfReference,
  type ServerTransport,
  type SubstContext,
  type SubstProblem,
} from "./server-entry.ts";
import type { z } from "zod";
import { readJsonObject } from "./server-json.ts";
import {
  ClaudeProjectSchema,
  ClaudeUserConfigSchema,
  ConfigFileSchema,
  formatJsonPath,
  type PathSegment,
  RemoteServerSchema,
  ServerCommonSchema,
  StdioServerSchema,
  typeName,
  validate,
  validTopLevelKeys,
} from "./server-schemas.ts";
import { assignAliases } from "./server-alias.ts";
import { envValue, findProjectKey, listSources, type SourceSpec } from "./server-sources.ts";
import { adminRefusal, readClaudeCodeSettings, type ClaudeCodeSettings } from "./clients/claude-code-settings.ts";
import type { LookedAt, Scope } from "./looked.ts";
import { decideTrust, type TrustInfo } from "./trust.ts";
import { definitionDigest, readTrustStore, type TrustStore } from "./trust-store.ts";
import { settingsPath } from "../policy.ts";

export type { ServerTransport } from "./server-entry.ts";
export { toPythonAlias } from "./server-alias.ts";
export type { LookedAt, Scope } from "./looked.ts";
export type { TrustInfo } from "./trust.ts";

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
}
export interface ConfigProblem {
  file: string;
  /** JSON path inside the file, "" for the whole file. */
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
  /** Every file and folder looked at, in order (existing or not). */
  searched: string[];
  /** The same with what was found there, plus the settings files read for approvals. */
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
  const ctx: SubstContext = { env: opts.env, home, cwd, platform };
  const allowSelf = /^(1|true|yes)$/i.test(envValue(opts.env, "MCP_BRIDGE_ALLOW_SELF_SERVER", platform) ?? "");
  const selfPaths = opts.selfPaths ?? [];

  const problems: ConfigProblem[] = [];
  const skipped: SkippedEntry[] = [];
  const searched: string[] = [];
  const looked: LookedAt[] = [];
  const trustFile = opts.trustFile ?? settingsPath(opts.env, home);
  const store: TrustStore = readTrustStore(trustFile);
  if (store.problem) problems.push({ file: trustFile, path: "trust", message: `${store.problem}; no server is approved by it` });
  const claude: ClaudeCodeSettings = readClaudeCodeSettings({ env: opts.env, home, cwd, platform, managedDir: opts.managedDir, look: (l) => looked.push(l) });
  const claims = new Map<string, Claim>();
  const order: string[] = [];
  const loaded = new Set<string>();

  const look = (p: string) => {
    if (!searched.includes(p)) searched.push(p);
  };
  const problem = (file: string, at: readonly PathSegment[] | string, message: string) =>
    problems.push({ file, path: typeof at === "string" ? at : formatJsonPath(at), message });

  const addEntry = (file: string, name: string, raw: unknown, at: PathSegment[], spec: Pick<SourceSpec, "client" | "scope">) => {
    const { client, scope } = spec;
    const prior = claims.get(name);
    if (prior) {
      if (prior.server) prior.server.shadowed.push(file);
      else skipped.push({ name, source: file, reason: `turned off by ${prior.source}`, client, scope });
      return;
    }
    if (name.trim() === "") return problem(file, at, "server name must not be empty");
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      return problem(file, at, `expected object, received ${typeName(raw)}`);
    }
    const obj = raw as Record<string, unknown>;
    // A disabled, rejected or refused entry claims the name: later sources do not bring it back.
    const off = (reason: string) => {
      claims.set(name, { source: file });
      skipped.push({ name, source: file, reason, client, scope });
    };
    if (obj.disabled === true) return off("disabled");
    if (client === "claude-code" && scope === "project" && claude.rejected.has(name)) {
      return off(`rejected in Claude Code (disabledMcpjsonServers in ${claude.rejected.get(name)})`);
    }
    if (client === "claude-code" && scope !== "managed" && claude.disabled.has(name)) {
      return off(`disabled in Claude Code (/mcp: disabledMcpServers in ${claude.disabled.get(name)})`);
    }
    const common = validate(ServerCommonSchema, raw);
    if (!common.ok) {
      for (const i of common.issues) problem(file, [...at, ...i.path], i.message);
      return;
    }
    const type = common.data.type;
    const isStdio = type === "stdio" || (type === undefined && obj.command !== undefined);
    if (!isStdio && type === undefined && obj.url === undefined) {
      return problem(file, at, 'expected "command" (stdio server) or "url" (http/sse server)');
    }
    const subst: SubstProblem[] = [];
    let transport: ServerTransport;
    if (isStdio) {
      const v = validate(StdioServerSchema, raw);
      if (!v.ok) return v.issues.forEach((i) => problem(file, [...at, ...i.path], i.message));
      transport = buildStdio(v.data, at, ctx, subst);
    } else {
      const v = validate(RemoteServerSchema, raw);
      if (!v.ok) return v.issues.forEach((i) => problem(file, [...at, ...i.path], i.message));
      transport = buildRemote(v.data, at, ctx, subst);
    }
    if (subst.length > 0) {
      for (const s of subst) problem(file, s.path, s.message);
      return;
    }
    if (transport.type === "stdio" && !allowSelf) {
      const hit = selfReference(transport, selfPaths, cwd);
      if (hit !== undefined) {
        skipped.push({
          name,
          source: file,
          reason: `launches this bridge (mcp-code-exec) again via ${JSON.stringify(hit)}; set MCP_BRIDGE_ALLOW_SELF_SERVER=1 to allow`,
        });
        return;
      }
    }
    const refused = adminRefusal(claude, transport.type === "stdio" ? { name, command: [transport.command, ...transport.args] } : { name, url: transport.url });
    if (refused) return off(refused);
    const digest = definitionDigest(obj);
    const trust = decideTrust({ name, client, scope, source: file, digest }, { claude, store });
    claims.set(name, {
      source: file,
      server: { name, transport, source: file, shadowed: [], configHash: hashTransport(transport), client, scope, at: formatJsonPath(at), digest, trust },
    });
    order.push(name);
  };

  const addMap = (file: string, map: Record<string, unknown> | undefined, at: PathSegment[], spec: Pick<SourceSpec, "client" | "scope">) => {
    for (const [name, raw] of Object.entries(map ?? {})) addEntry(file, name, raw, [...at, name], spec);
  };

  const loadFile = (file: string, spec: SourceSpec) => {
    look(file);
    const before = problems.length;
    const seen = { path: file, client: spec.client, scope: spec.scope };
    let key = file;
    try {
      key = fs.realpathSync(file);
    } catch {
      // missing: handled below
    }
    if (loaded.has(key)) return void looked.push({ ...seen, status: "ignored", note: "already read (the same file reached twice)" });
    const read = readJsonObject(file);
    if (read.status === "missing") {
      looked.push({ ...seen, status: "absent" });
      if (spec.explicit) problem(file, "", "MCP_BRIDGE_CONFIG names a path that does not exist");
      return;
    }
    loaded.add(key);
    if (read.status === "error") {
      looked.push({ ...seen, status: "unreadable", note: read.message });
      return problem(file, "", read.message);
    }
    looked.push({ ...seen, status: "found" });
    readObject(file, read.data, spec);
    if (problems.length > before) looked[looked.length - 1]!.note = `${problems.length - before} problem(s)`;
  };

  const readObject = (file: string, obj: Record<string, unknown>, spec: SourceSpec) => {

    if (spec.format === "claude-user") {
      const top = validKeys(ClaudeUserConfigSchema, obj, file, []);
      // Project ("local") scope first: in Claude Code it overrides user scope.
      const projects = top("projects");
      const projectKey = projects ? findProjectKey(Object.keys(projects), cwd, platform) : undefined;
      if (projects && projectKey !== undefined) {
        const at: PathSegment[] = ["projects", projectKey];
        const project = projects[projectKey];
        if (project === null || typeof project !== "object" || Array.isArray(project)) {
          problem(file, at, `expected object, received ${typeName(project)}`);
        } else {
          const pk = validKeys(ClaudeProjectSchema, project as Record<string, unknown>, file, at);
          addMap(file, pk("mcpServers"), [...at, "mcpServers"], { client: spec.client, scope: "local" });
        }
      }
      addMap(file, top("mcpServers"), ["mcpServers"], spec);
      addMap(file, top("servers"), ["servers"], spec);
      return;
    }

    const hasKeys = obj.mcpServers !== undefined || obj.servers !== undefined;
    if (!hasKeys && spec.format === "dedicated") {
      if (obj.command !== undefined || obj.url !== undefined) {
        // A file holding one server definition, named after the file.
        return addEntry(file, path.basename(file).replace(/\.jsonc?$/i, ""), obj, [], spec);
      }
      return problem(file, "", 'expected an "mcpServers" (or "servers") object, or a single server definition with "command" or "url"');
    }
    const keys = validKeys(ConfigFileSchema, obj, file, []);
    addMap(file, keys("mcpServers"), ["mcpServers"], spec);
    addMap(file, keys("servers"), ["servers"], spec);
  };

  const validKeys = (schema: z.ZodType, obj: Record<string, unknown>, file: string, at: PathSegment[]) =>
    validTopLevelKeys(schema, obj, (i) => problem(file, [...at, ...i.path], i.message));

  const loadDir = (dir: string, spec: SourceSpec) => {
    look(dir);
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const unreadable = code !== "ENOENT" && code !== "ENOTDIR";
      looked.push({ path: dir, client: spec.client, scope: spec.scope, status: unreadable ? "unreadable" : "absent", note: unreadable ? (e as Error).message : undefined });
      if (unreadable) problem(dir, "", `cannot read folder: ${(e as Error).message}`);
      return;
    }
    looked.push({ path: dir, client: spec.client, scope: spec.scope, status: "found", note: "folder" });
    const files = names.filter((n) => !n.startsWith(".") && n.toLowerCase().endsWith(".json")).sort();
    for (const n of files) {
      const file = path.join(dir, n);
      if (isDir(file)) continue;
      loadFile(file, spec);
    }
  };

  const sources = listSources({ env: opts.env, home, cwd, platform });
  if (claude.managedMcp) {
    // managed-mcp.json has exclusive control: only its servers load, from any client.
    loadFile(claude.managedMcp, { kind: "file", path: claude.managedMcp, format: "shared", client: "claude-code", scope: "managed", explicit: true });
    for (const spec of sources) {
      looked.push({ path: spec.path, client: spec.client, scope: spec.scope, status: "ignored", note: `${claude.managedMcp} has exclusive control over MCP servers` });
    }
  } else {
    for (const spec of sources) {
      if (spec.kind === "dir") loadDir(spec.path, spec);
      else if (spec.kind === "file") loadFile(spec.path, spec);
      else if (isDir(spec.path)) loadDir(spec.path, spec);
      else loadFile(spec.path, spec);
    }
  }

  const servers = assignAliases(order.map((n) => claims.get(n)!.server!));
  return { servers, problems, skipped, searched, looked, trustFile };
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
