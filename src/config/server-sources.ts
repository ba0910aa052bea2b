/**
 * Where MCP clients keep server definitions, in bridge precedence order
 * (earlier wins for a given server name).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { claudeGlobalConfig } from "./clients/claude-code-settings.ts";
import type { Scope } from "./looked.ts";

export type SourceFormat =
  /** Bridge-owned file: must have `mcpServers`/`servers`, or be a single server definition. */
  | "dedicated"
  /** Another client's file: `mcpServers`/`servers` if present, silently nothing otherwise. */
  | "shared"
  /** ~/.claude.json: `projects[cwd].mcpServers`, then top-level `mcpServers`. */
  | "claude-user";

export interface SourceSpec {
  kind: "file" | "dir" | "file-or-dir";
  path: string;
  format: SourceFormat;
  /** Client whose file this is ("bridge" for our own folders and MCP_BRIDGE_CONFIG). */
  client: string;
  /** Scope of the definitions in it (a claude-user file holds both user and local scope). */
  scope: Scope;
  /** Named explicitly by the user (MCP_BRIDGE_CONFIG): a missing path is a problem. */
  explicit?: boolean;
}

export interface SourceContext {
  env: Record<string, string | undefined>;
  home: string;
  cwd: string;
  platform: NodeJS.Platform;
}

/** Expand a leading `~` (alone, `~/...`, or `~\...` on Windows) to `home`. */
export function expandHome(p: string, home: string): string {
  if (p === "~") return home;
  if (p.startsWith("~/") || p.startsWith("~\\")) return path.join(home, p.slice(2));
  return p;
}

/** Read an env var; case-insensitive on Windows like the OS itself. */
export function envValue(
  env: Record<string, string | undefined>,
  name: string,
  platform: NodeJS.Platform,
): string | undefined {
  const direct = env[name];
  if (direct !== undefined || platform !== "win32") return direct;
  const upper = name.toUpperCase();
  for (const [k, v] of Object.entries(env)) if (k.toUpperCase() === upper && v !== undefined) return v;
  return undefined;
}

export function claudeDesktopConfigPath(ctx: SourceContext): string {
  const { home, platform } = ctx;
  if (platform === "darwin") return path.join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json");
  if (platform === "win32") {
    const appData = envValue(ctx.env, "APPDATA", platform) || path.join(home, "AppData", "Roaming");
    return path.join(appData, "Claude", "claude_desktop_config.json");
  }
  const xdg = envValue(ctx.env, "XDG_CONFIG_HOME", platform);
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(home, ".config"), "Claude", "claude_desktop_config.json");
}

export function listSources(ctx: SourceContext): SourceSpec[] {
  const { home, cwd, platform } = ctx;
  const specs: SourceSpec[] = [];

  // 1. MCP_BRIDGE_CONFIG: file(s) or folder(s), platform path delimiter.
  const explicit = envValue(ctx.env, "MCP_BRIDGE_CONFIG", platform);
  if (explicit) {
    const delimiter = platform === "win32" ? ";" : ":";
    for (const raw of explicit.split(delimiter)) {
      const p = raw.trim();
      if (!p) continue;
      specs.push({
        kind: "file-or-dir",
        path: path.resolve(cwd, expandHome(p, home)),
        format: "dedicated",
        client: "bridge",
        scope: "explicit",
        explicit: true,
      });
    }
  }

  // 2-4. Bridge folders.
  specs.push({ kind: "dir", path: path.join(home, "MCPs"), format: "dedicated", client: "bridge", scope: "user" });
  specs.push({ kind: "dir", path: path.join(home, ".config", "mcp", "servers"), format: "dedicated", client: "bridge", scope: "user" });
  specs.push({ kind: "dir", path: path.join(cwd, "mcp-servers"), format: "dedicated", client: "bridge", scope: "project" });

  // 5. Claude Code project file.
  specs.push({ kind: "file", path: path.join(cwd, ".mcp.json"), format: "shared", client: "claude-code", scope: "project" });

  // 6. Claude Code user config.
  specs.push({ kind: "file", path: claudeGlobalConfig(ctx.env, home, platform), format: "claude-user", client: "claude-code", scope: "user" });

  // 7. Claude Desktop, then Claude Code settings files.
  specs.push({ kind: "file", path: claudeDesktopConfigPath(ctx), format: "shared", client: "claude-desktop", scope: "user" });
  specs.push({ kind: "file", path: path.join(home, ".claude", "settings.json"), format: "shared", client: "claude-code", scope: "user" });
  specs.push({ kind: "file", path: path.join(home, ".claude", "mcp.json"), format: "shared", client: "claude-code", scope: "user" });

  // 8. VS Code workspace.
  specs.push({ kind: "file", path: path.join(cwd, ".vscode", "mcp.json"), format: "shared", client: "vscode", scope: "project" });

  // 9. Cursor, global then project.
  specs.push({ kind: "file", path: path.join(home, ".cursor", "mcp.json"), format: "shared", client: "cursor", scope: "user" });
  specs.push({ kind: "file", path: path.join(cwd, ".cursor", "mcp.json"), format: "shared", client: "cursor", scope: "project" });

  return specs;
}

/** Key of `projects` in ~/.claude.json that denotes `cwd` (exact, then normalised). */
export function findProjectKey(keys: string[], cwd: string, platform: NodeJS.Platform): string | undefined {
  let real = cwd;
  try {
    real = fs.realpathSync(cwd);
  } catch {
    // keep cwd
  }
  const norm = (p: string) => {
    let s = p.replace(/\\/g, "/");
    if (s.length > 1) s = s.replace(/\/+$/, "");
    return platform === "win32" || platform === "darwin" ? s.toLowerCase() : s;
  };
  const wanted = new Set([norm(cwd), norm(real)]);
  return keys.find((k) => k === cwd) ?? keys.find((k) => k === real) ?? keys.find((k) => wanted.has(norm(k)));
}
