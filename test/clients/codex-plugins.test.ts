/**
 * Codex plugins that bring MCP servers, installed with the real `codex plugin` commands (from a
 * marketplace that is a local folder: no network here) in an isolated CODEX_HOME. What the bridge
 * discovers must be what `codex mcp list --json` runs, and code must reach those servers through the
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
const home = mkdtempSync(join(tmpdir(), "mcx-codex-plugins-"));
const codexHome = join(home, ".codex");
const project = join(home, "project");
const market = join(home, "market");
const plugin = join(market, "plugins", "notes");
const memoryFile = join(home, "memory.jsonl");
const clientEnv = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, CODEX_HOME: codexHome, LANG: "C.UTF-8" });
const codex = (...args: string[]) => run([join(BIN, "codex"), ...args], { cwd: project, env: clientEnv() });
const ours = (...args: string[]) =>
  run([BINARY, ...args], {
    cwd: project,
    env: bridgeEnv({ HOME: home, CODEX_HOME: codexHome, MCP_BRIDGE_STATE_DIR: join(home, "state") }),
  });

interface Listed {
  name: string;
  transport: { type: string; command?: string; args?: string[]; url?: string; http_headers?: unknown };
}
const codexList = async (): Promise<Listed[]> => JSON.parse((await codex("mcp", "list", "--json")).stdout) as Listed[];

beforeAll(async () => {
  mkdirSync(project, { recursive: true });
  // A server of the user's own config.toml wins a name over a plugin's.
  write(join(codexHome, "config.toml"), '[mcp_servers.everything]\ncommand = "node"\nargs = ["' + EVERYTHING + '"]\n');
  write(join(market, ".claude-plugin", "marketplace.json"), {
    name: "team-tools",
    owner: { name: "tests" },
    plugins: [{ name: "notes", source: "./plugins/notes" }],
  });
  write(join(plugin, ".claude-plugin", "plugin.json"), { name: "notes", version: "1.0.0" });
  write(join(plugin, ".mcp.json"), {
    mcpServers: {
      memory: { command: "node", args: [MEMORY], env: { MEMORY_FILE_PATH: memoryFile } },
      everything: { command: "node", args: ["shadowed-by-config-toml"] },
      // Codex reads no `headers` key (its own is http_headers): it connects without them.
      docs: { type: "http", url: "https://docs.example/mcp", headers: { "X-Team": "a" } },
    },
  });
  await installSteps("codex", codex, [
    ["plugin", "marketplace", "add", market],
    ["plugin", "add", "notes@team-tools"],
  ]);
}, 180_000);

describe("Codex plugins' MCP servers", () => {
  let bridge: BridgeHandle | undefined;
  afterAll(async () => {
    await bridge?.close();
  });

  test("found as Codex runs them", async () => {
    const listed = await codexList();
    expect(listed.map((s) => s.name).sort()).toEqual(["docs", "everything", "memory"]);
    const r = await ours("servers", "--json");
    expect(r.code).toBe(0);
    const servers = JSON.parse(r.stdout).servers as Array<{
      name: string;
      command?: string;
      args?: string[];
      url?: string;
      headers?: unknown;
    }>;
    expect(servers.map((s) => s.name).sort()).toEqual(["docs", "everything", "memory"]);
    for (const s of listed.filter((l) => l.transport.type === "stdio")) {
      const mine = servers.find((x) => x.name === s.name)!;
      expect([mine.command, mine.args]).toEqual([s.transport.command, s.transport.args]);
    }
    expect(listed.find((s) => s.name === "docs")!.transport).toMatchObject({ url: "https://docs.example/mcp", http_headers: null });
    expect(servers.find((s) => s.name === "docs")).toMatchObject({ url: "https://docs.example/mcp" });
    expect(JSON.stringify(servers.find((s) => s.name === "docs"))).not.toContain("X-Team");
  }, 180_000);

  test("code reaches a plugin's server through the bridge", async () => {
    bridge = await startBridge(
      { HOME: home, CODEX_HOME: codexHome, MCP_BRIDGE_RUNTIME: ENGINES[0]!, MCP_BRIDGE_STATE_DIR: join(home, "state") },
      { cwd: project },
    );
    const r = await bridge.run(
      "await mcp_memory.create_entities(entities=[{'name': 'Ada', 'entityType': 'person', 'observations': []}])\n(await mcp_everything.get_sum(a=2, b=3))",
      { servers: ["memory", "everything"] },
    );
    expect(r.isError).toBe(false);
    expect(r.text).toContain("5");
    expect(readFileSync(memoryFile, "utf8")).toContain('"name":"Ada"');
  }, 180_000);

  test("a plugin removed in Codex is not offered", async () => {
    expect((await codex("plugin", "remove", "notes@team-tools")).code).toBe(0);
    expect((await codexList()).map((s) => s.name)).toEqual(["everything"]);
    const r = JSON.parse((await ours("servers", "--json")).stdout) as { servers: Array<{ name: string }> };
    expect(r.servers.map((s) => s.name)).toEqual(["everything"]);
  }, 180_000);
});
