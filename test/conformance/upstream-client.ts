/**
 * The client side of the conformance suite: `conformance client --command "bun test/conformance/upstream-client.ts"`
 * runs this with the scenario's server URL as the last argument. It reaches that server the way a user's
 * code does, through the compiled bridge's upstream client: the URL goes into an MCP config file and
 * `mcp-code-exec servers --tools` (connect, initialize, list) or `mcp-code-exec exec` (a proxied call
 * from the sandbox) talk to it.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES } from "../support/env.ts";

const url = process.argv.at(-1)!;
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "initialize";
const dir = mkdtempSync(join(tmpdir(), "mcx-conformance-"));
writeFileSync(join(dir, "servers.json"), JSON.stringify({ mcpServers: { conformance: { type: "http", url } } }));
const env = bridgeEnv({
  HOME: dir,
  MCP_BRIDGE_CONFIG: join(dir, "servers.json"),
  MCP_BRIDGE_STATE_DIR: join(dir, "state"),
  MCP_BRIDGE_RUNTIME: ENGINES[0]!,
  MCP_BRIDGE_LOG_LEVEL: "WARNING",
});

/** What a user's code would do against each scenario's server. */
const CODE: Record<string, string> = {
  tools_call: "await mcp_conformance.add_numbers(a=2, b=3)",
  "sse-retry": "await mcp_conformance.test_reconnection()",
};
const argv = CODE[scenario] ? [BINARY, "exec", "--servers", "conformance", "-c", CODE[scenario]] : [BINARY, "servers", "--tools"];
const proc = Bun.spawn(argv, { env, cwd: dir, stdout: "inherit", stderr: "inherit" });
process.exit(await proc.exited);
