/**
 * Where and how each client we read wants our own entry: its user-level file, the key path, the entry
 * in that client's format, and the snippet to paste. Used by `config snippet` and `config add`.
 */
import * as path from "node:path";
import { stringify as stringifyYaml } from "yaml";
import { claudeGlobalConfig } from "../config/clients/claude-code-settings.ts";
import { codexHome } from "../config/clients/codex.ts";
import { continueDir } from "../config/clients/continue.ts";
import { CLIENT_ORDER } from "../config/client-names.ts";
import { envSetting } from "../config/env.ts";
import { envValue } from "../config/server-sources.ts";
import type { Launch } from "../host/self.ts";

/** Every client `config snippet` / `config add` knows: every client we read, in our order. */
export type ClientName = Exclude<(typeof CLIENT_ORDER)[number], "bridge">;
export const CLIENTS: readonly ClientName[] = CLIENT_ORDER.filter((c): c is ClientName => c !== "bridge");

export interface TargetContext {
  env: Record<string, string | undefined>;
  home: string;
  platform: NodeJS.Platform;
}

export interface Target {
  /** The user-level file `config add` writes. */
  file(ctx: TargetContext): string;
  format: "json" | "toml" | "yaml";
  /** Key path of the entry (JSON and YAML maps); Continue keeps a list under `mcpServers`. */
  path(name: string): string[];
  entry(launch: Launch, env: Record<string, string>): Record<string, unknown>;
  /** Where the snippet goes, for people pasting it. */
  where: string;
}

function appConfig(ctx: TargetContext): string {
  if (ctx.platform === "darwin") return path.join(ctx.home, "Library", "Application Support");
  if (ctx.platform === "win32") return envValue(ctx.env, "APPDATA", ctx.platform) || path.join(ctx.home, "AppData", "Roaming");
  const xdg = envValue(ctx.env, "XDG_CONFIG_HOME", ctx.platform)?.trim();
  return xdg && path.isAbsolute(xdg) ? xdg : path.join(ctx.home, ".config");
}

function xdgConfig(ctx: TargetContext): string {
  if (ctx.platform === "win32") return appConfig(ctx);
  const xdg = envValue(ctx.env, "XDG_CONFIG_HOME", ctx.platform)?.trim();
  return xdg && path.isAbsolute(xdg) ? xdg : path.join(ctx.home, ".config");
}

const withArgsEnv = (launch: Launch, env: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  ...extra,
  command: launch.command,
  ...(launch.args.length ? { args: launch.args } : {}),
  ...(Object.keys(env).length ? { env } : {}),
});

const mcpServers = (name: string) => ["mcpServers", name];

/** Beyond the longest run: a sandbox start, the interrupt's grace and the result's way back. */
export const CLIENT_TIMEOUT_MARGIN_SEC = 30;

/**
 * Milliseconds a client should wait for one call: the longest run the bridge allows (MCP_BRIDGE_MAX_TIMEOUT
 * in the entry's environment, else its default) plus a margin. opencode's own default is 60 s.
 */
export function clientTimeoutMs(env: Record<string, string>): number {
  const max = envSetting(env, "MCP_BRIDGE_MAX_TIMEOUT").value as number | undefined;
  return Math.round(((max ?? (envSetting({}, "MCP_BRIDGE_MAX_TIMEOUT").value as number)) + CLIENT_TIMEOUT_MARGIN_SEC) * 1000);
}

