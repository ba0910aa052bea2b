/**
 * Codex plugins' MCP servers (src/config/clients/codex.ts) from the files Codex writes, in the forms the
 * real `codex plugin add` was seen to read (test/clients/codex-plugins.test.ts installs one for real):
 * the manifest's inline or file `mcpServers` before `.mcp.json`, `.codex-plugin` before `.claude-plugin`.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { discoverServers, type Discovery } from "../../src/config/servers.ts";

let root: string;
let home: string;
let cache: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "codex-plugins-"));
  home = join(root, "home");
  cache = join(home, ".codex", "plugins", "cache", "team", "tools");
  mkdirSync(join(root, "project"), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const write = (file: string, value: unknown) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
};
const enable = (on = true) => write(join(home, ".codex", "config.toml"), `[plugins."tools@team"]\nenabled = ${on}\n`);
const discover = (): Discovery =>
  discoverServers({ env: {}, home, cwd: join(root, "project"), platform: "linux", managedDir: join(root, "none") });
const commands = (d: Discovery) => d.servers.map((s) => [s.name, (s.transport as { command: string }).command]);

test("the manifest's servers replace .mcp.json's; .codex-plugin's manifest before .claude-plugin's", () => {
  const v = join(cache, "1.0.0");
  write(join(v, ".mcp.json"), { mcpServers: { a: { command: "from-mcp-json" } } });
  enable();
  expect(commands(discover())).toEqual([["a", "from-mcp-json"]]);
  write(join(v, ".claude-plugin", "plugin.json"), { name: "tools", mcpServers: { b: { command: "from-claude-manifest" } } });
  expect(commands(discover())).toEqual([["b", "from-claude-manifest"]]);
  write(join(v, ".codex-plugin", "plugin.json"), { name: "tools", mcpServers: "./servers.json" });
  write(join(v, "servers.json"), { mcpServers: { c: { command: "from-file", args: ["x"] } } });
  expect(commands(discover())).toEqual([["c", "from-file"]]);
});

test("turned off, or on but not installed: no servers (the latter noted among the paths looked at)", () => {
  write(join(cache, "1.0.0", ".mcp.json"), { mcpServers: { a: { command: "a" } } });
  enable(false);
  expect(commands(discover())).toEqual([]);
  rmSync(cache, { recursive: true });
  enable(true);
  const d = discover();
  expect(commands(d)).toEqual([]);
  expect(d.looked.some((l) => l.note === "plugin tools@team is turned on in Codex but not installed (no copy in its plugin cache)")).toBe(
    true,
  );
});

test("of two version folders, the newer one", () => {
  write(join(cache, "1.0.0", ".mcp.json"), { mcpServers: { a: { command: "old" } } });
  write(join(cache, "1.1.0", ".mcp.json"), { mcpServers: { a: { command: "new" } } });
  utimesSync(join(cache, "1.0.0"), new Date(2026, 0, 1), new Date(2026, 0, 1));
  enable();
  expect(commands(discover())).toEqual([["a", "new"]]);
});
