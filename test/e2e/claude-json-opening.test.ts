/**
 * A heavy Claude Code user's ~/.claude.json (here 9 MB of project history) is scanned after the opening
 * once a start in the folder has found its servers: `initialize` is answered with the names that start
 * found, then the file is read. What the bridge serves is what the scan finds; a list that changed is
 * named from the next start on (and logged). A small file is read before answering, as always.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES } from "../support/env.ts";

const home = mkdtempSync(join(tmpdir(), "mcx-claude-json-"));
const cwd = join(home, "project");
const env = bridgeEnv({
  HOME: home,
  MCP_BRIDGE_STATE_DIR: join(home, "state"),
  MCP_BRIDGE_RUNTIME: ENGINES[0]!,
  MCP_BRIDGE_PREWARM: "0",
  MCP_BRIDGE_LOG_LEVEL: "INFO",
});

/** ~/.claude.json with `servers` at user scope and ~9 MB of other projects' history. */
function writeClaudeJson(servers: string[]) {
  const history = Array.from({ length: 300 }, (_, i) => ({ display: `prompt ${i} ${"x".repeat(100)}`, pastedContents: {} }));
  const projects: Record<string, unknown> = { [cwd]: { allowedTools: [], hasTrustDialogAccepted: true } };
  for (let p = 0; p < 300; p++) projects[`/home/u/other-${p}`] = { history, allowedTools: [] };
  writeFileSync(
    join(home, ".claude.json"),
    JSON.stringify({ numStartups: 3, projects, mcpServers: Object.fromEntries(servers.map((s) => [s, { command: "true" }])) }, null, 2),
  );
}

/** Start the bridge, read its instructions, stop it once it has logged what it found. */
async function start(): Promise<{ instructions: string; stderr: string }> {
  const transport = new StdioClientTransport({ command: BINARY, args: [], env, cwd, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: "t", version: "0" });
  await client.connect(transport);
  const instructions = client.getInstructions() ?? "";
  // A call is served by the bridge proper, which exists once the scan is done.
  await client.listTools();
  await client.callTool({ name: "run_python", arguments: { code: "1" } });
  await client.close();
  return { instructions, stderr };
}

beforeAll(() => {
  mkdirSync(cwd, { recursive: true });
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

test("after one start in the folder, a large file's servers are named from that start, then scanned; a change shows from the next start", async () => {
  writeClaudeJson(["alpha"]);
  const first = await start();
  expect(first.instructions).toContain("(1): alpha");
  writeClaudeJson(["alpha", "beta"]);
  // Answered before the scan: the names the last start found.
  const second = await start();
  expect(second.instructions).toContain("(1): alpha");
  expect(second.stderr).toContain("the servers changed since the last start here");
  const third = await start();
  expect(third.instructions).toContain("(2): alpha, beta");
  expect(third.stderr).not.toContain("the servers changed");
}, 120_000);

test("a small file is read before answering: a change shows at once", async () => {
  writeFileSync(join(home, ".claude.json"), JSON.stringify({ mcpServers: { gamma: { command: "true" } } }));
  expect((await start()).instructions).toContain("(1): gamma");
  writeFileSync(join(home, ".claude.json"), JSON.stringify({ mcpServers: { gamma: { command: "true" }, delta: { command: "true" } } }));
  expect((await start()).instructions).toContain("(2): gamma, delta");
}, 120_000);
