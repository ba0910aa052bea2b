/**
 * GitHub Copilot CLI plugins' MCP servers, as Copilot CLI 1.0.102 decides them (read off its behaviour:
 * the rules live in its native runtime, not its JavaScript; test/clients/copilot-plugins.test.ts runs
 * the real CLI):
 * - A plugin `name@marketplace` is on when the settings' merged `enabledPlugins` say true; when no
 *   settings file has `enabledPlugins`, the `enabled` of its record in config.json's `installedPlugins`
 *   decides. A plugin installed straight from a folder or repository (marketplace "") is on by that
 *   record alone.
 * - Where it runs from: a marketplace that is a local folder (`extraKnownMarketplaces`, source
 *   `directory`) serves its plugins live from that folder; any other install is a copy in
 *   `<copilot home>/installed-plugins/<marketplace>/<plugin>` (`_direct/<plugin>` for direct installs).
 * - Its servers: the plugin's `.mcp.json` (the map itself or `{"mcpServers": ...}`), else its manifest's
 *   `mcpServers` (inline, or a path in the plugin); the manifest is the first of `.plugin/plugin.json`,
 *   `.github/plugin/plugin.json`, `.claude-plugin/plugin.json`, `plugin.json`. Names are the bare keys.
 * - `${COPILOT_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_ROOT}` and `${PLUGIN_ROOT}` are the plugin's folder, which
 *   is also the server's working folder and is given to it as those three variables.
 */
import * as path from "node:path";
import type { Scope } from "../looked.ts";
import { mapStrings } from "../variables.ts";
import { manifestServers, mapEntries, pluginServerFile, type EntryOptions, type PluginServerMap } from "./entry.ts";
import { isObj } from "./merge.ts";
import type { Candidate, ReadContext } from "./types.ts";

/** What the settings layers (user, then the trusted repository's files) say about plugins. */
export interface PluginSettings {
  /** Merged `enabledPlugins` (a later layer wins a key), with the file that set each; undefined when no layer has the key. */
  enabled?: Map<string, { on: boolean; file: string; scope: Scope }>;
  /** Merged `extraKnownMarketplaces`: name -> its entry and the file that named it. */
  marketplaces: Map<string, { source: unknown; file: string; scope: Scope }>;
}

interface Installed {
  name: string;
  marketplace: string;
  enabled?: unknown;
  cache_path?: unknown;
}

const MANIFESTS = [".plugin/plugin.json", ".github/plugin/plugin.json", ".claude-plugin/plugin.json", "plugin.json"];
const CATALOGS = ["marketplace.json", ".plugin/marketplace.json", ".github/plugin/marketplace.json", ".claude-plugin/marketplace.json"];
const ROOT_VARS = ["COPILOT_PLUGIN_ROOT", "CLAUDE_PLUGIN_ROOT", "PLUGIN_ROOT"];

export function readCopilotPlugins(
  ctx: ReadContext,
  home: string,
  config: Record<string, unknown> | undefined,
  settings: PluginSettings,
  opts: EntryOptions,
): Candidate[] {
  const configFile = path.join(home, "config.json");
  const installed = (Array.isArray(config?.installedPlugins) ? config.installedPlugins : []).filter(
    (r): r is Installed => isObj(r) && typeof r.name === "string" && typeof r.marketplace === "string",
  );
  const out: Candidate[] = [];
  const ids = new Set<string>([
    ...(settings.enabled?.keys() ?? []),
    ...installed.map((r) => (r.marketplace ? `${r.name}@${r.marketplace}` : r.name)),
  ]);
  for (const id of ids) {
    const at = id.lastIndexOf("@");
    const plugin = at > 0 ? id.slice(0, at) : id;
    const marketplace = at > 0 ? id.slice(at + 1) : "";
    const record = installed.find((r) => r.name === plugin && r.marketplace === marketplace);
    const toggle = marketplace ? settings.enabled?.get(id) : undefined;
    const on = marketplace && settings.enabled ? toggle?.on === true : record?.enabled === true;
    if (!on) continue;
    // Turned on, or its marketplace named, by a repository's settings file: the repository chose what runs
    // (in a folder the user trusts in Copilot CLI: those files are read nowhere else).
    const market = settings.marketplaces.get(marketplace);
    const fromRepo = [toggle, market].find((x) => x?.scope === "project");
    const scope: Scope = fromRepo ? "project" : "user";
    const root =
      liveRoot(ctx, market?.source, plugin) ??
      (typeof record?.cache_path === "string" ? record.cache_path : path.join(home, "installed-plugins", marketplace || "_direct", plugin));
    if (!ctx.isDir(root)) {
      ctx.ignore(root, scope, `plugin ${id} is turned on in ${toggle?.file ?? configFile} but is not installed`);
      continue;
    }
    const approval = fromRepo ? `plugin named in ${fromRepo.file}, in a folder trusted in GitHub Copilot CLI` : undefined;
    const base = { scope, syntax: "copilot", approval } as const;
    const add = (found: PluginServerMap | undefined) => {
      if (!found) return;
      const expanded = mapStrings(found.map, (s) => s.replace(/\$\{(COPILOT_PLUGIN_ROOT|CLAUDE_PLUGIN_ROOT|PLUGIN_ROOT)\}/g, () => root));
      for (const cand of mapEntries(ctx, found.file, expanded, found.at, base, opts)) {
        if (cand.def?.type === "stdio") {
          cand.def.cwd ??= root;
          cand.def.env = { ...Object.fromEntries(ROOT_VARS.map((v) => [v, root])), ...cand.def.env };
        }
        out.push(cand);
      }
    };
    // Copilot CLI reads the manifest's servers only when the plugin has no .mcp.json.
    const mcpJson = path.join(root, ".mcp.json");
    if (ctx.exists(mcpJson)) {
      add(pluginServerFile(ctx, mcpJson, scope, `plugin ${id}`));
      continue;
    }
    const manifestFile = MANIFESTS.map((m) => path.join(root, m)).find((f) => ctx.exists(f));
    if (manifestFile) add(manifestServers(ctx, root, manifestFile, scope, `plugin ${id}`));
  }
  return out;
}

/** A marketplace that is a local folder serves its plugins from there: the plugin's folder in it. */
function liveRoot(ctx: ReadContext, source: unknown, plugin: string): string | undefined {
  if (!isObj(source) || source.source !== "directory" || typeof source.path !== "string") return undefined;
  const dir = path.resolve(ctx.cwd, source.path);
  const catalogFile = CATALOGS.map((c) => path.join(dir, c)).find((f) => ctx.exists(f));
  const catalog = catalogFile ? ctx.peek(catalogFile) : undefined;
  const entry = Array.isArray(catalog?.plugins)
    ? (catalog.plugins as Array<{ name?: unknown; source?: unknown }>).find((p) => p?.name === plugin)
    : undefined;
  return typeof entry?.source === "string" ? path.resolve(dir, entry.source) : undefined;
}
