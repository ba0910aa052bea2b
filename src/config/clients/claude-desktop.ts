/**
 * Claude Desktop: `claude_desktop_config.json` in the app's folder (macOS ~/Library/Application
 * Support/Claude, Windows %APPDATA%\Claude; Linux is not documented, the community builds use
 * ~/.config/Claude). `mcpServers` with command, args, env; no variable substitution.
 */
import * as path from "node:path";
import { mapEntries } from "./entry.ts";
import type { ClientReader, ReadContext } from "./types.ts";

export function claudeDesktopFile(ctx: Pick<ReadContext, "appConfigDir">): string {
  return path.join(ctx.appConfigDir(), "Claude", "claude_desktop_config.json");
}

export const claudeDesktop: ClientReader = {
  id: "claude-desktop",
  read(ctx) {
    const file = claudeDesktopFile(ctx);
    const data = ctx.read(file, "json", "user");
    return data ? mapEntries(ctx, file, data.mcpServers, ["mcpServers"], { scope: "user", syntax: "none" }, { urlType: "http" }) : [];
  },
};
