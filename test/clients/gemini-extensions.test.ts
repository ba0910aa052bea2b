/**
 * Gemini CLI extensions that bring MCP servers, installed and linked with the real `gemini extensions`
 * commands (from local folders: no network here) in an isolated HOME. What the bridge discovers must be
 * what `gemini mcp list` runs, and code must reach those servers through the compiled bridge.
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
const home = mkdtempSync(join(tmpdir(), "mcx-gemini-ext-"));
const project = join(home, "project");
const sources = join(home, "sources");
const clientEnv = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8" });
// Installing from a folder asks whether to trust it: answered yes, as a person would.
const gemini = (...args: string[]) => run([join(BIN, "gemini"), ...args], { cwd: project, env: clientEnv(), stdin: "y\n" });
const ours = (...args: string[]) =>
  run([BINARY, ...args], { cwd: project, env: bridgeEnv({ HOME: home, MCP_BRIDGE_STATE_DIR: join(home, "state") }) });

/** `gemini mcp list`'s lines: name -> the command line it shows. */
async function geminiList(): Promise<Map<string, string>> {
  const r = await gemini("mcp", "list");
  const out = new Map<string, string>();
  for (const m of `${r.stdout}${r.stderr}`.matchAll(/^\S+ (\S+) \(from \S+\): (.+) \(stdio\) - /gmu)) out.set(m[1]!, m[2]!);
  return out;
}

beforeAll(async () => {
  mkdirSync(project, { recursive: true });
  // Installed (copied into ~/.gemini/extensions): ${extensionPath} is the copy.
  write(join(sources, "notes", "gemini-extension.json"), {
    name: "notes",
    version: "1.0.0",
    mcpServers: { memory: { command: "node", args: [MEMORY], env: { MEMORY_FILE_PATH: "${extensionPath}${/}memory.jsonl" } } },
  });
  // Linked: Gemini CLI runs it from where it is.
  write(join(sources, "docs", "gemini-extension.json"), {
    name: "docs",
    version: "1.0.0",
    mcpServers: { everything: { command: "node", args: [EVERYTHING], cwd: "${extensionPath}" } },
  });
  await installSteps("gemini", gemini, [
    ["extensions", "install", join(sources, "notes"), "--consent"],
    ["extensions", "link", join(sources, "docs"), "--consent"],
  ]);
}, 180_000);

describe("Gemini CLI extensions' MCP servers", () => {
  let bridge: BridgeHandle | undefined;
  afterAll(async () => {
    await bridge?.close();
  });

  test("found as Gemini CLI runs them", async () => {
    const listed = await geminiList();
    expect([...listed.keys()].sort()).toEqual(["everything", "memory"]);
    const r = await ours("servers", "--json");
    expect(r.code).toBe(0);
    const servers = JSON.parse(r.stdout).servers as Array<{ name: string; command: string; args: string[]; source: string }>;
    expect(servers.map((s) => s.name).sort()).toEqual(["everything", "memory"]);
    for (const s of servers) expect(`${s.command} ${s.args.join(" ")}`).toBe(listed.get(s.name)!);
    expect(servers.find((s) => s.name === "everything")!.source).toBe(join(sources, "docs", "gemini-extension.json"));
  }, 180_000);

  test("code reaches them, with ${extensionPath} where Gemini CLI puts it", async () => {
    bridge = await startBridge(
      { HOME: home, MCP_BRIDGE_RUNTIME: ENGINES[0]!, MCP_BRIDGE_STATE_DIR: join(home, "state") },
      { cwd: project },
    );
    const r = await bridge.run(
      "await mcp_memory.create_entities(entities=[{'name': 'Ada', 'entityType': 'person', 'observations': []}])\n(await mcp_everything.get_sum(a=2, b=3))",
      { servers: ["memory", "everything"] },
    );
    expect(r.isError).toBe(false);
    expect(r.text).toContain("5");
    expect(readFileSync(join(home, ".gemini", "extensions", "notes", "memory.jsonl"), "utf8")).toContain('"name":"Ada"');
  }, 180_000);

  // `gemini mcp list` still lists a disabled extension's servers; a session starts only the active
  // extensions' (its ExtensionLoader filters on isActive), and so does the bridge.
  test("an extension disabled for this folder is not offered, and says why", async () => {
    const off = await gemini("extensions", "disable", "notes", "--scope", "workspace");
    expect(off.code).toBe(0);
    const rules = JSON.parse(readFileSync(join(home, ".gemini", "extensions", "extension-enablement.json"), "utf8"));
    expect(rules.notes.overrides).toContain(`!${project}/*`);
    const r = JSON.parse((await ours("servers", "--json")).stdout) as {
      servers: Array<{ name: string }>;
      skipped: Array<{ name: string; reason: string }>;
    };
    expect(r.servers.map((s) => s.name)).toEqual(["everything"]);
    expect(r.skipped).toContainEqual(
      expect.objectContaining({
        name: "memory",
        reason: "extension notes is disabled in Gemini CLI for this folder (extension-enablement.json)",
      }),
    );
  }, 180_000);
});
