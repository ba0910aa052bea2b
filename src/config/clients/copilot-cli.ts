/**
 * GitHub Copilot CLI: `~/.copilot/mcp-config.json` (COPILOT_HOME moves it; user scope) and, in the
 * repository, `.github/mcp.json` (project scope; `.mcp.json` is the same file Claude Code reads, read
 * once). `mcpServers` with `type` local/stdio/http/sse. A folder listed in `trusted_folders` of
 * ~/.copilot/config.json counts as the client's approval of the repository's servers.
 */
import * as path from "node:path";
import { envValue } from "../server-sources.ts";
import { mapEntries, type EntryOptions } from "./entry.ts";
import type { Candidate, ClientReader, ReadContext } from "./types.ts";

const OPTS: EntryOptions = { urlType: "http", typeAliases: { local: "stdio" } };

export const copilotCli: ClientReader = {
  id: "copilot-cli",
  read(ctx) {
    const dir = envValue(ctx.env, "COPILOT_HOME", ctx.platform)?.trim() || path.join(ctx.home, ".copilot");
    const approval = trustedFolder(ctx, path.join(dir, "config.json"));
    const out: Candidate[] = [];
    for (const file of [path.join(ctx.cwd, ".github", "mcp.json"), path.join(ctx.cwd, ".mcp.json")]) {
      const data = ctx.read(file, "json", "project");
      if (data) out.push(...mapEntries(ctx, file, data.mcpServers, ["mcpServers"], { scope: "project", syntax: "none", approval }, OPTS));
    }
    const user = path.join(dir, "mcp-config.json");
    const data = ctx.read(user, "json", "user");
    if (data) out.push(...mapEntries(ctx, user, data.mcpServers, ["mcpServers"], { scope: "user", syntax: "none" }, OPTS));
    return out;
  },
};

function trustedFolder(ctx: ReadContext, configFile: string): string | undefined {
  const cfg = ctx.peek(configFile);
  const folders = Array.isArray(cfg?.trusted_folders)
    ? (cfg!.trusted_folders as unknown[]).filter((f): f is string => typeof f === "string")
    : [];
  const cwd = path.resolve(ctx.cwd);
  const hit = folders.find((f) => {
    const rel = path.relative(path.resolve(f), cwd);
    return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
  });
  return hit ? `folder trusted in GitHub Copilot CLI (trusted_folders in ${configFile}: ${hit})` : undefined;
}
