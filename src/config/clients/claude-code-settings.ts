/**
 * What Claude Code's own settings say about MCP servers: which project `.mcp.json` servers the user
 * approved or rejected, which servers `/mcp` turned off, whether the folder is trusted, and the
 * admin allow/deny lists and `managed-mcp.json`. Read the way Claude Code documents it: approvals in a
 * repository's own settings files count only once the folder is trusted; a rejection counts anywhere.
 */
import * as path from "node:path";
import * as fs from "node:fs";
import { readConfigObject, type ReadResult } from "../config-file.ts";
import { selectKeys, type Select } from "../json-pruned.ts";
import { envValue, normalizeDir } from "../server-sources.ts";
import type { LookedAt } from "../looked.ts";

/** One `allowedMcpServers` / `deniedMcpServers` entry and where it was set. */
export interface ServerRule {
  serverName?: string;
  serverCommand?: string[];
  serverUrl?: string;
  source: string;
}

export interface ClaudeCodeSettings {
  /** Folder of Claude Code's own files (`CLAUDE_CONFIG_DIR` or ~/.claude). */
  configDir: string;
  /** ~/.claude.json (or $CLAUDE_CONFIG_DIR/.claude.json). */
  globalConfig: string;
  /** What reading it gave: its `mcpServers`, and the `projects` entries of the folder and its parents. */
  globalRead: ReadResult;
  /** The folder's trust dialog was accepted (in ~/.claude.json), and where that was read. */
  folderTrusted?: string;
  /** `enableAllProjectMcpServers: true` from an honoured file. */
  approveAll?: string;
  /** Server name -> file that approved it (`enabledMcpjsonServers`). */
  approved: Map<string, string>;
  /** Server name -> file that rejected it (`disabledMcpjsonServers`). */
  rejected: Map<string, string>;
  /** Server name -> file whose `/mcp` toggle turned it off (`projects[path].disabledMcpServers`). */
  disabled: Map<string, string>;
  /** Merged allowlist (undefined: no allowlist anywhere). */
  allow?: ServerRule[];
  deny: ServerRule[];
  /**
   * Plugin id (`plugin@marketplace`) -> whether `enabledPlugins` turns it on, and in which file: the
   * local settings beat the project's, which beat the user's; managed settings beat all. Turning a
   * plugin on counts in a repository's files only once the folder is trusted; turning it off, anywhere.
   */
  plugins: Map<string, { enabled: boolean; source: string }>;
  /** Path of `managed-mcp.json` when one is deployed: it has exclusive control. */
  managedMcp?: string;
  managedDir: string;
}

export interface ClaudeSettingsContext {
  env: Record<string, string | undefined>;
  home: string;
  cwd: string;
  platform: NodeJS.Platform;
  /** Folder of managed-settings.json / managed-mcp.json (tests point it elsewhere). */
  managedDir?: string;
  look: (l: LookedAt) => void;
}

/** Where an administrator deploys managed-mcp.json and managed-settings.json. */
export function claudeManagedDir(platform: NodeJS.Platform, env: Record<string, string | undefined>): string {
  if (platform === "darwin") return "/Library/Application Support/ClaudeCode";
  if (platform === "win32") return path.win32.join(envValue(env, "ProgramFiles", platform) || "C:\\Program Files", "ClaudeCode");
  return "/etc/claude-code";
}

export function claudeConfigDir(env: Record<string, string | undefined>, home: string, platform: NodeJS.Platform): string {
  const dir = envValue(env, "CLAUDE_CONFIG_DIR", platform)?.trim();
  return dir ? path.resolve(home, dir) : path.join(home, ".claude");
}

export function claudeGlobalConfig(env: Record<string, string | undefined>, home: string, platform: NodeJS.Platform): string {
  const dir = envValue(env, "CLAUDE_CONFIG_DIR", platform)?.trim();
  return path.join(dir ? path.resolve(home, dir) : home, ".claude.json");
}

