/**
 * An envFile that is a named pipe, as 1Password mounts .env files (its writer opens the pipe once a
 * reader does, after the user authorizes the read, and writes the secrets once), through the compiled
 * bridge and a real server from npm (server-everything's get-env). Before, the bridge read it while
 * discovering servers: its start (and `mcp-code-exec servers`) waited for the writer, maybe forever, and
 * every start asked the user again even for a server never used.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBridge, type BridgeHandle } from "../support/bridge.ts";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES, ROOT } from "../support/env.ts";

const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const TOKEN = `vault-${Math.random().toString(36).slice(2)}`;
const home = mkdtempSync(join(tmpdir(), "mcx-env-pipe-"));
const cwd = join(home, "project");
const fifo = join(home, "secrets.env");
const env = () => ({ HOME: home, MCP_BRIDGE_RUNTIME: ENGINES[0]!, MCP_BRIDGE_STATE_DIR: join(home, "state") });
let writer: ReturnType<typeof Bun.spawn>;
let bridge: BridgeHandle;

beforeAll(async () => {
  mkdirSync(cwd, { recursive: true });
  mkdirSync(join(home, ".cursor"));
  expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
  writeFileSync(
    join(home, ".cursor", "mcp.json"),
    JSON.stringify({ mcpServers: { vault: { command: "node", args: [EVERYTHING], envFile: fifo, env: { PLAIN: "from-env" } } } }),
  );
  // The writer blocks in open() until a reader comes, as 1Password's does until a read is authorized.
  writer = Bun.spawn(["sh", "-c", `printf 'VAULT_TOKEN=${TOKEN}\\nPLAIN=from-pipe\\n' > '${fifo}'`]);
  bridge = await startBridge(env(), { cwd });
}, 60_000);
afterAll(async () => {
  await bridge?.close();
  writer?.kill(9);
});

test("the bridge answers, and `servers` lists the server, without reading the pipe", async () => {
  const r = Bun.spawnSync([BINARY, "servers"], { cwd, env: bridgeEnv(env()), stdout: "pipe", stderr: "pipe", timeout: 30_000 });
  const out = r.stdout.toString();
  expect(r.exitCode).toBe(0);
  expect(out).toContain("vault");
  expect(out).toContain(`envFile ${fifo} is a named pipe: it is read when the server starts, not before`);
  expect(writer.exitCode).toBeNull(); // still waiting for a reader
});

test("the server gets the secrets from the pipe (and code sees them only as removed); the definition's env wins", async () => {
  const r = await bridge.run("e = await mcp_vault.get_env()\n(e.get('VAULT_TOKEN'), e.get('PLAIN'))", {
    servers: ["vault"],
  });
  expect(r.isError).toBe(false);
  // The server got exactly the pipe's token: it comes back as a credential the bridge sent, which
  // code is never shown (docs/security.md), in place of the value.
  expect(r.text).toContain("('[credential removed]', 'from-env')");
  expect(r.text).not.toContain(TOKEN);
  expect(await writer.exited).toBe(0);
});
