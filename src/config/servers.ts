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

export type { ServerTransport } from "./server-entry.ts";
export { toPythonAlias } from "./server-alias.ts";

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
}
export interface Discovery {
  servers: ServerEntry[];
  problems: ConfigProblem[];
  skipped: SkippedEntry[];
  /** Every file and folder looked at, in order (existing or not). */
  searched: string[];
}
export interface DiscoverOptions {
  env: Record<string, string | undefined>;
  home: string;
  cwd: string;
  platform?: NodeJS.Platform;
  /** Paths of the running bridge binary/script; entries launching them are skipped. */
  selfPaths?: string[];
}

export function formatProblem(p: ConfigProblem): string {
  return p.path ? `${p.file}: ${p.path}: ${p.message}` : `${p.file}: ${p.message}`;
}

interface Claim {
  source: string;
  /** undefined = a disabled entry claimed the name. */
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
  const claims = new Map<string, Claim>();
  const order: string[] = [];
  const loaded = new Set<string>();

  const look = (p: string) => {
    if (!searched.includes(p)) searched.push(p);
  };
  const problem = (file: string, at: readonly PathSegment[] | string, message: string) =>
    problems.push({ file, path: typeof at === "string" ? at : formatJsonPath(at), message });

  const addEntry = (file: string, name: string, raw: unknown, at: PathSegment[]) => {
    const prior = claims.get(name);
    if (prior) {
      if (prior.server) prior.server.shadowed.push(file);
      else skipped.push({ name, source: file, reason: `disabled by ${prior.source}` });
      return;
    }
    if (name.trim() === "") return problem(file, at, "server name must not be empty");
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      return problem(file, at, `expected object, received ${typeName(raw)}`);
    }
    const obj = raw as Record<string, unknown>;
    if (obj.disabled === true) {
      // Claims the name: a disabled entry in an earlier source turns the server off.
      claims.set(name, { source: file });
      skipped.push({ name, source: file, reason: "disabled" });
      return;
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
    claims.set(name, {
      source: file,
      server: { name, transport, source: file, shadowed: [], configHash: hashTransport(transport) },
    });
    order.push(name);
  };

  const addMap = (file: string, map: Record<string, unknown> | undefined, at: PathSegment[]) => {
    for (const [name, raw] of Object.entries(map ?? {})) addEntry(file, name, raw, [...at, name]);
  };

  const loadFile = (file: string, spec: SourceSpec) => {
    look(file);
    let key = file;
    try {
      key = fs.realpathSync(file);
    } catch {
      // missing: handled below
    }
    if (loaded.has(key)) return; // same file reached twice (e.g. cwd === home)
    const read = readJsonObject(file);
    if (read.status === "missing") {
      if (spec.explicit) problem(file, "", "MCP_BRIDGE_CONFIG names a path that does not exist");
      return;
    }
    loaded.add(key);
    if (read.status === "error") return problem(file, "", read.message);
    const obj = read.data;

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
          addMap(file, pk("mcpServers"), [...at, "mcpServers"]);
        }
      }
      addMap(file, top("mcpServers"), ["mcpServers"]);
      addMap(file, top("servers"), ["servers"]);
      return;
    }

    const hasKeys = obj.mcpServers !== undefined || obj.servers !== undefined;
    if (!hasKeys && spec.format === "dedicated") {
      if (obj.command !== undefined || obj.url !== undefined) {
        // A file holding one server definition, named after the file.
        return addEntry(file, path.basename(file).replace(/\.jsonc?$/i, ""), obj, []);
      }
      return problem(file, "", 'expected an "mcpServers" (or "servers") object, or a single server definition with "command" or "url"');
    }
    const keys = validKeys(ConfigFileSchema, obj, file, []);
    addMap(file, keys("mcpServers"), ["mcpServers"]);
    addMap(file, keys("servers"), ["servers"]);
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
      if (code !== "ENOENT" && code !== "ENOTDIR") problem(dir, "", `cannot read folder: ${(e as Error).message}`);
      return;
    }
    const files = names.filter((n) => !n.startsWith(".") && n.toLowerCase().endsWith(".json")).sort();
    for (const n of files) {
      const file = path.join(dir, n);
      if (isDir(file)) continue;
      loadFile(file, spec);
    }
  };

  for (const spec of listSources({ env: opts.env, home, cwd, platform })) {
    if (spec.kind === "dir") loadDir(spec.path, spec);
    else if (spec.kind === "file") loadFile(spec.path, spec);
    else if (isDir(spec.path)) loadDir(spec.path, spec);
    else loadFile(spec.path, spec);
  }

  const servers = assignAliases(order.map((n) => claims.get(n)!.server!));
  return { servers, problems, skipped, searched };
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