/** Read every Claude Code settings source that bears on MCP servers. */
export function readClaudeCodeSettings(ctx: ClaudeSettingsContext): ClaudeCodeSettings {
  const { env, home, cwd, platform } = ctx;
  const managedDir = ctx.managedDir ?? claudeManagedDir(platform, env);
  const configDir = claudeConfigDir(env, home, platform);
  const globalConfig = claudeGlobalConfig(env, home, platform);
  // ~/.claude.json: folder trust, and the per-project lists older versions and `/mcp` write there.
  const global = readConfigObject(globalConfig, "json", { select: claudeJsonSelect(cwd) });
  const out: ClaudeCodeSettings = {
    configDir,
    globalConfig,
    globalRead: global,
    approved: new Map(),
    rejected: new Map(),
    disabled: new Map(),
    plugins: new Map(),
    deny: [],
    managedDir,
  };
  // enabledPlugins per file, strongest first once sorted (rank: managed 0, local 1, project 2, user 3).
  const toggles: Array<{ rank: number; id: string; enabled: boolean; source: string }> = [];
  const allow: ServerRule[] = [];
  let allowSeen = false;
  let managedAllowOnly = false;
  const managedAllow: ServerRule[] = [];
  let managedAllowSeen = false;

  const readRules = (v: unknown, source: string): ServerRule[] =>
    Array.isArray(v)
      ? v.flatMap((r) => {
          if (!r || typeof r !== "object") return [];
          const o = r as Record<string, unknown>;
          const rule: ServerRule = { source };
          if (typeof o.serverName === "string") rule.serverName = o.serverName;
          if (Array.isArray(o.serverCommand) && o.serverCommand.every((s) => typeof s === "string"))
            rule.serverCommand = o.serverCommand as string[];
          if (typeof o.serverUrl === "string") rule.serverUrl = o.serverUrl;
          return rule.serverName || rule.serverCommand || rule.serverUrl ? [rule] : [];
        })
      : [];
  const names = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : []);

  /** One settings object. `honoured`: its approvals count (user/managed, or a trusted folder's files). */
  const apply = (data: Record<string, unknown>, source: string, honoured: boolean, managed: boolean, rank = 3) => {
    const plugins = data.enabledPlugins;
    if (plugins && typeof plugins === "object" && !Array.isArray(plugins))
      for (const [id, on] of Object.entries(plugins as Record<string, unknown>))
        if (typeof on === "boolean" && (honoured || !on)) toggles.push({ rank: managed ? 0 : rank, id, enabled: on, source });
    for (const n of names(data.disabledMcpjsonServers)) if (!out.rejected.has(n)) out.rejected.set(n, source);
    for (const r of readRules(data.deniedMcpServers, source)) out.deny.push(r);
    if (!honoured) return;
    if (data.enableAllProjectMcpServers === true && !out.approveAll) out.approveAll = source;
    for (const n of names(data.enabledMcpjsonServers)) if (!out.approved.has(n)) out.approved.set(n, source);
    if (data.allowedMcpServers !== undefined) {
      allowSeen = true;
      allow.push(...readRules(data.allowedMcpServers, source));
      if (managed) {
        managedAllowSeen = true;
        managedAllow.push(...readRules(data.allowedMcpServers, source));
      }
    }
    if (managed && data.allowManagedMcpServersOnly === true) managedAllowOnly = true;
  };

  const readSettings = (file: string, honoured: () => boolean, managed = false, rank = 3) => {
    const r = readConfigObject(file, "json");
    ctx.look({
      path: file,
      client: "claude-code",
      status: r.status === "ok" ? "found" : r.status === "missing" ? "absent" : "unreadable",
      note: r.status === "error" ? r.message : "settings: approvals and allow/deny lists",
    });
    if (r.status === "ok") apply(r.data, file, honoured(), managed, rank);
  };

  if (global.status === "ok") {
    const projects = global.data.projects;
    if (projects && typeof projects === "object" && !Array.isArray(projects)) {
      const entries = projectEntries(projects as Record<string, unknown>, cwd, platform);
      const own = entries[0]?.dir === normalizeDir(cwd, platform) ? entries[0] : undefined;
      const trusted = entries.find((e) => e.data.hasTrustDialogAccepted === true);
      if (trusted) out.folderTrusted = `${globalConfig}: projects[${JSON.stringify(trusted.key)}].hasTrustDialogAccepted`;
      if (own) {
        const source = `${globalConfig}: projects[${JSON.stringify(own.key)}]`;
        apply(own.data, source, true, false);
        for (const n of names(own.data.disabledMcpServers)) if (!out.disabled.has(n)) out.disabled.set(n, source);
      }
    }
  }

  readSettings(path.join(managedDir, "managed-settings.json"), () => true, true);
  readSettings(path.join(configDir, "settings.json"), () => true);
  // A repository cannot approve its own servers: its settings files count once the folder is trusted
  // (settings.local.json also in the user's own config home).
  const configHome = path.resolve(cwd) === path.resolve(home) || path.resolve(cwd, ".claude") === path.resolve(configDir);
  readSettings(path.join(cwd, ".claude", "settings.local.json"), () => out.folderTrusted !== undefined || configHome, false, 1);
  readSettings(path.join(cwd, ".claude", "settings.json"), () => out.folderTrusted !== undefined, false, 2);
  for (const t of toggles.sort((a, b) => a.rank - b.rank))
    if (!out.plugins.has(t.id)) out.plugins.set(t.id, { enabled: t.enabled, source: t.source });

  if (managedAllowOnly) out.allow = managedAllowSeen ? managedAllow : [];
  else if (allowSeen) out.allow = allow;

  const managedMcp = path.join(managedDir, "managed-mcp.json");
  const m = readConfigObject(managedMcp, "json");
  if (m.status !== "missing") out.managedMcp = managedMcp;
  return out;
}

