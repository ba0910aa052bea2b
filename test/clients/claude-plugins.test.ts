/**
 * Claude Code plugins that bring MCP servers, installed with the real `claude plugin` commands (from a
 * marketplace that is a local folder: no network here) in an isolated HOME. What the bridge discovers
 * must be what `claude mcp list` runs, and code must reach those servers through the compiled bridge.
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
const home = mkdtempSync(join(tmpdir(), "mcx-cc-plugins-"));
const project = join(home, "project");
const market = join(home, "market");
const plugin = join(market, "plugins", "notes");
const clientEnv = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8", DISABLE_AUTOUPDATER: "1" });
const claude = (...args: string[]) => run([join(BIN, "claude"), ...args], { cwd: project, env: clientEnv() });
const ours = (...args: string[]) =>
  run([BINARY, ...args], { cwd: project, env: bridgeEnv({ HOME: home, MCP_BRIDGE_STATE_DIR: join(home, "state") }) });

/** `claude mcp list`'s lines: name -> the command line it shows. */
async function claudeList(): Promise<Map<string, string>> {
  const r = await claude("mcp", "list");
  const out = new Map<string, string>();
  for (const m of r.stdout.matchAll(/^(\S+): (.+) - [✔✘] /gmu)) out.set(m[1]!, m[2]!);
  return out;
}

beforeAll(async () => {
  mkdirSync(project, { recursive: true });
  write(join(market, ".claude-plugin", "marketplace.json"), {
    name: "team-tools",
    owner: { name: "tests" },
    plugins: [{ name: "notes", source: "./plugins/notes", description: "notes" }],
  });
  // One server in the plugin's .mcp.json, one in a file its manifest names ({"mcpServers": ...} there).
  write(join(plugin, ".claude-plugin", "plugin.json"), { name: "notes", version: "1.0.0", mcpServers: "./more-servers.json" });
  // The map itself, without "mcpServers" around it, as the official marketplace's plugins write it.
  write(join(plugin, ".mcp.json"), {
    memory: { command: "node", args: [MEMORY], env: { MEMORY_FILE_PATH: "${CLAUDE_PLUGIN_DATA}/memory.jsonl" } },
  });
  write(join(plugin, "more-servers.json"), { mcpServers: { everything: { command: "node", args: [EVERYTHING], env: {} } } });
  await installSteps("claude", claude, [
    ["plugin", "marketplace", "add", market],
    ["plugin", "install", "notes@team-tools"],
  ]);
}, 120_000);

describe("Claude Code plugins' MCP servers", () => {
  let bridge: BridgeHandle | undefined;
  afterAll(async () => {
    await bridge?.close();
  });

  test("found as Claude Code names and runs them", async () => {
    const listed = await claudeList();
    expect([...listed.keys()].sort()).toEqual(["plugin:notes:everything", "plugin:notes:memory"]);
    const r = await ours("servers", "--json");
    expect(r.code).toBe(0);
    const servers = (JSON.parse(r.stdout).servers as Array<{ name: string; command: string; args: string[] }>).filter((s) =>
      s.name.startsWith("plugin:"),
    );
    expect(servers.map((s) => s.name).sort()).toEqual([...listed.keys()].sort());
    for (const s of servers) expect(`${s.command} ${s.args.join(" ")}`).toBe(listed.get(s.name)!);
  }, 120_000);

  test("code reaches them, with ${CLAUDE_PLUGIN_DATA} where Claude Code puts it", async () => {
    bridge = await startBridge(
      { HOME: home, MCP_BRIDGE_RUNTIME: ENGINES[0]!, MCP_BRIDGE_STATE_DIR: join(home, "state") },
      { cwd: project },
    );
    const r = await bridge.run(
      "await mcp_plugin_notes_memory.create_entities(entities=[{'name': 'Ada', 'entityType': 'person', 'observations': []}])\n" +
        "(await mcp_plugin_notes_everything.get_sum(a=2, b=3))",
      { servers: ["plugin:notes:memory", "plugin:notes:everything"] },
    );
    expect(r.isError).toBe(false);
    expect(r.text).toContain("5");
    const data = join(home, ".claude", "plugins", "data", "notes-team-tools", "memory.jsonl");
    expect(readFileSync(data, "utf8")).toContain('"name":"Ada"');
  }, 120_000);

  test("a plugin turned off in Claude Code is not offered", async () => {
    const off = await claude("plugin", "disable", "notes@team-tools");
    expect(off.code).toBe(0);
    expect((await claudeList()).size).toBe(0);
    const r = await ours("servers", "--json");
    expect((JSON.parse(r.stdout).servers as Array<{ name: string }>).map((s) => s.name)).toEqual([]);
  }, 120_000);
});
