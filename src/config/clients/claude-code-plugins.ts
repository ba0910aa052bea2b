/**
 * Claude Code plugins' MCP servers: a plugin turned on in `enabledPlugins` (claude-code-settings.ts) and
 * installed for this folder (`~/.claude/plugins/installed_plugins.json`: at user scope, or at project or
 * local scope for this folder) brings the servers of its `.mcp.json` and of its manifest's `mcpServers`
 * (`.claude-plugin/plugin.json`: inline, or a path in the plugin). Claude Code names them
 * `plugin:<plugin>:<server>`, expands `${CLAUDE_PROJECT_DIR}` (the folder), `${CLAUDE_PLUGIN_ROOT}` (the plugin's folder: its install copy, or
 * for a marketplace that is a local folder, the plugin's folder there) and `${CLAUDE_PLUGIN_DATA}`
 * (`~/.claude/plugins/data/<plugin>-<marketplace>`), gives the server both as variables, and ranks
 * plugins after user scope. Checked against `claude plugin install` and `claude mcp list` (Claude Code
 * 2.1.332): test/clients/claude-plugins.test.ts.
 */
import * as path from "node:path";
import { findProjectKey } from "../server-sources.ts";
import { mapStrings } from "../variables.ts";
import { manifestServers, mapEntries, pluginServerFile, type EntryOptions, type PluginServerMap } from "./entry.ts";
import type { Candidate, ReadContext } from "./types.ts";

interface Install {
  scope: string;
  installPath: string;
  projectPath?: string;
}

/** The candidates of every enabled, installed plugin, in the order Claude Code lists them. */
export function readPlugins(ctx: ReadContext, opts: EntryOptions): Candidate[] {
  const c = ctx.claude;
  const enabled = [...c.plugins].filter(([, t]) => t.enabled);
  if (enabled.length === 0) return [];
  const dir = path.join(c.configDir, "plugins");
  const list = path.join(dir, "installed_plugins.json");
  const installed = ctx.read(list, "json", "user", "Claude Code plugins: where each is installed");
  const marketplaces = ctx.peek(path.join(dir, "known_marketplaces.json"));
  const out: Candidate[] = [];
  for (const [id, toggle] of enabled) {
    const at = id.lastIndexOf("@");
    const plugin = at > 0 ? id.slice(0, at) : id;
    const marketplace = at > 0 ? id.slice(at + 1) : "";
    const install = pickInstall(installed?.plugins, id, ctx);
    if (!install) {
      ctx.ignore(list, "user", `plugin ${id} is turned on in ${toggle.source} but not installed for this folder`);
      continue;
    }
    const root = localSource(ctx, marketplaces, marketplace, plugin) ?? install.installPath;
    const data = path.join(dir, "data", `${plugin}-${marketplace}`);
    // A user-scope install is the user's own choice; one for this folder was made by the user in it too
    // (Claude Code asks before it installs a plugin a repository names).
    const scope = install.scope === "user" || install.scope === "managed" ? "user" : "project";
    const approval = scope === "project" ? `installed for this folder in Claude Code (${install.scope} scope)` : undefined;
    const base = { scope, syntax: "claude", approval } as const;
    const add = (found: PluginServerMap | undefined) => {
      if (!found) return;
      for (const cand of mapEntries(ctx, found.file, expandPluginVars(found.map, root, data, ctx.cwd), found.at, base, opts)) {
        cand.name = `plugin:${plugin}:${cand.name}`;
        if (cand.def?.type === "stdio") cand.def.env = { CLAUDE_PLUGIN_ROOT: root, CLAUDE_PLUGIN_DATA: data, ...cand.def.env };
        if (/\$\{user_config\./.test(JSON.stringify(cand.raw)))
          cand.off = `it uses the plugin's \${user_config.*} values, which Claude Code keeps in its own secure storage: define the server yourself (claude mcp add) to use it here`;
        out.push(cand);
      }
    };
    // Claude Code reads both: the plugin's .mcp.json and its manifest's mcpServers.
    const mcpJson = path.join(root, ".mcp.json");
    if (ctx.exists(mcpJson)) add(pluginServerFile(ctx, mcpJson, base.scope, `plugin ${id}`));
    const manifestFile = path.join(root, ".claude-plugin", "plugin.json");
    if (ctx.exists(manifestFile)) add(manifestServers(ctx, root, manifestFile, base.scope, `plugin ${id}`));
  }
  return out;
}

/** The install that serves this folder: local or project scope for it, else user (or managed) scope. */
function pickInstall(plugins: unknown, id: string, ctx: ReadContext): Install | undefined {
  if (!plugins || typeof plugins !== "object") return undefined;
  const raw = (plugins as Record<string, unknown>)[id];
  // installed_plugins.json version 1 held one record per plugin, always at user scope.
  const records = (Array.isArray(raw) ? raw : raw && typeof raw === "object" ? [{ scope: "user", ...raw }] : []).filter(
    (r): r is Install => !!r && typeof r === "object" && typeof (r as Install).installPath === "string",
  );
  const forHere = (scope: string) =>
    records.find((r) => r.scope === scope && typeof r.projectPath === "string" && findProjectKey([r.projectPath], ctx.cwd, ctx.platform));
  return forHere("local") ?? forHere("project") ?? records.find((r) => r.scope === "user" || r.scope === "managed");
}

/** A marketplace that is a local folder: Claude Code runs its plugins from there, not from the copy. */
function localSource(
  ctx: ReadContext,
  known: Record<string, unknown> | undefined,
  marketplace: string,
  plugin: string,
): string | undefined {
  const m = known?.[marketplace] as { source?: { source?: string; path?: string }; installLocation?: string } | undefined;
  if (m?.source?.source !== "directory") return undefined;
  const location = m.installLocation ?? m.source.path;
  if (typeof location !== "string") return undefined;
  const catalog = ctx.peek(path.join(location, ".claude-plugin", "marketplace.json"));
  const entry = Array.isArray(catalog?.plugins)
    ? (catalog.plugins as Array<{ name?: unknown; source?: unknown }>).find((p) => p?.name === plugin)
    : undefined;
  return typeof entry?.source === "string" ? path.resolve(location, entry.source) : undefined;
}

/** `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}` and `${CLAUDE_PROJECT_DIR}` in every string of a definition map. */
function expandPluginVars(value: unknown, root: string, data: string, project: string): unknown {
  return mapStrings(value, (s) =>
    s
      .replace(/\$\{CLAUDE_PLUGIN_ROOT\}/g, () => root)
      .replace(/\$\{CLAUDE_PLUGIN_DATA\}/g, () => data)
      .replace(/\$\{CLAUDE_PROJECT_DIR\}/g, () => project),
  );
}