/**
 * The parts of ~/.claude.json anything here reads: the user's `mcpServers`, and of `projects` the
 * entries that may name the folder or one of its parents (as findProjectKey and projectEntries match
 * them, and more: case and trailing separators never count), not the thousands of others. Of those
 * entries, all but `history` (the prompts typed there, with whatever was pasted: most of the file).
 */
export function claudeJsonSelect(cwd: string): Select {
  // Case folded on every platform: a superset of what the readers match.
  const loose = (p: string) => normalizeDir(p, "linux").toLowerCase();
  const wanted = new Set<string>();
  const withParents = (dir: string) => {
    for (let d = path.resolve(dir); ; d = path.dirname(d)) {
      wanted.add(loose(d));
      if (path.dirname(d) === d) break;
    }
  };
  withParents(cwd);
  wanted.add(loose(cwd));
  try {
    withParents(fs.realpathSync(cwd));
  } catch {
    // cwd as given
  }
  const entry: Select = (key) => (key === "history" ? undefined : true);
  return selectKeys({ mcpServers: true, projects: (key) => (wanted.has(loose(key)) ? entry : undefined) });
}

interface ProjectEntry {
  key: string;
  dir: string;
  data: Record<string, unknown>;
}

/** `projects` entries for cwd and its parents, closest first. */
function projectEntries(projects: Record<string, unknown>, cwd: string, platform: NodeJS.Platform): ProjectEntry[] {
  const wanted: string[] = [];
  for (let d = path.resolve(cwd); ; d = path.dirname(d)) {
    wanted.push(normalizeDir(d, platform));
    if (path.dirname(d) === d) break;
  }
  const found: ProjectEntry[] = [];
  for (const [key, value] of Object.entries(projects)) {
    if (!value || typeof value !== "object" || Array.isArray(value)) continue;
    const dir = normalizeDir(key, platform);
    if (wanted.includes(dir)) found.push({ key, dir, data: value as Record<string, unknown> });
  }
  return found.sort((a, b) => wanted.indexOf(a.dir) - wanted.indexOf(b.dir));
}

/** Does a rule list match this server? Commands exactly; URLs with `*` wildcards; names exactly. */
export function matchRule(rules: ServerRule[], server: { name: string; command?: string[]; url?: string }): ServerRule | undefined {
  return rules.find((r) => ruleMatches(r, server));
}

function ruleMatches(r: ServerRule, s: { name: string; command?: string[]; url?: string }): boolean {
  if (r.serverName !== undefined && r.serverName === s.name) return true;
  if (r.serverCommand && s.command && r.serverCommand.length === s.command.length && r.serverCommand.every((c, i) => c === s.command![i]))
    return true;
  if (r.serverUrl && s.url) return urlMatches(r.serverUrl, s.url);
  return false;
}

function urlMatches(pattern: string, url: string): boolean {
  const hostLower = (u: string) =>
    u.replace(
      /^([a-z*]+:\/\/)([^/]*)/i,
      (_m, scheme: string, host: string) => scheme.toLowerCase() + host.toLowerCase().replace(/\.$/, ""),
    );
  let p = hostLower(pattern);
  if (!/^[^:]+:\/\/[^/]*\//.test(p)) p += "/*"; // no path: any path
  const re = new RegExp(
    `^${p
      .split("*")
      .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  );
  const u = hostLower(url);
  return re.test(u) || re.test(`${u}/`);
}

/**
 * The admin lists applied to one server, as Claude Code does: a deny match blocks; with an allowlist,
 * stdio servers must match a command entry (a name entry counts only when there are no command
 * entries), remote servers a URL entry (likewise).
 */
export function adminRefusal(s: ClaudeCodeSettings, server: { name: string; command?: string[]; url?: string }): string | undefined {
  const denied = matchRule(s.deny, server);
  if (denied) return `denied by deniedMcpServers (${denied.source})`;
  if (!s.allow) return undefined;
  const stdio = server.command !== undefined;
  const strict = s.allow.filter((r) => (stdio ? r.serverCommand : r.serverUrl));
  const candidates = strict.length ? strict : s.allow.filter((r) => r.serverName !== undefined);
  const allowed = candidates.some((r) => ruleMatches(r, strict.length ? { ...server, name: "\0" } : { name: server.name }));
  if (allowed) return undefined;
  const sources = [...new Set(s.allow.map((r) => r.source))].join(", ") || "an empty list";
  return `not in allowedMcpServers (${sources})`;
}