export const TARGETS: Record<ClientName, Target> = {
  "claude-desktop": {
    file: (c) => path.join(appConfig(c), "Claude", "claude_desktop_config.json"),
    format: "json",
    path: mcpServers,
    entry: (l, e) => withArgsEnv(l, e),
    where: 'merge into "mcpServers" in claude_desktop_config.json, then restart Claude Desktop',
  },
  "claude-code": {
    file: (c) => claudeGlobalConfig(c.env, c.home, c.platform),
    format: "json",
    path: mcpServers,
    entry: (l, e) => withArgsEnv(l, e, { type: "stdio" }),
    where: 'merge into "mcpServers" in .mcp.json at the project root',
  },
  cursor: {
    file: (c) => path.join(c.home, ".cursor", "mcp.json"),
    format: "json",
    path: mcpServers,
    entry: (l, e) => withArgsEnv(l, e),
    where: 'merge into "mcpServers" in ~/.cursor/mcp.json (every project) or .cursor/mcp.json (this project)',
  },
  vscode: {
    file: (c) => path.join(appConfig(c), "Code", "User", "mcp.json"),
    format: "json",
    path: (n) => ["servers", n],
    entry: (l, e) => withArgsEnv(l, e, { type: "stdio" }),
    where: 'merge into "servers" in .vscode/mcp.json (this workspace), or run "MCP: Open User Configuration"',
  },
  windsurf: {
    file: (c) => path.join(c.home, ".codeium", "windsurf", "mcp_config.json"),
    format: "json",
    path: mcpServers,
    entry: (l, e) => withArgsEnv(l, e),
    where: 'merge into "mcpServers" in ~/.codeium/windsurf/mcp_config.json, then refresh Windsurf\'s MCP list',
  },
  codex: {
    file: (c) => path.join(codexHome(c), "config.toml"),
    format: "toml",
    path: (n) => ["mcp_servers", n],
    entry: (l, e) => withArgsEnv(l, e),
    where: "append to ~/.codex/config.toml (or run `codex mcp add`)",
  },
  gemini: {
    file: (c) => path.join(c.home, ".gemini", "settings.json"),
    format: "json",
    path: mcpServers,
    entry: (l, e) => withArgsEnv(l, e),
    where: 'merge into "mcpServers" in ~/.gemini/settings.json',
  },
  zed: {
    file: (c) => path.join(xdgConfig(c), c.platform === "win32" ? "Zed" : "zed", "settings.json"),
    format: "json",
    path: (n) => ["context_servers", n],
    entry: (l, e) => withArgsEnv(l, e),
    where: 'merge into "context_servers" in Zed\'s settings.json',
  },
  opencode: {
    file: (c) => path.join(xdgConfig(c), "opencode", "opencode.json"),
    format: "json",
    path: (n) => ["mcp", n],
    entry: (l, e) => ({
      type: "local",
      command: [l.command, ...l.args],
      enabled: true,
      ...(Object.keys(e).length ? { environment: e } : {}),
      // opencode gives up on a call after 60 s unless progress arrives (a silent run sends a heartbeat every
      // 15 s); its `timeout` (milliseconds) also bounds the start and the tool list.
      timeout: clientTimeoutMs(e),
    }),
    where: 'merge into "mcp" in ~/.config/opencode/opencode.json',
  },
  cline: {
    file: (c) => path.join(c.home, ".cline", "data", "settings", "cline_mcp_settings.json"),
    format: "json",
    path: mcpServers,
    entry: (l, e) => withArgsEnv(l, e, { disabled: false }),
    where: 'merge into "mcpServers" in Cline\'s cline_mcp_settings.json (Cline: MCP Servers > Configure)',
  },
  continue: {
    file: (c) => path.join(continueDir(c), "config.yaml"),
    format: "yaml",
    path: () => ["mcpServers"],
    entry: (l, e) => ({ name: "", type: "stdio", ...withArgsEnv(l, e) }),
    where: "save as .continue/mcpServers/<name>.yaml in the workspace, or add the item to mcpServers in ~/.continue/config.yaml",
  },
  goose: {
    file: (c) =>
      path.join(
        c.platform === "win32" ? path.join(appConfig(c), "Block", "goose", "config") : path.join(xdgConfig(c), "goose"),
        "config.yaml",
      ),
    format: "yaml",
    path: (n) => ["extensions", n],
    entry: (l, e) => ({ name: "", type: "stdio", cmd: l.command, args: l.args, envs: e, enabled: true, timeout: 300 }),
    where: "merge into extensions: in ~/.config/goose/config.yaml",
  },
  "copilot-cli": {
    file: (c) => path.join(envValue(c.env, "COPILOT_HOME", c.platform)?.trim() || path.join(c.home, ".copilot"), "mcp-config.json"),
    format: "json",
    path: mcpServers,
    entry: (l, e) => ({ type: "local", ...withArgsEnv(l, e), tools: ["*"] }),
    where: 'merge into "mcpServers" in ~/.copilot/mcp-config.json',
  },
};

/** The entry as it sits in the client's file, with the server's name filled in where the format has one. */
export function entryFor(client: ClientName, name: string, launch: Launch, env: Record<string, string>): Record<string, unknown> {
  const e = TARGETS[client].entry(launch, env);
  if ("name" in e) e.name = name;
  return e;
}

/** The text to paste for one client. */
export function snippetText(client: ClientName, name: string, launch: Launch, env: Record<string, string>): string {
  const t = TARGETS[client];
  const entry = entryFor(client, name, launch, env);
  if (t.format === "toml") return tomlTable(name, entry);
  if (client === "continue") return stringifyYaml({ name, version: "0.0.1", schema: "v1", mcpServers: [entry] }).trimEnd();
  if (t.format === "yaml") return stringifyYaml({ extensions: { [name]: entry } }).trimEnd();
  const [key] = t.path(name);
  return JSON.stringify({ [key!]: { [name]: entry } }, null, 2);
}

/** `[mcp_servers.NAME]` with its keys, and `[mcp_servers.NAME.env]` when there is an env. */
export function tomlTable(name: string, entry: Record<string, unknown>): string {
  const key = /^[A-Za-z0-9_-]+$/.test(name) ? name : JSON.stringify(name);
  const lines = [`[mcp_servers.${key}]`, `command = ${JSON.stringify(entry.command)}`];
  if (Array.isArray(entry.args) && entry.args.length) lines.push(`args = [${entry.args.map((a) => JSON.stringify(a)).join(", ")}]`);
  const env = entry.env as Record<string, string> | undefined;
  if (env && Object.keys(env).length) {
    lines.push("", `[mcp_servers.${key}.env]`);
    for (const [k, v] of Object.entries(env)) lines.push(`${/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k)} = ${JSON.stringify(v)}`);
  }
  return lines.join("\n");
}
