/**
 * OpenAI Codex (CLI, app and IDE share it): `~/.codex/config.toml` (CODEX_HOME moves it; user scope)
 * and `.codex/config.toml` in the project (read by Codex in trusted projects only; here project scope,
 * approved by `[projects."<path>"] trust_level = "trusted"`). Closest file first. Tables
 * `[mcp_servers.NAME]`: command/args/env/env_vars/cwd, or url with bearer_token_env_var, http_headers,
 * env_http_headers; `enabled = false` turns one off. Codex substitutes no variables: env_vars and
 * bearer_token_env_var name variables of the environment instead.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as z from "zod";
import type { Definition } from "../definition.ts";
import { envValue } from "../server-sources.ts";
import { typeName, validate, type PathSegment } from "../server-schemas.ts";
import type { Scope } from "../looked.ts";
import { serverMapOf } from "./entry.ts";
import type { Candidate, ClientReader, ReadContext } from "./types.ts";

const StrMap = z.record(z.string(), z.string());
const CodexServerSchema = z.looseObject({
  command: z.string().min(1, "must not be empty").optional().describe("Executable (stdio)"),
  args: z.array(z.string()).optional(),
  env: StrMap.optional().describe("Environment variables set for the server"),
  env_vars: z
    .array(z.union([z.string(), z.looseObject({ name: z.string() })]))
    .optional()
    .describe("Variables passed through from the environment"),
  cwd: z.string().optional(),
  url: z.string().min(1).optional().describe("Streamable HTTP endpoint"),
  bearer_token_env_var: z.string().optional().describe("Variable holding the bearer token"),
  http_headers: StrMap.optional(),
  env_http_headers: StrMap.optional().describe("Header -> variable holding its value"),
  enabled: z.boolean().optional(),
});

export function codexHome(ctx: Pick<ReadContext, "env" | "home" | "platform">): string {
  return envValue(ctx.env, "CODEX_HOME", ctx.platform)?.trim() || path.join(ctx.home, ".codex");
}

export const codex: ClientReader = {
  id: "codex",
  read(ctx) {
    const userFile = path.join(codexHome(ctx), "config.toml");
    const userCfg = ctx.read(userFile, "toml", "user");
    const approval = projectTrust(userCfg, ctx, userFile);
    const out: Candidate[] = [];
    for (const dir of ctx.parents()) {
      const file = path.join(dir, ".codex", "config.toml");
      if (file === userFile) continue;
      const data = ctx.read(file, "toml", "project", approval ? undefined : "Codex reads it only in a trusted project");
      if (data) out.push(...tables(ctx, file, data, "project", approval));
    }
    if (userCfg) out.push(...tables(ctx, userFile, userCfg, "user"));
    // Plugins rank after every config.toml (a config.toml server wins the name).
    if (userCfg) out.push(...plugins(ctx, userCfg));
    return out;
  },
};

/**
 * The servers of plugins `[plugins."<plugin>@<marketplace>"] enabled = true` turns on, as Codex 0.171
 * loads them from its install copy (`plugins/cache/<marketplace>/<plugin>/<version>`): the manifest's
 * `mcpServers` (`.codex-plugin/plugin.json`, else `.claude-plugin/plugin.json`; inline, or a path in the
 * plugin) when it has them, else the plugin's `.mcp.json`. Entries are read as Codex reads its own (it
 * substitutes no variables and sets none, and a Claude-style `headers` is not one of its keys). Checked
 * against `codex plugin add` and `codex mcp list`: test/clients/codex-plugins.test.ts.
 */
function plugins(ctx: ReadContext, cfg: Record<string, unknown>): Candidate[] {
  const table = cfg.plugins;
  if (!table || typeof table !== "object") return [];
  const out: Candidate[] = [];
  for (const [id, p] of Object.entries(table as Record<string, unknown>)) {
    if ((p as { enabled?: unknown } | null)?.enabled !== true) continue;
    const at = id.lastIndexOf("@");
    if (at <= 0) continue;
    const dir = path.join(codexHome(ctx), "plugins", "cache", id.slice(at + 1), id.slice(0, at));
    const root = newestVersion(ctx, dir);
    if (!root) {
      ctx.ignore(dir, "user", `plugin ${id} is turned on in Codex but not installed (no copy in its plugin cache)`);
      continue;
    }
    const manifestFile = [path.join(root, ".codex-plugin", "plugin.json"), path.join(root, ".claude-plugin", "plugin.json")].find((f) =>
      ctx.exists(f),
    );
    const inline = manifestFile ? ctx.peek(manifestFile)?.mcpServers : undefined;
    if (inline && typeof inline === "object" && !Array.isArray(inline)) {
      out.push(...servers(ctx, manifestFile!, inline, ["mcpServers"], "user"));
      continue;
    }
    const file = typeof inline === "string" ? path.resolve(root, inline) : path.join(root, ".mcp.json");
    if (typeof inline !== "string" && !ctx.exists(file)) continue;
    const data = ctx.read(file, "json", "user", `Codex plugin ${id}`);
    if (data) {
      const { map, at } = serverMapOf(data);
      out.push(...servers(ctx, file, map, at, "user"));
    }
  }
  return out;
}

