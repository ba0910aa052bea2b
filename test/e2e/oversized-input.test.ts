/**
 * Messages the bridge cannot take (too large, not JSON, not JSON-RPC) are answered with a JSON-RPC
 * error naming the problem, and the connection and the session go on: the compiled binary, a real SDK
 * client, and raw bytes on its stdin.
 */
import { describe, expect, test } from "bun:test";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { startBridge } from "../support/bridge.ts";
import { BINARY } from "../support/binary.ts";
import { bridgeEnv, ENGINES } from "../support/env.ts";

const engine = ENGINES[0]!;

describe("oversized and malformed client messages", () => {
  test("a 20 MB run_python request gets an error naming the limit; the session keeps its variables", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine });
    try {
      expect((await bridge.run("kept = 41")).isError).toBe(false);
      const big = `x = '${"a".repeat(20 * 1024 * 1024)}'`;
      const err = await bridge.client.callTool({ name: "run_python", arguments: { code: big } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(-32600);
      expect((err as McpError).message).toContain("over this server's 16.0 MiB limit (MCP_BRIDGE_MAX_MESSAGE)");
      expect((err as McpError).message).toContain("/workspace");
      const after = await bridge.run("kept + 1");
      expect(after.structured.value).toBe("42");
      expect(after.text).not.toContain("state was lost");
    } finally {
      await bridge.close();
    }
  });

  test("the limit is a setting: a 2 MB message is refused under MCP_BRIDGE_MAX_MESSAGE=1m", async () => {
    const bridge = await startBridge({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_MAX_MESSAGE: "1m", MCP_BRIDGE_PREWARM: "0" });
    try {
      const err = await bridge.client.callTool({ name: "run_python", arguments: { code: "#".repeat(2 * 1024 * 1024) } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((err as McpError).message).toContain("1.0 MiB limit");
      expect(await bridge.client.ping()).toEqual({});
    } finally {
      await bridge.close();
    }
  });

  test("raw lines that are not JSON or not JSON-RPC: answered by id where it can be found, and the server goes on", async () => {
    const proc = Bun.spawn([BINARY], {
      env: bridgeEnv({ MCP_BRIDGE_RUNTIME: engine, MCP_BRIDGE_PREWARM: "0" }),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const lines: Array<Record<string, unknown>> = [];
    const reader = (async () => {
      let buf = "";
      for await (const chunk of proc.stdout) {
        buf += new TextDecoder().decode(chunk);
        for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
          lines.push(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>);
          buf = buf.slice(nl + 1);
        }
      }
    })();
    const send = (s: string) => {
      proc.stdin.write(`${s}\n`);
      proc.stdin.flush();
    };
    const waitFor = async (id: unknown) => {
      for (let i = 0; i < 200 && !lines.some((l) => l.id === id); i++) await Bun.sleep(25);
      return lines.find((l) => l.id === id);
    };
    try {
      send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
        }),
      );
      expect((await waitFor(1))?.result).toBeDefined();
      send(`{"jsonrpc":"2.0","id":2,"method":"tools/list" oops`);
      expect(await waitFor(2)).toMatchObject({ error: { code: -32700 } });
      send(JSON.stringify({ jsonrpc: "1.0", id: 3, method: "tools/list" }));
      expect(await waitFor(3)).toMatchObject({ error: { code: -32600 } });
      send("complete garbage");
      send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping" }));
      expect(await waitFor(4)).toMatchObject({ result: {} });
    } finally {
      proc.stdin.end();
      await proc.exited;
      await reader;
    }
  });
});
