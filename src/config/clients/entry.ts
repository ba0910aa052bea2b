/**
 * The `mcpServers`-style entry most clients share ({command, args, env} or {url, headers}), with each
 * client's variations passed as options: which keys hold the URL, what a URL without a type means,
 * whether env values may be numbers, whether envFile is read.
 */
import * as path from "node:path";
import * as z from "zod";
import type { Definition } from "../definition.ts";
import { typeName, validate, type PathSegment } from "../server-schemas.ts";
import { readHeadersHelper, readOAuthSettings, type OAuthDialect } from "./oauth-settings.ts";
import type { Scope } from "../looked.ts";
import type { Candidate, ReadContext } from "./types.ts";

export interface EntryOptions {
  /** Transport of a URL entry without `type` (undefined: a URL needs an explicit type, as in Claude Code). */
  urlType?: "http" | "sse";
  /** Keys that hold a remote URL, each with the transport it means (default: url -> urlType). */
  urlKeys?: Record<string, "http" | "sse" | "default">;
  /** VS Code: env values may be numbers (turned into strings) or null (left unset). */
  envNumbers?: boolean;
  /** VS Code, Cursor: read `envFile`. */
  envFile?: boolean;
  /** The client has a `disabled: true` flag. */
  disabledFlag?: boolean;
  /** Extra type names this client uses (Copilot CLI "local"). */
  typeAliases?: Record<string, "stdio" | "http" | "sse">;
  /** The client documents OAuth client settings on remote entries, in this dialect. */
  oauth?: OAuthDialect;
  /** Claude Code (and our own files): `headersHelper`, a command run on the host. */
  headersHelper?: boolean;
}

const TYPES: Record<string, "stdio" | "http" | "sse"> = {
  stdio: "stdio",
  http: "http",
  "streamable-http": "http",
  streamableHttp: "http",
  streamable_http: "http",
  sse: "sse",
};

const EntryFields = {
  type: z.string().optional().describe("Transport name"),
  transportType: z.string().optional().describe("Cline's older name for type"),
  command: z.string().min(1, "must not be empty").optional().describe("Executable to launch"),
  args: z.array(z.string()).optional().describe("Arguments"),
  env: z.record(z.string(), z.string()).optional().describe("Environment variables"),
  cwd: z.string().optional().describe("Working directory"),
  envFile: z.string().optional().describe("dotenv file (VS Code, Cursor)"),
  headers: z.record(z.string(), z.string()).optional().describe("HTTP headers"),
  disabled: z.boolean().optional().describe("true: the client does not start it"),
  oauth: z.unknown().optional().describe("OAuth settings: the client signs in and keeps the token"),
};
const EntrySchema = z.looseObject(EntryFields);
/** VS Code: env values may also be numbers or null. */
const NumericEnvEntrySchema = z.looseObject({
  ...EntryFields,
  env: z
    .record(z.string(), z.union([z.string(), z.number(), z.null()]))
    .optional()
    .describe("Environment variables (string, number or null)"),
});