/** The plugin's install copy: its one version folder (the newest, should there be more). */
function newestVersion(ctx: ReadContext, dir: string): string | undefined {
  if (!ctx.isDir(dir)) return undefined;
  let best: { path: string; mtime: number } | undefined;
  for (const name of ctx.list(dir, "user")) {
    const p = path.join(dir, name);
    let mtime: number;
    try {
      const st = fs.statSync(p);
      if (!st.isDirectory()) continue;
      mtime = st.mtimeMs;
    } catch {
      continue;
    }
    if (!best || mtime > best.mtime) best = { path: p, mtime };
  }
  return best?.path;
}

function projectTrust(cfg: Record<string, unknown> | undefined, ctx: ReadContext, file: string): string | undefined {
  const projects = cfg?.projects;
  if (!projects || typeof projects !== "object") return undefined;
  for (const dir of ctx.parents()) {
    const p = (projects as Record<string, unknown>)[dir];
    if (p && typeof p === "object" && (p as Record<string, unknown>).trust_level === "trusted")
      return `project trusted in Codex (projects.${JSON.stringify(dir)}.trust_level in ${file})`;
    if (p && typeof p === "object" && (p as Record<string, unknown>).trust_level === "untrusted") return undefined;
  }
  return undefined;
}

function tables(ctx: ReadContext, file: string, data: Record<string, unknown>, scope: Scope, approval?: string): Candidate[] {
  return servers(ctx, file, data.mcp_servers, ["mcp_servers"], scope, approval);
}

/** Codex's server entries of one map (`[mcp_servers]` of a config.toml, or a plugin's JSON map at `where`). */
function servers(ctx: ReadContext, file: string, map: unknown, where: PathSegment[], scope: Scope, approval?: string): Candidate[] {
  if (map === undefined) return [];
  if (map === null || typeof map !== "object" || Array.isArray(map)) {
    ctx.problem(file, where, `expected a table, received ${typeName(map)}`);
    return [];
  }
  const out: Candidate[] = [];
  for (const [name, raw] of Object.entries(map as Record<string, unknown>)) {
    const at: PathSegment[] = [...where, name];
    const v = validate(CodexServerSchema, raw);
    if (!v.ok) {
      for (const i of v.issues) ctx.problem(file, [...at, ...i.path], i.message);
      continue;
    }
    const e = v.data;
    const base = { name, file, at, scope, raw: raw as Record<string, unknown>, syntax: "none" as const, approval };
    if (e.enabled === false) {
      out.push({ ...base, off: "disabled (enabled = false)" });
      continue;
    }
    let def: Definition;
    if (e.command !== undefined) {
      def = {
        type: "stdio",
        command: e.command,
        args: e.args ?? [],
        env: e.env ?? {},
        passEnv: (e.env_vars ?? []).map((x) => ({ name: typeof x === "string" ? x : x.name })),
      };
      if (e.cwd !== undefined) def.cwd = e.cwd;
    } else if (e.url !== undefined) {
      def = {
        type: "http",
        url: e.url,
        headers: e.http_headers ?? {},
        headersFromEnv: Object.entries(e.env_http_headers ?? {}).map(([header, env]) => ({ header, env })),
      };
      if (e.bearer_token_env_var) def.headersFromEnv!.push({ header: "Authorization", env: e.bearer_token_env_var, prefix: "Bearer " });
      else def.oauth = true;
    } else {
      ctx.problem(file, at, 'expected "command" (stdio server) or "url" (Streamable HTTP server)');
      continue;
    }
    out.push({ ...base, def });
  }
  return out;
}
