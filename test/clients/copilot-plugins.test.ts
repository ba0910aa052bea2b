/**
 * GitHub Copilot CLI's servers as the real `copilot` (1.0.102) decides them, in an isolated HOME: a
 * plugin from a marketplace that is a local folder and one installed straight from a folder (the real
 * `copilot plugin` commands; no network here), the user's and the repository's files, servers turned
 * off with `copilot mcp disable` and by the repository's settings. What the bridge offers must be what
 * `copilot mcp list --json` says Copilot CLI starts, and code must reach those servers through the
 * compiled bridge.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBridge, type BridgeHandle } from "../support/bridge.ts";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";
import { run } from "../support/run.ts";
import { BIN } from "./clients.ts";
import { installSteps, write } from "./plugin-support.ts";

const NM = join(ROOT, "node_modules", "@modelcontextprotocol");
const MEMORY = join(NM, "server-memory", "dist", "index.js");
const EVERYTHING = join(NM, "server-everything", "dist", "index.js");
const FILESYSTEM = join(NM, "server-filesystem", "dist", "index.js");
const home = mkdtempSync(join(tmpdir(), "mcx-copilot-"));
const project = join(home, "project");
const market = join(home, "market");
const notes = join(market, "plugins", "notes");
const solo = join(home, "solo-src");
const memoryFile = join(home, "memory.jsonl");
// Copilot CLI unpacks itself (~235 MB) into its cache folder on first run: one shared cache, not one per HOME.
const clientEnv = () => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  XDG_CACHE_HOME: join(ROOT, "node_modules", ".cache", "copilot-cli"),
  LANG: "C.UTF-8",
});
const copilot = (...args: string[]) => run([join(BIN, "copilot"), ...args], { cwd: project, env: clientEnv() });
const ours = (...args: string[]) =>
  run([BINARY, ...args], { cwd: project, env: bridgeEnv({ HOME: home, MCP_BRIDGE_STATE_DIR: join(home, "state") }) });

interface Listed {
  command?: string;
  args?: string[];
  cwd?: string;
  url?: string;
  enabled: boolean;
  source: string;
  sourcePlugin?: string;
  env?: Record<string, string>;
}
interface Ours {
  name: string;
  command?: string;
  args?: string[];
  cwd?: string;
  url?: string;
  env?: Record<string, string>;
}
/** What Copilot CLI starts: `mcp list --json`'s enabled entries, with a plugin's root variables put in. */
async function copilotStarts(): Promise<Map<string, Listed>> {
  const r = await copilot("mcp", "list", "--json");
  if (r.code !== 0) throw new Error(`copilot mcp list: ${r.stdout}${r.stderr}`);
  const all = JSON.parse(r.stdout).mcpServers as Record<string, Listed>;
  const out = new Map<string, Listed>();
  for (const [name, s] of Object.entries(all)) {
    if (!s.enabled) continue;
    const root = s.env?.PLUGIN_ROOT;
    const put = (v: string) => (root ? v.replace(/\$\{(COPILOT_|CLAUDE_)?PLUGIN_ROOT\}/g, root) : v);
    out.set(name, { ...s, args: s.args?.map(put), cwd: s.cwd === undefined ? undefined : put(s.cwd) });
  }
  return out;
}
async function oursServers(): Promise<{ servers: Ours[]; skipped: Array<{ name: string; reason: string }> }> {
  const r = await ours("servers", "--json");
  if (r.code !== 0) throw new Error(`servers --json: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}

beforeAll(async () => {
  mkdirSync(project, { recursive: true });
  expect((await run(["git", "init", "-q", project])).code).toBe(0);
  write(join(home, ".copilot", "config.json"), { trustedFolders: [project] });
  write(join(home, ".copilot", "mcp-config.json"), {
    mcpServers: {
      everything: { type: "local", command: "node", args: [EVERYTHING], tools: ["*"] },
      "turned-off": { command: "node", args: ["never-started.js"] },
    },
  });
  // The repository's file, and its settings turning one of its servers off (honoured: the folder is trusted).
  write(join(project, ".github", "mcp.json"), {
    mcpServers: { docs: { type: "http", url: "https://docs.example/mcp" }, "repo-off": { command: "node", args: ["x.js"] } },
  });
  write(join(project, ".github", "copilot", "settings.json"), { disabledMcpServers: ["repo-off"] });
  write(join(market, ".github", "plugin", "marketplace.json"), {
    name: "team-tools",
    owner: { name: "tests" },
    plugins: [{ name: "notes", source: "./plugins/notes" }],
  });
  write(join(notes, ".github", "plugin", "plugin.json"), { name: "notes", version: "1.0.0" });
  write(join(notes, ".mcp.json"), {
    memory: { command: "node", args: [MEMORY], env: { MEMORY_FILE_PATH: memoryFile } },
    // A plugin's server wins a name over the repository's file.
    docs: { command: "node", args: [EVERYTHING, "${COPILOT_PLUGIN_ROOT}"] },
  });
  // Installed straight from a folder: Copilot CLI copies it into its home and runs the copy.
  write(join(solo, "plugin.json"), {
    name: "solo",
    version: "0.1.0",
    mcpServers: { files: { command: "node", args: [FILESYSTEM, "${PLUGIN_ROOT}"] } },
  });
  write(join(solo, "README.md"), "solo plugin\n");
  await installSteps("copilot", copilot, [
    ["plugin", "marketplace", "add", market],
    ["plugin", "install", "notes@team-tools"],
    ["plugin", "install", solo],
    ["mcp", "disable", "turned-off"],
  ]);
}, 180_000);

describe("GitHub Copilot CLI's MCP servers", () => {
  let bridge: BridgeHandle | undefined;
  afterAll(async () => {
    await bridge?.close();
  });

  test("found as Copilot CLI starts them", async () => {
    const listed = await copilotStarts();
    expect([...listed.keys()].sort()).toEqual(["docs", "everything", "files", "memory"]);
    expect(listed.get("docs")).toMatchObject({ source: "plugin", sourcePlugin: "notes" });
    const { servers, skipped } = await oursServers();
    expect(servers.map((s) => s.name).sort()).toEqual([...listed.keys()].sort());
    for (const [name, s] of listed) {
      const mine = servers.find((x) => x.name === name)!;
      expect([mine.command, mine.args]).toEqual([s.command, s.args]);
      if (s.cwd) expect(mine.cwd).toBe(s.cwd);
    }
    // The direct install runs from Copilot CLI's copy (named after the folder it came from), not from that folder.
    expect(servers.find((s) => s.name === "files")!.args![1]).toBe(join(home, ".copilot", "installed-plugins", "_direct", "solo-src"));
    expect(skipped.find((s) => s.name === "turned-off")?.reason).toBe(
      `disabled in GitHub Copilot CLI (disabledMcpServers in ${join(home, ".copilot", "settings.json")})`,
    );
    expect(skipped.find((s) => s.name === "repo-off")?.reason).toContain(join(project, ".github", "copilot", "settings.json"));
  }, 180_000);

  test("code reaches a plugin's servers and the user's through the bridge", async () => {
    bridge = await startBridge(
      { HOME: home, MCP_BRIDGE_RUNTIME: ENGINES[0]!, MCP_BRIDGE_STATE_DIR: join(home, "state") },
      { cwd: project },
    );
    const r = await bridge.run(
      [
        "await mcp_memory.create_entities(entities=[{'name': 'Ada', 'entityType': 'person', 'observations': []}])",
        "listing = await mcp_files.list_directory(path='.')",
        "print(listing)",
        "(await mcp_everything.get_sum(a=2, b=3))",
      ].join("\n"),
      { servers: ["memory", "everything", "files"] },
    );
    expect(r.isError).toBe(false);
    expect(r.text).toContain("README.md");
    expect(r.text).toContain("5");
    expect(readFileSync(memoryFile, "utf8")).toContain('"name":"Ada"');
  }, 180_000);

  test("a plugin disabled in Copilot CLI is not offered; the repository's server it shadowed is", async () => {
    await installSteps("copilot", copilot, [["plugin", "disable", "notes@team-tools"]]);
    const listed = await copilotStarts();
    expect([...listed.keys()].sort()).toEqual(["docs", "everything", "files"]);
    expect(listed.get("docs")).toMatchObject({ source: "workspace", url: "https://docs.example/mcp" });
    const { servers } = await oursServers();
    expect(servers.map((s) => s.name).sort()).toEqual(["docs", "everything", "files"]);
    expect(servers.find((s) => s.name === "docs")).toMatchObject({ url: "https://docs.example/mcp" });
  }, 180_000);
});
