/**
 * GitHub Copilot CLI's servers (src/config/clients/copilot-cli.ts, copilot-cli-plugins.ts) from the
 * files Copilot CLI 1.0.102 writes, by the rules seen in the real CLI (test/clients/copilot-plugins.test.ts
 * runs it): workspace files up to the repository's root, trust, disabledMcpServers, plugins.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { discoverServers, type Discovery } from "../../src/config/servers.ts";

let root: string;
let home: string;
let cop: string;
let repo: string;
let cwd: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "copilot-cli-"));
  home = join(root, "home");
  cop = join(home, ".copilot");
  repo = join(root, "repo");
  cwd = join(repo, "app");
  mkdirSync(join(repo, ".git"), { recursive: true });
  mkdirSync(cwd, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const write = (file: string, value: unknown) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
};
const trust = (...dirs: string[]) =>
  write(join(cop, "config.json"), `// User settings belong in settings.json.\n${JSON.stringify({ trustedFolders: dirs })}`);
const discover = (env: Record<string, string> = {}, at = cwd): Discovery =>
  discoverServers({ env, home, cwd: at, platform: "linux", managedDir: join(root, "none") });
const on = (d: Discovery) => d.servers.map((s) => [s.name, (s.transport as { command?: string }).command]);
const server = (d: Discovery, name: string) => d.servers.find((s) => s.name === name)!;
const skipped = (d: Discovery, name: string) => d.skipped.find((s) => s.name === name)?.reason;

test("workspace files from here up to the repository's root, the deeper folder first; a plugin's wins over them, they over the user's", () => {
  write(join(cop, "mcp-config.json"), { mcpServers: { dup: { command: "user" }, u: { command: "user-only" } } });
  write(join(repo, ".github", "mcp.json"), { mcpServers: { dup: { command: "root" }, r: { command: "root-only" } } });
  write(join(cwd, ".github", "mcp.json"), { mcpServers: { dup: { command: "app" } } });
  write(join(root, ".github", "mcp.json"), { mcpServers: { above: { command: "above-the-repo" } } });
  expect(on(discover())).toEqual([
    ["dup", "app"],
    ["r", "root-only"],
    ["u", "user-only"],
  ]);
  const market = join(root, "market");
  write(join(market, ".github", "plugin", "marketplace.json"), {
    name: "m",
    owner: { name: "t" },
    plugins: [{ name: "p", source: "./p" }],
  });
  write(join(market, "p", ".mcp.json"), { dup: { command: "plugin" } });
  write(join(cop, "settings.json"), {
    enabledPlugins: { "p@m": true },
    extraKnownMarketplaces: { m: { source: { source: "directory", path: market } } },
  });
  expect(on(discover())[0]).toEqual(["dup", "plugin"]);
});

test("outside a git repository only this folder's file; .mcp.json hides .github/mcp.json beside it", () => {
  rmSync(join(repo, ".git"), { recursive: true });
  write(join(repo, ".github", "mcp.json"), { mcpServers: { r: { command: "root" } } });
  write(join(cwd, ".github", "mcp.json"), { mcpServers: { a: { command: "github" } } });
  expect(on(discover())).toEqual([["a", "github"]]);
  write(join(cwd, ".mcp.json"), { mcpServers: { b: { command: "mcp-json" } } });
  const d = discover();
  expect(on(d).find(([n]) => n === "a")).toBeUndefined();
  expect(d.looked.find((l) => l.path === join(cwd, ".github", "mcp.json"))?.note).toBe(
    `GitHub Copilot CLI reads ${join(cwd, ".mcp.json")} in this folder instead`,
  );
});

test("a folder trusted in Copilot CLI approves its workspace servers (trustedFolders, trusted_folders, COPILOT_ALLOW_ALL); others need ours", () => {
  write(join(repo, ".github", "mcp.json"), { mcpServers: { r: { command: "root" } } });
  write(join(cwd, ".github", "mcp.json"), { mcpServers: { a: { command: "app" } } });
  expect(server(discover(), "a").trust.state).toBe("needs-approval");
  trust(cwd);
  let d = discover();
  expect(server(d, "a").trust).toMatchObject({
    state: "trusted",
    reason: expect.stringContaining(`trustedFolders in ${join(cop, "config.json")}: ${cwd}`),
  });
  expect(server(d, "r").trust.state).toBe("needs-approval"); // the repository's root is not inside the trusted folder
  write(join(cop, "config.json"), { trusted_folders: [repo] });
  d = discover();
  expect([server(d, "a").trust.state, server(d, "r").trust.state]).toEqual(["trusted", "trusted"]);
  rmSync(join(cop, "config.json"));
  expect(server(discover({ COPILOT_ALLOW_ALL: "true" }), "r").trust.reason).toContain("COPILOT_ALLOW_ALL");
});

test("disabledMcpServers of the user's settings and of a trusted repository's add up; disabled: true too; enabled: false is not Copilot's", () => {
  write(join(cop, "mcp-config.json"), {
    mcpServers: {
      u1: { command: "a" },
      u2: { command: "b" },
      u3: { command: "c" },
      flag: { command: "d", disabled: true },
      e: { command: "e", enabled: false },
    },
  });
  write(join(cop, "settings.json"), { disabledMcpServers: ["u1", "U2"] });
  write(join(repo, ".github", "copilot", "settings.json"), { disabledMcpServers: ["u2"] });
  write(join(repo, ".github", "copilot", "settings.local.json"), { disabledMcpServers: ["u3"] });
  let d = discover();
  expect(on(d).map(([n]) => n)).toEqual(["u2", "u3", "e"]); // names match exactly; the repository is not trusted
  expect(skipped(d, "u1")).toBe(`disabled in GitHub Copilot CLI (disabledMcpServers in ${join(cop, "settings.json")})`);
  expect(skipped(d, "flag")).toBe('disabled ("disabled": true)');
  trust(repo);
  d = discover();
  expect(on(d).map(([n]) => n)).toEqual(["e"]);
  expect(skipped(d, "u3")).toContain(join(repo, ".github", "copilot", "settings.local.json"));
});

test("$VAR, ${VAR} and ${VAR:-default} from the environment; an unset one is kept as written", () => {
  write(join(cop, "mcp-config.json"), {
    mcpServers: { v: { command: "run", args: ["$TOKEN", "${TOKEN}", "${NOPE:-dflt}", "${NOPE}", "$NOPE"], env: { K: "${TOKEN}" } } },
  });
  expect(server(discover({ TOKEN: "t0k" }), "v").transport).toMatchObject({
    args: ["t0k", "t0k", "dflt", "${NOPE}", "$NOPE"],
    env: { K: "t0k" },
  });
});

const market = () => join(root, "market");
const directoryMarket = (manifest = ".claude-plugin/marketplace.json") => {
  write(join(market(), manifest), { name: "team", owner: { name: "t" }, plugins: [{ name: "tools", source: "./plugins/tools" }] });
  return { team: { source: { source: "directory", path: market() } } };
};

test("a plugin from a local marketplace runs live from its folder: roots expanded, given as variables, its working folder", () => {
  const plugin = join(market(), "plugins", "tools");
  write(join(plugin, ".mcp.json"), {
    mcpServers: {
      t: { command: "node", args: ["${COPILOT_PLUGIN_ROOT}/a.js", "${CLAUDE_PLUGIN_ROOT}", "${PLUGIN_ROOT}", "${CLAUDE_PLUGIN_DATA}"] },
    },
  });
  write(join(cop, "settings.json"), {
    enabledPlugins: { "tools@team": true },
    extraKnownMarketplaces: directoryMarket(".github/plugin/marketplace.json"),
  });
  const t = server(discover(), "t");
  expect(t.transport).toMatchObject({
    command: "node",
    args: [`${plugin}/a.js`, plugin, plugin, "${CLAUDE_PLUGIN_DATA}"],
    cwd: plugin,
    env: { COPILOT_PLUGIN_ROOT: plugin, CLAUDE_PLUGIN_ROOT: plugin, PLUGIN_ROOT: plugin },
  });
  expect(t.scope).toBe("user");
  write(join(cop, "settings.json"), { enabledPlugins: { "tools@team": false }, extraKnownMarketplaces: directoryMarket() });
  expect(on(discover())).toEqual([]);
});

test("a plugin's .mcp.json hides its manifest's servers; without it, the first manifest found (inline or a file)", () => {
  const plugin = join(market(), "plugins", "tools");
  write(join(cop, "settings.json"), { enabledPlugins: { "tools@team": true }, extraKnownMarketplaces: directoryMarket() });
  write(join(plugin, "plugin.json"), { name: "tools", mcpServers: { last: { command: "root-manifest" } } });
  expect(on(discover())).toEqual([["last", "root-manifest"]]);
  write(join(plugin, ".claude-plugin", "plugin.json"), { name: "tools", mcpServers: "./servers.json" });
  write(join(plugin, "servers.json"), { mcpServers: { file: { command: "from-file" } } });
  expect(on(discover())).toEqual([["file", "from-file"]]);
  write(join(plugin, ".plugin", "plugin.json"), { name: "tools", mcpServers: { first: { command: "dot-plugin" } } });
  expect(on(discover())).toEqual([["first", "dot-plugin"]]);
  write(join(plugin, ".mcp.json"), { m: { command: "mcp-json" } });
  expect(on(discover())).toEqual([["m", "mcp-json"]]);
});

test("installed copies: a marketplace's under installed-plugins/<marketplace>, a direct install's under _direct, on by config.json when no settings say", () => {
  write(join(cop, "installed-plugins", "remote", "tools", ".mcp.json"), { mcpServers: { copy: { command: "copy" } } });
  write(join(cop, "installed-plugins", "_direct", "solo", ".mcp.json"), { mcpServers: { solo: { command: "direct" } } });
  const installed = (enabled: boolean) => [
    { name: "tools", marketplace: "remote", version: "1.0.0", enabled },
    { name: "solo", marketplace: "", enabled: true, source: { source: "local", path: "/src/solo" } },
  ];
  write(join(cop, "config.json"), { installedPlugins: installed(true) });
  expect(on(discover())).toEqual([
    ["copy", "copy"],
    ["solo", "direct"],
  ]);
  write(join(cop, "config.json"), { installedPlugins: installed(false) });
  expect(on(discover())).toEqual([["solo", "direct"]]);
  // Once settings.json has enabledPlugins, it alone decides a marketplace plugin: a missing entry is off.
  write(join(cop, "config.json"), { installedPlugins: installed(true) });
  write(join(cop, "settings.json"), { enabledPlugins: {} });
  expect(on(discover())).toEqual([["solo", "direct"]]);
});

test("turned on but not installed: noted among the paths looked at", () => {
  write(join(cop, "settings.json"), { enabledPlugins: { "gone@remote": true } });
  const d = discover();
  expect(on(d)).toEqual([]);
  expect(d.looked.find((l) => l.path === join(cop, "installed-plugins", "remote", "gone"))?.note).toBe(
    `plugin gone@remote is turned on in ${join(cop, "settings.json")} but is not installed`,
  );
});

test("a repository's settings turn plugins on or off only in a folder trusted in Copilot CLI; its plugins are project scope", () => {
  const plugin = join(market(), "plugins", "tools");
  write(join(plugin, ".mcp.json"), { t: { command: "t" } });
  write(join(repo, ".claude", "settings.json"), { enabledPlugins: { "tools@team": true }, extraKnownMarketplaces: directoryMarket() });
  expect(on(discover())).toEqual([]);
  trust(repo);
  const t = server(discover(), "t");
  expect(t).toMatchObject({
    scope: "project",
    trust: { state: "trusted", reason: expect.stringContaining(join(repo, ".claude", "settings.json")) },
  });
  // A plugin the user turned on, from a marketplace the repository names, is the repository's choice too.
  rmSync(join(repo, ".claude"), { recursive: true });
  write(join(cop, "settings.json"), { enabledPlugins: { "tools@team": true } });
  write(join(repo, ".github", "copilot", "settings.json"), { extraKnownMarketplaces: directoryMarket() });
  expect(server(discover(), "t")).toMatchObject({
    scope: "project",
    trust: { reason: expect.stringContaining(join(repo, ".github", "copilot", "settings.json")) },
  });
  // The user's true loses to the repository's false.
  write(join(cop, "settings.json"), { enabledPlugins: { "tools@team": true }, extraKnownMarketplaces: directoryMarket() });
  write(join(repo, ".github", "copilot", "settings.json"), { enabledPlugins: { "tools@team": false } });
  expect(on(discover())).toEqual([]);
});
