/**
 * Claude Code plugins' MCP servers (src/config/clients/claude-code-plugins.ts) from the files Claude
 * Code writes: which plugins are on (enabledPlugins, by scope), which install serves the folder
 * (installed_plugins.json), where the plugin's folder is, and its variables. Plugins installed from a
 * git marketplace are written here as Claude Code leaves them (fake: no network to install from); the
 * real `claude plugin install` from a local marketplace is test/clients/claude-plugins.test.ts.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { discoverServers, type Discovery } from "../../src/config/servers.ts";

let root: string;
let home: string;
let cwd: string;
let plugins: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "cc-plugins-"));
  home = join(root, "home");
  cwd = join(root, "project");
  plugins = join(home, ".claude", "plugins");
  mkdirSync(cwd, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const write = (file: string, value: unknown) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
};
const discover = (): Discovery => discoverServers({ env: {}, home, cwd, platform: "linux", managedDir: join(root, "managed") });
const names = (d: Discovery) => d.servers.map((s) => s.name);

/** A plugin installed from a git marketplace: its copy in the cache, as `claude plugin install` leaves it. */
function installFromGit(id: string, records: unknown[], files: Record<string, unknown>): string {
  const [name, market] = id.split("@") as [string, string];
  const dir = join(plugins, "cache", market, name, "1.0.0");
  for (const [rel, value] of Object.entries(files)) write(join(dir, rel), value);
  write(join(plugins, "installed_plugins.json"), {
    version: 2,
    plugins: { [id]: records.map((r) => ({ installPath: dir, version: "1.0.0", installedAt: "2026-11-01T00:00:00Z", ...(r as object) })) },
  });
  write(join(plugins, "known_marketplaces.json"), {
    [market]: { source: { source: "github", repo: "acme/plugins" }, installLocation: join(plugins, "marketplaces", market) },
  });
  return dir;
}

test("a plugin from a git marketplace: its copy's .mcp.json and inline manifest servers, with the plugin's variables", () => {
  const dir = installFromGit("ops@acme", [{ scope: "user" }], {
    ".mcp.json": {
      mcpServers: {
        db: { command: "${CLAUDE_PLUGIN_ROOT}/bin/db", args: ["--data", "${CLAUDE_PLUGIN_DATA}", "--in", "${CLAUDE_PROJECT_DIR}"] },
      },
    },
    ".claude-plugin/plugin.json": { name: "ops", mcpServers: { api: { type: "http", url: "https://api.example/mcp" } } },
  });
  write(join(home, ".claude", "settings.json"), { enabledPlugins: { "ops@acme": true } });
  const d = discover();
  expect(d.problems).toEqual([]);
  expect(names(d)).toEqual(["plugin:ops:db", "plugin:ops:api"]);
  const db = d.servers[0]!;
  const data = join(plugins, "data", "ops-acme");
  expect(db.transport).toEqual({
    type: "stdio",
    command: `${dir}/bin/db`,
    args: ["--data", data, "--in", cwd],
    env: { CLAUDE_PLUGIN_ROOT: dir, CLAUDE_PLUGIN_DATA: data },
  });
  expect(db.alias).toBe("plugin_ops_db");
  expect(db.trust.state).toBe("trusted");
  expect(d.servers[1]!.transport).toMatchObject({ type: "http", url: "https://api.example/mcp" });
});

test("not turned on, turned off by the folder's local settings, or not installed: no servers", () => {
  installFromGit("ops@acme", [{ scope: "user" }], { ".mcp.json": { mcpServers: { db: { command: "db" } } } });
  expect(names(discover())).toEqual([]);
  write(join(home, ".claude", "settings.json"), { enabledPlugins: { "ops@acme": true, "ghost@acme": true } });
  expect(names(discover())).toEqual(["plugin:ops:db"]);
  expect(discover().looked.some((l) => l.note?.includes("plugin ghost@acme is turned on") && l.note.includes("not installed"))).toBe(true);
  write(join(cwd, ".claude", "settings.local.json"), { enabledPlugins: { "ops@acme": false } });
  expect(names(discover())).toEqual([]);
});

test("a repository's settings cannot turn a plugin on until the folder is trusted", () => {
  installFromGit("ops@acme", [{ scope: "user" }], { ".mcp.json": { mcpServers: { db: { command: "db" } } } });
  write(join(cwd, ".claude", "settings.json"), { enabledPlugins: { "ops@acme": true } });
  expect(names(discover())).toEqual([]);
  write(join(home, ".claude.json"), { projects: { [cwd]: { hasTrustDialogAccepted: true } } });
  expect(names(discover())).toEqual(["plugin:ops:db"]);
});

test("an install for another folder does not serve this one; one for this folder does, approved by that install", () => {
  installFromGit("ops@acme", [{ scope: "project", projectPath: join(root, "elsewhere") }], {
    ".mcp.json": { mcpServers: { db: { command: "db" } } },
  });
  write(join(home, ".claude", "settings.json"), { enabledPlugins: { "ops@acme": true } });
  expect(names(discover())).toEqual([]);
  installFromGit("ops@acme", [{ scope: "local", projectPath: cwd }], { ".mcp.json": { mcpServers: { db: { command: "db" } } } });
  const d = discover();
  expect(names(d)).toEqual(["plugin:ops:db"]);
  expect(d.servers[0]!.scope).toBe("project");
  expect(d.servers[0]!.trust).toMatchObject({ state: "trusted", reason: "installed for this folder in Claude Code (local scope)" });
});

test("user_config values stay in Claude Code's secure storage: the server is listed as skipped, and why", () => {
  installFromGit("ops@acme", [{ scope: "user" }], {
    ".mcp.json": { mcpServers: { db: { command: "db", env: { TOKEN: "${user_config.api_token}" } } } },
  });
  write(join(home, ".claude", "settings.json"), { enabledPlugins: { "ops@acme": true } });
  const d = discover();
  expect(names(d)).toEqual([]);
  expect(d.skipped.map((s) => [s.name, s.reason])).toEqual([
    [
      "plugin:ops:db",
      "it uses the plugin's ${user_config.*} values, which Claude Code keeps in its own secure storage: define the server yourself (claude mcp add) to use it here",
    ],
  ]);
});

test("installed_plugins.json version 1 (one record per plugin, user scope)", () => {
  const dir = join(plugins, "cache", "acme", "ops", "0.9.0");
  write(join(dir, ".mcp.json"), { mcpServers: { db: { command: "db" } } });
  write(join(plugins, "installed_plugins.json"), { version: 1, plugins: { "ops@acme": { version: "0.9.0", installPath: dir } } });
  write(join(home, ".claude", "settings.json"), { enabledPlugins: { "ops@acme": true } });
  expect(names(discover())).toEqual(["plugin:ops:db"]);
});

test("user scope wins a name over a plugin's server", () => {
  installFromGit("ops@acme", [{ scope: "user" }], { ".mcp.json": { mcpServers: { db: { command: "db" } } } });
  write(join(home, ".claude", "settings.json"), { enabledPlugins: { "ops@acme": true } });
  write(join(home, ".claude.json"), { mcpServers: { "plugin:ops:db": { command: "mine" } } });
  const d = discover();
  expect(d.servers.map((s) => [s.name, (s.transport as { command: string }).command])).toEqual([["plugin:ops:db", "mine"]]);
});
