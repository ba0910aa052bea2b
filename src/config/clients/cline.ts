/**
 * Cline: the VS Code extension's `cline_mcp_settings.json` (in VS Code's globalStorage) and the CLI's
 * `~/.cline/data/settings/cline_mcp_settings.json`. `mcpServers`; `disabled: true`; a URL without a
 * type is SSE (Cline's default), `"type": "streamableHttp"` is Streamable HTTP.
 */
import * as path from "node:path";
import { mapEntries } from "./entry.ts";
import type { Candidate, ClientReader } from "./types.ts";
import { vscodeUserDir } from "./vscode.ts";

export const cline: ClientReader = {
  id: "cline",
  read(ctx) {
    const out: Candidate[] = [];
    const files = [
      path.join(vscodeUserDir(ctx), "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"),
      path.join(ctx.home, ".cline", "data", "settings", "cline_mcp_settings.json"),
    ];
    for (const file of files) {
      const data = ctx.read(file, "json", "user");
      if (data)
        out.push(
          ...mapEntries(
            ctx,
            file,
            data.mcpServers,
            ["mcpServers"],
            { scope: "user", syntax: "none" },
            { urlType: "sse", disabledFlag: true },
          ),
        );
    }
    return out;
  },
};
