/**
 * GitHub Copilot CLI (rules read off version 1.0.102's behaviour; test/clients/copilot-plugins.test.ts
 * checks them against the real CLI). Its home is `$COPILOT_HOME`, else `~/.copilot`.
 * - User servers: `mcp-config.json`. Workspace servers: in each folder from here up to the repository's
 *   root (only this folder outside a git repository), `.mcp.json`, or `.github/mcp.json` where there is
 *   none; Copilot CLI loads them in folders the user trusted (`trustedFolders`, or the older
 *   `trusted_folders`, in config.json), which is then the approval of those servers.
 * - Plugins' servers (copilot-cli-plugins.ts). A name: a plugin's wins over a workspace file's (the
 *   deeper folder's first), which wins over the user's.
 * - `disabledMcpServers` of settings.json and, in a trusted repository, of its
 *   `.github/copilot/settings.json` and `settings.local.json` turn servers off by name (the lists add
 *   up); so does `"disabled": true` on an entry. Plugins are turned on by `enabledPlugins` in those files
 *   and in the repository's `.claude/settings.json` and `settings.local.json`.
 * - `$VAR`, `${VAR}` and `${VAR:-default}` are taken from the environment; an unset one is kept as written.
 */
import * as path from "node:path";
import type { Scope } from "../looked.ts";
import { envValue, insideFolder, upToRepoRoot } from "../server-sources.ts";
import { readCopilotPlugins, type PluginSettings } from "./copilot-cli-plugins.ts";
import { mapEntries, type EntryOptions } from "./entry.ts";
import { isObj } from "./merge.ts";
import type { Candidate, ClientReader, ReadContext } from "./types.ts";

const OPTS: EntryOptions = { urlType: "http", typeAliases: { local: "stdio" }, disabledFlag: true };

export const copilotCli: ClientReader = {
  id: "copilot-cli",
  read(ctx) {
    const home = envValue(ctx.env, "COPILOT_HOME", ctx.platform)?.trim() || path.join(ctx.home, ".copilot");
    const configFile = path.join(home, "config.json");
    const config = ctx.peek(configFile);
    const folders = repoFolders(ctx);
    const trust = trustedBy(ctx, config, configFile);

    // Settings: the user's, then (in a trusted repository) the repository's, later files winning a plugin.
    const layers: Array<{ file: string; scope: Scope; disables: boolean }> = [
      { file: path.join(home, "settings.json"), scope: "user", disables: true },
    ];
    const repo = folders.repoRoot;
    if (repo && trust(repo)) {
      for (const f of [".claude/settings.json", ".claude/settings.local.json"])
        layers.push({ file: path.join(repo, f), scope: "project", disables: false });
      for (const f of [".github/copilot/settings.json", ".github/copilot/settings.local.json"])
        layers.push({ file: path.join(repo, f), scope: "project", disables: true });
    }
    const disabled = new Map<string, string>();
    const plugins: PluginSettings = { marketplaces: new Map() };
    for (const layer of layers) {
      const data = ctx.exists(layer.file) ? ctx.read(layer.file, "json", layer.scope, "GitHub Copilot CLI settings") : undefined;
      if (!data) continue;
      if (layer.disables && Array.isArray(data.disabledMcpServers))
        for (const n of data.disabledMcpServers) if (typeof n === "string" && !disabled.has(n)) disabled.set(n, layer.file);
      if (isObj(data.enabledPlugins)) {
        plugins.enabled ??= new Map();
        for (const [id, on] of Object.entries(data.enabledPlugins))
          if (typeof on === "boolean") plugins.enabled.set(id, { on, file: layer.file, scope: layer.scope });
      }
      if (isObj(data.extraKnownMarketplaces))
        for (const [name, m] of Object.entries(data.extraKnownMarketplaces))
          if (isObj(m)) plugins.marketplaces.set(name, { source: m.source, file: layer.file, scope: layer.scope });
    }

    const out = readCopilotPlugins(ctx, home, config, plugins, OPTS);
    for (const dir of folders.dirs) {
      const approval = trust(dir);
      const mcpJson = path.join(dir, ".mcp.json");
      const github = path.join(dir, ".github", "mcp.json");
      const hidden = ctx.exists(mcpJson);
      if (hidden && ctx.exists(github)) ctx.ignore(github, "project", `GitHub Copilot CLI reads ${mcpJson} in this folder instead`);
      const file = hidden ? mcpJson : github;
      const data = ctx.read(file, "json", "project");
      if (data)
        out.push(...mapEntries(ctx, file, data.mcpServers, ["mcpServers"], { scope: "project", syntax: "copilot", approval }, OPTS));
    }
    const user = path.join(home, "mcp-config.json");
    const data = ctx.read(user, "json", "user");
    if (data) out.push(...mapEntries(ctx, user, data.mcpServers, ["mcpServers"], { scope: "user", syntax: "copilot" }, OPTS));
    for (const c of out) {
      const by = disabled.get(c.name);
      if (by && !c.off) c.off = `disabled in GitHub Copilot CLI (disabledMcpServers in ${by})`;
    }
    return out;
  },
};

/** The folders whose workspace files count, deepest first: up to the repository's root, or this folder alone. */
function repoFolders(ctx: ReadContext): { dirs: string[]; repoRoot?: string } {
  const { dirs, root } = upToRepoRoot(ctx.parents(), ctx.exists);
  return root ? { dirs, repoRoot: root } : { dirs: [ctx.cwd] };
}

/** Whether Copilot CLI trusts a folder, as the approval text when it does. */
function trustedBy(ctx: ReadContext, config: Record<string, unknown> | undefined, configFile: string): (dir: string) => string | undefined {
  if (envValue(ctx.env, "COPILOT_ALLOW_ALL", ctx.platform) === "true")
    return () => "every folder trusted in GitHub Copilot CLI (COPILOT_ALLOW_ALL=true)";
  const folders = [config?.trustedFolders, config?.trusted_folders].flatMap((v) =>
    Array.isArray(v) ? v.filter((f): f is string => typeof f === "string") : [],
  );
  return (dir) => {
    const hit = folders.find((f) => insideFolder(f, dir) !== undefined);
    return hit ? `folder trusted in GitHub Copilot CLI (trustedFolders in ${configFile}: ${hit})` : undefined;
  };
}
