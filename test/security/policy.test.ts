/** Policy through the compiled bridge: refusals surface in the sandbox naming the rule. */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBridge } from "../support/bridge.ts";
import { ENGINES, ROOT } from "../support/env.ts";

describe("policy in the sandbox", () => {
  test("denied tools, the tool-call budget, denied servers and code size are refused with the rule named", async () => {
    const home = mkdtempSync(join(tmpdir(), "mcx-policy-"));
    mkdirSync(join(home, ".config", "mcp", "servers"), { recursive: true });
    const flaky = { command: "bun", args: [join(ROOT, "test", "fixtures", "flaky-server.ts")] };
    writeFileSync(join(home, ".config", "mcp", "servers", "s.json"), JSON.stringify({ mcpServers: { flaky, other: flaky } }));
    mkdirSync(join(home, ".config", "mcp-code-exec"), { recursive: true });
    writeFileSync(
      join(home, ".config", "mcp-code-exec", "config.json"),
      JSON.stringify({ policy: { denyTools: ["flaky/crash", "fail"], maxToolCallsPerRun: 3 } }),
    );
    const bridge = await startBridge(
      {
        HOME: home,
        MCP_BRIDGE_RUNTIME: ENGINES[0]!,
        MCP_BRIDGE_STATE_DIR: join(home, "state"),
        MCP_BRIDGE_DENY_SERVERS: "oth*",
        MCP_BRIDGE_MAX_CODE_BYTES: "2000",
      },
      { cwd: home },
    );
    try {
      const denied = await bridge.run(
        "from mcp import McpPolicyError\ntry:\n    await mcp_flaky.crash()\nexcept McpPolicyError as e:\n    out = str(e)\nout",
        { servers: ["flaky"] },
      );
      expect(denied.structured.value).toBe(
        `'refused by policy: tool flaky/crash matches "flaky/crash" in denyTools (${join(home, ".config", "mcp-code-exec", "config.json")}: policy.denyTools)'`,
      );
      const budget = await bridge.run(
        "res = []\nfor _ in range(5):\n    try:\n        await mcp_flaky.ping()\n        res.append('ok')\n    except McpPolicyError as e:\n        res.append(str(e))\nres[:3] == ['ok'] * 3, res[3]",
      );
      expect(String(budget.structured.value)).toContain("(True, 'refused by policy: this run reached maxToolCallsPerRun = 3");
      expect((await bridge.run("(await mcp_flaky.ping())['pong']")).structured.value).toBe("True");
      const search = await bridge.run(
        "from mcp import runtime\n[h['tool'] for h in runtime.search_tool_docs_sync('return an error result', limit=10)]",
      );
      expect(String(search.structured.value)).not.toContain("'fail'");
      const server = await bridge.run("1", { servers: ["other"] });
      expect(server.text).toContain('refused by policy: server other matches "oth*" in denyServers (MCP_BRIDGE_DENY_SERVERS)');
      const big = await bridge.run(`x = '${"a".repeat(3000)}'`);
      expect(big.text).toContain("over maxCodeBytes = 2000 (MCP_BRIDGE_MAX_CODE_BYTES)");
      const stats = JSON.parse(
        ((await bridge.client.readResource({ uri: "resource://mcp-code-exec/stats" })).contents[0] as { text: string }).text,
      );
      expect(stats.policy_refusals).toBeGreaterThanOrEqual(4);
    } finally {
      await bridge.close();
    }
  });
});