/** Normalise one entry; problems go to ctx (and undefined comes back). */
export function standardEntry(
  ctx: ReadContext,
  file: string,
  raw: unknown,
  at: PathSegment[],
  opts: EntryOptions,
): { def?: Definition; off?: string } {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    ctx.problem(file, at, `expected object, received ${typeName(raw)}`);
    return {};
  }
  const obj = raw as Record<string, unknown>;
  if (opts.disabledFlag && obj.disabled === true) return { off: 'disabled ("disabled": true)' };
  const v = validate<z.infer<typeof NumericEnvEntrySchema>>(opts.envNumbers ? NumericEnvEntrySchema : EntrySchema, obj);
  if (!v.ok) {
    for (const i of v.issues) ctx.problem(file, [...at, ...i.path], i.message);
    return {};
  }
  const e = v.data;
  const typeName_ = e.type ?? e.transportType;
  let type: "stdio" | "http" | "sse" | undefined;
  if (typeName_ !== undefined) {
    type = opts.typeAliases?.[typeName_] ?? TYPES[typeName_];
    if (!type) {
      const known = [...Object.keys(TYPES), ...Object.keys(opts.typeAliases ?? {})].join(", ");
      ctx.problem(
        file,
        [...at, e.type !== undefined ? "type" : "transportType"],
        typeName_ === "ws"
          ? "WebSocket servers are not supported by the bridge"
          : `unknown type ${JSON.stringify(typeName_)}; expected one of ${known}`,
      );
      return {};
    }
  }
  const urlKeys = opts.urlKeys ?? { url: "default" };
  const urlKey = Object.keys(urlKeys).find((k) => typeof obj[k] === "string");
  for (const k of Object.keys(urlKeys)) {
    if (obj[k] !== undefined && typeof obj[k] !== "string") {
      ctx.problem(file, [...at, k], `expected string, received ${typeName(obj[k])}`);
      return {};
    }
  }
  if (type === undefined) {
    if (e.command !== undefined) type = "stdio";
    else if (urlKey !== undefined) {
      const t = urlKeys[urlKey] === "default" ? opts.urlType : (urlKeys[urlKey] as "http" | "sse");
      if (!t) {
        ctx.problem(
          file,
          at,
          `"${urlKey}" without "type": the client skips it (Claude Code 2.1: "has a url but no type"); add "type": "http" (or "sse")`,
        );
        return {};
      }
      type = t;
    } else {
      ctx.problem(
        file,
        at,
        `expected "command" (stdio server) or ${Object.keys(urlKeys)
          .map((k) => `"${k}"`)
          .join(" or ")} (remote server)`,
      );
      return {};
    }
  }
  if (type === "stdio") {
    if (e.command === undefined) {
      ctx.problem(file, [...at, "command"], "required string is missing");
      return {};
    }
    const env: Record<string, string> = {};
    for (const [k, val] of Object.entries(e.env ?? {})) {
      if (typeof val === "string") env[k] = val;
      else if (val !== null) env[k] = String(val);
    }
    const def: Definition = { type, command: e.command, args: e.args ?? [], env };
    if (e.cwd !== undefined) def.cwd = e.cwd;
    if (opts.envFile && e.envFile !== undefined) def.envFile = e.envFile;
    return { def };
  }
  const url = urlKey ? (obj[urlKey] as string) : undefined;
  if (!url) {
    ctx.problem(file, [...at, urlKey ?? "url"], "required string is missing");
    return {};
  }
  const def: Definition = { type, url, headers: e.headers ?? {} };
  if (e.oauth !== undefined && e.oauth !== false) def.oauth = true;
  if (opts.oauth) {
    const { read, issues } = readOAuthSettings(obj, opts.oauth);
    if (issues.length) {
      for (const i of issues) ctx.problem(file, [...at, ...i.path], i.message);
      return {};
    }
    if (read) def.oauthSettings = read;
    if (opts.oauth === "cursor" && obj.auth !== undefined) def.oauth = true;
  }
  if (opts.headersHelper) {
    const { value, issues } = readHeadersHelper(obj);
    if (issues.length) {
      for (const i of issues) ctx.problem(file, [...at, ...i.path], i.message);
      return {};
    }
    if (value !== undefined) def.headersHelper = value;
  }
  return { def };
}

/**
 * The server map of a plugin's server file and its JSON path: `{"mcpServers": {...}}`, or the map
 * itself (as the official Claude Code marketplace's plugins write `.mcp.json`).
 */
export function serverMapOf(data: Record<string, unknown>): { map: unknown; at: PathSegment[] } {
  return data.mcpServers !== undefined ? { map: data.mcpServers, at: ["mcpServers"] } : { map: data, at: [] };
}

/** Where a plugin's server map is: the file, the map, and its JSON path in that file. */
export interface PluginServerMap {
  file: string;
  map: unknown;
  at: PathSegment[];
}

/** A plugin's server file (its `.mcp.json`, or the file its manifest names), in either form. */
export function pluginServerFile(ctx: ReadContext, file: string, scope: Scope, note: string): PluginServerMap | undefined {
  const data = ctx.read(file, "json", scope, note);
  return data ? { file, ...serverMapOf(data) } : undefined;
}

/** A plugin manifest's `mcpServers`: a map written in the manifest, or the path of a file in the plugin. */
export function manifestServers(
  ctx: ReadContext,
  root: string,
  manifestFile: string,
  scope: Scope,
  note: string,
): PluginServerMap | undefined {
  const inline = ctx.peek(manifestFile)?.mcpServers;
  if (typeof inline === "string") return pluginServerFile(ctx, path.resolve(root, inline), scope, note);
  if (!inline || typeof inline !== "object" || Array.isArray(inline)) return undefined;
  const { map, at } = serverMapOf(inline as Record<string, unknown>);
  return { file: manifestFile, map, at: ["mcpServers", ...at] };
}

/** Candidates for every entry of a name -> entry map. */
export function mapEntries(
  ctx: ReadContext,
  file: string,
  map: unknown,
  at: PathSegment[],
  base: Pick<Candidate, "scope" | "syntax" | "approval">,
  opts: EntryOptions,
): Candidate[] {
  if (map === undefined) return [];
  if (map === null || typeof map !== "object" || Array.isArray(map)) {
    ctx.problem(file, at, `expected object, received ${typeName(map)}`);
    return [];
  }
  const out: Candidate[] = [];
  for (const [name, raw] of Object.entries(map as Record<string, unknown>)) {
    if (name.trim() === "") {
      ctx.problem(file, [...at, name], "server name must not be empty");
      continue;
    }
    const { def, off } = standardEntry(ctx, file, raw, [...at, name], opts);
    if (!def && !off) continue;
    out.push({ name, file, at: [...at, name], raw: raw as Record<string, unknown>, def, off, ...base });
  }
  return out;
}
