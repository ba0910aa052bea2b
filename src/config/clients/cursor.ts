/**
 * Cursor: `.cursor/mcp.json` in the project (and, like Cursor's CLI, its parents; closest first) beats
 * the global `~/.cursor/mcp.json`. `mcpServers` with command/args/env/envFile or url/headers (a URL
 * without type is Streamable HTTP), `auth{CLIENT_ID, CLIENT_SECRET, scopes}` a static OAuth client.
 * `${env:NAME}`, `${userHome}`, `${workspaceFolder}` expand.
 */
import * as path from "node:path";
import { mapEntries, type EntryOptions } from "./entry.ts";
import type { Candidate, ClientReader } from "./types.ts";

const OPTS: EntryOptions = { urlType: "http", envFile: true, oauth: "cursor" };

export const cursor: ClientReader = {
  id: "cursor",
  read(ctx) {
    const out: Candidate[] = [];
    const global = path.join(ctx.home, ".cursor", "mcp.json");
    for (const dir of ctx.parents()) {
      const file = path.join(dir, ".cursor", "mcp.json");
      if (file === global) continue;
      const data = ctx.read(file, "json", "project");
      if (data) out.push(...mapEntries(ctx, file, data.mcpServers, ["mcpServers"], { scope: "project", syntax: "cursor" }, OPTS));
    }
    const data = ctx.read(global, "json", "user");
    if (data) out.push(...mapEntries(ctx, global, data.mcpServers, ["mcpServers"], { scope: "user", syntax: "cursor" }, OPTS));
    return out;
  },
};
