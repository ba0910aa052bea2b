/**
 * An upstream server whose command is not on the PATH the client gave the bridge: apps started from the
 * Dock or a desktop launcher (Claude Desktop, ...) pass `/usr/bin:/bin:/usr/sbin:/sbin`, while the entry
 * was written in a terminal whose PATH has the user's node (nvm here) or Homebrew. Through the compiled
 * binary, with PATH=/usr/sbin:/sbin and a real server from npm behind an nvm-style `#!/usr/bin/env node`
 * launcher (so the server's own PATH must find node too).
 */
import { expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY } from "../support/binary.ts";
import { ENGINES, IMAGE, ROOT } from "../support/env.ts";
import { run } from "../support/run.ts";

const MEMORY = join(ROOT, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js");

test("a command found only in the user's node version manager starts, and finds node", async () => {
  const home = mkdtempSync(join(tmpdir(), "mcx-command-path-"));
  const nvm = join(home, ".nvm", "versions", "node");
  for (const v of ["v18.20.0", "v22.11.0", "v9.0.0"]) mkdirSync(join(nvm, v, "bin"), { recursive: true });
  const bin = join(nvm, "v22.11.0", "bin"); // the newest
  symlinkSync(Bun.which("node")!, join(bin, "node"));
  writeFileSync(join(bin, "notes-mcp"), `#!/usr/bin/env node\nimport(${JSON.stringify(MEMORY)});\n`);
  chmodSync(join(bin, "notes-mcp"), 0o755);
  mkdirSync(join(home, ".cursor"));
  writeFileSync(
    join(home, ".cursor", "mcp.json"),
    JSON.stringify({ mcpServers: { notes: { command: "notes-mcp", env: { MEMORY_FILE_PATH: join(home, "memory.jsonl") } } } }),
  );
  const env = {
    HOME: home,
    PATH: "/usr/sbin:/sbin",
    MCP_BRIDGE_IMAGE: IMAGE,
    MCP_BRIDGE_RUNTIME: ENGINES[0]!,
    MCP_BRIDGE_STATE_DIR: join(home, "state"),
  };
  const r = await run([BINARY, "exec", "--servers", "notes"], { cwd: home, env, stdin: "await mcp_notes.read_graph()" });
  expect(r.stdout).toBe("[value] {'entities': [], 'relations': []}\n");
  expect(r.code).toBe(0);
});
