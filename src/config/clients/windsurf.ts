/**
 * Windsurf: `~/.codeium/windsurf/mcp_config.json`, `mcpServers`; a remote server has `serverUrl` (or
 * `url`); `disabled: true` turns one off; `${env:VAR}` and `${file:/path}` expand.
 */
import * as path from "node:path";
import { mapEntries } from "./entry.ts";
import type { ClientReader } from "./types.ts";

export const windsurf: ClientReader = {
  id: "windsurf",
  read(ctx) {
    const file = path.join(ctx.home, ".codeium", "windsurf", "mcp_config.json");
    const data = ctx.read(file, "json", "user");
    return data
      ? mapEntries(
          ctx,
          file,
          data.mcpServers,
          ["mcpServers"],
          { scope: "user", syntax: "windsurf" },
          { urlType: "http", urlKeys: { serverUrl: "default", url: "default" }, disabledFlag: true },
        )
      : [];
  },
};
